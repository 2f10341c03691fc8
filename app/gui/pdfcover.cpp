// The report's first page: title, the fine-tuning set-up, the verdict and where the memory goes.
#include "pdfsections.h"

#include "verdict.h"

#include "headroom/base/finetune.h"
#include "headroom/headroom_config.h"
#include "headroom/memory/finetune_summary.h"

#include <QDateTime>
#include <QLocale>

namespace gui::pdf {

void PdfReport::cover(ReportDocument& doc)
{
    const QString when = QDateTime::currentDateTime().toString(QStringLiteral("yyyy-MM-dd HH:mm"));
    doc.title(tr("GPU memory report: %1").arg(modelName()),
              tr("Generated %1 by Headroom %2").arg(when, QStringLiteral(HEADROOM_VERSION)));
    if (const QString line = fineTuneLine(); !line.isEmpty())
        doc.paragraph(line, 9.5);
    verdict(doc);
    memoryTable(doc);
    modelIdentity(doc);
    configuration(doc);
    gpuVerdicts(doc);
}

// The Generate and Serve tasks' first lines: the title and the model; the serving section follows.
void PdfReport::servingCover(ReportDocument& doc)
{
    const QString when = QDateTime::currentDateTime().toString(QStringLiteral("yyyy-MM-dd HH:mm"));
    doc.title(tr("GPU memory report: %1").arg(modelName()),
              tr("Generated %1 by Headroom %2").arg(when, QStringLiteral(HEADROOM_VERSION)));
    modelIdentity(doc);
}

// Empty for plain training or inference.
QString PdfReport::fineTuneLine() const
{
    const headroom::FineTune& ft = m_report.config.finetune;
    if (!ft.lora.active() && ft.quant == headroom::Quant::None)
        return {};
    const headroom::FineTuneSummary f = headroom::summarizeFineTune(m_model, m_report.config, m_report.evaluation);
    QStringList targets;
    for (const std::string& t : ft.lora.targets)
        targets << qs(t);
    const QString total = QLocale().toString(static_cast<qlonglong>(f.trainableParams + f.frozenParams));
    if (ft.lora.method == headroom::PeftMethod::IA3) {
        QString line = tr("Fine-tuning: IA3 on %1; %2 trainable of %3 parameters")
                           .arg(targets.isEmpty() ? tr("PEFT's default targets") : targets.join(QStringLiteral(", ")))
                           .arg(QLocale().toString(static_cast<qlonglong>(f.trainableParams)))
                           .arg(total);
        if (ft.lora.dtype != "fp32")
            line += tr("; %1 adapters").arg(qs(ft.lora.dtype).toUpper());
        if (ft.layerCheckpoint)
            line += tr("; checkpointing every decoder layer");
        return line;
    }
    QString line = tr("Fine-tuning: LoRA r=%1, alpha %2 on %3; %4 trainable of %5 parameters")
                       .arg(ft.lora.r)
                       .arg(ft.lora.alpha)
                       .arg(targets.isEmpty() ? tr("PEFT's default targets") : targets.join(QStringLiteral(", ")))
                       .arg(QLocale().toString(static_cast<qlonglong>(f.trainableParams)))
                       .arg(QLocale().toString(static_cast<qlonglong>(f.trainableParams + f.frozenParams)));
    if (ft.lora.dtype != "fp32")
        line += tr("; %1 adapters").arg(qs(ft.lora.dtype).toUpper());
    if (ft.quant != headroom::Quant::None)
        line += tr("; base weights %1%2 (%3), largest dequantized weight %4")
                    .arg(qs(toString(ft.quant)), ft.doubleQuant ? tr(" + double quantization") : QString(),
                         bytes(f.quantizedBytes), bytes(f.dequantTransientBytes));
    if (ft.layerCheckpoint)
        line += tr("; checkpointing every decoder layer");
    return line;
}

void PdfReport::verdict(ReportDocument& doc)
{
    const headroom::Fit& fit = m_report.fit;
    const QString gpu = gui::gpuDisplayName(fit.gpu);
    QString line;
    QColor color = fit.fits ? kGood : kBad;
    if (fit.sizesUnknown) {
        // Unknown sizes are not zero bytes: no verdict, no figures built on them.
        doc.paragraph(gui::unknownFitSentence(m_model, fit), 15, kUnknown, true);
        doc.space(doc.pt(4));
        return;
    }
    if (fit.capacity <= 0) {
        line = tr("Needs %1 on the GPU (no GPU selected)").arg(bytes(fit.needed));
        color = Qt::black;
    } else if (fit.fits && fit.atCapacity) {
        line = tr("Fits on %1 (%2) at capacity: the cache fills the card").arg(gpu, bytes(fit.capacity));
    } else if (fit.fits) {
        line = tr("Fits on %1 (%2) with %3 headroom").arg(gpu, bytes(fit.capacity), bytes(fit.headroom));
    } else {
        line = tr("Does not fit on %1 (%2): needs %3, %4 more than it has")
                   .arg(gpu, bytes(fit.capacity), bytes(fit.needed), bytes(-fit.headroom));
    }
    doc.paragraph(line, 15, color, true);

    QStringList details;
    details << tr("Peak allocated: %1").arg(bytesWithExact(m_report.evaluation.memory.peak));
    details << tr("Needed on the GPU: %1").arg(bytesWithExact(fit.needed));
    if (m_model.batchSymbol >= 0 && fit.capacity > 0) {
        if (fit.maxBatch != headroom::kUnknownMax)
            details << (fit.maxBatch > 0 ? tr("Largest batch that fits: %1").arg(fit.maxBatch)
                                         : tr("Not even batch 1 fits"));
    }
    // Say whether the verdict rests on known sizes: with any activation size unknown it is not a verdict.
    const int64_t unknown = m_report.evaluation.shapes.unknown;
    details << (unknown > 0 ? tr("Fit unknown: %n activation size(s) could not be determined; the figures above "
                                 "leave them out",
                                 nullptr, static_cast<int>(unknown))
                            : tr("Fit known: every tensor size is determined at this configuration"));
    for (const QString& d : details)
        doc.paragraph(d, 10);
    doc.space(doc.pt(4));
}

void PdfReport::memoryTable(ReportDocument& doc)
{
    const headroom::Breakdown& m = m_report.evaluation.memory;
    const bool train = m_report.config.mode == headroom::Mode::Train;
    doc.heading(tr("Where the memory goes"));
    QList<QStringList> rows;
    auto add = [&](const QString& name, int64_t b, const QString& note) {
        rows.append({name, bytes(b), exact(b), note});
    };
    add(tr("Weights"), m.weights, tr("parameters and buffers at the policy's dtype"));
    if (m.buffers > 0)
        add(tr("  of which buffers"), m.buffers, tr("running statistics, masks, shape constants"));
    if (m.autocastCopies > 0)
        add(tr("  of which autocast copies"), m.autocastCopies, tr("16-bit weight copies cached during forward"));
    if (m.dequantTransient > 0)
        add(tr("Dequantized weight"), m.dequantTransient,
            tr("the largest 4/8-bit weight unpacked to the compute dtype, held at the peak"));
    if (train) {
        add(tr("Gradients"), m.gradients, tr("one per trainable parameter"));
        add(tr("Optimizer states"), m.optimizer, gui::optimizerName(m_report.config.optimizer));
        if (m.masterWeights > 0)
            add(tr("Master weights"), m.masterWeights, tr("FP32 copies kept by mixed precision"));
        add(tr("Activations saved for backward"), m.activationsSaved, tr("distinct tensors autograd keeps"));
    }
    add(tr("Activations at the peak"), m.activationsPeak, tr("saved plus transient tensors live at the peak"));
    if (m.input > 0)
        add(tr("Model input"), m.input, tr("the input batch, kept alive by the data loader"));
    if (m.lossBytes > 0)
        add(tr("Loss tensors"), m.lossBytes, tr("log-probabilities and the output's gradient at the peak"));
    add(tr("Peak allocated"), m.peak, tr("maximum of the simulated timeline"));
    add(tr("Reserved peak"), m.reservedPeak, tr("the same through the caching allocator model"));
    add(tr("Workspace"), m.workspace, tr("cuBLAS/cuDNN scratch"));
    add(tr("CUDA context"), m.context, tr("per-process driver and kernel images"));
    add(tr("Needed on the GPU"), m_report.fit.needed, tr("peak (or reserved) + workspace + context"));
    add(tr("Classic estimate"), m.classicEstimate, tr("the rule of thumb, for comparison"));
    const int neededRow = static_cast<int>(rows.size()) - 2;
    ReportDocument::TableStyle style;
    style.pointSize = 8.5;
    style.rowColor = [neededRow](int r) { return r == neededRow ? QColor(Qt::black) : QColor(0x20, 0x20, 0x20); };
    doc.table({{tr("Category"), 2.3},
               {tr("Size"), 1.1, Qt::AlignRight},
               {tr("Bytes"), 1.5, Qt::AlignRight},
               {tr("What it is"), 3.4}},
              rows, style);
}

} // namespace gui::pdf
