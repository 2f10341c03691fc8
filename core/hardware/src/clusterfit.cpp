// Fit and max batch for several GPUs: what must fit is the heaviest GPU (DataParallel's GPU 0, a ZeRO-3
// gather), and the batch the user moves is the global one.
#include "headroom/hardware/multigpu.h"
#include "headroom/import/batch.h"
#include "headroom/shapes/shapes.h"

#include <algorithm>

namespace headroom {
namespace {

bool isCluster(const Config& c) { return c.gpus > 1 || c.strategy != Strategy::Single; }

int64_t heaviestNeed(const EnginePlan& plan, const Config& c)
{
    const ClusterEvaluation e = evaluateCluster(plan, c);
    int64_t need = 0;
    for (const GpuShare& g : e.gpus)
        need = std::max(need, g.needed);
    return need;
}

} // namespace

int64_t maxGlobalBatch(const EnginePlan& plan, const Config& varying, int64_t limit)
{
    if (!isCluster(varying))
        return safeMaxBatch(plan, varying, limit);
    // What a GPU needs is its longest step's, whether a symbol varies or not (evaluateCluster).
    Config config = varying;
    config.varySymbol = -1;
    const Model& m = *plan.model;
    if (config.gpu.capacity <= 0 || limit < 1)
        return 0;
    const int64_t budget = config.gpu.capacity - config.marginBytes;
    // Every GPU needs at least one sample, so the search starts at N.
    const int64_t first = std::min<int64_t>(limit, std::max(1, config.gpus));
    const auto fits = [&](const Config& c, int64_t b) { return heaviestNeed(plan, withBatch(m, c, b)) <= budget; };
    if (m.batchSymbol < 0)
        return fits(config, 1) ? 1 : 0;

    // The allocated need grows with the batch, so bracket and bisect it with the exact allocator; the
    // reserved need is >= it but wobbles (segment rounding), so the answer is the first batch that fits
    // scanning down from that bound, as in the single-GPU search.
    Config exact = config;
    exact.allocator = AllocatorMode::Exact;
    // Unknown sizes are not 0 bytes (docs/DESIGN.md "Fit and max batch").
    if (evaluateShapes(m, withBatch(m, exact, first).symbols).unknown > 0)
        return kUnknownMax;
    if (!fits(exact, first))
        return 0;
    int64_t lo = first, hi = first;
    while (hi < limit && fits(exact, hi)) {
        lo = hi;
        hi = std::min(limit, hi * 2);
    }
    if (hi == limit && fits(exact, hi))
        return kUnknownMax; // nothing (measurable) grows with the batch up to the limit: no number
    while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        (fits(exact, mid) ? lo : hi) = mid;
    }
    if (config.allocator == AllocatorMode::Exact)
        return lo;
    for (int64_t b = lo; b >= first; --b)
        if (fits(config, b))
            return b;
    return 0;
}

Fit computeClusterFit(const EnginePlan& plan, const Config& config, const Evaluation& evaluation,
                      const ClusterEvaluation& cluster, std::optional<int64_t> knownMaxBatch)
{
    Fit f;
    if (isCluster(config) && !cluster.gpus.empty()) {
        f.gpu = config.gpu.name;
        f.capacity = config.gpu.capacity;
        // Not the single-GPU evaluation: that one holds the whole global batch on one device.
        f.needed = 0;
        for (const GpuShare& g : cluster.gpus) {
            f.needed = std::max(f.needed, g.needed);
            f.atCapacity = f.atCapacity || g.reservedAtCapacity > 0;
        }
        f.fits = f.capacity > 0 && f.needed + config.marginBytes <= f.capacity;
        f.fitsSafely = f.fits; // the safety margin is the single-GPU replay's (docs/ACCURACY.md)
        f.headroom = f.capacity - f.needed;
    } else {
        f = computeFitOnly(plan, config, evaluation);
    }
    if (markUnknownFit(*plan.model, evaluation, f))
        return f;
    f.maxBatch = knownMaxBatch ? *knownMaxBatch : maxGlobalBatch(plan, config);
    // The model's own figure beside the safe one; a caller reusing its search (a slider tick) has only that.
    f.expectedMaxBatch = isCluster(config) || knownMaxBatch ? f.maxBatch : maxBatch(plan, config);
    return f;
}

} // namespace headroom
