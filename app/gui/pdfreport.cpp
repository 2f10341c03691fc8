#include "pdfreport.h"

#include "guiutil.h"
#include "reportcharts.h"
#include "reportdocument.h"
#include "verdict.h"

#include "headroom/hardware/gpus.h"
#include "headroom/headroom_config.h"
#include "headroom/memory/layercost.h"
#include "headroom/probe/probe_protocol.h"
#include "headroom/report/report.h"
#include "headroom/shapes/shapes.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QLocale>
#include <QFileInfo>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>

#include <algorithm>
#include <functional>
#include <exception>

namespace {

using gui::qs;
using gui::ReportDocument;
using headroom::Units;

constexpr int kDpi = 96; // device pixels = screen pixels, so the GUI's charts render at their own scale

const QColor kGood(0x1b, 0x7f, 0x3b);
const QColor kBad(0xb3, 0x26, 0x1e);
const QColor kUnknown(0xb0, 0x6d, 0x00); // amber: sizes unknown, no verdict
const QColor kMuted(0x5a, 0x62, 0x70);

class PdfReport
{
    Q_DECLARE_TR_FUNCTIONS(PdfReport)

public:
    PdfReport(const headroom::Model& model, const headroom::Report& report, const PdfReportOptions& options)
        : m_model(model)
        , m_report(report)
        , m_options(options)
    {
    }

    void write(ReportDocument& doc);

private:
    QString bytes(int64_t b) const { return gui::bytesText(b, m_options.units); }
    static QString exact(int64_t b) { return QString::number(b); }
    QString bytesWithExact(int64_t b) const { return tr("%1 (%2 bytes)").arg(bytes(b), exact(b)); }
    QString modelName() const { return QFileInfo(qs(m_model.info.file)).fileName(); }
    int64_t batch() const;

    void cover(ReportDocument& doc);
    void verdict(ReportDocument& doc);
    void memoryTable(ReportDocument& doc);
    void modelIdentity(ReportDocument& doc);
    void configuration(ReportDocument& doc);
    void gpuVerdicts(ReportDocument& doc);
    void charts(ReportDocument& doc);
    void topLayers(ReportDocument& doc);
    void peakCulprits(ReportDocument& doc);
    void advice(ReportDocument& doc);
    void layerTable(ReportDocument& doc);
    void nodeTable(ReportDocument& doc);
    void probe(ReportDocument& doc);
    void assumptions(ReportDocument& doc);
    void warnings(ReportDocument& doc);

