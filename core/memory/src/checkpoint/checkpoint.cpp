// Checkpoint segments as torch.utils.checkpoint.checkpoint_sequential (torch/utils/checkpoint.py) runs them
// over the model's module sequence (docs/DESIGN.md "Checkpoint segments").
#include "engine/engine_internal.h"

#include <algorithm>
#include <cstdlib>

namespace headroom {

int64_t unitMacs(const PlanData& plan, const Unit& unit, const ShapeTable& shapes, const Sizes& sizes)
{
    const auto numel = [&](int t) -> int64_t {
        return t >= 0 && static_cast<size_t>(t) < shapes.numel.size()
                   ? std::max<int64_t>(shapes.numel[static_cast<size_t>(t)], 0)
                   : 0;
    };
    // The dims below, evaluated once per tick for every unit with the same shape (PlanData::spans)
    const bool spanKnown = unit.macSpan >= 0 && static_cast<size_t>(unit.macSpan) < sizes.spanElems.size();
    if (unit.macDim == -2 && unit.macDimTensor >= 0 && spanKnown)
        return checkedMul(sizes.spanElems[static_cast<size_t>(unit.macSpan)], unit.macPerElem).value_or(0);
    if (unit.macDim >= 0 && unit.macDimTensor >= 0 && unit.macTensor >= 0 && spanKnown)
        return checkedMul(numel(unit.macTensor), sizes.spanElems[static_cast<size_t>(unit.macSpan)]).value_or(0);
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

namespace {

// The integer index of `child` when it is named "<parent name>.<int>" ("layer1.0" under "layer1",
// "features.3" under "features": the parent is an nn.Sequential / nn.ModuleList), else -1.
int childIndex(const LayerNode& parent, const LayerNode& child)
{
    const std::string& n = child.name;
    if (n.size() <= parent.name.size() + 1 || n.size() > parent.name.size() + 7 ||
        n.compare(0, parent.name.size(), parent.name) != 0 || n[parent.name.size()] != '.')
        return -1;
    int v = 0;
    for (size_t i = parent.name.size() + 1; i < n.size(); ++i) {
        if (n[i] < '0' || n[i] > '9')
            return -1;
        v = v * 10 + (n[i] - '0');
    }
    return v;
}

} // namespace

std::vector<int> checkpointItems(const PlanData& plan)
{
    const Model& m = *plan.model;
    const size_t nU = plan.units.size();
    std::vector<int> item(nU, 0);
    if (m.layers.empty()) { // no module names: every op is its own item
        for (size_t u = 0; u < nU; ++u)
            item[u] = static_cast<int>(u);
        item.push_back(static_cast<int>(nU));
        return item;
    }
    // A top-level layer all of whose children are indexed is a container: it contributes one module per
    // index 0..max, including indices that left no node in the export (nn.Dropout in an eval export).
    std::vector<int> slots(m.layers.size(), 1);
    for (int c : m.layers[0].children) {
        const LayerNode& top = m.layers[static_cast<size_t>(c)];
        int maxIdx = -1;
        bool all = !top.children.empty() && top.nodes.empty();
        for (int g : top.children) {
            const int i = childIndex(top, m.layers[static_cast<size_t>(g)]);
            all = all && i >= 0;
            maxIdx = std::max(maxIdx, i);
        }
        if (all)
            slots[static_cast<size_t>(c)] = -(maxIdx + 1); // negative: expanded, this many modules
    }
    std::vector<int> base(m.layers.size(), -1);
    int next = 0, cur = 0;
    for (size_t u = 0; u < nU; ++u) {
        int l = m.nodes[static_cast<size_t>(plan.units[u].head)].layer, below = -1;
        while (l > 0 && m.layers[static_cast<size_t>(l)].parent > 0) {
            below = l;
            l = m.layers[static_cast<size_t>(l)].parent;
        }
        int idx;
        if (l <= 0) {
            idx = next++; // a top-level op with no module (torch.flatten)
        } else {
            const size_t top = static_cast<size_t>(l);
            if (base[top] < 0) {
                base[top] = next;
                next += slots[top] < 0 ? -slots[top] : 1;
            }
            idx = base[top];
            if (slots[top] < 0 && below > 0)
                idx += std::max(0, childIndex(m.layers[top], m.layers[static_cast<size_t>(below)]));
        }
        // the Sequential runs its modules in order: a unit never goes back to an earlier one
        cur = std::max(cur, idx);
        item[u] = cur;
    }
    // trailing modules that left no node (a final Dropout) still count
    if (nU > 0)
        item.push_back(next); // sentinel: the module count, removed by the callers
    return item;
}

int checkpointModuleCount(const EnginePlan& plan)
{
    if (!plan.data)
        return 0;
    const std::vector<int> item = checkpointItems(*plan.data);
    return item.empty() ? 0 : item.back();
}

// torch.utils.checkpoint.checkpoint_sequential(functions, segments, input, use_reentrant=False):
// segment_size = len(functions) // segments; the first segments - 1 runs of segment_size modules are
// checkpointed, the last run (the remainder) executes normally. Cut by module count, not by bytes.
std::vector<int> checkpointSegments(const PlanData& plan, const Config& /*config*/, const ShapeTable& /*shapes*/,
                                    const Sizes& /*sizes*/, int k)
{
    const size_t nU = plan.units.size();
    std::vector<int> seg(nU, 0);
    if (k <= 1 || nU < 2)
        return seg;
    const std::vector<int> item = checkpointItems(plan);
    const int n = item.size() > nU ? item.back() : 0;
    k = std::min(k, n);
    if (k <= 1)
        return seg;
    const int size = n / k;
    for (size_t u = 0; u < nU; ++u)
        seg[u] = std::min(item[u] / size, k - 1);
    return seg;
}

} // namespace headroom
