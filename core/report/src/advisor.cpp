// The advisor: the seeds' memory tips, each tried by re-evaluating the changed configuration. A tip is
// shown only with the saving the engine computes for this model, never with a rule-of-thumb figure.
#include "headroom/report/advisor.h"

#include "headroom/hardware/multigpu.h"

#include <algorithm>
#include <optional>

namespace headroom {
namespace {

bool multiGpu(const Config& c) { return c.gpus > 1 && c.strategy != Strategy::Single; }

class Judge
{
public:
    Judge(const Model& model, const Config& config, const EnginePlan* plan)
        : m_model(model),
          m_plan(plan && plan->model == &model && planMatches(*plan, config) ? *plan : makePlan(model, config))
    {
    }

    // What must fit on the most loaded GPU: peak or reserved (per config.allocator) + context + workspace.
    // A config the plan does not match (freeze list, precision class, attention) needs a new plan;
    // evaluate(model, ...) builds it.
    int64_t need(const Config& c) const
    {
        const bool samePlan = planMatches(m_plan, c);
        if (multiGpu(c)) {
            const ClusterEvaluation cl = samePlan ? evaluateCluster(m_plan, c) : evaluateCluster(m_model, c);
            int64_t n = 0;
            for (const auto& g : cl.gpus)
                n = std::max(n, g.needed);
            return n;
        }
        // The fit's own figure: what the step holds under capacity when the allocator gives cache back.
        // Only the need is read, which the light evaluation gives the same (reserved peak included), and its
        // one simulation also gives the events the replay under capacity reads; the plan is built once, for
        // the changed config's freeze list and precision class.
        if (samePlan)
            return computeFitLight(m_plan, c).needed;
        return computeFitLight(makePlan(m_model, c), c).needed;
    }
    static bool fits(const Config& c, int64_t need)
    {
        return c.gpu.capacity > 0 && need <= c.gpu.capacity - c.marginBytes;
    }
    const EnginePlan& plan() const { return m_plan; }

private:
    const Model& m_model;
    EnginePlan m_plan;
};

int64_t batchOf(const Model& model, const Config& c)
{
    if (model.batchSymbol < 0 || size_t(model.batchSymbol) >= c.symbols.size())
        return 1;
    return c.symbols[size_t(model.batchSymbol)];
}

Config withBatch(const Model& model, Config c, int64_t batch)
{
    if (model.batchSymbol >= 0 && size_t(model.batchSymbol) < c.symbols.size())
        c.symbols[size_t(model.batchSymbol)] = batch;
    return c;
}

std::string zeroName(Strategy s)
{
    switch (s) {
    case Strategy::ZeRO1: return "ZeRO-1";
    case Strategy::ZeRO2: return "ZeRO-2";
    case Strategy::ZeRO3: return "ZeRO-3";
    case Strategy::FSDP: return "FSDP";
    default: return std::string(toString(s));
    }
}

// The layers a user would freeze "from the bottom": the first level of the layer tree with more than one
// child, in topological order.
std::vector<int> topBlocks(const Model& model)
{
    if (model.layers.empty())
        return {};
    int at = 0;
    while (model.layers[size_t(at)].children.size() == 1)
        at = model.layers[size_t(at)].children.front();
    std::vector<int> blocks;
    for (int c : model.layers[size_t(at)].children)
        if (model.layers[size_t(c)].params > 0)
            blocks.push_back(c);
    std::sort(blocks.begin(), blocks.end(),
              [&](int a, int b) { return model.layers[size_t(a)].firstNode < model.layers[size_t(b)].firstNode; });
    return blocks;
}

// Tries each change on a copy of the configuration; the order of the tries is the order of equal savings.
class Advisor
{
public:
    Advisor(const Model& m, const Config& c, const AdviceInputs& inputs)
        : model(m), config(c), known(inputs), judge(m, c, inputs.plan),
          before(inputs.need && c.gpus <= 1 && c.strategy == Strategy::Single ? *inputs.need : judge.need(c)),
          fitsBefore(Judge::fits(c, before)), train(c.mode == Mode::Train), batch(batchOf(m, c))
    {
    }