    const headroom::Model& m_model;
    const headroom::Report& m_report;
    PdfReportOptions m_options;
};

QString lossName(headroom::Loss l)
{
    switch (l) {
    case headroom::Loss::CrossEntropy: return PdfReport::tr("Cross-entropy");
    case headroom::Loss::MSE: return PdfReport::tr("Mean squared error");
    case headroom::Loss::None: return PdfReport::tr("None (the graph computes its loss)");
    }
    return qs(headroom::toString(l));
}

QString strategyName(headroom::Strategy s)
{
    using S = headroom::Strategy;
    switch (s) {
    case S::Single: return PdfReport::tr("Single GPU");
    case S::DDP: return PdfReport::tr("DistributedDataParallel");
    case S::DP: return PdfReport::tr("DataParallel");
    case S::BalancedDP: return PdfReport::tr("Balanced DataParallel");
    case S::ZeRO1: return PdfReport::tr("ZeRO stage 1");
    case S::ZeRO2: return PdfReport::tr("ZeRO stage 2");
    case S::ZeRO3: return PdfReport::tr("ZeRO stage 3");
    case S::FSDP: return PdfReport::tr("FSDP");
    }
    return qs(headroom::toString(s));
}

QString allocatorName(headroom::AllocatorMode a)
{
    using A = headroom::AllocatorMode;
    switch (a) {
    case A::Exact: return PdfReport::tr("Exact (allocated bytes only)");
    case A::Caching: return PdfReport::tr("PyTorch caching allocator");
    case A::Expandable: return PdfReport::tr("PyTorch caching allocator, expandable segments");
    }
    return qs(headroom::toString(a));
}

QString phaseName(headroom::Phase p)
{
    using P = headroom::Phase;
    switch (p) {
    case P::Forward: return PdfReport::tr("forward");
    case P::Loss: return PdfReport::tr("loss");
    case P::Backward: return PdfReport::tr("backward");
    case P::Optimizer: return PdfReport::tr("optimizer step");
    case P::Recompute: return PdfReport::tr("recompute");
    }
    return qs(headroom::toString(p));
}

QString adviceKindName(headroom::Advice::Kind k)
{
    using K = headroom::Advice::Kind;
    switch (k) {
    case K::Batch: return PdfReport::tr("Smaller batch");
    case K::Dtype: return PdfReport::tr("Precision");
    case K::Checkpoint: return PdfReport::tr("Activation checkpointing");
    case K::Accumulate: return PdfReport::tr("Gradient accumulation");
    case K::Inplace: return PdfReport::tr("Inplace activations");
    case K::Freeze: return PdfReport::tr("Freeze layers");
    case K::ZeroStage: return PdfReport::tr("Sharding (ZeRO/FSDP)");
    case K::Gpu0Batch: return PdfReport::tr("GPU 0 batch share");
    }
    return {};
}

QString probeStatusName(headroom::ProbeResult::Status s)
{
    using S = headroom::ProbeResult::Status;
    switch (s) {
    case S::Ok: return PdfReport::tr("measured");
    case S::NoDevice: return PdfReport::tr("no CUDA device");
    case S::BuiltWithoutCuda: return PdfReport::tr("built without CUDA");
    case S::Failed: return PdfReport::tr("failed");
    case S::Crashed: return PdfReport::tr("crashed");
    case S::TimedOut: return PdfReport::tr("timed out");
    case S::Cancelled: return PdfReport::tr("cancelled");
    }
    return {};
}

QString yesNo(bool b)
{
    return b ? PdfReport::tr("yes") : PdfReport::tr("no");
}

QString percent(int64_t part, int64_t whole)
{
    if (whole <= 0)
        return QStringLiteral("–");
    return QString::number(100.0 * static_cast<double>(part) / static_cast<double>(whole), 'f', 1)
         + QLatin1Char('%');
}

int64_t PdfReport::batch() const
{
    const int b = m_model.batchSymbol;
    if (b >= 0 && static_cast<size_t>(b) < m_report.config.symbols.size())
        return m_report.config.symbols[static_cast<size_t>(b)];
    return 1;
}

void PdfReport::write(ReportDocument& doc)
{
    doc.setFooter(tr("Headroom memory report · %1").arg(modelName()));
    cover(doc);
    charts(doc);
    topLayers(doc);
    peakCulprits(doc);
    advice(doc);
    layerTable(doc);
    probe(doc);
    assumptions(doc);
    warnings(doc);
    doc.finish();
}

void PdfReport::cover(ReportDocument& doc)
{
    const QString when = QDateTime::currentDateTime().toString(QStringLiteral("yyyy-MM-dd HH:mm"));
    doc.title(tr("GPU memory report: %1").arg(modelName()),
              tr("Generated %1 by Headroom %2").arg(when, QStringLiteral(HEADROOM_VERSION)));
    const headroom::FineTune& ft = m_report.config.finetune;
    if (ft.lora.r > 0 || ft.quant != headroom::Quant::None) {
        const headroom::FineTuneSummary f = headroom::summarizeFineTune(m_model, m_report.config, m_report.evaluation);
        QStringList targets;
        for (const std::string& t : ft.lora.targets)
            targets << qs(t);
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
        doc.paragraph(line, 9.5);
    }
    verdict(doc);
    memoryTable(doc);
    modelIdentity(doc);
    configuration(doc);
    gpuVerdicts(doc);
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
                                 "leave them out", nullptr, static_cast<int>(unknown))
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
    doc.table({{tr("Category"), 2.3}, {tr("Size"), 1.1, Qt::AlignRight}, {tr("Bytes"), 1.5, Qt::AlignRight},
               {tr("What it is"), 3.4}},
              rows, style);
}

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
    QList<std::pair<QString, QString>> rows = {
        {tr("File"), qs(info.file)},
        {tr("SHA-256"), qs(info.sha256)},
        {tr("File size"), bytesWithExact(info.fileSize)},
        {tr("Producer"), info.producer.empty() ? tr("(not recorded)") : qs(info.producer)},
        {tr("Graph"), qs(info.graphName)},
        {tr("IR version"), QString::number(info.irVersion)},
        {tr("Opsets"), opsets.join(QStringLiteral(", "))},
        {tr("Layers (graph nodes)"), QString::number(m_model.nodes.size())},
        {tr("Trainable parameters"),
         tr("%1 (%2 elements, %3)").arg(gui::countText(m_model.params.trainable)).arg(m_model.params.trainable)
             .arg(bytes(m_model.params.trainableBytes))},
        {tr("Buffers"), tr("%1 elements, %2").arg(m_model.params.buffers).arg(bytes(m_model.params.bufferBytes))},
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
        rows.append({tr("Checkpoint segments"),
                     c.checkpointSegments > 1 ? QString::number(c.checkpointSegments) : tr("off")});
        rows.append({tr("Gradient accumulation"),
                     c.accumulate > 1 ? tr("%1 steps").arg(c.accumulate) : tr("off")});
        rows.append({tr("Frozen layers"), c.freeze.empty() ? tr("none") : [&] {
                         QStringList l;
                         for (const std::string& p : c.freeze)
                             l << qs(p);
                         return l.join(QStringLiteral(", "));
                     }()});
    }
    rows.append({tr("Inplace activations"), yesNo(c.inplace)});
    rows.append({tr("GPU"), c.gpu.capacity > 0 ? tr("%1, %2").arg(gui::gpuDisplayName(c.gpu.name), bytes(c.gpu.capacity))
                                               : tr("none selected")});
    if (c.gpus > 1 || c.strategy != headroom::Strategy::Single) {
        rows.append({tr("GPUs"), tr("%1 × %2").arg(c.gpus).arg(strategyName(c.strategy))});
        if (c.offload)
            rows.append({tr("CPU offload"), yesNo(true)});
    }
    rows.append({tr("Allocator"), allocatorName(c.allocator)});
    rows.append({tr("Safety margin"), bytes(c.marginBytes)});
    rows.append({tr("CLI equivalent"), [&] {
                     QString s = QStringLiteral("headroom-cli %1").arg(modelName());
                     if (m_model.batchSymbol >= 0)
                         s += QStringLiteral(" --batch %1").arg(batch());
                     for (size_t i = 0; i < m_model.symbols.size() && i < c.symbols.size(); ++i)
                         if (static_cast<int>(i) != m_model.batchSymbol)
                             s += QStringLiteral(" --set %1=%2").arg(qs(m_model.symbols[i].name)).arg(c.symbols[i]);
                     s += QStringLiteral(" --mode %1 --dtype %2").arg(qs(toString(c.mode)), qs(toString(c.dtype)));
                     if (c.mode == headroom::Mode::Train)
                         s += QStringLiteral(" --optimizer %1 --loss %2")
                                  .arg(qs(toString(c.optimizer)), qs(toString(c.loss)));
                     if (c.checkpointSegments > 1)
                         s += QStringLiteral(" --checkpoint %1").arg(c.checkpointSegments);
                     if (c.accumulate > 1)
                         s += QStringLiteral(" --accumulate %1").arg(c.accumulate);
                     if (c.inplace)
                         s += QStringLiteral(" --inplace");
                     const headroom::FineTune& ft = c.finetune;
                     if (ft.lora.r > 0) {
                         QString spec = QStringLiteral("r=%1,alpha=%2,dropout=%3").arg(ft.lora.r).arg(ft.lora.alpha).arg(ft.lora.dropout);
                         if (ft.lora.dtype != "fp32")
                             spec += QStringLiteral(",dtype=") + qs(ft.lora.dtype);
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
                     const std::vector<std::string> loraFreeze = headroom::loraFreezePatterns();
                     for (const std::string& p : c.freeze)
                         if (ft.lora.r == 0 || std::find(loraFreeze.begin(), loraFreeze.end(), p) == loraFreeze.end())
                             s += QStringLiteral(" --freeze '%1'").arg(qs(p));
                     if (headroom::findGpu(c.gpu.name))
                         s += QStringLiteral(" --gpu '%1'").arg(qs(c.gpu.name));
                     else if (c.gpu.capacity > 0)
                         s += QStringLiteral(" --capacity %1").arg(c.gpu.capacity);
                     if (c.gpus > 1)
                         s += QStringLiteral(" --gpus %1 --strategy %2").arg(c.gpus).arg(qs(toString(c.strategy)));
                     s += QStringLiteral(" --allocator %1").arg(qs(toString(c.allocator)));
                     return s;
                 }()});
    doc.keyValues(rows);
}

