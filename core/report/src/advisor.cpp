// The advisor: the seeds' memory tips, each tried by re-evaluating the changed configuration. A tip is
// shown only with the saving the engine computes for this model, never with a rule-of-thumb figure.
#include "advisor_internal.h"

#include "headroom/hardware/multigpu.h"
#include "headroom/import/batch.h"

#include <algorithm>
#include <optional>

namespace headroom {
namespace advisor {

bool multiGpu(const Config& c) { return c.gpus > 1 && c.strategy != Strategy::Single; }

Judge::Judge(const Model& model, const Config& config, const EnginePlan* plan)
    : m_model(model),
      m_plan(plan && plan->model == &model && planMatches(*plan, config) ? *plan : makePlan(model, config))
{
}

// A config the plan does not match (freeze list, precision class, attention) needs a new plan;
// evaluate(model, ...) builds it.
Judge::Judged Judge::judge(const Config& c) const
{
    const bool samePlan = planMatches(m_plan, c);
    if (multiGpu(c)) {
        const ClusterEvaluation cl = samePlan ? evaluateCluster(m_plan, c) : evaluateCluster(m_model, c);
        int64_t n = 0;
        for (const auto& g : cl.gpus)
            n = std::max(n, g.needed);
        return {n, c.gpu.capacity > 0 && n + c.marginBytes <= c.gpu.capacity};
    }
    // The fit's own figure: what the step holds under capacity when the allocator gives cache back.
    // Only the need is read, which the light evaluation gives the same (reserved peak included), and its
    // one simulation also gives the events the replay under capacity reads; the plan is built once, for
    // the changed config's freeze list and precision class.
    const Fit f = computeFitLight(samePlan ? m_plan : makePlan(m_model, c), c);
    return {f.needed, f.capacity > 0 && f.fitsSafely};
}

namespace {
// The report's figures where it has them (one GPU), else the judge's.
Judge::Judged judgedBefore(const Judge& judge, const Config& c, const AdviceInputs& inputs)
{
    if (inputs.need && inputs.fits && c.gpus <= 1 && c.strategy == Strategy::Single)
        return {*inputs.need, *inputs.fits};
    return judge.judge(c);
}
} // namespace

Situation::Situation(const Model& m, const Config& c, const AdviceInputs& inputs)
    : model(m), config(c), known(inputs), judge(m, c, inputs.plan), before(judgedBefore(judge, c, inputs).need),
      fitsBefore(judgedBefore(judge, c, inputs).fits), train(c.mode == Mode::Train), batch(batchOf(m, c))
{
}

Advice Tips::judged(Advice::Kind kind, std::string summary, const Config& changed) const
{
    const Judge::Judged j = m_s.judge.judge(changed);
    return Advice{kind, std::move(summary), changed, m_s.before, j.need, j.fits};
}

Advice* Tips::consider(Advice::Kind kind, std::string summary, const Config& changed)
{
    Advice a = judged(kind, std::move(summary), changed);
    if (a.saving() <= 0)
        return nullptr;
    m_out.push_back(std::move(a));
    return &m_out.back();
}

void Tips::pickMildest(Advice::Kind kind, const std::vector<std::pair<std::string, Config>>& options)
{
    std::optional<Advice> best;
    for (const auto& [summary, changed] : options) {
        Advice a = judged(kind, summary, changed);
        if (a.saving() <= 0)
            continue;
        if (a.fitsAfter && !m_s.fitsBefore) {
            best = std::move(a);
            break;
        }
        if (!best || a.saving() > best->saving())
            best = std::move(a);
    }
    if (best)
        m_out.push_back(std::move(*best));
}

namespace {

// The order of the tries is the order of equal savings.
constexpr void (*kTries[])(const Situation&, Tips&) = {
    tryBatch, tryDtype, tryCheckpoint, tryAccumulate, tryInplace, tryFreeze, tryZeroStage, tryGpu0Batch,
};

} // namespace
} // namespace advisor

std::string adviceText(const Advice& a, Units units)
{
    // U+2212, as the plan's savings: a saving reads as a reduction of the need
    return a.summary + " (\u2212" + formatBytes(a.saving(), units) +
           (a.fitsAfter ? ", fits)" : ", still does not fit)");
}

std::vector<Advice> advise(const Model& model, const Config& config, int maxItems)
{
    return advise(model, config, AdviceInputs{}, maxItems);
}

std::vector<Advice> advise(const Model& model, const Config& config, const AdviceInputs& known, int maxItems)
{
    const advisor::Situation situation(model, config, known);
    advisor::Tips tips(situation);
    for (const auto tryTip : advisor::kTries)
        tryTip(situation, tips);
    std::vector<Advice> out = tips.take();
    std::stable_sort(out.begin(), out.end(), [](const Advice& a, const Advice& b) { return a.saving() > b.saving(); });
    if (maxItems >= 0 && out.size() > size_t(maxItems))
        out.resize(size_t(maxItems));
    return out;
}

} // namespace headroom
