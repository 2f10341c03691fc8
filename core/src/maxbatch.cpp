// Fit on a GPU and the largest batch that fits: a search over evaluations, which are cheap (the shape
// functions are fitted, so no inference runs).
#include "engine_internal.h"

#include <algorithm>

namespace headroom {

int64_t neededBytes(const Config& config, const Evaluation& evaluation)
{
    const int64_t mem = config.allocator == AllocatorMode::Exact ? evaluation.memory.peak
                                                                  : evaluation.memory.reservedPeak;
    return mem + config.gpu.context + config.gpu.workspace;
}

namespace {
bool fitsAt(const EnginePlan& plan, Config config, int64_t batch)
{
    const Model& m = *plan.model;
    if (config.symbols.size() != m.symbols.size())
        config.symbols = m.defaultBindings();
    if (m.batchSymbol >= 0)
        config.symbols[static_cast<size_t>(m.batchSymbol)] = batch;
    const Evaluation e = evaluateLight(plan, config);
    return neededBytes(config, e) + config.marginBytes <= config.gpu.capacity;
}
} // namespace

int64_t maxBatch(const EnginePlan& plan, const Config& config, int64_t limit)
{
    const Model& m = *plan.model;
    if (config.gpu.capacity <= 0)
        return 0;
    if (m.batchSymbol < 0)
        return fitsAt(plan, config, 1) ? 1 : 0;
    // need(batch) is affine in the batch up to allocator rounding: fit it from two evaluations, jump to
    // the predicted boundary, then bracket and bisect with exact evaluations.
    const int64_t budget = config.gpu.capacity - config.marginBytes;
    const auto need = [&](int64_t b) {
        Config c = config;
        if (c.symbols.size() != m.symbols.size())
            c.symbols = m.defaultBindings();
        c.symbols[static_cast<size_t>(m.batchSymbol)] = b;
        return neededBytes(c, evaluateLight(plan, c));
    };
    const int64_t n1 = need(1);
    if (n1 > budget)
        return 0;
    const int64_t probe = std::min<int64_t>(limit, 8);
    if (probe <= 1)
        return 1;
    const int64_t n2 = need(probe);
    if (n2 > budget) {
        int64_t lo = 1, hi = probe;
        while (hi - lo > 1) {
            const int64_t mid = lo + (hi - lo) / 2;
            (need(mid) <= budget ? lo : hi) = mid;
        }
        return lo;
    }
    const double slope = std::max(1.0, static_cast<double>(n2 - n1) / static_cast<double>(probe - 1));
    int64_t guess = probe + static_cast<int64_t>(static_cast<double>(budget - n2) / slope);
    guess = std::clamp<int64_t>(guess, probe, limit);
    int64_t lo = probe, hi = limit + 1; // lo fits, hi does not (limit + 1: not evaluated)
    if (need(guess) <= budget) {
        lo = guess;
        for (int64_t step = std::max<int64_t>(1, guess / 64); lo < limit; step *= 2) {
            const int64_t b = std::min(limit, lo + step);
            if (need(b) <= budget) {
                lo = b;
            } else {
                hi = b;
                break;
            }
        }
        if (lo == limit)
            return limit;
    } else {
        hi = guess;
        for (int64_t step = std::max<int64_t>(1, guess / 64);; step *= 2) {
            const int64_t b = std::max(lo, hi - step);
            if (b == lo)
                break;
            if (need(b) <= budget) {
                lo = b;
                break;
            }
            hi = b;
        }
    }
    while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        (need(mid) <= budget ? lo : hi) = mid;
    }
    return lo;
}

int64_t maxBatch(const Model& model, const Config& config, int64_t limit)
{
    return maxBatch(makePlan(model, config.freeze), config, limit);
}

Fit computeFit(const Model& model, const Config& config, const Evaluation& evaluation)
{
    Fit f;
    f.gpu = config.gpu.name;
    f.capacity = config.gpu.capacity;
    f.needed = neededBytes(config, evaluation);
    f.fits = f.capacity > 0 && f.needed + config.marginBytes <= f.capacity;
    f.headroom = f.capacity - f.needed;
    f.maxBatch = maxBatch(model, config);
    return f;
}

} // namespace headroom