void PdfReport::gpuVerdicts(ReportDocument& doc)
{
    const headroom::Config& c = m_report.config;
    const headroom::ClusterEvaluation& cluster = m_report.cluster;
    if (cluster.gpus.size() > 1) {
        doc.heading(tr("Verdict per GPU (%1)").arg(strategyName(c.strategy)));
        QList<QStringList> rows;
        const bool reserved = c.allocator != headroom::AllocatorMode::Exact;
        const int64_t overhead = c.gpu.context + c.gpu.workspace;
        for (const headroom::GpuShare& g : cluster.gpus) {
            const int64_t need = (reserved ? g.reservedPeak : g.peak) + overhead;
            const bool fits = c.gpu.capacity <= 0 || need + c.marginBytes <= c.gpu.capacity;
            rows.append({tr("GPU %1").arg(g.index), QString::number(g.batch), bytes(g.weights), bytes(g.gradients),
                         bytes(g.optimizer), bytes(g.activations), bytes(g.communication), bytes(g.peak),
                         bytes(need), fits ? tr("fits") : tr("does not fit")});
        }
        ReportDocument::TableStyle style;
        style.rowColor = [this, reserved, overhead](int r) {
            const headroom::GpuShare& g = m_report.cluster.gpus[static_cast<size_t>(r)];
            const int64_t need = (reserved ? g.reservedPeak : g.peak) + overhead;
            return m_report.config.gpu.capacity <= 0 || need + m_report.config.marginBytes <= m_report.config.gpu.capacity
                       ? kGood
                       : kBad;
        };
        doc.table({{tr("GPU"), 0.9}, {tr("Batch"), 0.8, Qt::AlignRight}, {tr("Weights"), 1, Qt::AlignRight},
                   {tr("Gradients"), 1, Qt::AlignRight}, {tr("Optimizer"), 1, Qt::AlignRight},
                   {tr("Activations"), 1, Qt::AlignRight}, {tr("Communication"), 1.1, Qt::AlignRight},
                   {tr("Peak"), 1, Qt::AlignRight}, {tr("Needed"), 1, Qt::AlignRight}, {tr("Verdict"), 1.1}},
                  rows, style);
        for (const std::string& n : cluster.notes)
            doc.bullet(qs(n));
    }

    if (!m_options.gpuTable || m_report.fit.sizesUnknown)
        return;
    doc.heading(tr("Would it fit on other GPUs?"));
    doc.paragraph(tr("The same configuration on each preset, with that GPU's own context and workspace defaults."),
                  8.5, kMuted);
    QList<QStringList> rows;
    std::vector<bool> fits;
    // One plan for all presets: only the GPU's capacity, context and workspace change.
    const headroom::EnginePlan plan = headroom::makePlan(m_model, c);
    for (const headroom::GpuSpec& spec : headroom::gpuPresets()) {
        headroom::Config cc = c;
        cc.gpu = spec;
        const int64_t needed = headroom::neededBytes(cc, m_report.evaluation);
        const int64_t free = spec.capacity - needed;
        const bool ok = needed <= spec.capacity - cc.marginBytes;
        fits.push_back(ok);
        rows.append({qs(spec.name), bytes(spec.capacity), bytes(needed),
                     ok ? tr("fits, %1 free").arg(bytes(free)) : tr("short by %1").arg(bytes(-free)),
                     [&] {
                         const int64_t mb = m_model.batchSymbol >= 0 ? headroom::maxBatch(plan, cc) : headroom::kUnknownMax;
                         return mb == headroom::kUnknownMax ? QStringLiteral("–") : QString::number(mb);
                     }()});
    }
    ReportDocument::TableStyle style;
    style.rowColor = [fits](int r) { return fits[static_cast<size_t>(r)] ? kGood : kBad; };
    doc.table({{tr("GPU"), 2.4}, {tr("Capacity"), 1, Qt::AlignRight}, {tr("Needed"), 1, Qt::AlignRight},
               {tr("Verdict"), 1.8}, {tr("Largest batch"), 1, Qt::AlignRight}},
              rows, style);
}

