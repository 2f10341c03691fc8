// evaluate(): one configuration -> every figure of docs/DESIGN.md "The memory model".
#include "engine/engine_internal.h"

#include "headroom/memory/allocator.h"

#include <algorithm>
#include <cmath>
#include <exception> // the checkpoint curve's second thread
#include <optional>
#include <system_error>
#include <thread>

namespace headroom {

std::string_view toString(Category c) noexcept
{
    switch (c) {
    case Category::Weights: return "weights";
    case Category::Buffers: return "buffers";
    case Category::Gradients: return "gradients";
    case Category::Optimizer: return "optimizer";
    case Category::MasterWeights: return "master_weights";
    case Category::Activations: return "activations";
    case Category::Workspace: return "workspace";
    case Category::Context: return "context";
    case Category::Input: return "input";
    case Category::Loss: return "loss";
    case Category::Count: break;
    }
    return "unknown";
}

std::string_view toString(Phase p) noexcept
{
    switch (p) {
    case Phase::Forward: return "forward";
    case Phase::Loss: return "loss";
    case Phase::Backward: return "backward";
    case Phase::Optimizer: return "optimizer";
    case Phase::Recompute: return "recompute";
    }
    return "unknown";
}

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

Bindings bindingsFor(const Model& m, const Config& config)
{
    Bindings b = config.symbols.size() == m.symbols.size() ? config.symbols : m.defaultBindings();
    if (config.accumulate > 1 && m.batchSymbol >= 0) {
        int64_t& batch = b[static_cast<size_t>(m.batchSymbol)];
        batch = (batch + config.accumulate - 1) / config.accumulate;
    }
    return b;
}

Sizes computeSizes(const PlanData& p, const Config& config, const ShapeTable& shapes, bool train)
{
    const Model& m = *p.model;
    Sizes s;
    const size_t nT = m.tensors.size();
    s.numel.assign(shapes.numel.begin(), shapes.numel.begin() + std::min(nT, shapes.numel.size()));
    s.numel.resize(nT, -1);
    s.act.assign(nT, 0);
    s.gradBytes.assign(nT, 0);
    s.weightBytes.assign(nT, 0);
    for (size_t t = 0; t < nT; ++t) {
        const int64_t n = s.numel[t];
        if (p.dynamic[t] && !p.virtualOut[t] && n > 0)
            s.act[t] = activationBytes(config, p, static_cast<int>(t), n);
    }
    s.spanElems.resize(p.spans.size());
    for (size_t k = 0; k < p.spans.size(); ++k)
        s.spanElems[k] = spanElements(*p.shapeClasses.shapes[static_cast<size_t>(p.spans[k].shape)], p.spans[k].begin,
                                      p.spans[k].end, shapes.values);
    const int gradElem = gradElemBytes(config);
    const FineTune& ft = config.finetune;
    // The adapters' own dtype as a config, made only when a model has adapters: no copy on an ordinary tick
    std::optional<Config> adapterConfig[2]; // [0] fp32, [1] 16-bit
    auto adapterConfigFor = [&](int elem) -> const Config& {
        std::optional<Config>& c = adapterConfig[elem == 2 ? 1 : 0];
        if (!c) {
            c = config;
            c->dtype = elem == 2 ? DtypePolicy::BF16 : DtypePolicy::FP32;
        }
        return *c;
    };
    const int dequantElem = dequantElemBytes(config); // once per tick, not per parameter
    const bool kbitPrep = kbitPrepApplies(config);
    for (size_t pi = 0; pi < p.trainable.size(); ++pi) {
        const int t = p.trainable[pi];
        const std::vector<int64_t>& dims = p.trainableDims[pi];
        const int64_t n = std::max<int64_t>(s.numel[static_cast<size_t>(t)], 0);
        if (ft.quant != Quant::None && p.quantizable[static_cast<size_t>(t)]) {
            // bitsandbytes Params4bit / Int8Params (never trained); each forward, backward and recompute
            // matmul dequantizes the whole weight into a compute-dtype transient (bnb.matmul_4bit,
            // MatMul4Bit.forward/backward: F.dequantize_4bit(B, quant_state).to(A.dtype)); the largest one
            // is counted at the peak (an upper bound when the peak falls outside any 4-bit matmul).
            const QuantCost q = quantizedCost(ft, n, dims, dequantElem);
            s.quantized += q.bytes;
            s.persistentWeights += q.bytes;
            s.weightBytes[static_cast<size_t>(t)] = q.bytes;
            s.dequantTransient = std::max(s.dequantTransient, q.transient);
            continue;
        }
        if (!train && p.mxfp4[static_cast<size_t>(t)]) {
            // gpt-oss's MXFP4 experts stay packed for inference (transformers' Mxfp4HfQuantizer with the triton
            // kernels); training dequantizes them (Mxfp4Config(dequantize=True), the OpenAI fine-tuning cookbook)
            const int64_t q = mxfp4Bytes(n);
            s.persistentWeights += q;
            s.weightBytes[static_cast<size_t>(t)] = q;
            continue;
        }
        // LoRA adapters keep their own dtype whatever the policy (PEFT >= 0.12: fp32, autocast_adapter_dtype=True
        // in LoraLayer.update_layer -> _cast_adapter_dtype; --lora dtype=bf16|fp16: 16-bit): weights, gradients
        // and optimizer state in it (torch optimizers' state is zeros_like the parameter)
        const int adapterElem = p.trainableAdapter[pi] ? loraAdapterBytes(config.finetune.lora) : 0;
        // prepare_model_for_kbit_training (peft/utils/other.py): every non-quantized fp16/bf16 parameter is
        // cast to fp32
        const int64_t w = adapterElem ? checkedMul(n, adapterElem).value_or(0)
                          : kbitPrep && isFloating(m.tensors[static_cast<size_t>(t)].dtype)
                              ? checkedMul(n, 4).value_or(0)
                              : paramBytes(config, m.tensors[static_cast<size_t>(t)].dtype, n);
        s.weightBytes[static_cast<size_t>(t)] = w;
        s.persistentWeights += w;
        if (train && !p.frozen[static_cast<size_t>(t)]) {
            s.gradBytes[static_cast<size_t>(t)] = checkedMul(n, adapterElem ? adapterElem : gradElem).value_or(0);
            const Config& oc = adapterElem ? adapterConfigFor(adapterElem) : config;
            const int64_t paged = pagedOptimizerBytes(oc, p.trainableDimsNumel[pi]);
            s.persistentOptimizer += optimizerStateBytes(oc, dims, p.trainableDimsNumel[pi]) - paged;
            s.pagedOptimizer += paged;
            // fp32 adapters need no fp32 master copy
            if ((config.dtype == DtypePolicy::MixedFP16 || config.dtype == DtypePolicy::MixedBF16) && adapterElem != 4)
                s.master += checkedMul(n, 4).value_or(0);
        }
    }
    if (p.untiedHead >= 0) {
        // lit-gpt's own lm_head beside the tied embedding (engine_plan.cpp): frozen under finetune/lora.py, a
        // Linear4bit like every other Linear under Lightning's bitsandbytes precision (outputLayerToo), whose
        // dequantized weight is then the largest transient
        const size_t pi = static_cast<size_t>(p.untiedHead);
        const int t = p.trainable[pi];
        const int64_t n = std::max<int64_t>(s.numel[static_cast<size_t>(t)], 0);
        if (ft.quant != Quant::None) {
            const QuantCost q = quantizedCost(ft, n, p.trainableDims[pi], dequantElem);
            s.untiedHead = q.bytes;
            s.quantized += q.bytes;
            s.dequantTransient = std::max(s.dequantTransient, q.transient);
        } else {
            s.untiedHead = paramBytes(config, m.tensors[static_cast<size_t>(t)].dtype, n);
        }
        s.persistentWeights += s.untiedHead;
    }
    for (int t : p.buffers)
        s.persistentWeights += bufferBytes(config, m.tensors[static_cast<size_t>(t)].dtype,
                                           std::max<int64_t>(s.numel[static_cast<size_t>(t)], 0));
    if (config.dtype == DtypePolicy::AmpFP16 || config.dtype == DtypePolicy::AmpBF16)
        for (int t : p.amp16Params)
            s.autocast += checkedMul(std::max<int64_t>(s.numel[static_cast<size_t>(t)], 0), 2).value_or(0);
    s.persistentWeights += s.autocast;
    if (ft.quant != Quant::None && !p.trainable.empty()) {
        s.dequantHeld = s.dequantTransient;
        s.persistentWeights += s.dequantHeld;
    }
    for (int t : m.inputs)
        s.inputBytes += s.act[static_cast<size_t>(t)];
    return s;
}

// The one place that turns a configuration into simulation options: evaluate, the fit's per-step highs and
// the allocator replay must simulate the same step (checkpoint segments, HF per-layer checkpointing).
SimOptions simOptionsFor(const PlanData& p, const Config& config, const ShapeTable& shapes, const Sizes& sizes,
                         bool train, bool events)
{
    SimOptions opt;
    opt.events = events;
    opt.inplace = config.inplace;
    if (train && config.finetune.layerCheckpoint && config.checkpointSegments <= 1) {
        opt.segmentOfUnit = layerCheckpointSegments(p);
        opt.segments = opt.segmentOfUnit.empty() ? 0 : opt.segmentOfUnit.back() + 1;
    } else if (train && config.checkpointSegments > 1) {
        opt.segmentOfUnit = checkpointSegments(p, config, shapes, sizes, config.checkpointSegments);
        opt.segments = opt.segmentOfUnit.empty() ? 0 : opt.segmentOfUnit.back() + 1;
    }
    opt.offload = config.offloadActivations && opt.segments > 1;
    return opt;
}

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

AllocatorOptions replayOptions(const Config& config)
{
    AllocatorOptions options;
    options.preallocated = config.gpu.workspace;
    options.perEvent = false;
    return options;
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

constexpr size_t kReplayAsideEvents = 20000;

// The allocator's reserved peak on a second thread.
class ReplayAside
{
public:
    ReplayAside() = default;
    ReplayAside(const ReplayAside&) = delete;
    ReplayAside& operator=(const ReplayAside&) = delete;
    ~ReplayAside()
    {
        if (m_thread.joinable())
            m_thread.join(); // an exception on the evaluating thread still waits for the replay's reads
    }
    // A system that cannot start a thread leaves running() false: the caller then replays on its own.
    void start(const Config& config, const PreparedSim& prepared)
    {
        try {
            m_thread = std::thread([this, &config, &prepared] {
                try {
                    m_result = replayAllocator(prepared, config.allocator, replayOptions(config)).reservedPeak;
                } catch (...) {
                    m_failed = std::current_exception();
                }
            });
        } catch (const std::system_error&) {
        }
    }
    bool running() const { return m_thread.joinable(); }
    int64_t join()
    {
        m_thread.join();
        if (m_failed)
            std::rethrow_exception(m_failed);
        return m_result;
    }

private:
    std::thread m_thread;
    int64_t m_result = 0;
    std::exception_ptr m_failed;
};

// keepEvents: a light evaluation that keeps the allocation events it recorded anyway (a non-exact allocator
// needs them for the reserved peak), for a fit that replays them under capacity.
Evaluation evaluateImpl(const PlanData& p, const Config& config, bool light, bool keepEvents = false)
{
    const Model& m = *p.model;
    Evaluation e;
    const bool train = !policyIsInference(config);
    const Bindings values = bindingsFor(m, config);
    e.shapes = evaluateShapes(m, p.shapeClasses, values);
    const Sizes sizes = computeSizes(p, config, e.shapes, train);

    const SimOptions opt = simOptionsFor(p, config, e.shapes, sizes, train,
                                         !light || config.allocator != AllocatorMode::Exact);
    // On a deep graph the allocator replay is the largest part of a full evaluation (issue 16: ~45 % of a
    // 100k-node tick). It needs only the program and the buffers' bytes, not the walk's events, and nothing
    // below needs it until the end: a second core replays while this one walks the iteration and computes
    // the saved sets, MACs, the inplace comparison and the per-node costs (a light evaluation: the walk and
    // the saved sets). Same figures either way; small graphs stay on one thread (a thread costs ~50 us).
    const PreparedSim prepared = prepareSimulation(p, config, e.shapes, sizes, opt);
    const bool replaysAllocator = opt.events && config.allocator != AllocatorMode::Exact;
    ReplayAside aside;
    if (replaysAllocator && prepared.events() >= kReplayAsideEvents)
        aside.start(config, prepared);
    // A light evaluation that does not hand its events on needs them only for the reserved peak, which
    // comes from the program: the walk writes none.
    SimResult sim = runSimulation(p, config, e.shapes, sizes, prepared, !light || keepEvents);

    Breakdown& b = e.memory;
    b.microBatch = m.batchSymbol >= 0 ? values[static_cast<size_t>(m.batchSymbol)] : 1;
    fillBreakdown(p, config, sizes, sim, train, b);
    const std::vector<int64_t> saved = train ? savedPerUnit(p, config, e.shapes, sizes, opt)
                                             : std::vector<int64_t>(p.units.size(), 0);
    for (int64_t v : saved)
        b.activationsSaved += v;
    b.offloadedActivations = train ? offloadedBytes(p, sizes, opt) : 0;
    b.classicEstimate = classicEstimate(p, config, e.shapes);

    const size_t nU = p.units.size();
    std::vector<int64_t> macsPerUnit(light ? 0 : nU, 0); // the per-node costs reuse them
    for (size_t u = 0; u < nU; ++u) {
        const int64_t macs = unitMacs(p, p.units[u], e.shapes, sizes);
        e.forwardMacs += macs;
        if (!light)
            macsPerUnit[u] = macs;
    }
    e.recomputeMacs = sim.recomputeMacs;
    addWarnings(p, config, opt, train, e);
    // Exact: allocated == reserved; Caching/Expandable: the allocator model's segments, the persistent
    // library workspaces (gpus.cpp) among them: they are blocks of the same allocator.
    if (!aside.running())
        b.reservedPeak = replaysAllocator
                             ? std::max(sim.peak,
                                        replayAllocator(prepared, config.allocator, replayOptions(config)).reservedPeak)
                             : sim.peak;
    e.peakStep = sim.peakStep;
    if (light) {
        if (keepEvents)
            e.events = std::move(sim.events);
        if (aside.running())
            b.reservedPeak = std::max(sim.peak, aside.join());
        return e;
    }

    // The honest answer to "inplace ReLU saves memory": the same iteration with the switch flipped.
    if (p.anyInplaceable) {
        SimOptions flipped = opt;
        flipped.events = false;
        flipped.inplace = !config.inplace;
        const int64_t other = simulatePeak(p, config, e.shapes, sizes, flipped);
        e.inplaceTransientSaving = config.inplace ? other - sim.peak : sim.peak - other;
    }

    e.timeline = std::move(sim.timeline);
    e.events = std::move(sim.events);
    e.peakLive = std::move(sim.peakLive);
    e.peakLiveBytes = std::move(sim.peakLiveBytes);
    fillNodeCosts(p, sizes, saved, macsPerUnit, e);
    if (aside.running())
        b.reservedPeak = std::max(e.memory.peak, aside.join());
    return e;
}

} // namespace

std::vector<int64_t> stepHighs(const PlanData& p, const Config& config)
{
    const Model& m = *p.model;
    const bool train = !policyIsInference(config);
    const ShapeTable shapes = evaluateShapes(m, p.shapeClasses, bindingsFor(m, config));
    const Sizes sizes = computeSizes(p, config, shapes, train);
    const SimResult sim = simulate(p, config, shapes, sizes, simOptionsFor(p, config, shapes, sizes, train, false));
    std::vector<int64_t> highs;
    highs.reserve(sim.timeline.size());
    for (const TimelinePoint& pt : sim.timeline)
        highs.push_back(std::max(pt.high, pt.allocated));
    return highs;
}

std::vector<AllocEvent> stepEvents(const PlanData& p, const Config& config)
{
    const Model& m = *p.model;
    const bool train = !policyIsInference(config);
    const ShapeTable shapes = evaluateShapes(m, p.shapeClasses, bindingsFor(m, config));
    const Sizes sizes = computeSizes(p, config, shapes, train);
    return simulate(p, config, shapes, sizes, simOptionsFor(p, config, shapes, sizes, train, true)).events;
}

std::vector<int64_t> varyingValues(int64_t top)
{
    std::vector<int64_t> values;
    if (top <= kVaryingValues) {
        for (int64_t v = 1; v <= top; ++v)
            values.push_back(v);
        return values;
    }
    values.reserve(static_cast<size_t>(kVaryingValues));
    for (int64_t k = 1; k <= kVaryingValues; ++k) // ceil(k * top / n), without forming k * top
        values.push_back(top / kVaryingValues * k + (top % kVaryingValues * k + kVaryingValues - 1) / kVaryingValues);
    return values;
}

bool variesSymbol(const Config& config) noexcept
{
    return config.varySymbol >= 0 && static_cast<size_t>(config.varySymbol) < config.symbols.size() &&
           config.allocator != AllocatorMode::Exact && config.symbols[static_cast<size_t>(config.varySymbol)] > 1;
}

namespace {

// Runs work(0) .. work(n - 1), independent evaluations of a const plan: with n >= 4 and a second core, that core
// takes the odd indices and this thread the even ones (a deep graph's evaluation is a simulation of its own).
// Each index writes its own result, so the values come out the same either way; an exception on either core is
// rethrown here once both are done.
template <typename Work> void onTwoCores(size_t n, const Work& work)
{
    if (n < 4 || std::thread::hardware_concurrency() < 2) {
        for (size_t i = 0; i < n; ++i)
            work(i);
        return;
    }
    std::exception_ptr failed;
    std::thread other([&] {
        try {
            for (size_t i = 1; i < n; i += 2)
                work(i);
        } catch (...) {
            failed = std::current_exception();
        }
    });
    try {
        for (size_t i = 0; i < n; i += 2)
            work(i);
    } catch (...) {
        other.join();
        throw;
    }
    other.join();
    if (failed)
        std::rethrow_exception(failed);
}

// Config::varySymbol. The caching allocator keeps every segment a step made until empty_cache() or an
// allocation that fails (CUDACachingAllocator.cpp: free() only returns a block to its pool; release_cached_blocks
// runs from malloc's retry and emptyCache), and which segments a step needs depends on its tensors' sizes: a
// shorter step's blocks can leave the optimizer step's temporaries no hole that the longest step's would
// (PEFT's full fine-tuning of Llama-3.2-3B: 40.5 GB reserved at 736 tokens, 36.1 GB at 768). So a run whose
// lengths vary up to the value set reserves at least the most any one of those steps does on its own: each
// step is evaluated at varyingValues() and the highest reserved peak kept. The allocated peak, the timeline and
// the verdict stay the longest step's: before an out-of-memory error the allocator gives every cached segment
// back and retries, so what must fit is a step, not the cache the earlier ones left.
void applyVarying(const PlanData& p, const Config& config, Evaluation& e)
{
    if (!variesSymbol(config))
        return;
    const size_t s = static_cast<size_t>(config.varySymbol);
    const int64_t top = config.symbols[s];
    std::vector<int64_t> values = varyingValues(top);
    values.pop_back(); // `top` itself: `e`
    std::vector<int64_t> reserved(values.size(), 0);
    const auto step = [&](size_t i) {
        Config c = config;
        c.varySymbol = -1;
        c.symbols[s] = values[i];
        reserved[i] = evaluateImpl(p, c, true).memory.reservedPeak;
    };
    onTwoCores(values.size(), step);
    e.memory.reservedPeakAt = top;
    for (size_t i = 0; i < values.size(); ++i) // the shortest step of the highest, whichever core ran it
        if (reserved[i] > e.memory.reservedPeak) {
            e.memory.reservedPeak = reserved[i];
            e.memory.reservedPeakAt = values[i];
        }
}

Evaluation evaluateVarying(const PlanData& p, const Config& config, bool light, bool keepEvents = false)
{
    Evaluation e = evaluateImpl(p, config, light, keepEvents);
    applyVarying(p, config, e);
    return e;
}

} // namespace

Evaluation evaluate(const EnginePlan& plan, const Config& config)
{
    if (!planMatches(plan, config)) {
        const PlanData p = buildPlan(*plan.model, planOptions(config));
        return evaluateVarying(p, config, false);
    }
    return evaluateVarying(*plan.data, config, false);
}

Evaluation evaluateLight(const EnginePlan& plan, const Config& config)
{
    if (!planMatches(plan, config)) {
        const PlanData p = buildPlan(*plan.model, planOptions(config));
        return evaluateVarying(p, config, true);
    }
    return evaluateVarying(*plan.data, config, true);
}

Evaluation evaluateLightWithEvents(const EnginePlan& plan, const Config& config)
{
    if (!planMatches(plan, config)) {
        const PlanData p = buildPlan(*plan.model, planOptions(config));
        return evaluateVarying(p, config, true, true);
    }
    return evaluateVarying(*plan.data, config, true, true);
}

Evaluation evaluate(const Model& model, const Config& config)
{
    const PlanData p = buildPlan(model, planOptions(config));
    return evaluateVarying(p, config, false);
}

std::vector<CheckpointPoint> checkpointCurve(const EnginePlan& plan, const Config& config, int maxK)
{
    // One plan for every k (segments are cut at evaluation time), and the curve plots the allocated peak
    // and the recompute, which the allocator model does not change: each point is simulated without
    // recording or replaying allocation events.
    Config base = config;
    base.allocator = AllocatorMode::Exact;
    base.finetune.layerCheckpoint = false; // the curve is checkpoint_sequential's, k = 1 meaning none
    const EnginePlan own = planMatches(plan, base) ? EnginePlan{} : makePlan(*plan.model, base);
    const EnginePlan& use = own.data ? own : plan;
    const int n = std::max(1, maxK);
    std::vector<CheckpointPoint> curve(static_cast<size_t>(n));
    const auto point = [&](int k) {
        Config c = base;
        c.checkpointSegments = k;
        const Evaluation e = evaluateLight(use, c);
        curve[static_cast<size_t>(k - 1)] = {k, e.memory.peak, e.recomputeMacs};
    };
    // The points are independent evaluations of a const plan: on a deep graph each k is a simulation of
    // its own (the segments change the walk), so a second core takes every other k. Same values in the
    // same order either way.
    onTwoCores(static_cast<size_t>(n), [&](size_t i) { point(static_cast<int>(i) + 1); });
    return curve;
}

std::vector<CheckpointPoint> checkpointCurve(const Model& model, const Config& config, int maxK)
{
    return checkpointCurve(makePlan(model, config), config, maxK);
}

int bestCheckpointSegments(const std::vector<CheckpointPoint>& curve)
{
    int best = curve.empty() ? 1 : curve.front().k;
    int64_t bestPeak = curve.empty() ? 0 : curve.front().peak;
    for (const CheckpointPoint& pt : curve)
        if (pt.peak < bestPeak) {
            bestPeak = pt.peak;
            best = pt.k;
        }
    return best;
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
