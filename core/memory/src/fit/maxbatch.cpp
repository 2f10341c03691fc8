// Fit on a GPU and the largest batch that fits: a search over evaluations, which are cheap (the shape
// functions are fitted, so no inference runs).
#include "engine/engine_internal.h"
#include "headroom/import/batch.h"
#include "headroom/memory/allocator.h"

#include <algorithm>
#include <cmath>

namespace headroom {

int64_t neededBytes(const Config& config, const Evaluation& evaluation)
{
    // Under an allocator model the reserved peak already holds the library workspaces (engine.cpp).
    if (config.allocator != AllocatorMode::Exact)
        return evaluation.memory.reservedPeak + config.gpu.context;
    return evaluation.memory.peak + config.gpu.context + config.gpu.workspace;
}

int64_t allocatorBudget(const Config& config) { return config.gpu.capacity - config.gpu.context - config.marginBytes; }

// A step whose unconstrained need is above the budget grows its cache until a cudaMalloc fails, gives the
// unused segments back, retries and grows again: every failure comes when the reserved bytes plus the request
// no longer fit, so each cycle brings them back up to the budget, less the failing request. A run measures
// many such steps (torch.cuda.max_memory_reserved after an epoch, as Answer.AI's train.py 4cd6923 prints it),
// and its figure is the budget: one replay's high-water mark is only where its first failing request came, as
// low as the budget less that request (Llama-2-7B LoRA, CPU offload, batch 10 on a 4090: the 2.4 GiB fp32
// logits fail at 20.9 GiB). Measured: the four Answer.AI runs at capacity on 4090s reserved 22.38-22.69 GiB
// where the card leaves the allocator 23.10 GiB, for unconstrained needs of 23.3-26.7 GiB (docs/ACCURACY.md
// "Multi-GPU").
int64_t atCapacityReserved(const Config& config) { return allocatorBudget(config); }

// PyTorch raises OutOfMemoryError only when an allocation fails after the caching allocator has freed
// every cached unused segment and retried (CUDACachingAllocator.cpp, DeviceCachingAllocator::malloc:
// get_free_block -> trigger_free_memory_callbacks -> alloc_block -> release_available_cached_blocks ->
// release_cached_blocks -> alloc_block). So a step fits when its replay through the allocator model,
// with cudaMalloc failing beyond the bytes the allocator can have, never fails: the unconstrained
// reserved peak (cached segments never given back) is not the criterion.
CapacityReplay replayUnderCapacity(const std::vector<AllocEvent>& events, const Config& config, int64_t reserve)
{
    CapacityReplay r;
    AllocatorOptions options;
    options.capacity = allocatorBudget(config) - reserve;
    if (options.capacity <= 0)
        return r;
    // The cuBLAS / cuBLASLt workspaces are made by the first matmul through this same allocator and kept
    // for the life of the handle (aten/src/ATen/cuda/CublasHandlePool.cpp, getNewWorkspace), so by the
    // steady-state step they are the oldest live blocks.
    options.preallocated = config.gpu.workspace;
    options.perEvent = false;
    options.stopAtOom = true;
    const AllocatorStats stats = replay(events, config.allocator, options);
    if (stats.oomEvent >= 0)
        return r;
    r.fits = true;
    r.reservedPeak = stats.reservedPeak;
    r.retries = stats.allocRetries;
    return r;
}

// The safety margin is a quarter of the step's largest allocation. Derived from the four measured H100
// boundaries (tests/data/gpu/h100-maxbatch.jsonl, docs/ACCURACY.md "Safe max batch"): the allocator model's
// error at capacity is placement (which free hole a request lands in, which cached segment is split), so it
// scales with the size of the blocks, not with the total; vgg16's boundary, 41 samples above the run, is
// 2.9 GiB = 0.23 of its largest block (the first conv's output, 12.8 GiB at batch 1072), and a quarter keeps
// every other model within 5 % of the batch that ran. The allocated-peak errors (median 2.3 %, worst
// 6.6 % low on squeezenet's small batches) sit far below it at the boundary, where one block dominates.
constexpr int64_t kLargestBlockShare = 4;

int64_t safetyMargin(const std::vector<AllocEvent>& events)
{
    int64_t largest = 0;
    for (const AllocEvent& e : events)
        if (e.kind == AllocEvent::Kind::Alloc)
            largest = std::max(largest, e.bytes);
    return largest / kLargestBlockShare;
}

namespace {

// The step's events at this configuration: the plan's when it matches, else a full simulation.
std::vector<AllocEvent> eventsAt(const EnginePlan& plan, const Config& config)
{
    return planMatches(plan, config) ? stepEvents(*plan.data, config) : evaluate(plan, config).events;
}

bool replayFitsSafely(const std::vector<AllocEvent>& events, const Config& config)
{
    return replayUnderCapacity(events, config, safetyMargin(events)).fits;
}

} // namespace

// The largest batch B <= limit that fits (fitsOnGpu: the step's replay under capacity never fails).
//
// The allocated peak is monotone in the batch (every activation grows with it), so it is searched alone
// first, with evaluations that record no events and replay nothing: an affine fit from batches 1 and 8,
// a jump to the predicted boundary, then a bracket and bisection. That gives B_a, the largest batch whose
// allocated need fits. A replay under capacity holds at least the allocated bytes, so no batch above B_a
// can fit, and the answer is the first batch that fits scanning down from B_a (refine below): a handful
// of replays right at the boundary.
// (Long on purpose: the three phases above share the two high-water vectors and the exact config; as one
// function the search reads in the order the comment gives it.)
namespace {
int64_t searchMaxBatch(const EnginePlan& plan, const Config& varying, int64_t limit, bool safe)
{
    const Model& m = *plan.model;
    // A varying symbol raises the reserved figure, not the fit (engine.cpp applyVarying): search the steps alone.
    Config config = varying;
    config.varySymbol = -1;
    if (config.gpu.capacity <= 0 || limit < 1)
        return 0;
    const int64_t budget = config.gpu.capacity - config.marginBytes;
    Config exact = config;
    exact.allocator = AllocatorMode::Exact;
    const bool samePlan = planMatches(plan, config);
    const int64_t fixedNeed = config.gpu.context + config.gpu.workspace;
    std::vector<int64_t> h1, h2; // step high-water marks at batch 1 and at the probe batch
    const auto needExact = [&](int64_t b, std::vector<int64_t>* keep = nullptr) {
        const Config c = withBatch(m, exact, b);
        if (!samePlan)
            return neededBytes(c, evaluateLight(plan, c));
        std::vector<int64_t> h = stepHighs(*plan.data, c);
        const int64_t peak = h.empty() ? 0 : *std::max_element(h.begin(), h.end());
        if (keep)
            *keep = std::move(h);
        return peak + fixedNeed;
    };
    const auto fitsReplayed = [&](int64_t b) {
        const Config c = withBatch(m, config, b);
        return safe ? replayFitsSafely(eventsAt(plan, c), c) : fitsOnGpu(plan, c);
    };
    // No batch above boundA fits (its allocated bytes alone exceed the budget). Whether a batch fits under
    // the allocator model is not monotone in the batch (segment rounding and best-fit placement make the
    // cache's leftovers wobble), so the batches right below the bound are tried one by one; past a few,
    // the fitting batch is bracketed by halving steps and the last gap bisected.
    const auto refine = [&](int64_t boundA) -> int64_t {
        if (config.allocator == AllocatorMode::Exact)
            return boundA;
        constexpr int64_t kLinear = 8;
        int64_t b = boundA;
        for (; b >= 1 && b > boundA - kLinear; --b)
            if (fitsReplayed(b))
                return b;
        if (b < 1)
            return 0;
        int64_t fail = b + 1, step = 1;
        while (b >= 1 && !fitsReplayed(b)) {
            fail = b;
            step *= 2;
            b = fail - step;
        }
        if (b < 1) {
            b = 1;
            if (!fitsReplayed(1))
                return 0;
        }
        int64_t lo = b, hi = fail;
        while (hi - lo > 1) {
            const int64_t mid = lo + (hi - lo) / 2;
            (fitsReplayed(mid) ? lo : hi) = mid;
        }
        return lo;
    };
    if (m.batchSymbol < 0)
        return needExact(1) <= budget ? refine(1) : 0;
    // Unknown sizes are not 0 bytes: no number at all rather than a limit-sized one.
    if (evaluateShapes(m, withBatch(m, exact, 1).symbols).unknown > 0)
        return kUnknownMax;

    const int64_t n1 = needExact(1, &h1);
    if (n1 > budget)
        return 0;
    const int64_t probe = std::min<int64_t>(limit, 8);
    if (probe <= 1)
        return refine(1);
    const int64_t n2 = needExact(probe, &h2);
    int64_t lo = 1, hi = probe; // lo fits, hi does not (or is the limit and untested)
    if (n2 <= budget) {
        // Each step's high-water mark is (close to) affine in the batch: the first step line to cross the
        // budget predicts the bound far better than the overall peak's line (the peak moves between steps).
        double bound = static_cast<double>(limit);
        if (h1.size() == h2.size() && !h1.empty()) {
            for (size_t i = 0; i < h1.size(); ++i) {
                const double slope = static_cast<double>(h2[i] - h1[i]) / static_cast<double>(probe - 1);
                if (slope > 0)
                    bound = std::min(bound, static_cast<double>(probe) +
                                                static_cast<double>(budget - fixedNeed - h2[i]) / slope);
            }
        } else {
            const double slope = std::max(1.0, static_cast<double>(n2 - n1) / static_cast<double>(probe - 1));
            bound = static_cast<double>(probe) + static_cast<double>(budget - n2) / slope;
        }
        int64_t guess = static_cast<int64_t>(std::floor(std::max(bound, 1.0)));
        guess = std::clamp<int64_t>(guess, probe, limit);
        lo = probe;
        hi = limit + 1;
        if (needExact(guess) <= budget) {
            lo = guess;
            for (int64_t step = 1; lo < limit; step *= 2) {
                const int64_t b = std::min(limit, lo + step);
                if (needExact(b) <= budget) {
                    lo = b;
                } else {
                    hi = b;
                    break;
                }
            }
            if (lo == limit)
                return kUnknownMax; // nothing (measurable) grows with the batch up to the limit
        } else {
            hi = guess;
            for (int64_t step = 1;; step *= 2) {
                const int64_t b = std::max(lo, hi - step);
                if (b == lo)
                    break;
                if (needExact(b) <= budget) {
                    lo = b;
                    break;
                }
                hi = b;
            }
        }
    }
    while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        (needExact(mid) <= budget ? lo : hi) = mid;
    }
    return refine(lo);
}
} // namespace