void PdfReport::charts(ReportDocument& doc)
{
    const headroom::Breakdown& m = m_report.evaluation.memory;
    const qreal chartHeight = doc.pt(230);
    const qreal captionRoom = doc.pt(50);

    doc.newPage();
    doc.heading(tr("Breakdown"), chartHeight + captionRoom);
    doc.paragraph(tr("Each category of the memory model at the peak of one iteration, next to what the GPU offers. "
                     "Weights, gradients, optimizer states and master weights persist; activations are those live at "
                     "the peak; workspace and context are the GPU's fixed overheads."),
                  8.5, kMuted);
    gui::paintBreakdownChart(doc.painter(), doc.reserve(chartHeight), m_model, m_report, m_options.units);

    const headroom::Evaluation& e = m_report.evaluation;
    if (!e.timeline.empty()) {
        doc.heading(tr("Timeline"), chartHeight + captionRoom);
        QString where;
        if (e.peakStep >= 0 && static_cast<size_t>(e.peakStep) < e.timeline.size()) {
            const headroom::TimelinePoint& p = e.timeline[static_cast<size_t>(e.peakStep)];
            where = p.node >= 0 ? tr("The peak (%1) is reached at step %2, during %3 of %4.")
                                      .arg(bytes(m.peak))
                                      .arg(p.step)
                                      .arg(phaseName(p.phase), qs(m_model.nodePath(p.node)))
                                : tr("The peak (%1) is reached at step %2, during the %3.")
                                      .arg(bytes(m.peak))
                                      .arg(p.step)
                                      .arg(phaseName(p.phase));
        }
        doc.paragraph(tr("Allocated bytes after every step of one simulated iteration (forward, loss, backward, "
                         "optimizer step). %1")
                          .arg(where),
                      8.5, kMuted);
        gui::paintTimelineChart(doc.painter(), doc.reserve(chartHeight), m_model, m_report, m_options.units);
    }

    if (!m_report.batchSweep.empty()) {
        doc.heading(tr("Batch size"), chartHeight + captionRoom);
        doc.paragraph(tr("Memory needed on the GPU against the batch size; the horizontal line is the GPU's capacity. "
                         "Every point is a full re-evaluation, not an extrapolation."),
                      8.5, kMuted);
        gui::paintBatchSweepChart(doc.painter(), doc.reserve(chartHeight), m_model, m_report, m_options.units);
    }

    if (!m_report.checkpointCurve.empty()) {
        doc.heading(tr("Activation checkpointing"), chartHeight + captionRoom);
        const auto best = std::find_if(m_report.checkpointCurve.begin(), m_report.checkpointCurve.end(),
                                       [&](const headroom::CheckpointPoint& p) { return p.k == m_report.bestCheckpoint; });
        QString bestText;
        if (best != m_report.checkpointCurve.end())
            bestText = tr("The lowest peak, %1, is at k = %2 segments, for %3 extra forward multiply-accumulates.")
                           .arg(bytes(best->peak))
                           .arg(best->k)
                           .arg(gui::countText(best->recomputeMacs));
        doc.paragraph(tr("Peak allocated memory and recompute cost against the number of checkpoint segments "
                         "(torch.utils.checkpoint.checkpoint_sequential). %1")
                          .arg(bestText),
                      8.5, kMuted);
        gui::paintCheckpointChart(doc.painter(), doc.reserve(chartHeight), m_model, m_report, m_options.units);
    }
}