    std::vector<Advice> run()
    {
        tryBatch();
        tryDtype();
        tryCheckpoint();
        tryAccumulate();
        tryInplace();
        tryFreeze();
        tryZeroStage();
        tryGpu0Batch();
        return std::move(out);
    }

private:
    void consider(Advice::Kind kind, std::string summary, const Config& changed)
    {
        Advice a{kind, std::move(summary), changed, before, judge.need(changed), false};
        a.fitsAfter = Judge::fits(changed, a.needAfter);
        if (a.saving() > 0)
            out.push_back(std::move(a));
    }
    // Of several strengths of one change: the mildest that fits, else the one that saves most.
    void pickMildest(Advice::Kind kind, const std::vector<std::pair<std::string, Config>>& options)
    {
        std::optional<Advice> best;
        for (const auto& [summary, changed] : options) {
            Advice a{kind, summary, changed, before, judge.need(changed), false};
            a.fitsAfter = Judge::fits(changed, a.needAfter);
            if (a.saving() <= 0)
                continue;
            if (a.fitsAfter && !fitsBefore) {
                best = std::move(a);
                break;
            }
            if (!best || a.saving() > best->saving())
                best = std::move(a);
        }
        if (best)
            out.push_back(std::move(*best));
    }

    // Smaller batch: the largest that fits (only worth saying when the current one does not).
    void tryBatch()
    {
        if (!fitsBefore && config.gpu.capacity > 0 && model.batchSymbol >= 0 && batch > 1) {
            int64_t best = 0;
            if (multiGpu(config)) {
                int64_t lo = 0, hi = batch - 1;
                while (lo < hi) {
                    const int64_t mid = lo + (hi - lo + 1) / 2;
                    if (Judge::fits(config, judge.need(withBatch(model, config, mid))))
                        lo = mid;
                    else
                        hi = mid - 1;
                }
                best = lo;
            } else {
                best = std::min(maxBatch(judge.plan(), config, batch), batch - 1);
            }
            if (best >= 1)
                consider(Advice::Kind::Batch, "batch " + std::to_string(best), withBatch(model, config, best));
        }
    }

    // 16-bit: pure and autocast (training) / weight-only int8 (inference).
    void tryDtype()
    {
        if (train) {
            if (config.dtype != DtypePolicy::BF16 && config.dtype != DtypePolicy::FP16) {
                Config c = config;
                c.dtype = DtypePolicy::BF16;
                consider(Advice::Kind::Dtype, "bf16", c);
            }
            if (config.dtype == DtypePolicy::FP32) {
                Config c = config;
                c.dtype = DtypePolicy::AmpBF16;
                consider(Advice::Kind::Dtype, "amp-bf16", c);
            }
        } else {
            if (config.dtype == DtypePolicy::FP32) {
                Config c = config;
                c.dtype = DtypePolicy::BF16;
                consider(Advice::Kind::Dtype, "bf16", c);
            }
            if (config.dtype != DtypePolicy::INT8 && config.dtype != DtypePolicy::INT4) {
                Config c = config;
                c.dtype = DtypePolicy::INT8;
                consider(Advice::Kind::Dtype, "int8", c);
            }
        }
    }

    void tryCheckpoint()
    {
        if (train && config.checkpointSegments <= 1 && !model.nodes.empty()) {
            const int maxK = int(std::min<size_t>(16, model.nodes.size()));
            Config single = config;
            if (multiGpu(config)) { // the curve is per GPU: evaluate it at one GPU's batch
                single.gpus = 1;
                single.strategy = Strategy::Single;
            }
            const bool reuse = known.checkpointCurve && !multiGpu(config) &&
                               known.checkpointCurve->size() == size_t(maxK);
            const int k = bestCheckpointSegments(reuse ? *known.checkpointCurve
                                                       : checkpointCurve(judge.plan(), single, maxK));
            if (k > 1) {
                Config c = config;
                c.checkpointSegments = k;
                consider(Advice::Kind::Checkpoint, std::to_string(k) + " checkpoint segments", c);
            }
        }
    }