int64_t maxBatch(const EnginePlan& plan, const Config& config, int64_t limit)
{
    return searchMaxBatch(plan, config, limit, false);
}

int64_t safeMaxBatch(const EnginePlan& plan, const Config& config, int64_t limit)
{
    return searchMaxBatch(plan, config, limit, true);
}

int64_t maxBatch(const Model& model, const Config& config, int64_t limit)
{
    return maxBatch(makePlan(model, config), config, limit);
}

bool fitsOnGpu(const EnginePlan& plan, const Config& varying)
{
    Config config = varying; // the longest step is what must fit (engine.cpp applyVarying)
    config.varySymbol = -1;
    if (config.gpu.capacity <= 0)
        return false;
    if (config.allocator == AllocatorMode::Exact)
        return neededBytes(config, evaluateLight(plan, config)) + config.marginBytes <= config.gpu.capacity;
    if (planMatches(plan, config))
        return replayUnderCapacity(stepEvents(*plan.data, config), config).fits;
    return replayUnderCapacity(evaluate(plan, config).events, config).fits;
}

bool fitsOnGpuSafely(const EnginePlan& plan, const Config& varying)
{
    Config config = varying;
    config.varySymbol = -1;
    if (config.gpu.capacity <= 0 || config.allocator == AllocatorMode::Exact)
        return fitsOnGpu(plan, config);
    return replayFitsSafely(eventsAt(plan, config), config);
}