void PdfReport::topLayers(ReportDocument& doc)
{
    // The same ranking as the GUI's top-layers chart: saved-for-backward bytes when training, output bytes
    // for inference, per graph node.
    const headroom::Evaluation& e = m_report.evaluation;
    const bool train = m_report.config.mode == headroom::Mode::Train;
    auto key = [&](size_t n) { return train ? e.nodes[n].savedBytes : e.nodes[n].outputBytes; };
    std::vector<size_t> order;
    for (size_t n = 0; n < m_model.nodes.size() && n < e.nodes.size(); ++n)
        if (key(n) > 0)
            order.push_back(n);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) > key(b); });
    if (order.size() > 15)
        order.resize(15);
    const int64_t total = train ? e.memory.activationsSaved : e.memory.activationsPeak;

    doc.newPage();
    doc.heading(tr("Top layers by memory"));
    doc.paragraph(train ? tr("The layers whose tensors autograd keeps for backward hold the most; the share is of all "
                             "saved activations.")
                        : tr("The layers with the largest outputs; the share is of the activations live at the peak."),
                  8.5, kMuted);
    gui::paintTopLayersChart(doc.painter(), doc.reserve(doc.pt(220)), m_model, m_report, m_options.units);
    QList<QStringList> rows;
    int rank = 1;
    for (size_t n : order) {
        const headroom::NodeCost& cost = e.nodes[n];
        rows.append({QString::number(rank++), qs(m_model.nodePath(static_cast<int>(n))), qs(m_model.nodes[n].op),
                     cost.params > 0 ? gui::countText(cost.params) : QString(), bytes(cost.outputBytes),
                     bytes(cost.savedBytes), percent(key(n), total)});
    }
    doc.table({{tr("#"), 0.35, Qt::AlignRight}, {tr("Layer"), 3.2}, {tr("Op"), 1.6},
               {tr("Params"), 0.8, Qt::AlignRight}, {tr("Activation"), 1, Qt::AlignRight},
               {tr("Saved"), 1, Qt::AlignRight}, {tr("Share"), 0.7, Qt::AlignRight}},
              rows);
}

void PdfReport::peakCulprits(ReportDocument& doc)
{
    const headroom::Evaluation& e = m_report.evaluation;
    if (e.peakLive.empty())
        return;
    doc.heading(tr("Tensors live at the peak"));
    QList<QStringList> rows;
    for (size_t i = 0; i < e.peakLive.size() && i < 12; ++i) {
        const int t = e.peakLive[i];
        const headroom::Tensor& tensor = m_model.tensors[static_cast<size_t>(t)];
        const int64_t b = static_cast<size_t>(t) < e.shapes.bytes.size() ? e.shapes.bytes[static_cast<size_t>(t)] : -1;
        QString origin;
        if (tensor.producer >= 0)
            origin = qs(m_model.nodePath(tensor.producer));
        else if (tensor.role == headroom::TensorRole::Parameter)
            origin = tr("(parameter)");
        else if (tensor.role == headroom::TensorRole::Buffer || tensor.role == headroom::TensorRole::Constant)
            origin = tr("(buffer)");
        else
            origin = tr("(model input)");
        rows.append({qs(tensor.name), origin,
                     qs(headroom::shapeString(m_model, t, &e.shapes.values)), b >= 0 ? bytes(b) : tr("unknown")});
    }
    doc.table({{tr("Tensor"), 2}, {tr("Produced by"), 3}, {tr("Shape"), 1.6}, {tr("Bytes"), 0.9, Qt::AlignRight}}, rows);
}

