// The rows of the displayed layer tree (GUI, CLI table, PDF): a layer's children in topological order,
// its shape computations folded into one trailing row.
#include "headroom/report/layer_tree.h"

#include <algorithm>
#include <string>

namespace headroom {
namespace {

void collectNodes(const Model& m, int layer, std::vector<int>& out)
{
    const LayerNode& l = m.layers[size_t(layer)];
    out.insert(out.end(), l.nodes.begin(), l.nodes.end());
    for (int c : l.children)
        collectNodes(m, c, out);
}

// The folded mask row needs the mask itself among the nodes: a lone position Range stays a plain node.
bool buildsMask(const Model& m, const std::vector<int>& nodes)
{
    if (nodes.size() < 2)
        return false;
    for (int n : nodes)
        for (int t : m.nodes[size_t(n)].outputs)
            if (t >= 0 && m.tensors[size_t(t)].shape.state == TensorShape::State::Exact &&
                m.tensors[size_t(t)].shape.dims.size() >= 3)
                return true;
    return false;
}

} // namespace

std::string layerNote(const Model& m, int layer)
{
    if (layer < 0 || size_t(layer) >= m.layers.size())
        return {};
    for (int c : m.layers[size_t(layer)].children)
        for (int n : m.layers[size_t(c)].nodes) {
            const Node& nd = m.nodes[size_t(n)];
            const int64_t k = nd.op == "GroupedMatMul" ? nd.attrInt("top_k", 0) : 0;
            if (k <= 0 || nd.inputs.size() < 2 || nd.inputs[1] < 0)
                continue;
            // the weight [E, K, N], or W + delta under LoRA's target_parameters: same shape
            const TensorShape& w = m.tensors[size_t(nd.inputs[1])].shape;
            const auto experts = w.dims.empty() ? std::nullopt : w.dims[0].constantValue();
            if (experts)
                return std::to_string(*experts) + " experts, " + std::to_string(k) + " active per token";
        }
    return {};
}

std::vector<TreeEntry> treeEntries(const Model& m, int layer, bool showShapeComputations)
{
    std::vector<TreeEntry> out;
    if (layer < 0 || size_t(layer) >= m.layers.size())
        return out;
    const LayerNode& l = m.layers[size_t(layer)];
    std::vector<std::pair<int, TreeEntry>> ordered;
    std::vector<int> group;
    for (int c : l.children) {
        if (!showShapeComputations && m.layers[size_t(c)].shapeOnly) {
            collectNodes(m, c, group);
            continue;
        }
        TreeEntry e;
        e.layer = c;
        ordered.emplace_back(m.layers[size_t(c)].firstNode, std::move(e));
    }
    std::vector<int> mask;
    for (int n : l.nodes)
        if (!showShapeComputations && m.nodes[size_t(n)].fromInputsOnly)
            mask.push_back(n);
    // Only a module with blocks under it builds a mask before them (a leaf such as a config.json graph's own
    // "mask" module or rotary_emb is that one thing already, and says so by its name)
    const bool foldMask = !l.children.empty() && buildsMask(m, mask);
    if (foldMask) {
        TreeEntry e;
        e.maskNodes = mask;
        ordered.emplace_back(mask.front(), std::move(e));
    }
    for (int n : l.nodes) {
        if (!showShapeComputations && m.nodes[size_t(n)].shapeComputation) {
            group.push_back(n);
            continue;
        }
        if (foldMask && m.nodes[size_t(n)].fromInputsOnly)
            continue;
        TreeEntry e;
        e.node = n;
        ordered.emplace_back(n, std::move(e));
    }
    std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    out.reserve(ordered.size() + 1);
    for (auto& [first, e] : ordered)
        out.push_back(std::move(e));
    if (!group.empty()) {
        std::sort(group.begin(), group.end());
        TreeEntry e;
        e.shapeNodes = std::move(group);
        out.push_back(std::move(e));
    }
    return out;
}

} // namespace headroom