    void tryAccumulate()
    {
        if (train && batch >= 2) {
            std::vector<std::pair<std::string, Config>> options;
            for (int s = std::max(config.accumulate, 1) * 2; s <= batch; s *= 2) {
                Config c = config;
                c.accumulate = s;
                options.emplace_back(std::to_string(s) + " gradient accumulation steps", c);
                if (fitsBefore)
                    break; // it already fits: the first step says what the technique is worth
            }
            pickMildest(Advice::Kind::Accumulate, options);
        }
    }

    void tryInplace()
    {
        if (!config.inplace) {
            Config c = config;
            c.inplace = true;
            consider(Advice::Kind::Inplace, "inplace activations", c);
        }
    }

    void tryFreeze()
    {
        if (train && config.freeze.empty()) {
            const std::vector<int> blocks = topBlocks(model);
            if (blocks.size() >= 2) {
                const size_t k = blocks.size() / 2;
                Config c = config;
                std::string names;
                for (size_t i = 0; i < k; ++i) {
                    const std::string& path = model.layers[size_t(blocks[i])].path;
                    c.freeze.push_back(path); // a layer path freezes its subtree
                    names += (i ? ", " : "") + model.layers[size_t(blocks[i])].name;
                }
                consider(Advice::Kind::Freeze,
                         "freeze the first " + std::to_string(k) + " of " + std::to_string(blocks.size()) +
                             " blocks (" + names + ")",
                         c);
            }
        }
    }

    void tryZeroStage()
    {
        if (train && config.gpus > 1) {
            const Strategy s = config.strategy;
            std::vector<Strategy> stages;
            if (s == Strategy::DDP || s == Strategy::DP || s == Strategy::BalancedDP || s == Strategy::Single)
                stages = {Strategy::ZeRO1, Strategy::ZeRO2, Strategy::ZeRO3};
            else if (s == Strategy::ZeRO1)
                stages = {Strategy::ZeRO2, Strategy::ZeRO3};
            else if (s == Strategy::ZeRO2)
                stages = {Strategy::ZeRO3};
            std::vector<std::pair<std::string, Config>> options;
            for (Strategy st : stages) {
                Config c = config;
                c.strategy = st;
                options.emplace_back(zeroName(st), c);
            }
            pickMildest(Advice::Kind::ZeroStage, options);
        }
    }

    void tryGpu0Batch()
    {
        if (config.gpus > 1 && (config.strategy == Strategy::DP || config.strategy == Strategy::BalancedDP)) {
            Config c = config;
            c.strategy = Strategy::BalancedDP;
            c.gpu0Batch = -1;
            const ClusterEvaluation cl = evaluateCluster(judge.plan(), c);
            if (!cl.gpus.empty()) {
                c.gpu0Batch = cl.gpus.front().batch;
                if (!(config.strategy == Strategy::BalancedDP && config.gpu0Batch == c.gpu0Batch))
                    consider(Advice::Kind::Gpu0Batch, "GPU 0 batch " + std::to_string(c.gpu0Batch), c);
            }
        }
    }

    const Model& model;
    const Config& config;
    const AdviceInputs& known;
    const Judge judge;
    const int64_t before;
    const bool fitsBefore;
    const bool train;
    const int64_t batch;
    std::vector<Advice> out;
};

} // namespace

std::vector<Advice> advise(const Model& model, const Config& config, int maxItems)
{
    return advise(model, config, AdviceInputs{}, maxItems);
}

std::vector<Advice> advise(const Model& model, const Config& config, const AdviceInputs& known, int maxItems)
{
    std::vector<Advice> out = Advisor(model, config, known).run();
    std::stable_sort(out.begin(), out.end(), [](const Advice& a, const Advice& b) { return a.saving() > b.saving(); });
    if (maxItems >= 0 && out.size() > size_t(maxItems))
        out.resize(size_t(maxItems));
    return out;
}

} // namespace headroom