void PdfReport::advice(ReportDocument& doc)
{
    if (m_report.advice.empty())
        return;
    doc.heading(tr("What would reduce it"));
    doc.paragraph(tr("Each change was re-evaluated with everything else kept; savings are measured, not assumed."), 8.5,
                  kMuted);
    QList<QStringList> rows;
    std::vector<bool> fits;
    for (const headroom::Advice& a : m_report.advice) {
        // A precision change names the policy in full: "bf16" alone does not say pure or AMP.
        const QString setting = a.kind == headroom::Advice::Kind::Dtype ? gui::dtypeName(a.changed.dtype) : qs(a.summary);
        rows.append({adviceKindName(a.kind), setting, bytes(a.saving()), bytes(a.needAfter),
                     a.fitsAfter ? tr("fits") : tr("does not fit")});
        fits.push_back(a.fitsAfter);
    }
    ReportDocument::TableStyle style;
    style.rowColor = [fits](int r) { return fits[static_cast<size_t>(r)] ? kGood : QColor(Qt::black); };
    doc.table({{tr("Change"), 1.6}, {tr("Setting"), 1.8}, {tr("Saves"), 1, Qt::AlignRight},
               {tr("Needed after"), 1, Qt::AlignRight}, {tr("Verdict"), 1}},
              rows, style);
}

void PdfReport::layerTable(ReportDocument& doc)
{
    if (m_options.allNodes) {
        nodeTable(doc);
        return;
    }
    // The GUI's tree to its opening depth, shape computations folded: a ViT's 1,600 nodes would otherwise
    // fill 40 pages that nobody reads; the per-node rows stay in the CSV and behind allNodes.
    const headroom::Evaluation& e = m_report.evaluation;
    const std::vector<headroom::LayerCost> costs = headroom::aggregateLayers(m_model, e);
    QList<QStringList> rows;
    std::function<void(int, int)> walk = [&](int layer, int level) {
        for (const headroom::TreeEntry& entry : headroom::treeEntries(m_model, layer, false)) {
            const QString indent(2 * level, QChar(0x2007));
            if (entry.layer >= 0) {
                const headroom::LayerCost& c = costs[static_cast<size_t>(entry.layer)];
                const headroom::LayerNode& l = m_model.layers[static_cast<size_t>(entry.layer)];
                const bool single = c.nodes == 1 && c.lastNode >= 0;
                rows.append({indent + qs(l.name), single ? qs(m_model.nodes[static_cast<size_t>(c.lastNode)].op) : QString(),
                             c.params > 0 ? gui::countText(c.params) : QString(),
                             c.unknownShape ? tr("unknown") : bytes(c.outputBytes),
                             c.savedBytes > 0 ? bytes(c.savedBytes) : QString()});
                if (l.depth < m_options.depth)
                    walk(entry.layer, level + 1);
                continue;
            }
            // Graph nodes directly under a layer are summed into one row per layer, like the CLI table.
            if (entry.node >= 0)
                continue;
            int64_t out = 0, saved = 0;
            for (int n : entry.shapeNodes)
                if (static_cast<size_t>(n) < e.nodes.size()) {
                    out += e.nodes[static_cast<size_t>(n)].outputBytes;
                    saved += e.nodes[static_cast<size_t>(n)].savedBytes;
                }
            rows.append({indent + tr("shape computations (%n nodes)", nullptr, static_cast<int>(entry.shapeNodes.size())),
                         QString(), QString(), bytes(out), saved > 0 ? bytes(saved) : QString()});
        }
    };
    if (!m_model.layers.empty())
        walk(0, 0);
    doc.newPage();
    doc.heading(tr("Layer table (%n rows)", nullptr, static_cast<int>(rows.size())));
    doc.paragraph(tr("The layer tree to depth %1, as the app opens it; the exporter's shape arithmetic (Shape, Gather, "
                     "Concat, ... on shape-sized integers) is folded into one row per layer. Activation: the layer's "
                     "outputs; saved: what it keeps for backward. The CSV export lists every graph node in bytes.")
                      .arg(m_options.depth),
                  8.5, kMuted);
    ReportDocument::TableStyle style;
    style.pointSize = 7;
    doc.table({{tr("Layer"), 4.6}, {tr("Op"), 1.65}, {tr("Params"), 0.9, Qt::AlignRight},
               {tr("Activation"), 1.05, Qt::AlignRight}, {tr("Saved"), 0.9, Qt::AlignRight}},
              rows, style);
}

