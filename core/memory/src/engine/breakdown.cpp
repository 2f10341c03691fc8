// An evaluation's figures once the walk has run (engine.cpp, evaluateImpl): the memory breakdown, the saved
// set per unit, the bytes activation offloading moves to the host, the warnings, the per-node costs, and the
// seed rule the report compares against (classicEstimate).
#include "engine/engine_internal.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace headroom {

namespace {

// The seed rule's arithmetic once its two sums are known (see classicEstimate below).
int64_t classicEstimateFrom(const Config& config, int64_t paramBytesTotal, int64_t outputs)
{
    const bool train = !policyIsInference(config);
    double n = 1;
    if (train) {
        const double perParam = optimizerBytesPerParam(config);
        n = config.optimizer == Optimizer::Adam || config.optimizer == Optimizer::AdamW ? 4 : 2 + perParam / 4.0;
        if (config.optimizer == Optimizer::SGD)
            n = 2;
    }
    const double total = static_cast<double>(paramBytesTotal) * n + static_cast<double>(outputs) * (train ? 2.0 : 1.0);
    return static_cast<int64_t>(std::llround(total));
}

} // namespace

void fillBreakdown(const PlanData& p, const Config& config, const Sizes& sizes, const SimResult& sim, bool train,
                   Breakdown& b)
{
    const Model& m = *p.model;
    // Stored bytes only: the dequantized copy a 4-bit matmul makes is reported apart (the timeline holds both)
    b.weights = sizes.persistentWeights - sizes.dequantHeld;
    b.dequantTransient = sizes.dequantHeld;
    for (int t : p.buffers)
        b.buffers += bufferBytes(config, m.tensors[static_cast<size_t>(t)].dtype,
                                 std::max<int64_t>(sizes.numel[static_cast<size_t>(t)], 0));
    b.autocastCopies = sizes.autocast;
    for (int t : p.trainable)
        b.gradients += sizes.gradBytes[static_cast<size_t>(t)];
    b.optimizer = train ? sizes.persistentOptimizer : 0;
    b.pagedOptimizer = train ? sizes.pagedOptimizer : 0;
    b.masterWeights = train ? sizes.master : 0;
    b.input = sizes.inputBytes;
    b.workspace = config.gpu.workspace;
    b.context = config.gpu.context;
    b.peak = sim.peak;
    b.activationsPeak = sim.peakActivations + sim.peakLoss;
    b.lossBytes = sim.peakLoss;
    b.activationsTransient = std::max<int64_t>(0, sim.peakActivations - sim.peakSaved);
}

// Saved set per unit: distinct storages (views resolved) + per-op extras; checkpointed segments keep only
// their inputs.
std::vector<int64_t> savedPerUnit(const PlanData& p, const Config& config, const ShapeTable& shapes, const Sizes& sizes,
                                  const SimOptions& opt)
{
    const Model& m = *p.model;
    const size_t nU = p.units.size();
    const bool ckpt = opt.segments > 1;
    std::vector<uint8_t> seen(m.tensors.size(), 0);
    std::vector<int64_t> saved(nU, 0);
    for (size_t u = 0; u < nU; ++u) {
        const bool ck = ckpt && opt.segmentOfUnit[u] < opt.segments - 1;
        if (ck) {
            for (int t : p.units[u].inputs) {
                if (!p.dynamic[static_cast<size_t>(t)])
                    continue;
                const int pr = m.tensors[static_cast<size_t>(t)].producer;
                const int pu = pr >= 0 ? p.unitOfNode[static_cast<size_t>(pr)] : -1;
                if (pu >= 0 && opt.segmentOfUnit[static_cast<size_t>(pu)] == opt.segmentOfUnit[u])
                    continue;
                const int rt = p.root[static_cast<size_t>(t)];
                if (!seen[static_cast<size_t>(rt)]) {
                    seen[static_cast<size_t>(rt)] = 1;
                    saved[u] += sizes.act[static_cast<size_t>(rt)];
                }
            }
            continue;
        }
        for (int i = p.savedBegin[u]; i < p.savedBegin[u + 1]; ++i) {
            const SavedItem& it = p.savedFlat[static_cast<size_t>(i)];
            if (it.condView >= 0 && !savedItemActive(p, shapes, it))
                continue;
            if (it.kind == SavedItem::Kind::Storage) {
                if (seen[static_cast<size_t>(it.tensor)])
                    continue;
                seen[static_cast<size_t>(it.tensor)] = 1;
            }
            saved[u] += savedItemBytes(p, config, shapes, sizes, it);
        }
    }
    return saved;
}

// Activation offloading's host bytes: torchtune's pack_tensor copies every qualifying pack to a pinned tensor of
// its own; what each checkpointed segment packs is the hidden states the previous one produced
// (timeline/offload.cpp).
int64_t offloadedBytes(const PlanData& p, const Sizes& sizes, const SimOptions& opt)
{
    if (!opt.offload)
        return 0;
    const Model& m = *p.model;
    std::vector<int> packedIn(m.tensors.size(), -1); // the last segment that packed a storage
    int64_t total = 0;
    for (size_t u = 0; u < p.units.size(); ++u) {
        const int seg = opt.segmentOfUnit[u];
        if (seg >= opt.segments - 1)
            continue;
        for (int t : p.units[u].inputs) {
            const size_t rt = static_cast<size_t>(p.root[static_cast<size_t>(t)]);
            if (!p.dynamic[static_cast<size_t>(t)] || packedIn[rt] == seg ||
                !handedOn(p, opt, static_cast<int>(rt), seg))
                continue;
            packedIn[rt] = seg;
            if (sizes.act[rt] >= kMinOffloadBytes)
                total += sizes.act[rt];
        }
    }
    return total;
}

