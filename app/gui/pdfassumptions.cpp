// The formulas behind every figure, with this configuration's numbers filled in, and the warnings.
#include "pdfsections.h"
#include "warningtext.h"

#include <algorithm>

namespace gui::pdf {

using headroom::Units;

void PdfReport::assumptions(ReportDocument& doc)
{
    const headroom::Config& c = m_report.config;
    const headroom::Evaluation& e = m_report.evaluation;
    const headroom::Breakdown& m = e.memory;
    const bool train = c.mode == headroom::Mode::Train;
    const int64_t trainable = m_model.params.trainable;

    doc.heading(tr("Assumptions and formulas"));
    doc.paragraph(tr("Every figure in this report is computed from the ONNX graph's shapes and dtypes at the "
                     "configuration above; no weight bytes are read and nothing is run. Sizes are in %1 units "
                     "(KiB = 1024 bytes); the JSON export has every figure in bytes.")
                      .arg(m_options.units == Units::IEC ? tr("binary") : tr("decimal")),
                  8.5);
    QStringList items;
    items << tr("Weights = Σ parameter elements × bytes per element of the policy (%1) + buffers = %2. Under AMP the "
                "16-bit copies autocast caches during forward are added.")
                 .arg(gui::dtypeName(c.dtype), bytes(m.weights));
    if (train) {
        items << tr("Gradients = one per trainable, unfrozen parameter (%1 elements) at the gradient dtype = %2.")
                     .arg(trainable)
                     .arg(bytes(m.gradients));
        items
            << tr("Optimizer states = bytes per trainable parameter × parameters: %1 keeps %2 = %3 (SGD 0, momentum 4, "
                  "Adam/AdamW 8, Adagrad 4, RMSprop 4 (+4 momentum, +4 centered), Adadelta 8, Lion 4, LAMB 8, 8-bit "
                  "Adam 2 bytes per parameter; Adafactor keeps factored row and column statistics).")
                   .arg(gui::optimizerName(c.optimizer),
                        trainable > 0
                            ? tr("%1 bytes per parameter")
                                  .arg(static_cast<double>(m.optimizer) / static_cast<double>(trainable), 0, 'f', 2)
                            : tr("nothing"),
                        bytes(m.optimizer));
        if (m.masterWeights > 0)
            items << tr("Master weights = FP32 copy of every trainable parameter under mixed precision = %1.")
                         .arg(bytes(m.masterWeights));
        items << tr("Activations saved for backward = the distinct tensors PyTorch's autograd keeps for each op "
                    "(derivatives.yaml: Conv saves its input, ReLU its output, MatMul its operands, BatchNorm its "
                    "input and statistics, Dropout a 1-byte mask, ...), each storage counted once = %1.")
                     .arg(bytes(m.activationsSaved));
        items << tr("Loss: %1 on the first output; it keeps the log-probabilities and creates the output's gradient.")
                     .arg(lossName(c.loss));
    }
    items << tr("Peak allocated = the maximum over the simulated iteration: forward allocates each output and frees it "
                "after its last consumer unless it is saved; backward allocates input gradients and frees saved "
                "tensors once used; the optimizer step follows. Peak = %1, reached at step %2 of %3.")
                 .arg(bytes(m.peak))
                 .arg(e.peakStep)
                 .arg(e.timeline.size());
    items
        << tr("Reserved peak = the same allocations replayed through a model of PyTorch's caching allocator (512-byte "
              "rounding; requests up to 1 MiB from 2 MiB segments, up to 10 MiB from 20 MiB segments, larger ones "
              "rounded to 2 MiB; best fit with splitting; freed blocks stay cached) = %1; this is what nvidia-smi "
              "shows besides the context.")
               .arg(bytes(m.reservedPeak));
    if (m.reservedPeakAt > 0) // --vary: the allocator keeps the segments every length made
        items << tr("With padded batches the reserved peak is the highest of the steps with %1 up to %2, each "
                    "replayed on its own: %3 reaches it. The allocated peak and the verdict are the longest step's, "
                    "since the allocator frees its cache and retries before it runs out of memory.")
                     .arg(qs(m_model.symbols[static_cast<size_t>(c.varySymbol)].name))
                     .arg(c.symbols[static_cast<size_t>(c.varySymbol)])
                     .arg(m.reservedPeakAt);
    items << tr("Workspace %1 and CUDA context %2 are the defaults for %3 until the probe measures them.")
                 .arg(bytes(m.workspace), bytes(m.context), gui::gpuDisplayName(c.gpu.name));
    items << tr("Needed = %1 + workspace + context = %2; it fits when needed + the safety margin (%3) ≤ capacity (%4). "
                "Headroom = capacity − needed = %5.")
                 .arg(c.allocator == headroom::AllocatorMode::Exact ? tr("peak allocated") : tr("reserved peak"),
                      bytes(m_report.fit.needed), bytes(c.marginBytes), bytes(m_report.fit.capacity),
                      bytes(m_report.fit.headroom));
    if (m_model.batchSymbol >= 0 && m_report.fit.maxBatch != headroom::kUnknownMax)
        items << tr("Largest batch = the largest batch whose need fits, found by searching the fitted shape functions "
                    "(every tensor's size as a function of the symbols) = %1.")
                     .arg(m_report.fit.maxBatch);
    if (train && c.checkpointSegments > 1)
        items << tr("Checkpointing with %1 segments keeps only each segment's input during forward and recomputes the "
                    "segment before its backward: %2 extra multiply-accumulates.")
                     .arg(c.checkpointSegments)
                     .arg(gui::countText(e.recomputeMacs));
    if (train && c.accumulate > 1)
        items << tr("Gradient accumulation over %1 steps: activations at the micro-batch, gradients persist across "
                    "micro-steps.")
                     .arg(c.accumulate);
    items << tr("Inplace activations change the transient peak, not what is saved: here they make a difference of %1.")
                 .arg(bytes(e.inplaceTransientSaving));
    items << tr("Classic estimate = parameters × n + batch × Σ outputs × 2 (n = 2 for SGD, 4 for Adam) = %1, against "
                "the peak of %2: the rule of thumb is off by %3.")
                 .arg(bytes(m.classicEstimate), bytes(m.peak), percent(m.classicEstimate - m.peak, m.peak));
    if (c.gpus > 1)
        items << tr("%1 GPUs with %2: each GPU's share is evaluated separately; DDP adds two 25 MiB gradient buckets, "
                    "DataParallel gathers outputs and computes the loss on GPU 0, ZeRO/FSDP shard optimizer states, "
                    "gradients and parameters.")
                     .arg(c.gpus)
                     .arg(strategyName(c.strategy));
    if (e.shapes.unknown > 0)
        items << tr("%n activation(s) have an unknown shape at this configuration and count as zero bytes.", nullptr,
                    static_cast<int>(e.shapes.unknown));
    for (const QString& item : items)
        doc.bullet(item);
}

void PdfReport::warnings(ReportDocument& doc)
{
    std::vector<std::string> all = m_model.warnings;
    all.insert(all.end(), m_report.evaluation.warnings.begin(), m_report.evaluation.warnings.end());
    if (all.empty())
        return;
    doc.subheading(tr("Warnings"));
    const size_t shown = std::min<size_t>(all.size(), 60);
    for (size_t i = 0; i < shown; ++i)
        doc.bullet(warningText(all[i]), 7.5);
    if (all.size() > shown)
        doc.paragraph(tr("… and %1 more (see the JSON export).").arg(all.size() - shown), 7.5, kMuted);
}

} // namespace gui::pdf
