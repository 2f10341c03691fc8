#pragma once
#include "headroom/import/model.h"

#include <string>
#include <vector>

namespace headroom {

// One row of the displayed layer tree, the same in the GUI, the CLI table and the PDF: a child layer, a
// graph node, (maskNodes non-empty) the folded "attention mask" row, or (shapeNodes non-empty) the one folded
// "shape computations" row of a layer, which comes last.
struct TreeEntry
{
    int layer = -1;
    int node = -1;
    std::vector<int> shapeNodes; // graph nodes, topological
    std::vector<int> maskNodes;  // graph nodes, topological
};

// The children of `layer` in topological order. Unless showShapeComputations:
//  - the shape computations held directly by the layer and its shape-only child layers are folded into one
//    trailing entry;
//  - the nodes held directly by a layer with child layers that build the attention mask from the inputs alone
//    (Node::fromInputsOnly, at least one of them [B, 1, T, T]-like, rank 3 or more) are folded into one entry
//    where the first of them runs: an export's ~20 arange/unsqueeze/slice/compare rows are one thing to a reader.
std::vector<TreeEntry> treeEntries(const Model& model, int layer, bool showShapeComputations);

// A mixture-of-experts block (a layer whose child holds the routed experts' GroupedMatMul): "128 experts, 8 active
// per token", shown beside its name in every view; "" for any other layer.
std::string layerNote(const Model& model, int layer);

} // namespace headroom
