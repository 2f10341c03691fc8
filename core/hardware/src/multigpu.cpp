// Per-GPU memory under DDP, DataParallel, balanced DataParallel, ZeRO-1/2/3 and FSDP (docs/DESIGN.md "Multi-GPU").
//
// Every GPU's figure comes from the single-GPU simulation at that GPU's batch: its allocation events are
// re-played with the strategy's changes applied per category (sharded optimizer states, gradients and
// parameters, dropped optimizer on DataParallel replicas, loss at the full batch on DataParallel's GPU 0)
// plus the buffers the strategy adds (DDP buckets, gathered parameters, gathered outputs). The peak is
// the maximum of that derived timeline, so it moves with the phase in which each buffer lives instead of
// adding category totals. docs/ACCURACY-allocator.md lists the assumptions.
#include "headroom/hardware/multigpu.h"

#include "fsdp_units.h"
#include "headroom/base/format.h"
#include "headroom/memory/allocator.h"
#include "headroom/memory/finetune_summary.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <unordered_map>

namespace headroom {
namespace {

constexpr int64_t kDdpBucketBytes = int64_t(25) << 20; // DistributedDataParallel bucket_cap_mb
constexpr int kDdpBuckets = 2;                         // the one being filled and the one in flight
constexpr size_t kCategories = size_t(Category::Count);

int64_t ceilDiv(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : a; }

// bytes * num / den, rounded up (a shard of an odd-sized tensor is padded, as ZeRO's flat partitions are).
struct Ratio
{
    int64_t num = 1, den = 1;
    int64_t apply(int64_t bytes) const
    {
        if (num == den)
            return bytes;
        if (num == 0 || bytes <= 0)
            return 0;
        return int64_t(std::ceil(double(bytes) * double(num) / double(den)));
    }
};

// How one GPU's timeline is derived from a single-GPU evaluation.
struct Derivation
{
    std::array<Ratio, kCategories> category{}; // Weights/Gradients: the non-parameter part
    Ratio paramWeights, paramGrads;            // weights and gradients of parameters
    std::array<bool, kCategories> offload{};   // category moved to host memory
    bool offloadParamWeights = false, offloadParamGrads = false;
    int64_t persistent = 0;  // held for the whole step (DDP buckets)
    int64_t compute = 0;     // held from the first forward to the last backward event (gathered params)
    int64_t atLoss = 0;      // held across the loss (DataParallel's gathered outputs)
    int64_t atOptimizer = 0; // held during the optimizer step (ZeRO's fp32 gradient partition)
    bool offloadAtOptimizer = false;
    // FSDP (fsdp_units.h): all-gather outputs on the unshard stream, outside the default pool: held from the
    // first forward (the root unit and the layer computed) and during backward (the prefetched layer)
    int64_t computeSide = 0, backwardSide = 0;
    int64_t backwardGrad = 0; // held during backward: the unsharded gradient of one unit
    // held for the whole step: FSDP gradients beyond the parameters' own (use_orig_params' frozen parts, no_sync's
    // unsharded accumulation)
    int64_t persistentGrads = 0;
    int64_t sideReserved = 0; // what the unshard stream's pool reserves
    // FSDP CPU offload: each offloaded parameter gradient's shard stays on the GPU, in the post-backward stream's
    // pool, from its reduce-scatter to the end of backward (fsdp_units.cpp, fsdpSidePoolsReserved)
    bool gradShardsUntilBackwardEnd = false;
    // FSDP FULL_SHARD without offload: the sharded gradients (flat_param.grad) are the post-backward stream's
    // blocks too, and stay its until the optimizer frees them: counted as allocated, reserved in that pool
    // (fsdpSidePoolsReserved), never in the default one
    bool gradShardsOnSideStream = false;
    std::vector<InitOp> init{}; // FSDP's init: the shards replace the parameters' setup allocations
    int64_t weightsDelta = 0;   // the init's weight bytes less the sharded setup ones (4-bit quantization state)
    int64_t cpuDelta = 0;       // the same for the shards offloaded to the host
    // FSDP with use_orig_params=False: model.parameters() are the FlatParameters, so torch.optim's
    // _init_group makes stateTensors zeros_like tensors per trainable flat parameter (its bytes on this GPU
    // here), not one block. It matters for LoRA: each adapter is its own flat parameter (fsdp_units.cpp), whose
    // shards are requests of at most 1 MiB, served from the small pool's 2 MiB segments
    // (CUDACachingAllocator.cpp kSmallSize), which never reuse the large blocks FSDP's init left cached.
    std::vector<int64_t> flatParams{};
    int stateTensors = 0;
};

struct Derived
{
    std::vector<AllocEvent> events; // the default stream's pool
    int64_t sideReserved = 0;       // other streams' pools
    int64_t peak = 0, weights = 0, gradients = 0, optimizer = 0, activations = 0, loss = 0, communication = 0, cpu = 0;
};

bool isParameter(const Model& model, int tensor)
{
    return tensor >= 0 && size_t(tensor) < model.tensors.size() &&
           model.tensors[size_t(tensor)].role == TensorRole::Parameter;
}

std::vector<Phase> phaseOfStep(const Evaluation& ev)
{
    int maxStep = -1;
    for (const auto& p : ev.timeline)
        maxStep = std::max(maxStep, p.step);
    for (const auto& e : ev.events)
        maxStep = std::max(maxStep, e.step);
    std::vector<Phase> phases(size_t(maxStep + 1), Phase::Forward);
    for (const auto& p : ev.timeline)
        if (p.step >= 0)
            phases[size_t(p.step)] = p.phase;
    return phases;
}

// Where the step's phases begin and end in the event list.
struct PhaseBounds
{
    std::ptrdiff_t firstForward = -1, lastCompute = -1, firstLoss = -1, lastLoss = -1, lastForward = -1,
                   firstOptimizer = -1, firstBackward = -1;
};

PhaseBounds phaseBounds(const Evaluation& ev)
{
    const std::vector<Phase> phases = phaseOfStep(ev);
    auto phaseOf = [&](const AllocEvent& e) { return e.step >= 0 ? phases[size_t(e.step)] : Phase::Forward; };
    const auto& events = ev.events;
    const auto n = std::ptrdiff_t(events.size());
    PhaseBounds pb;
    for (std::ptrdiff_t i = 0; i < n; ++i) {
        const Phase p = phaseOf(events[size_t(i)]);
        if (p == Phase::Forward) {
            if (pb.firstForward < 0)
                pb.firstForward = i;
            pb.lastForward = i;
        }
        if (p == Phase::Loss) {
            if (pb.firstLoss < 0)
                pb.firstLoss = i;
            pb.lastLoss = i;
        }
        if (p == Phase::Forward || p == Phase::Loss || p == Phase::Backward || p == Phase::Recompute)
            pb.lastCompute = i;
        if ((p == Phase::Backward || p == Phase::Recompute) && pb.firstBackward < 0)
            pb.firstBackward = i;
        if (p == Phase::Optimizer && pb.firstOptimizer < 0)
            pb.firstOptimizer = i;
    }
    // Without loss events (--loss none) outputs are gathered right after the forward.
    if (pb.firstLoss < 0) {
        pb.firstLoss = pb.lastForward + 1;
        pb.lastLoss = pb.lastForward;
    }
    if (pb.firstOptimizer < 0)
        pb.firstOptimizer = pb.lastCompute + 1;
    if (pb.firstForward < 0)
        pb.firstForward = 0;
    if (pb.firstBackward < 0)
        pb.firstBackward = pb.lastLoss + 1;
    return pb;
}

// A buffer the strategy adds: allocated before event allocBefore, freed after event freeAfter.
struct Extra
{
    std::ptrdiff_t allocBefore, freeAfter;
    int64_t bytes;
    Category category;
    int64_t id = -1;
    bool side = false; // on another stream's pool: counted as allocated, not replayed in the default pool
};

std::vector<Extra> strategyExtras(const Evaluation& ev, const Derivation& how)
{
    const PhaseBounds pb = phaseBounds(ev);
    const auto n = std::ptrdiff_t(ev.events.size());
    int64_t nextId = 0;
    for (const auto& e : ev.events)
        nextId = std::max(nextId, e.id + 1);
    std::vector<Extra> extras;
    if (how.persistent > 0)
        extras.push_back({0, n - 1, how.persistent, Category::Workspace});
    if (how.compute > 0)
        extras.push_back({pb.firstForward, pb.lastCompute, how.compute, Category::Workspace});
    if (how.atLoss > 0)
        extras.push_back({pb.firstLoss, std::max(pb.lastLoss, pb.firstLoss), how.atLoss, Category::Workspace});
    if (how.atOptimizer > 0 && !how.offloadAtOptimizer)
        extras.push_back({pb.firstOptimizer, std::max(pb.firstOptimizer, n - 1), how.atOptimizer, Category::Gradients});
    const std::ptrdiff_t backwardEnd = std::max(pb.lastCompute, pb.firstBackward);
    if (how.computeSide > 0)
        extras.push_back({pb.firstForward, pb.lastCompute, how.computeSide, Category::Workspace, -1, true});
    if (how.backwardSide > 0)
        extras.push_back({pb.firstBackward, backwardEnd, how.backwardSide, Category::Workspace, -1, true});
    if (how.backwardGrad > 0)
        extras.push_back({pb.firstBackward, backwardEnd, how.backwardGrad, Category::Gradients});
    if (how.persistentGrads > 0)
        extras.push_back({0, n - 1, how.persistentGrads, Category::Gradients, -1, how.gradShardsOnSideStream});
    for (auto& x : extras)
        x.id = nextId++;
    return extras;
}

// Replays the derived events on one GPU: what is live, by category, and the peak's make-up.
class Replay
{
public:
    Replay(const Evaluation& ev, std::vector<Extra> extras, Derived& out)
        : m_events(ev.events), m_n(std::ptrdiff_t(ev.events.size())), m_extras(std::move(extras)), m_out(out)
    {
        m_live.reserve(m_events.size());
    }