namespace {
Config stepOf(const Config& config)
{
    Config step = config;
    step.varySymbol = -1;
    return step;
}

// events: the step's allocation events at this config when the caller has them, else they are simulated.
Fit fitFrom(const EnginePlan& plan, const Config& config, const Evaluation& evaluation,
            const std::vector<AllocEvent>* events)
{
    Fit f;
    f.gpu = config.gpu.name;
    f.capacity = config.gpu.capacity;
    f.needed = neededBytes(config, evaluation);
    if (config.allocator == AllocatorMode::Exact || f.capacity <= 0 || f.needed + config.marginBytes <= f.capacity) {
        // Within the budget unconstrained, the replay under capacity is the same replay: nothing to redo.
        f.fits = f.capacity > 0 && f.needed + config.marginBytes <= f.capacity;
    } else {
        // A full evaluation of this configuration carries its step's events: replay those instead of
        // simulating the step again (issue 16: a 100k-node tick that does not fit walked it twice).
        if (!events && !evaluation.events.empty())
            events = &evaluation.events;
        const bool samePlan = planMatches(plan, config);
        const CapacityReplay r = events ? replayUnderCapacity(*events, config)
                                        : replayUnderCapacity(samePlan ? stepEvents(*plan.data, config)
                                                                       : evaluate(plan, stepOf(config)).events,
                                                              config);
        f.fits = r.fits;
        // At capacity the allocator gives cached segments back instead of failing, so what the step then
        // holds (plus what lives outside the allocator) is the card, not the unconstrained need above it.
        if (r.fits) {
            f.needed = std::min(f.needed, atCapacityReserved(config) + config.gpu.context);
            f.atCapacity = true;
        }
    }
    f.headroom = f.capacity - f.needed;
    // The verdict keeps the safety margin free. No allocation is larger than the allocated peak, so a need
    // a quarter of the peak below the budget fits safely without a replay.
    f.fitsSafely = f.fits;
    if (f.fits && config.allocator != AllocatorMode::Exact &&
        f.needed + config.marginBytes + evaluation.memory.peak / kLargestBlockShare > f.capacity) {
        if (!events && !evaluation.events.empty())
            events = &evaluation.events;
        f.fitsSafely = events ? replayFitsSafely(*events, config) : fitsOnGpuSafely(plan, config);
    }
    return f;
}
} // namespace

Fit computeFitOnly(const EnginePlan& plan, const Config& config, const Evaluation& evaluation)
{
    return fitFrom(plan, config, evaluation, nullptr);
}

Fit computeFitLight(const EnginePlan& plan, const Config& config)
{
    const Evaluation e = evaluateLightWithEvents(plan, config);
    return fitFrom(plan, config, e, config.allocator == AllocatorMode::Exact ? nullptr : &e.events);
}

Fit computeFit(const EnginePlan& plan, const Config& config, const Evaluation& evaluation)
{
    Fit f = computeFitOnly(plan, config, evaluation);
    if (markUnknownFit(*plan.model, evaluation, f))
        return f;
    f.maxBatch = safeMaxBatch(plan, config);
    f.expectedMaxBatch = maxBatch(plan, config);
    return f;
}

Fit computeFit(const Model& model, const Config& config, const Evaluation& evaluation)
{
    return computeFit(makePlan(model, config), config, evaluation);
}

} // namespace headroom
