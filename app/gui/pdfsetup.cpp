// What was evaluated: the model's identity and the configuration, with the CLI line that repeats it.
#include "pdfsections.h"

#include "headroom/hardware/gpus.h"
#include "headroom/memory/finetune_summary.h"

#include <algorithm>

namespace gui::pdf {

void PdfReport::modelIdentity(ReportDocument& doc)
{
    const headroom::ModelInfo& info = m_model.info;
    doc.heading(tr("Model"));
    QStringList opsets;
    for (const auto& [domain, version] : info.opsets)
        opsets << QStringLiteral("%1 %2").arg(domain.empty() ? QStringLiteral("ai.onnx") : qs(domain)).arg(version);
    QStringList symbols;
    for (size_t i = 0; i < m_model.symbols.size(); ++i) {
        const headroom::Symbol& s = m_model.symbols[i];
        const int64_t v = i < m_report.config.symbols.size() ? m_report.config.symbols[i] : s.value;
        symbols << tr("%1 = %2 (from %3)").arg(qs(s.name)).arg(v).arg(qs(s.origin));
    }
    const headroom::ParamCounts counts = headroom::countParams(m_model, m_report.config);
    QList<std::pair<QString, QString>> rows = {
        {tr("File"), qs(info.file)},
        {tr("SHA-256"), qs(info.sha256)},
        {tr("File size"), bytesWithExact(info.fileSize)},
        {tr("Producer"), info.producer.empty() ? tr("(not recorded)") : qs(info.producer)},
        {tr("Graph"), qs(info.graphName)},
        {tr("IR version"), QString::number(info.irVersion)},
        {tr("Opsets"), opsets.join(QStringLiteral(", "))},
        {tr("Layers (graph nodes)"), QString::number(m_model.nodes.size())},
        // "trainable" as everywhere (requires grad under this configuration); the bytes those the run holds, the
        // Breakdown's weights, not the file's dtypes
        {tr("Parameters"),
         //: %1 all parameters (short), %2 their exact count, %3 trainable ones, %4 frozen ones, %5 the bytes held
         tr("%1 (%2 elements: %3 trainable, %4 frozen; %5 held)")
             .arg(gui::countText(counts.total()))
             .arg(counts.total())
             .arg(counts.trainable)
             .arg(counts.frozen)
             .arg(bytes(m_report.evaluation.memory.weights - m_report.evaluation.memory.buffers))},
        {tr("Buffers"),
         tr("%1 elements, %2").arg(m_model.params.buffers).arg(bytes(m_report.evaluation.memory.buffers))},
        {tr("Symbols"), symbols.isEmpty() ? tr("none (all shapes are static)") : symbols.join(QStringLiteral("; "))},
    };
    if (info.externalDataMissing)
        rows.append({tr("External data"), tr("missing (sizes come from the dims; no weight bytes are read)")});
    doc.keyValues(rows);
}

void PdfReport::configuration(ReportDocument& doc)
{
    const headroom::Config& c = m_report.config;
    doc.heading(tr("Configuration"));
    QList<std::pair<QString, QString>> rows;
    rows.append({tr("Mode"), gui::modeName(c.mode)});
    if (m_model.batchSymbol >= 0)
        rows.append({tr("Batch"), c.gpus > 1 ? tr("%1 (global)").arg(batch()) : QString::number(batch())});
    rows.append({tr("Precision"), gui::dtypeName(c.dtype)});
    if (c.mode == headroom::Mode::Train) {
        QString opt = gui::optimizerName(c.optimizer);
        if (c.optimizer == headroom::Optimizer::Custom)
            opt += tr(" (%1 bytes per parameter)").arg(c.customOptimizerBytes);
        rows.append({tr("Optimizer"), opt});
        rows.append({tr("Loss"), lossName(c.loss)});
        rows.append(
            {tr("Checkpoint segments"), c.checkpointSegments > 1 ? QString::number(c.checkpointSegments) : tr("off")});
        rows.append({tr("Gradient accumulation"), c.accumulate > 1 ? tr("%1 steps").arg(c.accumulate) : tr("off")});
        rows.append({tr("Frozen layers"), c.freeze.empty() ? tr("none") : [&] {
                         QStringList l;
                         for (const std::string& p : c.freeze)
                             l << qs(p);
                         return l.join(QStringLiteral(", "));
                     }()});
    }
    rows.append({tr("Inplace activations"), yesNo(c.inplace)});
    if (c.offloadActivations) // only when on: every other report stays as it was
        rows.append({tr("Activation offloading"), yesNo(true)});
    if (c.loopKeepsOutput) // --loop custom only
        rows.append({tr("Training loop"), tr("custom: keeps the output to the end of the step")});
    if (c.hfFp32Logits) // --transformers-version before 4.46 only
        rows.append({tr("transformers"), tr("before 4.46: fp32 logits, shifted fp32 copy for the loss")});
    if (c.varySymbol >= 0 && static_cast<size_t>(c.varySymbol) < m_model.symbols.size()) // --vary only
        rows.append({tr("Padded batches"), tr("%1 varies from step to step up to %2")
                                               .arg(qs(m_model.symbols[static_cast<size_t>(c.varySymbol)].name))
                                               .arg(c.symbols[static_cast<size_t>(c.varySymbol)])});
    rows.append({tr("GPU"), c.gpu.capacity > 0
                                ? tr("%1, %2").arg(gui::gpuDisplayName(c.gpu.name), bytes(c.gpu.capacity))
                                : tr("none selected")});
    if (c.gpus > 1 || c.strategy != headroom::Strategy::Single) {
        rows.append({tr("GPUs"), tr("%1 × %2").arg(c.gpus).arg(strategyName(c.strategy))});
        if (c.offload)
            rows.append({tr("CPU offload"), yesNo(true)});
    }
    rows.append({tr("Allocator"), allocatorName(c.allocator)});
    rows.append({tr("Safety margin"), bytes(c.marginBytes)});
    rows.append({tr("CLI equivalent"), cliEquivalent()});
    doc.keyValues(rows);
}

// The command line that evaluates this configuration again (options.cpp spells the flags).
QString PdfReport::cliEquivalent() const
{
    const headroom::Config& c = m_report.config;
    QString s = QStringLiteral("headroom-cli %1").arg(modelName());
    if (m_model.batchSymbol >= 0)
        s += QStringLiteral(" --batch %1").arg(batch());
    for (size_t i = 0; i < m_model.symbols.size() && i < c.symbols.size(); ++i)
        if (static_cast<int>(i) != m_model.batchSymbol)
            s += QStringLiteral(" --set %1=%2").arg(qs(m_model.symbols[i].name)).arg(c.symbols[i]);
    s += QStringLiteral(" --mode %1 --dtype %2").arg(qs(toString(c.mode)), qs(toString(c.dtype)));
    if (c.mode == headroom::Mode::Train)
        s += QStringLiteral(" --optimizer %1 --loss %2").arg(qs(toString(c.optimizer)), qs(toString(c.loss)));
    if (c.checkpointSegments > 1)
        s += QStringLiteral(" --checkpoint %1").arg(c.checkpointSegments);
    if (c.accumulate > 1)
        s += QStringLiteral(" --accumulate %1").arg(c.accumulate);
    if (c.inplace)
        s += QStringLiteral(" --inplace");
    const headroom::FineTune& ft = c.finetune;
    if (ft.lora.method == headroom::PeftMethod::IA3) {
        QStringList t;
        for (const std::string& x : ft.lora.targets)
            t << qs(x);
        QString spec = ft.lora.dtype != "fp32" ? QStringLiteral("dtype=") + qs(ft.lora.dtype) : QString();
        if (!t.isEmpty())
            spec += (spec.isEmpty() ? QString() : QStringLiteral(",")) + QStringLiteral("targets=") +
                    t.join(QLatin1Char(','));
        s += QStringLiteral(" --ia3 %1").arg(spec.isEmpty() ? QStringLiteral("default") : spec);
    } else if (ft.lora.r > 0) {
        QString spec =
            QStringLiteral("r=%1,alpha=%2,dropout=%3").arg(ft.lora.r).arg(ft.lora.alpha).arg(ft.lora.dropout);
        if (ft.lora.dtype != "fp32")
            spec += QStringLiteral(",dtype=") + qs(ft.lora.dtype);
        if (ft.lora.dora)
            spec += QStringLiteral(",dora=true");
        if (ft.lora.init != "true")
            spec += QStringLiteral(",init_lora_weights=") + qs(ft.lora.init);
        QStringList t;
        for (const std::string& x : ft.lora.targets)
            t << qs(x);
        if (!t.isEmpty())
            spec += QStringLiteral(",targets=") + t.join(QLatin1Char(','));
        s += QStringLiteral(" --lora %1").arg(spec);
    }
    if (ft.quant != headroom::Quant::None)
        s += QStringLiteral(" --quant %1%2 --compute-dtype %3%4")
                 .arg(qs(toString(ft.quant)), ft.doubleQuant ? QStringLiteral(" --double-quant") : QString(),
                      qs(ft.computeDtype), ft.kbitPrep ? QString() : QStringLiteral(" --no-kbit-prep"));
    if (ft.layerCheckpoint)
        s += QStringLiteral(" --grad-checkpoint layers");
    if (c.offloadActivations)
        s += QStringLiteral(" --offload-activations");
    const std::vector<std::string> loraFreeze = headroom::adapterFreezePatterns(ft.lora);
    for (const std::string& p : c.freeze)
        if (!ft.lora.active() || std::find(loraFreeze.begin(), loraFreeze.end(), p) == loraFreeze.end())
            s += QStringLiteral(" --freeze '%1'").arg(qs(p));
    if (headroom::findGpu(c.gpu.name))
        s += QStringLiteral(" --gpu '%1'").arg(qs(c.gpu.name));
    else if (c.gpu.capacity > 0)
        s += QStringLiteral(" --capacity %1").arg(c.gpu.capacity);
    if (c.gpus > 1)
        s += QStringLiteral(" --gpus %1 --strategy %2").arg(c.gpus).arg(qs(toString(c.strategy)));
    s += QStringLiteral(" --allocator %1").arg(qs(toString(c.allocator)));
    return s;
}

} // namespace gui::pdf
