#pragma once
#include "headroom/import/model.h"

#include <vector>

namespace headroom {

// One row of the displayed layer tree, the same in the GUI, the CLI table and the PDF: a child layer, a
// graph node, or (shapeNodes non-empty) the one folded "shape computations" row of a layer, which comes last.
struct TreeEntry
{
    int layer = -1;
    int node = -1;
    std::vector<int> shapeNodes; // graph nodes, topological
};

// The children of `layer` in topological order. Unless showShapeComputations, the shape computations held
// directly by the layer and its shape-only child layers are folded into one trailing entry.
std::vector<TreeEntry> treeEntries(const Model& model, int layer, bool showShapeComputations);

} // namespace headroom