void PdfReport::nodeTable(ReportDocument& doc)
{
    const headroom::Evaluation& e = m_report.evaluation;
    const int layers = static_cast<int>(m_model.nodes.size());
    doc.newPage();
    doc.heading(tr("Layer table (%n layers)", nullptr, layers));
    doc.paragraph(tr("Every graph node in topological order, at this configuration. Activation: the node's outputs; "
                     "saved: what it keeps for backward (a tensor saved by several nodes is counted once, at the "
                     "first). The CSV and JSON exports carry the same rows in bytes."),
                  8.5, kMuted);
    QList<QStringList> rows;
    rows.reserve(layers);
    for (int n = 0; n < layers; ++n) {
        const headroom::Node& node = m_model.nodes[static_cast<size_t>(n)];
        const headroom::NodeCost cost = static_cast<size_t>(n) < e.nodes.size() ? e.nodes[static_cast<size_t>(n)]
                                                                                : headroom::NodeCost{};
        QStringList shapes;
        for (int t : node.outputs)
            if (t >= 0)
                shapes << qs(headroom::shapeString(m_model, t, &e.shapes.values));
        rows.append({QString::number(n + 1), qs(m_model.nodePath(n)), qs(node.op), shapes.join(QStringLiteral(" ")),
                     cost.params > 0 ? gui::countText(cost.params) : QString(),
                     cost.unknownShape ? tr("unknown") : bytes(cost.outputBytes),
                     cost.savedBytes > 0 ? bytes(cost.savedBytes) : QString()});
    }
    ReportDocument::TableStyle style;
    style.pointSize = 7;
    doc.table({{tr("#"), 0.45, Qt::AlignRight}, {tr("Layer"), 3.6}, {tr("Op"), 1.65}, {tr("Output shape"), 1.95},
               {tr("Params"), 0.75, Qt::AlignRight}, {tr("Activation"), 1.05, Qt::AlignRight},
               {tr("Saved"), 0.9, Qt::AlignRight}},
              rows, style);
}

void PdfReport::probe(ReportDocument& doc)
{
    if (!m_report.probe)
        return;
    headroom::ProbeResult r;
    try {
        r = headroom::probeResultFromJson(*m_report.probe);
    } catch (const std::exception& ex) {
        doc.heading(tr("Measured on a GPU"));
        doc.paragraph(tr("The probe's result could not be read: %1").arg(QString::fromUtf8(ex.what())));
        return;
    }
    doc.heading(tr("Measured on a GPU"));
    if (r.status != headroom::ProbeResult::Status::Ok) {
        doc.paragraph(tr("The probe did not measure (%1): %2").arg(probeStatusName(r.status), qs(r.message)));
        return;
    }
    const headroom::Breakdown& m = m_report.evaluation.memory;
    doc.paragraph(tr("headroom-probe replayed this configuration's allocations on %1 (%2) with real cudaMalloc/cudaFree "
                     "and read the device's memory after every event.")
                      .arg(qs(r.deviceName), bytes(r.totalBytes)),
                  8.5, kMuted);
    auto diff = [this](int64_t measured, int64_t predicted) {
        return measured < 0 ? QStringLiteral("–") : bytes(measured - predicted);
    };
    QList<QStringList> rows;
    rows.append({tr("Peak allocated (exact replay)"), bytes(m.peak), bytes(r.exactPeak), diff(r.exactPeak, m.peak)});
    rows.append({tr("Reserved peak (caching replay)"), bytes(m.reservedPeak), bytes(r.cachingPeak),
                 diff(r.cachingPeak, m.reservedPeak)});
    rows.append({tr("CUDA context"), bytes(m_report.config.gpu.context), bytes(r.contextBytes),
                 diff(r.contextBytes, m_report.config.gpu.context)});
    if (r.cublasWorkspace >= 0 || r.cudnnWorkspace >= 0) {
        const int64_t ws = std::max<int64_t>(r.cublasWorkspace, 0) + std::max<int64_t>(r.cudnnWorkspace, 0);
        rows.append({tr("Workspace (cuBLAS + cuDNN)"), bytes(m_report.config.gpu.workspace), bytes(ws),
                     diff(ws, m_report.config.gpu.workspace)});
    }
    if (r.measuredMaxBatch >= 0 && m_model.batchSymbol >= 0)
        rows.append({tr("Largest batch that fits"), QString::number(m_report.fit.maxBatch),
                     r.maxBatchIsLowerBound ? tr("≥ %1").arg(r.measuredMaxBatch) : QString::number(r.measuredMaxBatch),
                     QString::number(r.measuredMaxBatch - m_report.fit.maxBatch)});
    doc.table({{tr("Figure"), 2.4}, {tr("Predicted"), 1, Qt::AlignRight}, {tr("Measured"), 1, Qt::AlignRight},
               {tr("Difference"), 1, Qt::AlignRight}},
              rows);
    if (!r.peakByCategory.empty()) {
        doc.subheading(tr("Measured peak by category"));
        QList<QStringList> cats;
        for (const auto& [name, b] : r.peakByCategory)
            cats.append({qs(name), bytes(b), QString::number(b)});
        doc.table({{tr("Category"), 2}, {tr("Size"), 1, Qt::AlignRight}, {tr("Bytes"), 1.4, Qt::AlignRight}}, cats);
    }
    if (r.oom)
        doc.paragraph(tr("The plan at batch %1 ran out of memory on the device.").arg(batch()), 9, kBad);
    doc.paragraph(tr("Measured bytes are device memory above the baseline before the replay (cudaMemGetInfo); the "
                     "difference to the prediction is allocator rounding, driver-side allocations and anything "
                     "else running on the GPU."),
                  8.5, kMuted);
    for (const std::string& w : r.warnings)
        doc.bullet(qs(w));
}

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
        items << tr("Optimizer states = bytes per trainable parameter × parameters: %1 keeps %2 = %3 (SGD 0, momentum 4, "
                    "Adam/AdamW 8, Adagrad 4, RMSprop 4 (+4 momentum, +4 centered), Adadelta 8, Lion 4, LAMB 8, 8-bit "
                    "Adam 2 bytes per parameter; Adafactor keeps factored row and column statistics).")
                     .arg(gui::optimizerName(c.optimizer),
                          trainable > 0 ? tr("%1 bytes per parameter")
                                              .arg(static_cast<double>(m.optimizer) / static_cast<double>(trainable), 0,
                                                   'f', 2)
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
    items << tr("Reserved peak = the same allocations replayed through a model of PyTorch's caching allocator (512-byte "
                "rounding; requests up to 1 MiB from 2 MiB segments, up to 10 MiB from 20 MiB segments, larger ones "
                "rounded to 2 MiB; best fit with splitting; freed blocks stay cached) = %1; this is what nvidia-smi "
                "shows besides the context.")
                 .arg(bytes(m.reservedPeak));
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
        doc.bullet(qs(all[i]), 7.5);
    if (all.size() > shown)
        doc.paragraph(tr("… and %1 more (see the JSON export).").arg(all.size() - shown), 7.5, kMuted);
}

} // namespace

