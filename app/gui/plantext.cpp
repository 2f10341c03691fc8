#include "plantext.h"

#include <QCoreApplication>
#include <QLocale>

namespace gui {
namespace {
// The translation context of the plan's words.
class PlanText
{
    Q_DECLARE_TR_FUNCTIONS(PlanText)
};
} // namespace

// The English source strings are core's words (core/report/src/plan_text.cpp), so that an untranslated window
// prints what headroom-cli prints (tst_onereport holds them equal).
QString planStepText(const headroom::PlanStep& s, headroom::Strategy strategy)
{
    using K = headroom::PlanStep::Kind;
    const QLocale locale;
    switch (s.kind) {
    case K::PagedOptimizer: return PlanText::tr("paged AdamW");
    case K::Accumulate:
        //: %1 the batch of one step, %2 the steps
        return PlanText::tr("micro-batch %1 × %2 accumulation steps").arg(s.microBatch).arg(s.value);
    case K::LayerCheckpoint: return PlanText::tr("per-layer checkpointing");
    case K::Segments: return PlanText::tr("%1 checkpoint segments").arg(s.value);
    case K::Shard: return PlanText::tr("shard across the GPUs (%1)").arg(qs(headroom::shardName(s.name)));
    case K::Optimizer8bit: return PlanText::tr("8-bit optimizer state (%1)").arg(qs(s.name));
    case K::Bf16: return PlanText::tr("pure bf16");
    case K::Lora:
        return s.name == "lora-all-linear"
                   ? PlanText::tr("LoRA adapters (r %1, every linear layer: PEFT has no default targets for the model) "
                                  "instead of full fine-tuning")
                         .arg(s.value)
                   : PlanText::tr("LoRA adapters (r %1, PEFT defaults) instead of full fine-tuning").arg(s.value);
    case K::QLora: return PlanText::tr("QLoRA: 4-bit NF4 base weights");
    case K::Offload: return PlanText::tr("CPU offload");
    case K::ShorterSequence:
        return PlanText::tr("sequence length %1").arg(locale.toString(static_cast<qlonglong>(s.value)));
    case K::SmallerBatch: return PlanText::tr("batch %1").arg(s.value);
    case K::MoreGpus:
        //: %1 the GPU count, %2 the GPU, %3 how the model is sharded over them
        return PlanText::tr("%1 × %2 (%3)")
            .arg(s.value)
            .arg(qs(headroom::shortGpuName(s.name)),
                 strategy == headroom::Strategy::ZeRO3 ? QStringLiteral("ZeRO-3") : QStringLiteral("FSDP"));
    case K::LargerGpu: return PlanText::tr("a larger GPU (%1)").arg(qs(s.name));
    }
    return qs(s.summary);
}

QString planText(const headroom::FitPlan& p, headroom::Units units)
{
    if (p.fitsBefore || p.capacity <= 0)
        return {};
    if (p.steps.empty())
        return PlanText::tr("No change Headroom knows of makes it fit.");
    QStringList steps;
    for (const headroom::PlanStep& s : p.steps)
        //: a step of the plan to fit: %1 the change, %2 the memory it saves
        steps << (s.kind == headroom::PlanStep::Kind::LargerGpu
                      ? gui::planStepText(s, p.config.strategy) // taken for its capacity, not for a saving
                      : PlanText::tr("%1 (−%2)")
                            .arg(gui::planStepText(s, p.config.strategy), bytesText(s.saving, units)));
    const QString chain = steps.join(QStringLiteral(" + "));
    if (!p.fits)
        //: %1 the steps, %2 the need after them
        return PlanText::tr("Closest plan, still too big: %1 → needs %2.").arg(chain, bytesText(p.needAfter, units));
    const QString spare = bytesText(p.capacity - p.needAfter, units);
    if (!p.sameGpu)
        //: %1 the steps (ending with the hardware), %2 the need after them, %3 what is left
        return PlanText::tr("Nothing on this GPU makes it fit: with %1 → needs %2, %3 to spare.")
            .arg(chain, bytesText(p.needAfter, units), spare);
    //: %1 the steps, %2 the need after them, %3 what is left on the GPU
    return PlanText::tr("To fit: %1 → needs %2, %3 to spare.").arg(chain, bytesText(p.needAfter, units), spare);
}

} // namespace gui
