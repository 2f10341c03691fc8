// evaluate(): one configuration -> every figure of docs/DESIGN.md "The memory model". Here the order an
// evaluation runs in (sizes.cpp's bytes at the binding, the walk, the allocator replay on a second core,
// breakdown.cpp's figures), the lengths a varying symbol takes, and the checkpoint curve.
#include "engine/engine_internal.h"

#include "headroom/memory/allocator.h"

#include <algorithm>
#include <exception> // the checkpoint curve's second thread
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

AllocatorOptions replayOptions(const Config& config)
{
    AllocatorOptions options;
    options.preallocated = config.gpu.workspace;
    options.perEvent = false;
    return options;
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

} // namespace headroom