bool writePdfReport(const QString& file, const headroom::Model& model, const headroom::Config& config, QString* error,
                    const PdfReportOptions& options)
{
    headroom::Report report;
    try {
        report = headroom::buildReport(model, config);
    } catch (const std::exception& ex) {
        if (error)
            *error = QStringLiteral("%1: %2").arg(file, QString::fromUtf8(ex.what()));
        return false;
    }
    return writePdfReport(file, model, report, error, options);
}

bool writePdfReport(const QString& file, const headroom::Model& model, const headroom::Report& report, QString* error,
                    const PdfReportOptions& options)
{
    auto fail = [&](const QString& why) {
        if (error)
            *error = QStringLiteral("%1: %2").arg(file, why);
        return false;
    };
    QSaveFile out(file);
    if (!out.open(QIODevice::WriteOnly))
        return fail(out.errorString());

    {
        QPdfWriter writer(&out);
        writer.setResolution(kDpi);
        writer.setPageLayout(QPageLayout(QPageSize(QPageSize::A4), QPageLayout::Portrait, QMarginsF(16, 14, 16, 12),
                                         QPageLayout::Millimeter));
        writer.setCreator(QStringLiteral("Headroom " HEADROOM_VERSION));
        writer.setTitle(PdfReport::tr("GPU memory report: %1").arg(QFileInfo(gui::qs(model.info.file)).fileName()));
        QPainter painter;
        if (!painter.begin(&writer))
            return fail(PdfReport::tr("cannot start the PDF"));
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setRenderHint(QPainter::TextAntialiasing);
        try {
            gui::ReportDocument doc(writer, painter, gui::reportFont());
            PdfReport(model, report, options).write(doc);
            if (!doc.ok()) {
                painter.end();
                out.cancelWriting();
                return fail(PdfReport::tr("cannot add a page to the PDF"));
            }
        } catch (const std::exception& ex) {
            painter.end();
            out.cancelWriting();
            return fail(QString::fromUtf8(ex.what()));
        }
        if (!painter.end())
            return fail(PdfReport::tr("cannot finish the PDF"));
    }
    if (out.error() != QFileDevice::NoError)
        return fail(out.errorString());
    if (!out.commit())
        return fail(out.errorString());
    return true;
}