    // record: the event is the default pool's (false: another stream's, counted in the totals only)
    void push(AllocEvent e, bool record = true)
    {
        if (e.kind == AllocEvent::Kind::Alloc) {
            if (e.bytes <= 0)
                return;
            m_live[e.id] = {e.category, e.bytes};
            m_total += e.bytes;
            m_liveBy[size_t(e.category)] += e.bytes;
        } else {
            auto it = m_live.find(e.id);
            if (it == m_live.end())
                return;
            e.bytes = it->second.second;
            m_total -= e.bytes;
            m_liveBy[size_t(it->second.first)] -= e.bytes;
            m_live.erase(it);
        }
        if (record)
            m_out.events.push_back(e);
        if (m_total > m_out.peak) {
            m_out.peak = m_total;
            m_out.activations = m_liveBy[size_t(Category::Activations)] + m_liveBy[size_t(Category::Input)] +
                                m_liveBy[size_t(Category::Loss)];
            m_out.loss = m_liveBy[size_t(Category::Loss)];
        }
    }

    // The strategy's buffers allocated before (or freed after) event i.
    void pushExtras(std::ptrdiff_t i, bool before)
    {
        for (const auto& x : m_extras) {
            const bool hit = before ? x.allocBefore == i : x.freeAfter == i;
            if (!hit)
                continue;
            AllocEvent e;
            e.kind = before ? AllocEvent::Kind::Alloc : AllocEvent::Kind::Free;
            e.id = x.id;
            e.bytes = x.bytes;
            e.category = x.category;
            e.step = i < m_n && i >= 0 ? m_events[size_t(i)].step : (m_n > 0 ? m_events.back().step : 0);
            push(e, !x.side);
        }
    }

