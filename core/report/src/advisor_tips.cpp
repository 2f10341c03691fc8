// The advisor's tips, one change of the configuration each: which change, on which condition. Whether it
// is shown, and with what saving, is the engine's answer (Tips::consider, advisor.cpp).
#include "advisor_internal.h"

#include "headroom/hardware/multigpu.h"
#include "headroom/import/batch.h"

#include <algorithm>
#include <cctype>

namespace headroom::advisor {
namespace {

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

// The children of `layer` that hold parameters, in topological order.
std::vector<int> paramChildren(const Model& model, int layer)
{
    std::vector<int> out;
    for (int c : model.layers[size_t(layer)].children)
        if (model.layers[size_t(c)].params > 0)
            out.push_back(c);
    std::sort(out.begin(), out.end(),
              [&](int a, int b) { return model.layers[size_t(a)].firstNode < model.layers[size_t(b)].firstNode; });
    return out;
}

// "layers.12", "12": an entry of a ModuleList or Sequential.
bool numbered(const std::string& name)
{
    const size_t dot = name.find_last_of('.');
    const std::string last = dot == std::string::npos ? name : name.substr(dot + 1);
    return !last.empty() && std::all_of(last.begin(), last.end(), [](unsigned char ch) { return std::isdigit(ch); });
}

// The stack of repeated blocks that holds most of the model (a transformer's `model.layers.*`: the 32 decoder
// layers of a Llama, beside its embedding and norm), reached through the children that hold at least half of
// their parent's parameters; empty where there is none (a ResNet's stages are not one stack).
std::vector<int> blockStack(const Model& model, int at)
{
    constexpr size_t kMinBlocks = 4;
    const std::vector<int> children = paramChildren(model, at);
    std::vector<int> blocks;
    int64_t held = 0;
    for (int c : children)
        if (numbered(model.layers[size_t(c)].name)) {
            blocks.push_back(c);
            held += model.layers[size_t(c)].params;
        }
    if (blocks.size() >= kMinBlocks && held * 2 >= model.layers[size_t(at)].params)
        return blocks;
    for (int c : children)
        if (model.layers[size_t(c)].params * 2 >= model.layers[size_t(at)].params)
            return blockStack(model, c);
    return {};
}

// The layers a user would freeze "from the bottom": the blocks of the stack that holds most of the model,
// else the first level of the layer tree with more than one child, in topological order.
std::vector<int> topBlocks(const Model& model)
{
    if (model.layers.empty())
        return {};
    if (std::vector<int> stack = blockStack(model, 0); !stack.empty())
        return stack;
    int at = 0;
    while (model.layers[size_t(at)].children.size() == 1)
        at = model.layers[size_t(at)].children.front();
    return paramChildren(model, at);
}

// The largest global batch below the current one whose heaviest GPU fits.
int64_t largestFittingClusterBatch(const Situation& s)
{
    int64_t lo = 0, hi = s.batch - 1;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo + 1) / 2;
        if (s.judge.judge(withBatch(s.model, s.config, mid)).fits)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

Config withDtype(const Config& config, DtypePolicy dtype)
{
    Config c = config;
    c.dtype = dtype;
    return c;
}

} // namespace

// Smaller batch: the largest that fits (only worth saying when the current one does not): the safe max batch
// the report gives (Fit::maxBatch), never the model's own boundary above it.
void tryBatch(const Situation& s, Tips& tips)
{
    if (s.fitsBefore || s.config.gpu.capacity <= 0 || s.model.batchSymbol < 0 || s.batch <= 1)
        return;
    const int64_t best = multiGpu(s.config) ? largestFittingClusterBatch(s)
                                            : std::min(safeMaxBatch(s.judge.plan(), s.config, s.batch), s.batch - 1);
    if (best >= 1)
        tips.consider(Advice::Kind::Batch, "batch " + std::to_string(best), withBatch(s.model, s.config, best));
}

// 16-bit: pure and autocast (training) / weight-only int8 (inference).
void tryDtype(const Situation& s, Tips& tips)
{
    const DtypePolicy d = s.config.dtype;
    if (s.train) {
        if (d != DtypePolicy::BF16 && d != DtypePolicy::FP16)
            tips.consider(Advice::Kind::Dtype, "bf16", withDtype(s.config, DtypePolicy::BF16));
        if (d == DtypePolicy::FP32)
            tips.consider(Advice::Kind::Dtype, "amp-bf16", withDtype(s.config, DtypePolicy::AmpBF16));
    } else {
        if (d == DtypePolicy::FP32)
            tips.consider(Advice::Kind::Dtype, "bf16", withDtype(s.config, DtypePolicy::BF16));
        if (d != DtypePolicy::INT8 && d != DtypePolicy::INT4)
            tips.consider(Advice::Kind::Dtype, "int8", withDtype(s.config, DtypePolicy::INT8));
    }
}

void tryCheckpoint(const Situation& s, Tips& tips)
{
    if (!s.train || s.config.checkpointSegments > 1 || s.model.nodes.empty())
        return;
    const int maxK = int(std::min<size_t>(16, s.model.nodes.size()));
    Config single = s.config;
    if (multiGpu(s.config)) { // the curve is per GPU: evaluate it at one GPU's batch
        single.gpus = 1;
        single.strategy = Strategy::Single;
    }
    const bool reuse = s.known.checkpointCurve && !multiGpu(s.config) &&
                       s.known.checkpointCurve->size() == size_t(maxK);
    const int k = bestCheckpointSegments(reuse ? *s.known.checkpointCurve
                                               : checkpointCurve(s.judge.plan(), single, maxK));
    if (k > 1) {
        Config c = s.config;
        c.checkpointSegments = k;
        tips.consider(Advice::Kind::Checkpoint, std::to_string(k) + " checkpoint segments", c);
    }
}

void tryAccumulate(const Situation& s, Tips& tips)
{
    if (!s.train || s.batch < 2)
        return;
    std::vector<std::pair<std::string, Config>> options;
    for (int steps = std::max(s.config.accumulate, 1) * 2; steps <= s.batch; steps *= 2) {
        Config c = s.config;
        c.accumulate = steps;
        options.emplace_back(std::to_string(steps) + " gradient accumulation steps", c);
        if (s.fitsBefore)
            break; // it already fits: the first step says what the technique is worth
    }
    tips.pickMildest(Advice::Kind::Accumulate, options);
}

void tryInplace(const Situation& s, Tips& tips)
{
    if (s.config.inplace)
        return;
    Config c = s.config;
    c.inplace = true;
    tips.consider(Advice::Kind::Inplace, "inplace activations", c);
}

void tryFreeze(const Situation& s, Tips& tips)
{
    if (!s.train || !s.config.freeze.empty())
        return;
    const std::vector<int> blocks = topBlocks(s.model);
    if (blocks.size() < 2)
        return;
    const size_t k = blocks.size() / 2;
    Config c = s.config;
    for (size_t i = 0; i < k; ++i)
        c.freeze.push_back(s.model.layers[size_t(blocks[i])].path); // a layer path freezes its subtree
    // Two names at most, the first and the last: a 25,000-block model's tip stays one short line.
    const std::string& first = s.model.layers[size_t(blocks.front())].name;
    const std::string names = k == 1   ? first
                              : k == 2 ? first + ", " + s.model.layers[size_t(blocks[1])].name
                                       : first + " to " + s.model.layers[size_t(blocks[k - 1])].name;
    if (Advice* a = tips.consider(Advice::Kind::Freeze,
                                  "freeze the first " + std::to_string(k) + " of " + std::to_string(blocks.size()) +
                                      " blocks (" + names + ")",
                                  c)) {
        a->count = static_cast<int64_t>(k);
        a->of = static_cast<int64_t>(blocks.size());
        a->names = names;
    }
}

void tryZeroStage(const Situation& s, Tips& tips)
{
    if (!s.train || s.config.gpus <= 1)
        return;
    const Strategy now = s.config.strategy;
    std::vector<Strategy> stages;
    if (now == Strategy::DDP || now == Strategy::DP || now == Strategy::BalancedDP || now == Strategy::Single)
        stages = {Strategy::ZeRO1, Strategy::ZeRO2, Strategy::ZeRO3};
    else if (now == Strategy::ZeRO1)
        stages = {Strategy::ZeRO2, Strategy::ZeRO3};
    else if (now == Strategy::ZeRO2)
        stages = {Strategy::ZeRO3};
    std::vector<std::pair<std::string, Config>> options;
    for (Strategy st : stages) {
        Config c = s.config;
        c.strategy = st;
        options.emplace_back(zeroName(st), c);
    }
    tips.pickMildest(Advice::Kind::ZeroStage, options);
}

void tryGpu0Batch(const Situation& s, Tips& tips)
{
    if (s.config.gpus <= 1 || (s.config.strategy != Strategy::DP && s.config.strategy != Strategy::BalancedDP))
        return;
    Config c = s.config;
    c.strategy = Strategy::BalancedDP;
    c.gpu0Batch = -1;
    const ClusterEvaluation cl = evaluateCluster(s.judge.plan(), c);
    if (cl.gpus.empty())
        return;
    c.gpu0Batch = cl.gpus.front().batch;
    if (!(s.config.strategy == Strategy::BalancedDP && s.config.gpu0Batch == c.gpu0Batch))
        tips.consider(Advice::Kind::Gpu0Batch, "GPU 0 batch " + std::to_string(c.gpu0Batch), c);
}

} // namespace headroom::advisor
