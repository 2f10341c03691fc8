// Fit on a GPU and the largest batch that fits: a search over evaluations, which are cheap (the shape
// functions are fitted, so no inference runs).
#include "engine_internal.h"

#include <algorithm>
#include <cmath>

namespace headroom {

int64_t neededBytes(const Config& config, const Evaluation& evaluation)
{
    const int64_t mem = config.allocator == AllocatorMode::Exact ? evaluation.memory.peak
                                                                  : evaluation.memory.reservedPeak;
    return mem + config.gpu.context + config.gpu.workspace;
}

namespace {

Config atBatch(const Model& m, Config c, int64_t batch)
{
    if (c.symbols.size() != m.symbols.size())
        c.symbols = m.defaultBindings();
    if (m.batchSymbol >= 0)
        c.symbols[static_cast<size_t>(m.batchSymbol)] = batch;
    return c;
}

} // namespace

// The largest batch B <= limit whose need (allocated peak, or reserved under a caching allocator model)
// + context + workspace fits capacity - margin.
//
// The allocated peak is monotone in the batch (every activation grows with it), so it is searched alone
// first, with evaluations that record no events and replay nothing: an affine fit from batches 1 and 8,
// a jump to the predicted boundary, then a bracket and bisection. That gives B_a, the largest batch whose
// allocated need fits. The allocator model's reserved need is >= the allocated need but not monotone
// (segment rounding and best-fit placement make it wobble, by up to ~1 GB on resnet50), so no batch above B_a can
// fit, and the answer is the first batch that fits scanning down from B_a: the same "largest batch that
// fits" definition the exact mode has, found with a handful of replays right at the boundary instead of
// a bisection over a function that is not monotone (which could stop at any local step).
int64_t maxBatch(const EnginePlan& plan, const Config& config, int64_t limit)
{
    const Model& m = *plan.model;
    if (config.gpu.capacity <= 0 || limit < 1)
        return 0;
    const int64_t budget = config.gpu.capacity - config.marginBytes;
    Config exact = config;
    exact.allocator = AllocatorMode::Exact;
    const bool samePlan = plan.data && plan.data->freeze == config.freeze;
    const int64_t fixedNeed = config.gpu.context + config.gpu.workspace;
    std::vector<int64_t> h1, h2; // step high-water marks at batch 1 and at the probe batch
    const auto needExact = [&](int64_t b, std::vector<int64_t>* keep = nullptr) {
        const Config c = atBatch(m, exact, b);
        if (!samePlan)
            return neededBytes(c, evaluateLight(plan, c));
        std::vector<int64_t> h = stepHighs(*plan.data, c);
        const int64_t peak = h.empty() ? 0 : *std::max_element(h.begin(), h.end());
        if (keep)
            *keep = std::move(h);
        return peak + fixedNeed;
    };
    const auto fitsReserved = [&](int64_t b) {
        const Config c = atBatch(m, config, b);
        return neededBytes(c, evaluateLight(plan, c)) <= budget;
    };
    const auto refine = [&](int64_t boundA) -> int64_t {
        if (config.allocator == AllocatorMode::Exact)
            return boundA;
        for (int64_t b = boundA; b >= 1; --b)
            if (fitsReserved(b))
                return b;
        return 0;
    };
    if (m.batchSymbol < 0)
        return needExact(1) <= budget ? refine(1) : 0;
    // Unknown sizes are not 0 bytes: no number at all rather than a limit-sized one.
    if (evaluateShapes(m, atBatch(m, exact, 1).symbols).unknown > 0)
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

int64_t maxBatch(const Model& model, const Config& config, int64_t limit)
{
    return maxBatch(makePlan(model, config.freeze), config, limit);
}

Fit computeFit(const EnginePlan& plan, const Config& config, const Evaluation& evaluation)
{
    Fit f;
    f.gpu = config.gpu.name;
    f.capacity = config.gpu.capacity;
    f.needed = neededBytes(config, evaluation);
    f.fits = f.capacity > 0 && f.needed + config.marginBytes <= f.capacity;
    f.headroom = f.capacity - f.needed;
    if (markUnknownFit(*plan.model, evaluation, f))
        return f;
    f.maxBatch = maxBatch(plan, config);
    return f;
}

Fit computeFit(const Model& model, const Config& config, const Evaluation& evaluation)
{
    return computeFit(makePlan(model, config.freeze), config, evaluation);
}

} // namespace headroom
