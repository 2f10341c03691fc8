#include "verdict.h"

#include "plantext.h"
#include "servingstate.h"

#include "headroom/import/batch.h"
#include "headroom/memory/finetune_summary.h"
#include <QEvent>

namespace gui {

namespace {
QString signedSaving(int64_t saving, headroom::Units units)
{
    // U+2212 minus: a saving reads as a reduction of the need.
    return QStringLiteral("\u2212") + bytesText(saving, units);
}
} // namespace

QString adviceText(const headroom::Advice& a, const headroom::Model& model, headroom::Units units)
{
    // core's words (headroom::adviceText, the CLI's Try: line) through tr(), per kind
    using K = headroom::Advice::Kind;
    QString what;
    switch (a.kind) {
    case K::Batch: what = VerdictBanner::tr("batch %1").arg(headroom::batchOf(model, a.changed)); break;
    // the CLI's policy names, "bf16" (pure) and "amp-bf16" (autocast): not ambiguous
    case K::Dtype: what = qs(headroom::toString(a.changed.dtype)); break;
    case K::Checkpoint: what = VerdictBanner::tr("%1 checkpoint segments").arg(a.changed.checkpointSegments); break;
    case K::Accumulate: what = VerdictBanner::tr("%1 gradient accumulation steps").arg(a.changed.accumulate); break;
    case K::Inplace: what = VerdictBanner::tr("inplace activations"); break;
    case K::Freeze:
        //: %1 blocks frozen of %2 numbered blocks, %3 their names ("layers.0 to layers.15")
        what = VerdictBanner::tr("freeze the first %1 of %2 blocks (%3)").arg(a.count).arg(a.of).arg(qs(a.names));
        break;
    case K::ZeroStage: what = qs(a.summary); break; // "ZeRO-3": a name, the same in every language
    case K::Gpu0Batch: what = VerdictBanner::tr("GPU 0 batch %1").arg(a.changed.gpu0Batch); break;
    }
    if (what.isEmpty())
        what = qs(a.summary);
    //: %1 is a change such as "bf16", %2 the memory it saves
    return a.fitsAfter ? VerdictBanner::tr("%1 (%2, fits)").arg(what, signedSaving(a.saving(), units))
                       : VerdictBanner::tr("%1 (%2, still does not fit)").arg(what, signedSaving(a.saving(), units));
}

headroom::Fit shownFit(const headroom::Report& report)
{
    // Core's fit is already the heaviest GPU's when there are several (computeClusterFit).
    return report.fit;
}

QString unknownFitSentence(const headroom::Model& model, const headroom::Fit& fit)
{
    // Two sentences rather than %n: the English text needs no catalogue to read right.
    const qlonglong n = fit.unknownTensors;
    if (fit.unknownNode < 0 || static_cast<size_t>(fit.unknownNode) >= model.nodes.size())
        return n == 1 ? VerdictBanner::tr("Cannot tell: 1 tensor of unknown size")
                      : VerdictBanner::tr("Cannot tell: %1 tensors of unknown size").arg(n);
    const QString node = qs(model.nodePath(fit.unknownNode));
    //: %1 is the layer path of the node that makes the first size unknown
    return n == 1 ? VerdictBanner::tr("Cannot tell: 1 tensor of unknown size, first at node %1").arg(node)
                  //: %1 number of tensors, %2 the layer path of the node that makes the first size unknown
                  : VerdictBanner::tr("Cannot tell: %1 tensors of unknown size, first at node %2").arg(n).arg(node);
}

QString verdictText(const headroom::Report& report, headroom::Units units)
{
    const headroom::Fit fit = shownFit(report);
    if (fit.sizesUnknown)
        return fit.unknownTensors == 1
                   ? VerdictBanner::tr("Cannot tell: 1 tensor of unknown size")
                   : VerdictBanner::tr("Cannot tell: %1 tensors of unknown size").arg(fit.unknownTensors);
    const QString gpu = VerdictBanner::tr("%1 (%2)").arg(gpuDisplayName(fit.gpu), bytesText(fit.capacity, units));
    const size_t gpus = report.cluster.gpus.size();
    if (gpus > 1) {
        const int heaviest = report.cluster.heaviest;
        if (fit.fits && fit.atCapacity)
            //: %1 number of GPUs, %2 GPU, %3 largest global batch that fits; at capacity PyTorch gives its cache back
            //: and retries when an allocation fails, so the cache fills the card and no headroom is left
            return VerdictBanner::tr("Fits on %1 \u00d7 %2 at capacity \u2014 the cache fills the card, given back and "
                                     "retried when an allocation fails, max global batch %3")
                .arg(gpus)
                .arg(gpu)
                .arg(fit.maxBatch);
        if (fit.fits)
            //: %1 number of GPUs, %2 GPU, %3 index of the most loaded GPU, %4 free bytes left on it, %5 largest global
            //: batch that fits
            return VerdictBanner::tr(
                       "Fits on %1 \u00d7 %2 \u2014 GPU %3, the most loaded, has %4 headroom, max global batch %5")
                .arg(gpus)
                .arg(gpu)
                .arg(heaviest)
                .arg(bytesText(fit.headroom, units))
                .arg(fit.maxBatch);
        //: %1 number of GPUs, %2 GPU, %3 index of the most loaded GPU, %4 bytes it needs
        return VerdictBanner::tr("Does not fit on %1 \u00d7 %2 \u2014 GPU %3 needs %4")
            .arg(gpus)
            .arg(gpu)
            .arg(heaviest)
            .arg(bytesText(fit.needed, units));
    }
    if (fit.fits && fit.atCapacity)
        //: %1 GPU, %2 largest batch that fits; at capacity PyTorch gives its cache back and retries when an
        //: allocation fails, so the cache fills the card and no headroom is left
        return VerdictBanner::tr("Fits on %1 at capacity \u2014 the cache fills the card, given back and retried when "
                                 "an allocation fails, max batch %2")
            .arg(gpu)
            .arg(fit.maxBatch);
    if (fit.fits && fit.maxBatch == headroom::kUnknownMax)
        //: %1 GPU, %2 free bytes left; no largest batch: the need stays under capacity up to the search limit
        return VerdictBanner::tr("Fits on %1 \u2014 %2 headroom").arg(gpu, bytesText(fit.headroom, units));
    if (fit.fits && fit.expectedMaxBatch > fit.maxBatch)
        //: %1 GPU, %2 free bytes left, %3 largest batch that fits with the safety margin (docs/ACCURACY.md), %4 the
        //: largest the model itself gives
        return VerdictBanner::tr("Fits on %1 \u2014 %2 headroom, max batch %3 (%4 expected)")
            .arg(gpu, bytesText(fit.headroom, units))
            .arg(fit.maxBatch)
            .arg(fit.expectedMaxBatch);
    if (fit.fits)
        //: %1 GPU, %2 free bytes left, %3 largest batch that fits
        return VerdictBanner::tr("Fits on %1 \u2014 %2 headroom, max batch %3")
            .arg(gpu, bytesText(fit.headroom, units))
            .arg(fit.maxBatch);
    QString text = VerdictBanner::tr("Does not fit on %1 \u2014 needs %2").arg(gpu, bytesText(fit.needed, units));
    return text;
}

QString fineTuneText(const headroom::Model& model, const headroom::Report& report, headroom::Units units)
{
    const headroom::FineTune& ft = report.config.finetune;
    if (!ft.lora.active() && ft.quant == headroom::Quant::None)
        return {};
    const headroom::FineTuneSummary f = headroom::summarizeFineTune(model, report.config, report.evaluation);
    const QString method = ft.quant != headroom::Quant::None             ? VerdictBanner::tr("QLoRA")
                           : ft.lora.method == headroom::PeftMethod::IA3 ? VerdictBanner::tr("IA3")
                                                                         : VerdictBanner::tr("LoRA");
    //: %1 LoRA, QLoRA or IA3, %2 trainable parameters, %3..%6 bytes of the frozen base weights, the adapter weights,
    //: their gradients, their optimizer state
    QString text =
        VerdictBanner::tr(
            "%1: %2 trainable parameters · frozen base %3 · adapters %4 · adapter gradients %5 · optimizer state %6")
            .arg(method, countText(f.trainableParams), bytesText(f.frozenBytes, units),
                 bytesText(f.adapterBytes, units), bytesText(f.adapterGradientBytes, units),
                 bytesText(f.adapterOptimizerBytes, units));
    if (report.evaluation.memory.pagedOptimizer > 0)
        //: follows the optimizer state: how much of it a paged optimizer keeps in CUDA unified memory
        text += VerdictBanner::tr(" (%1 of it paged, outside the peak)")
                    .arg(bytesText(report.evaluation.memory.pagedOptimizer, units));
    if (f.dequantTransientBytes > 0)
        //: the largest 4-bit weight unpacked while its layer runs, counted at the peak
        text += VerdictBanner::tr(" · dequantized weight %1").arg(bytesText(f.dequantTransientBytes, units));
    return text;
}

VerdictBanner::VerdictBanner(QWidget* parent) : QLabel(parent)
{
    setObjectName(QStringLiteral("verdict"));
    setWordWrap(true);
    setTextInteractionFlags(Qt::TextSelectableByMouse);
    setMargin(8);
    setAutoFillBackground(true);
    QFont f = font();
    f.setPointSizeF(f.pointSizeF() * 1.25);
    f.setBold(true);
    setFont(f);
    clear();
}

void VerdictBanner::clear()
{
    m_empty = true;
    m_fits = false;
    m_unknown = false;
    setText(tr("Open an ONNX model to see whether it fits."));
    applyColours();
}

void VerdictBanner::setReport(const headroom::Model& model, const headroom::Report& report, headroom::Units units)
{
    m_empty = false;
    const headroom::Fit fit = shownFit(report);
    m_fits = fit.fits;
    m_unknown = fit.sizesUnknown;
    if (m_unknown) {
        setText(unknownFitSentence(model, fit));
        applyColours();
        return;
    }
    QString text = verdictText(report, units);
    if (const QString plan = gui::planText(report.fitPlan, units); !plan.isEmpty() && !report.fitPlan.steps.empty()) {
        // The plan that makes it fit, in the Breakdown's and the CLI's words, instead of lone changes: shown
        // wherever the CLI shows it (the plan's "fits before" is the report's verdict, fitsSafely).
        text += QStringLiteral(". ") + plan;
    } else if (!m_fits) {
        QStringList tips;
        for (const headroom::Advice& a : report.advice) {
            if (tips.size() == 3)
                break;
            tips << adviceText(a, model, units);
        }
        if (!tips.isEmpty())
            text += tr("; try %1").arg(tips.join(QStringLiteral(", ")));
        else if (fit.maxBatch > 0)
            text += tr("; max batch %1").arg(fit.maxBatch);
    }
    // What the verdict is for, so a changed precision or optimizer shows here too.
    const headroom::Config& c = report.config;
    text += tr(" · %1, %2")
                .arg(dtypeName(c.dtype),
                     c.mode == headroom::Mode::Train ? optimizerName(c.optimizer) : modeName(c.mode));
    const QString split = fineTuneText(model, report, units);
    if (!split.isEmpty())
        text += QLatin1Char('\n') + split;
    if (split.isEmpty() && report.evaluation.memory.pagedOptimizer > 0)
        //: %1 bytes of a paged optimizer's state, kept in CUDA unified memory and not counted in the peak
        text += tr(" · paged optimizer state %1 outside the peak")
                    .arg(bytesText(report.evaluation.memory.pagedOptimizer, units));
    if (c.offloadActivations && report.evaluation.memory.offloadedActivations > 0)
        //: %1 bytes of activations torchtune's offloading keeps in pinned host memory, not counted in the peak
        text += tr(" · offloaded activations %1 in host memory")
                    .arg(bytesText(report.evaluation.memory.offloadedActivations, units));
    setText(text);
    applyColours();
}

void VerdictBanner::setServing(const ServingState& serving, headroom::Units units)
{
    m_empty = !serving.hasModel();
    const ServingState::Verdict v = serving.verdict();
    m_fits = v == ServingState::Verdict::Serves;
    // "fewer than asked" and "cannot tell" are amber: it runs, but not as asked, or the size is unknown
    m_unknown = v == ServingState::Verdict::Fewer || v == ServingState::Verdict::Unknown;
    if (m_empty) {
        clear();
        return;
    }
    QString text = serving.verdictText(units);
    if (const QString longest = serving.longestText(); !longest.isEmpty())
        text += QStringLiteral(" \u00b7 ") + longest;
    setText(text);
    applyColours();
}

void VerdictBanner::setRefused(const QString& why)
{
    m_empty = false;
    m_fits = false;
    m_unknown = false;
    //: %1 why PEFT refuses the adapters, e.g. "LoRA: no targets= given and PEFT has no default targets for ..."
    setText(tr("Does not start: %1").arg(why));
    applyColours();
}

void VerdictBanner::changeEvent(QEvent* event)
{
    QLabel::changeEvent(event);
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::StyleChange)
        applyColours();
}

void VerdictBanner::applyColours()
{
    // Tinted from the palette's own window colour so dark themes stay dark.
    const QPalette base = parentWidget() ? parentWidget()->palette() : QPalette();
    const QColor window = base.color(QPalette::Window);
    const bool dark = window.lightness() < 128;
    QColor tint = window;
    if (!m_empty) {
        // A quarter of the signal colour over the window colour: readable text in light and dark themes.
        const QColor signal = m_unknown ? QColor(230, 160, 0) : m_fits ? QColor(46, 160, 67) : QColor(218, 54, 51);
        const double a = dark ? 0.35 : 0.25;
        tint = QColor::fromRgbF(static_cast<float>(window.redF() * (1 - a) + signal.redF() * a),
                                static_cast<float>(window.greenF() * (1 - a) + signal.greenF() * a),
                                static_cast<float>(window.blueF() * (1 - a) + signal.blueF() * a));
    }
    QPalette p = palette();
    p.setColor(QPalette::Window, tint);
    p.setColor(QPalette::WindowText, base.color(QPalette::WindowText));
    if (p != palette())
        setPalette(p);
}

} // namespace gui