    // FSDP's init in place of the parameters' setup allocations: the shards stay and count, the rest only
    // leaves cache behind (the peak statistics are reset after it).
    void pushInit(std::ptrdiff_t i, const std::vector<InitOp>& ops, int64_t& nextId)
    {
        const int step = i < m_n && i >= 0 ? m_events[size_t(i)].step : 0;
        std::vector<std::pair<int64_t, bool>> ids; // slot -> (id, kept)
        for (const InitOp& op : ops) {
            if (op.alloc) {
                if (size_t(op.slot) >= ids.size())
                    ids.resize(size_t(op.slot) + 1, {-1, false});
                ids[size_t(op.slot)] = {nextId, op.kept};
                const AllocEvent e{AllocEvent::Kind::Alloc, nextId++, op.bytes, Category::Weights, step, -1};
                if (op.kept)
                    push(e);
                else
                    m_out.events.push_back(e);
            } else {
                const auto [id, kept] = ids[size_t(op.slot)];
                const AllocEvent e{AllocEvent::Kind::Free, id, 0, Category::Weights, step, -1};
                if (kept)
                    push(e);
                else
                    m_out.events.push_back(e);
            }
        }
    }

private:
    const std::vector<AllocEvent>& m_events;
    const std::ptrdiff_t m_n;
    const std::vector<Extra> m_extras;
    Derived& m_out;
    std::unordered_map<int64_t, std::pair<Category, int64_t>> m_live; // id -> (category, bytes on the GPU)
    std::array<int64_t, kCategories> m_liveBy{};
    int64_t m_total = 0;
};

// The share of an event's bytes one GPU holds under the strategy, and whether it lives on the host instead.
struct Placement
{
    Ratio ratio;
    bool toHost = false;
};

Placement placementOf(const Derivation& how, const AllocEvent& e, bool param)
{
    const size_t c = size_t(e.category);
    if (param && e.category == Category::Weights)
        return {how.paramWeights, how.offloadParamWeights};
    if (param && e.category == Category::Gradients)
        return {how.paramGrads, how.offloadParamGrads};
    return {how.category[c], how.offload[c]};
}

// The optimizer's setup block as torch.optim allocates it: `tensors` state tensors per flat parameter, each
// the parameter's share of the block (the block's bytes are kept: the last piece takes the rounding).
std::vector<std::pair<int64_t, int64_t>> statePieces(int64_t bytes, const std::vector<int64_t>& params, int tensors,
                                                     int64_t& nextId)
{
    int64_t sum = 0;
    for (int64_t p : params)
        sum += p;
    std::vector<std::pair<int64_t, int64_t>> out;
    if (sum <= 0 || bytes <= 0)
        return out;
    int64_t given = 0;
    for (size_t i = 0; i < params.size(); ++i)
        for (int t = 0; t < tensors; ++t) {
            const bool last = i + 1 == params.size() && t + 1 == tensors;
            const int64_t b = last ? bytes - given
                                   : int64_t(double(bytes) * double(params[i]) / double(sum) / double(tensors));
            given += b;
            out.push_back({nextId++, b});
        }
    return out;
}

// One GPU's events under a strategy: each single-GPU event scaled by its share or moved to the host, plus the
// strategy's own buffers; state sizes are what the setup step allocates (weights, buffers, optimizer states,
// master copy) and the most parameter-gradient bytes live at once; the optimizer step's temporaries are not
// state.
Derived derive(const Model& model, const Evaluation& ev, const Derivation& how)
{
    const auto& events = ev.events;
    const auto n = std::ptrdiff_t(events.size());
    Derived out;
    std::vector<Extra> extras = strategyExtras(ev, how);
    int64_t cacheId = 0;
    for (const auto& e : events)
        cacheId = std::max(cacheId, e.id + 1);
    for (const auto& x : extras)
        cacheId = std::max(cacheId, x.id + 1);
    bool initDone = how.init.empty();
    Replay replay(ev, std::move(extras), out);
    const int setupStep = n > 0 ? events.front().step : 0;
    int64_t gradLive = 0, gradMax = 0, hostGradLive = 0, hostGradMax = 0;
    std::unordered_map<int64_t, int64_t> gradIds; // id -> bytes (negative: on the host)
    const PhaseBounds pb = phaseBounds(ev);
    const std::ptrdiff_t backwardEnd = std::max(pb.lastCompute, pb.firstBackward);
    std::vector<AllocEvent> heldShards; // offloaded gradients' GPU shards, freed after backward's last event
    std::unordered_map<int64_t, std::vector<std::pair<int64_t, int64_t>>> splitStates; // id -> (id, bytes)
    const auto releaseShards = [&] {
        for (AllocEvent& h : heldShards) {
            h.kind = AllocEvent::Kind::Free;
            replay.push(h, false);
            gradLive -= h.bytes;
        }
        heldShards.clear();
    };
    for (std::ptrdiff_t i = 0; i < n; ++i) {
        if (i == backwardEnd + 1)
            releaseShards();
        replay.pushExtras(i, true);
        AllocEvent e = events[size_t(i)];
        const bool param = isParameter(model, e.tensor);
        const bool paramGrad = param && e.category == Category::Gradients;
        const Placement pl = placementOf(how, e, param);
        const bool toHost = pl.toHost;
        const int64_t bytes = pl.ratio.apply(e.bytes);
        if (paramGrad) {
            if (e.kind == AllocEvent::Kind::Alloc) {
                gradIds[e.id] = toHost ? -bytes : bytes;
                (toHost ? hostGradLive : gradLive) += bytes;
                if (toHost && how.gradShardsUntilBackwardEnd && i <= backwardEnd) {
                    AllocEvent h = e;
                    h.bytes = bytes;
                    h.id = cacheId++;
                    replay.push(h, false); // another stream's pool: allocated, not replayed in the default pool
                    heldShards.push_back(h);
                    gradLive += bytes;
                }
            } else if (auto it = gradIds.find(e.id); it != gradIds.end()) {
                (it->second < 0 ? hostGradLive : gradLive) -= std::abs(it->second);
                gradIds.erase(it);
            }
            gradMax = std::max(gradMax, gradLive);
            hostGradMax = std::max(hostGradMax, hostGradLive);
        }
        const bool setup = e.kind == AllocEvent::Kind::Alloc && e.step == setupStep;
        // FSDP's init runs on the GPU even when the shards then move to the host (offload).
        const bool initShard = !how.init.empty() && setup && param && e.category == Category::Weights;
        if (initShard && !initDone) {
            replay.pushInit(i, how.init, cacheId);
            initDone = true;
        }
        if (toHost) {
            if (setup)
                out.cpu += bytes;
            replay.pushExtras(i, false);
            continue;
        }
        if (setup && (e.category == Category::Weights || e.category == Category::Buffers))
            out.weights += bytes;
        if (initShard) {
            replay.pushExtras(i, false);
            continue; // the shard FSDP's init made stands for it
        }
        if (setup && (e.category == Category::Optimizer || e.category == Category::MasterWeights))
            out.optimizer += bytes;
        e.bytes = bytes;
        if (e.category == Category::Optimizer && e.tensor < 0 && how.stateTensors > 0 && !how.flatParams.empty()) {
            if (setup) {
                splitStates[e.id] = statePieces(bytes, how.flatParams, how.stateTensors, cacheId);
                for (const auto& [id, b] : splitStates[e.id])
                    replay.push({AllocEvent::Kind::Alloc, id, b, Category::Optimizer, e.step, -1});
                replay.pushExtras(i, false);
                continue;
            }
            if (auto it = splitStates.find(e.id); it != splitStates.end() && e.kind == AllocEvent::Kind::Free) {
                for (const auto& [id, b] : it->second)
                    replay.push({AllocEvent::Kind::Free, id, 0, Category::Optimizer, e.step, -1});
                splitStates.erase(it);
                replay.pushExtras(i, false);
                continue;
            }
        }
        replay.push(e, !(paramGrad && how.gradShardsOnSideStream));
        replay.pushExtras(i, false);
    }
    releaseShards();
    if (n == 0) {
        replay.pushExtras(0, true);
        replay.pushExtras(-1, false);
    }
    out.weights += how.weightsDelta;
    out.cpu += how.cpuDelta;
    out.gradients = gradMax + how.persistentGrads;
    out.cpu += hostGradMax;
    if (how.atOptimizer > 0) {
        if (how.offloadAtOptimizer)
            out.cpu += how.atOptimizer;
        else
            out.gradients += how.atOptimizer;
    }
    out.communication = how.persistent + how.compute + how.atLoss + how.computeSide + how.backwardSide;
    out.sideReserved = how.sideReserved;
    return out;
}

struct Sums
{
    int64_t paramGrads = 0, master = 0, outputs = 0;
    std::vector<int64_t> layerParams, layerGrads; // per leaf layer: parameter / gradient bytes
};

Sums sums(const Model& model, const Evaluation& ev)
{
    Sums s;
    s.layerParams.assign(std::max<size_t>(model.layers.size(), 1), 0);
    s.layerGrads.assign(s.layerParams.size(), 0);
    auto layerOf = [&](int tensor) -> size_t {
        const auto& consumers = model.tensors[size_t(tensor)].consumers;
        if (consumers.empty())
            return 0;
        const int layer = model.nodes[size_t(consumers.front())].layer;
        return layer >= 0 && size_t(layer) < s.layerParams.size() ? size_t(layer) : 0;
    };
    std::vector<uint8_t> isOutput(model.tensors.size(), 0);
    for (int t : model.outputs)
        if (t >= 0 && size_t(t) < isOutput.size())
            isOutput[size_t(t)] = 1;
    for (const auto& e : ev.events) {
        if (e.kind != AllocEvent::Kind::Alloc)
            continue;
        const bool param = isParameter(model, e.tensor);
        if (e.category == Category::Gradients && param) {
            s.paramGrads += e.bytes;
            s.layerGrads[layerOf(e.tensor)] += e.bytes;
        } else if (e.category == Category::Weights && param) {
            s.layerParams[layerOf(e.tensor)] += e.bytes;
        } else if (e.category == Category::MasterWeights) {
            s.master += e.bytes;
        } else if (e.category == Category::Activations && e.tensor >= 0 && size_t(e.tensor) < isOutput.size() &&
                   isOutput[size_t(e.tensor)]) {
            s.outputs += e.bytes;
        }
    }
    if (s.outputs == 0) // outputs that are views of another tensor have no allocation of their own
        for (int t : model.outputs)
            if (t >= 0 && size_t(t) < ev.shapes.bytes.size())
                s.outputs += std::max<int64_t>(ev.shapes.bytes[size_t(t)], 0);
    return s;
}

// What a GPU's weights gain over the setup events' share when 4-bit weights are FSDP-wrapped: their
// quantization state is whole on every rank (and on the GPU even with offload), only the packed codes are
// sharded (fsdp_units.cpp); with offload the packed shards' difference goes to the host figure.
void fourBitDeltas(const FsdpUnits& u, int gpus, bool offload, bool sharded, Derivation& how)
{
    const Ratio share = sharded ? Ratio{1, gpus} : Ratio{};
    int64_t packed = 0;
    for (const std::vector<InitParam>& params : u.unitParams)
        for (const InitParam& p : params)
            if (!p.quantState.empty())
                packed += share.apply(p.bytes) - share.apply(p.stored);
    how.weightsDelta = u.quantState + (offload ? 0 : packed);
    how.cpuDelta = offload ? packed : 0;
}

bool isZero(Strategy s)
{
    return s == Strategy::ZeRO1 || s == Strategy::ZeRO2 || s == Strategy::ZeRO3 || s == Strategy::FSDP;
}
bool isDataParallel(Strategy s) { return s == Strategy::DP || s == Strategy::BalancedDP; }

// The single-GPU evaluations a cluster needs, one per distinct per-GPU batch.
class Evaluator
{
public:
    Evaluator(const EnginePlan& plan, const Config& config) : m_plan(plan), m_config(config)
    {
        const Model& model = *plan.model;
        if (m_config.symbols.size() != model.symbols.size()) {
            Bindings b = model.defaultBindings();
            for (size_t i = 0; i < b.size() && i < m_config.symbols.size(); ++i)
                b[i] = m_config.symbols[i];
            m_config.symbols = b;
        }
        m_config.gpus = 1;
        m_config.strategy = Strategy::Single;
    }
    const Evaluation& at(int64_t batch)
    {
        auto it = m_cache.find(batch);
        if (it != m_cache.end())
            return it->second;
        Config c = m_config;
        if (m_plan.model->batchSymbol >= 0)
            c.symbols[size_t(m_plan.model->batchSymbol)] = std::max<int64_t>(batch, 1);
        return m_cache.emplace(batch, evaluate(m_plan, c)).first->second;
    }
    const Config& config() const { return m_config; }

private:
    const EnginePlan& m_plan;
    Config m_config;
    std::map<int64_t, Evaluation> m_cache;
};

GpuShare shareFrom(const Derived& d, const Evaluation& ev, const Config& config, int index, int64_t batch)
{
    GpuShare g;
    g.index = index;
    g.batch = batch;
    g.peak = d.peak;
    g.weights = d.weights;
    g.gradients = d.gradients;
    g.optimizer = d.optimizer;
    g.activations = d.activations;
    g.lossBytes = d.loss;
    g.communication = d.communication;
    g.cpuBytes = d.cpu;
    g.sideReserved = config.allocator == AllocatorMode::Exact ? 0 : d.sideReserved;
    // Each stream's pool reserves on its own; the side pools' blocks are all held by the time the default
    // pool reaches its peak (they are reserved by the first backward and never released), so they add up.
    g.reservedPeak = config.allocator == AllocatorMode::Exact
                         ? d.peak
                         : replay(d.events, config.allocator).reservedPeak + d.sideReserved;
    const int64_t used = config.allocator == AllocatorMode::Exact ? g.peak : g.reservedPeak;
    g.needed = used + ev.memory.context + ev.memory.workspace;
    // As on one GPU (maxbatch.cpp fitFrom): at capacity PyTorch frees its cached unused segments and retries
    // before it raises out-of-memory, so whether a need above the capacity fits is the default pool's replay
    // under what the side pools leave (they hold their blocks from the first backward on and are never given
    // back). What the GPU then holds is the card, not that replay's high-water mark (reservedAtCapacity).
    if (config.allocator != AllocatorMode::Exact && config.gpu.capacity > 0 &&
        g.needed + config.marginBytes > config.gpu.capacity) {
        if (replayUnderCapacity(d.events, config, g.sideReserved).fits) {
            g.reservedAtCapacity = atCapacityReserved(config);
            // CUDACachingAllocator.cpp malloc: alloc_block fails when cudaMalloc of the segment does, i.e. when
            // reserved + segment > what the card leaves; the peak statistic holds the reserved bytes just before
            // that first failure, so it is above the budget less the largest segment the step asks for.
            int64_t largestSegment = 0;
            for (const AllocEvent& e : d.events)
                if (e.kind == AllocEvent::Kind::Alloc)
                    largestSegment = std::max(largestSegment, CachingAllocatorModel::segmentSizeFor(e.bytes));
            g.reservedAtCapacityLow = std::max(g.peak, g.reservedAtCapacity - largestSegment);
            // The verdict keeps the safety margin free, as one GPU's does (maxbatch.cpp replayFitsSafely: the
            // allocator model's placement error at capacity, docs/ACCURACY.md "Safe max batch"); without it the
            // need stays the unconstrained one and the GPU reads "does not fit".
            if (replayUnderCapacity(d.events, config, g.sideReserved + safetyMargin(d.events)).fits)
                g.needed = std::min(g.needed, g.reservedAtCapacity + ev.memory.context);
        }
    }
    return g;
}

int64_t globalBatch(const Model& model, const Config& config)
{
    if (model.batchSymbol < 0)
        return 1;
    const auto i = size_t(model.batchSymbol);
    if (i < config.symbols.size())
        return std::max<int64_t>(config.symbols[i], 1);
    return std::max<int64_t>(model.symbols[i].value, 1);
}

// The per-GPU shares of a DataParallel-style step for the given batches (GPU 0 first).
std::vector<GpuShare> dataParallelShares(Evaluator& evaluator, const Model& model, const Config& config,
                                         const std::vector<int64_t>& batches, int64_t global)
{
    std::vector<GpuShare> shares;
    // A GPU with a batch to evaluate the per-sample output and loss sizes from.
    int64_t probeBatch = 0;
    for (int64_t b : batches)
        probeBatch = std::max(probeBatch, b);
    probeBatch = std::max<int64_t>(probeBatch, 1);
    for (size_t i = 0; i < batches.size(); ++i) {
        const int64_t b = batches[i];
        Derivation how;
        if (i == 0) {
            // GPU 0 runs its own replica on the original module (no copy), holds the optimizer and the
            // master copy, receives every replica's outputs and computes the loss on the full batch. The input
            // batch is moved there whole before scatter.
            const int64_t evalBatch = b > 0 ? b : probeBatch;
            const Evaluation& ev = evaluator.at(evalBatch);
            how.category[size_t(Category::Loss)] = {global, evalBatch};
            how.category[size_t(Category::Input)] = {global, evalBatch};
            if (b == 0) // no replica on GPU 0: its activations are not there
                how.category[size_t(Category::Activations)] = {0, 1};
            how.atLoss = Ratio{global, evalBatch}.apply(sums(model, ev).outputs);
            shares.push_back(shareFrom(derive(model, ev, how), ev, config, 0, b));
            continue;
        }
        if (b == 0) {
            GpuShare idle;
            idle.index = int(i);
            shares.push_back(idle);
            continue;
        }
        // Replicas receive weight copies each step and produce gradients that are reduced to GPU 0; no
        // optimizer state, no master copy. The gradient of their outputs arrives from GPU 0's loss: the loss
        // events at the replica's batch stand in for it.
        const Evaluation& ev = evaluator.at(b);
        how.category[size_t(Category::Optimizer)] = {0, 1};
        how.category[size_t(Category::MasterWeights)] = {0, 1};
        shares.push_back(shareFrom(derive(model, ev, how), ev, config, int(i), b));
    }
    return shares;
}

std::vector<GpuShare> shardedShares(Evaluator& evaluator, const Model& model, const Config& config, int gpus,
                                    int64_t batch)
{
    const Evaluation& ev = evaluator.at(batch);
    const Sums s = sums(model, ev);
    const Strategy st = config.strategy;
    const Ratio shard{1, gpus};
    Derivation how;
    if (st == Strategy::DDP || st == Strategy::ZeRO1 || st == Strategy::ZeRO2)
        how.persistent = std::min<int64_t>(kDdpBuckets * kDdpBucketBytes, s.paramGrads);
    if (isZero(st)) {
        how.category[size_t(Category::Optimizer)] = shard;
        how.category[size_t(Category::MasterWeights)] = shard;
        // DeepSpeed casts each rank's 16-bit gradient partition to an fp32 copy for the step (the 4 of its
        // estimator's 18 = 2 + 4 + 4 + 8 bytes per parameter); it exists only with fp32 master weights.
        how.atOptimizer = s.master > 0 ? Ratio{1, gpus}.apply(s.master) : 0;
        if (config.offload) {
            how.offload[size_t(Category::Optimizer)] = true;
            how.offload[size_t(Category::MasterWeights)] = true;
            how.offloadAtOptimizer = true;
        }
    }
    if (st == Strategy::ZeRO2 || st == Strategy::ZeRO3 || st == Strategy::FSDP) {
        how.paramGrads = shard;
        how.offloadParamGrads = config.offload;
    }
    if (st == Strategy::ZeRO3 || st == Strategy::FSDP) {
        how.paramWeights = shard;
        how.offloadParamWeights = config.offload;
    }
    const bool noShard = st == Strategy::FSDPNoShard;
    const FsdpUnits units = st == Strategy::FSDP || noShard
                                ? fsdpUnits(model, ev, fourBitWeights(model, config), config.finetune.doubleQuant,
                                            config.fsdpOrigParams)
                                : FsdpUnits{};
    // Gradient accumulation under FSDP.no_sync() (Config::fsdpNoSync; torch/distributed/fsdp/_runtime_utils.py
    // _post_backward_hook: `if not state._sync_gradients: ... return` before _reduce_grad): between optimizer steps
    // each unit keeps its unsharded gradient, so the micro-batches before the last one hold every gradient whole.
    const bool noSync = config.fsdpNoSync && config.accumulate > 1 && st == Strategy::FSDP;
    if (units.found && noShard) {
        // NO_SHARD: every rank keeps the whole flat parameters; no all-gathers (needs_unshard() is false), and
        // the gradients are all-reduced in place (_runtime_utils._reduce_grad_no_shard): no buffers. Only
        // the init's cache is added.
        how.init = fsdpInitOps(units, gpus, false, false);
        fourBitDeltas(units, gpus, false, false, how);
        how.flatParams = units.gradParams;
        how.stateTensors = optimizerStateTensors(config);
    } else if (units.found) {
        // FSDP FULL_SHARD over a decoder model (fsdp_units.cpp): the root unit and the layer computed are
        // gathered from the first forward, the prefetched layer and one layer's unsharded gradient in
        // backward; the gathered ones come from the unshard stream's pool.
        how.computeSide = units.root + units.layer;
        how.backwardSide = units.layer;
        how.backwardGrad = units.layerGrad;
        // Under no_sync the micro-batches before the last accumulate whole gradients on the compute stream
        how.gradShardsOnSideStream = !config.offload && !noSync;
        how.sideReserved = fsdpSidePoolsReserved(units, config.allocator, gpus, config.offload,
                                                 config.offload || how.gradShardsOnSideStream);
        how.gradShardsUntilBackwardEnd = config.offload;
        how.init = fsdpInitOps(units, gpus, config.offload);
        fourBitDeltas(units, gpus, config.offload, true, how);
        // use_orig_params=True: the frozen parts of the mixed units have a gradient too (zeros), sharded like
        // the rest (with CPU offload on the host, its GPU copies in the post-backward pool above), or whole on
        // every GPU under no_sync
        how.persistentGrads = noSync ? units.mixedFrozen : config.offload ? 0 : shard.apply(units.mixedFrozen);
        if (noSync)
            how.paramGrads = Ratio{1, 1};
        // with use_orig_params the optimizer steps the original parameters, so its state is theirs, not one
        // piece per FlatParameter
        if (!config.fsdpOrigParams) {
            for (int64_t b : units.gradParams)
                how.flatParams.push_back(shard.apply(b));
            how.stateTensors = optimizerStateTensors(config);
        }
    } else if (st == Strategy::ZeRO3 || st == Strategy::FSDP) {
        // The module being computed and the prefetched next one are gathered whole; in backward the
        // largest one's full gradient exists until it is reduce-scattered.
        std::vector<int64_t> layers = s.layerParams;
        std::sort(layers.rbegin(), layers.rend());
        const int64_t gathered = (layers.size() > 0 ? layers[0] : 0) + (layers.size() > 1 ? layers[1] : 0);
        const int64_t largestGrad = s.layerGrads.empty() ? 0
                                                         : *std::max_element(s.layerGrads.begin(), s.layerGrads.end());
        how.compute = gathered + largestGrad;
    }
    const GpuShare one = shareFrom(derive(model, ev, how), ev, config, 0, batch);
    std::vector<GpuShare> shares(size_t(gpus), one);
    for (int i = 0; i < gpus; ++i)
        shares[size_t(i)].index = i;
    return shares;
}

int heaviestOf(const std::vector<GpuShare>& gpus)
{
    int h = 0;
    for (size_t i = 1; i < gpus.size(); ++i)
        if (gpus[i].needed > gpus[size_t(h)].needed)
            h = int(i);
    return h;
}

int64_t maxNeed(const std::vector<GpuShare>& gpus)
{
    int64_t m = 0;
    for (const auto& g : gpus)
        m = std::max(m, g.needed);
    return m;
}

} // namespace

std::vector<int64_t> perGpuBatches(Strategy strategy, int gpus, int64_t batch, int64_t gpu0Batch)
{
    const auto n = size_t(std::max(gpus, 1));
    std::vector<int64_t> sizes(n, 0);
    if (strategy == Strategy::Single) {
        sizes.assign(1, batch);
        return sizes;
    }
    auto chunk = [&] {
        // torch.chunk: chunks of ceil(B/N); fewer chunks than GPUs when B is small.
        const int64_t c = ceilDiv(batch, int64_t(n));
        int64_t left = batch;
        for (size_t i = 0; i < n && left > 0; ++i) {
            sizes[i] = std::min(c, left);
            left -= sizes[i];
        }
    };
    if (strategy == Strategy::DP || (strategy == Strategy::BalancedDP && (gpu0Batch < 0 || n == 1))) {
        chunk();
        return sizes;
    }
    if (strategy == Strategy::BalancedDP) {
        // BalancedDataParallel.get_chunk_sizes: the others share B - b0 evenly, the remainder going to the
        // first of them; a GPU-0 batch no smaller than their share falls back to the plain scatter.
        const int64_t b0 = std::min(gpu0Batch, batch);
        const int64_t unit = (batch - b0) / int64_t(n - 1);
        if (b0 >= unit) {
            chunk();
            return sizes;
        }
        sizes[0] = b0;
        for (size_t i = 1; i < n; ++i)
            sizes[i] = unit;
        const int64_t delta = batch - b0 - unit * int64_t(n - 1);
        for (int64_t i = 0; i < delta; ++i)
            sizes[size_t(i) + 1] += 1;
        return sizes;
    }
    sizes.assign(n, ceilDiv(batch, int64_t(n)));
    return sizes;
}

ClusterEvaluation evaluateCluster(const Model& model, const Config& config)
{
    return evaluateCluster(makePlan(model, config), config);
}

namespace {

bool runsOnOneGpu(const Config& config)
{
    return config.strategy == Strategy::Single ||
           (std::max(config.gpus, 1) == 1 && config.strategy != Strategy::DDP && !isZero(config.strategy));
}

ClusterEvaluation evaluateClusterAt(const EnginePlan& plan, const Config& config)
{
    const Model& model = *plan.model;
    ClusterEvaluation out;
    const int gpus = std::max(config.gpus, 1);
    const int64_t global = globalBatch(model, config);

    if (runsOnOneGpu(config)) {
        Config single = config;
        single.gpus = 1;
        single.strategy = Strategy::Single;
        const Evaluation ev = evaluate(plan, single);
        GpuShare g;
        g.batch = global;
        g.peak = ev.memory.peak;
        g.reservedPeak = ev.memory.reservedPeak;
        g.weights = ev.memory.weights + ev.memory.dequantTransient; // what weights hold at the peak
        g.gradients = ev.memory.gradients;
        g.optimizer = ev.memory.optimizer + ev.memory.masterWeights;
        g.activations = ev.memory.activationsPeak + ev.memory.input + ev.memory.lossBytes;
        g.lossBytes = ev.memory.lossBytes;
        g.needed = (config.allocator == AllocatorMode::Exact ? g.peak : g.reservedPeak) + ev.memory.context +
                   ev.memory.workspace;
        out.gpus.push_back(g);
        if (config.strategy != Strategy::Single && gpus == 1)
            out.notes.push_back(std::string(toString(config.strategy)) + " on one GPU is a single-GPU run");
        return out;
    }

    Evaluator evaluator(plan, config);
    if (model.batchSymbol < 0)
        out.notes.push_back("the model has no batch dimension: every GPU processes the whole input");

    if (isDataParallel(config.strategy)) {
        int64_t b0 = config.gpu0Batch;
        if (config.strategy == Strategy::BalancedDP && b0 < 0) {
            // Auto: GPU 0's need grows with its batch and the others' shrinks; bisect for the crossing and
            // keep the better neighbour.
            const int64_t even = ceilDiv(global, gpus);
            auto worst = [&](int64_t g0) {
                return maxNeed(dataParallelShares(evaluator, model, config,
                                                  perGpuBatches(Strategy::BalancedDP, gpus, global, g0), global));
            };
            auto gpu0Heavier = [&](int64_t g0) {
                const auto shares = dataParallelShares(evaluator, model, config,
                                                       perGpuBatches(Strategy::BalancedDP, gpus, global, g0), global);
                return heaviestOf(shares) == 0;
            };
            int64_t lo = 0, hi = even;
            while (lo < hi) {
                const int64_t mid = lo + (hi - lo) / 2;
                if (gpu0Heavier(mid))
                    hi = mid;
                else
                    lo = mid + 1;
            }
            b0 = lo;
            if (lo > 0 && worst(lo - 1) <= worst(lo))
                b0 = lo - 1;
            out.notes.push_back("balanced DataParallel: GPU 0 batch " + std::to_string(b0) + " evens the GPUs");
        }
        const auto batches = perGpuBatches(config.strategy, gpus, global, b0);
        out.gpus = dataParallelShares(evaluator, model, config, batches, global);
        if (out.gpus.size() > 1) {
            const GpuShare& g0 = out.gpus[0];
            const GpuShare& g1 = out.gpus[1];
            const int64_t diff = g0.needed - g1.needed;
            if (diff > 0)
                out.notes.push_back("GPU 0 needs " + formatBytes(diff) + " more than GPU 1: gathered outputs " +
                                    formatBytes(g0.communication) + ", loss on the full batch, optimizer and " +
                                    "master copy " + formatBytes(g0.optimizer));
        }
    } else {
        out.gpus = shardedShares(evaluator, model, config, gpus, perGpuBatches(config.strategy, gpus, global, -1)[0]);
        if (config.offload && !isZero(config.strategy))
            out.notes.push_back("CPU offload applies to ZeRO and FSDP only");
        if (global % gpus != 0)
            out.notes.push_back("batch " + std::to_string(global) + " does not divide by " + std::to_string(gpus) +
                                " GPUs: each GPU is counted at " + std::to_string(ceilDiv(global, gpus)));
    }
    out.heaviest = heaviestOf(out.gpus);
    return out;
}

} // namespace

// Config::varySymbol on several GPUs: each GPU's reserved peak is the highest of its steps at the symbol's
// varyingValues() (engine.cpp applyVarying says why). What each GPU needs stays its longest step's, as on one
// GPU, where the verdict is that step's replay under capacity: the allocator gives the cache back before it
// fails. One GPU's configuration varies inside evaluate().
ClusterEvaluation evaluateCluster(const EnginePlan& plan, const Config& config)
{
    if (!variesSymbol(config) || runsOnOneGpu(config))
        return evaluateClusterAt(plan, config);
    Config step = config;
    step.varySymbol = -1;
    ClusterEvaluation out = evaluateClusterAt(plan, step);
    const size_t s = static_cast<size_t>(config.varySymbol);
    const int64_t top = config.symbols[s];
    for (int64_t v : varyingValues(top)) {
        if (v >= top)
            continue;
        step.symbols[s] = v;
        const ClusterEvaluation other = evaluateClusterAt(plan, step);
        for (size_t i = 0; i < out.gpus.size() && i < other.gpus.size(); ++i)
            out.gpus[i].reservedPeak = std::max(out.gpus[i].reservedPeak, other.gpus[i].reservedPeak);
    }
    return out;
}

} // namespace headroom