void addWarnings(const PlanData& p, const Config& config, const SimOptions& opt, bool train, Evaluation& e)
{
    e.warnings = p.warnings;
    if (train && config.offloadActivations && opt.segments <= 1) // torchtune's recipes raise RuntimeError
        e.warnings.push_back("--offload-activations: needs activation checkpointing (--grad-checkpoint layers or "
                             "--checkpoint K), as torchtune's recipes do; nothing is offloaded");
    if (train && config.finetune.layerCheckpoint && config.checkpointSegments <= 1 && opt.segments == 0)
        e.warnings.push_back(
            "--grad-checkpoint layers: no decoder-layer list (model.layers.N) in the layer tree; nothing is checkpointed");
    if (config.mode == Mode::Train && policyIsInference(config))
        e.warnings.push_back(std::string("dtype policy ") + std::string(toString(config.dtype)) +
                             " is weight-only inference: evaluated as inference");
    if (e.shapes.unknown > 0)
        e.warnings.push_back(std::to_string(e.shapes.unknown) +
                             " activation(s) have an unknown shape at this binding and count as 0 bytes");
}

void fillNodeCosts(const PlanData& p, const Sizes& sizes, const std::vector<int64_t>& savedBytes,
                   const std::vector<int64_t>& macsPerUnit, Evaluation& e)
{
    e.nodes.assign(p.model->nodes.size(), {});
    for (const auto& [n, t] : p.nodeOutputs) {
        NodeCost& c = e.nodes[static_cast<size_t>(n)];
        if (sizes.numel[static_cast<size_t>(t)] < 0 && p.dynamic[static_cast<size_t>(t)])
            c.unknownShape = true;
        c.outputBytes += sizes.act[static_cast<size_t>(t)];
    }
    for (size_t u = 0; u < p.units.size(); ++u) {
        NodeCost& c = e.nodes[static_cast<size_t>(p.units[u].head)];
        c.savedBytes += savedBytes[u];
        c.recomputeMacs += macsPerUnit[u];
    }
    for (size_t i = 0; i < p.trainable.size(); ++i) {
        const int t = p.trainable[i];
        const int first = p.paramNode[i];
        if (first >= 0 && !p.frozen[static_cast<size_t>(t)])
            e.nodes[static_cast<size_t>(first)].params += std::max<int64_t>(sizes.numel[static_cast<size_t>(t)], 0);
    }
}

// classicEstimate (below) over the plan's flat lists: the same sums without walking every node and tensor.
int64_t classicEstimate(const PlanData& p, const Config& config, const ShapeTable& shapes)
{
    const Model& model = *p.model;
    int64_t paramBytesTotal = 0;
    for (int ti : p.classicParams) {
        const size_t t = static_cast<size_t>(ti);
        if (t < shapes.numel.size())
            paramBytesTotal += paramBytes(config, model.tensors[t].dtype, std::max<int64_t>(shapes.numel[t], 0));
    }
    int64_t outputs = 0;
    for (int ti : p.classicOutputs) {
        const size_t t = static_cast<size_t>(ti);
        if (t < shapes.bytes.size() && shapes.bytes[t] > 0)
            outputs += shapes.bytes[t];
    }
    return classicEstimateFrom(config, paramBytesTotal, outputs);
}

// The seed rule: params x n + batch x sum(outputs) x 2. n counts copies of the parameters (weights,
// gradients and optimizer states: 2 for SGD, 4 for Adam, 2 + states/param bytes for others), so
// params x n is in bytes at the parameter dtype; "batch x sum(outputs)" is the sum of every node
// output at this batch, and x 2 stands for its gradient.
int64_t classicEstimate(const Model& model, const Config& config, const ShapeTable& shapes)
{
    int64_t paramBytesTotal = 0;
    for (size_t t = 0; t < model.tensors.size(); ++t) {
        const Tensor& tensor = model.tensors[t];
        if (tensor.role == TensorRole::Parameter && tensor.aliasOf < 0 && tensor.producer < 0 &&
            t < shapes.numel.size())
            paramBytesTotal += paramBytes(config, tensor.dtype, std::max<int64_t>(shapes.numel[t], 0));
    }
    int64_t outputs = 0;
    for (const Node& nd : model.nodes)
        for (int t : nd.outputs) {
            if (t < 0 || static_cast<size_t>(t) >= shapes.bytes.size())
                continue;
            const Tensor& tensor = model.tensors[static_cast<size_t>(t)];
            if (tensor.role != TensorRole::Activation || shapes.bytes[static_cast<size_t>(t)] <= 0)
                continue;
            outputs += shapes.bytes[static_cast<size_t>(t)];
        }
    return classicEstimateFrom(config, paramBytesTotal, outputs);
}

} // namespace headroom
