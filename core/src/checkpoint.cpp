// Checkpoint segments as torch.utils.checkpoint.checkpoint_sequential: k contiguous segments of the
// topological order with similar saved bytes, each cut moved to where the fewest bytes cross it.
#include "engine_internal.h"

#include <algorithm>
#include <cstdlib>

namespace headroom {

int64_t unitMacs(const PlanData& plan, const Unit& unit, const ShapeTable& shapes)
{
    const auto numel = [&](int t) -> int64_t {
        return t >= 0 && static_cast<size_t>(t) < shapes.numel.size() ? std::max<int64_t>(shapes.numel[static_cast<size_t>(t)], 0) : 0;
    };
    if (unit.macDim == -2 && unit.macDimTensor >= 0) { // RNNs: T * B * per-step MACs
        const auto& dims = plan.model->tensors[static_cast<size_t>(unit.macDimTensor)].shape.dims;
        int64_t tb = 1;
        for (size_t d = 0; d < 2 && d < dims.size(); ++d) {
            auto v = dims[d].eval(shapes.values);
            tb = checkedMul(tb, v ? std::max<int64_t>(*v, 0) : 0).value_or(0);
        }
        return checkedMul(tb, unit.macPerElem).value_or(0);
    }
    if (unit.macTensor < 0)
        return 0;
    int64_t per = unit.macPerElem;
    if (unit.macDimTensor >= 0 && unit.macDim >= 0) {
        const auto& dims = plan.model->tensors[static_cast<size_t>(unit.macDimTensor)].shape.dims;
        per = 0;
        if (static_cast<size_t>(unit.macDim) < dims.size())
            if (auto v = dims[static_cast<size_t>(unit.macDim)].eval(shapes.values))
                per = *v;
    }
    return checkedMul(numel(unit.macTensor), std::max<int64_t>(per, 0)).value_or(0);
}

std::vector<int> checkpointSegments(const PlanData& plan, const Config& config, const ShapeTable& shapes,
                                    const Sizes& sizes, int k)
{
    const size_t nU = plan.units.size();
    std::vector<int> seg(nU, 0);
    if (k <= 1 || nU < 2)
        return seg;
    k = std::min<int>(k, static_cast<int>(nU));
    const Model& m = *plan.model;
    // saved bytes per unit (a storage attributed to its first saver)
    std::vector<int64_t> prefix(nU + 1, 0);
    std::vector<uint8_t> seen(m.tensors.size(), 0);
    for (size_t u = 0; u < nU; ++u) {
        int64_t b = 0;
        for (const SavedItem& it : plan.units[u].saved) {
            if (!savedItemActive(plan, shapes, it))
                continue;
            if (it.kind == SavedItem::Kind::Storage) {
                if (seen[static_cast<size_t>(it.tensor)])
                    continue;
                seen[static_cast<size_t>(it.tensor)] = 1;
            }
            b += savedItemBytes(plan, config, shapes, sizes, it);
        }
        prefix[u + 1] = prefix[u] + b;
    }
    // bytes crossing each boundary (boundary b lies before unit b)
    std::vector<int64_t> diff(nU + 2, 0);
    for (size_t t = 0; t < m.tensors.size(); ++t) {
        if (!plan.dynamic[t] || plan.consumerUnits[t].empty() || plan.root[t] != static_cast<int>(t))
            continue;
        const int pr = m.tensors[t].producer;
        const int pu = pr >= 0 ? plan.unitOfNode[static_cast<size_t>(pr)] : -1;
        if (pu < 0)
            continue;
        const int lu = plan.consumerUnits[t].back();
        if (lu <= pu)
            continue;
        diff[static_cast<size_t>(pu + 1)] += sizes.act[t];
        diff[static_cast<size_t>(lu + 1)] -= sizes.act[t];
    }
    std::vector<int64_t> cross(nU + 1, 0);
    int64_t run = 0;
    for (size_t b = 0; b <= nU; ++b) {
        run += diff[b];
        cross[b] = run;
    }
    const int64_t total = prefix[nU];
    std::vector<size_t> cuts;
    size_t prev = 0;
    const size_t window = std::max<size_t>(1, nU / (4 * static_cast<size_t>(k)));
    for (int j = 1; j < k; ++j) {
        const int64_t target = total / k * j;
        size_t b = static_cast<size_t>(std::lower_bound(prefix.begin(), prefix.end(), target) - prefix.begin());
        b = std::clamp<size_t>(b, prev + 1, nU - static_cast<size_t>(k - j));
        size_t best = b;
        const size_t lo = b > window ? std::max(prev + 1, b - window) : prev + 1;
        const size_t hi = std::min(nU - static_cast<size_t>(k - j), b + window);
        for (size_t c = lo; c <= hi; ++c) {
            const auto score = [&](size_t x) {
                return static_cast<double>(cross[x]) +
                    0.25 * static_cast<double>(std::llabs(prefix[x] - target));
            };
            if (score(c) < score(best))
                best = c;
        }
        cuts.push_back(best);
        prev = best;
    }
    size_t ci = 0;
    int cur = 0;
    for (size_t u = 0; u < nU; ++u) {
        while (ci < cuts.size() && u >= cuts[ci]) {
            ++cur;
            ++ci;
        }
        seg[u] = cur;
    }
    return seg;
}

} // namespace headroom
