#pragma once
#include "headroom/memory/engine.h"

#include <vector>

namespace headroom {

// Figures of one layer-tree node, aggregated over its subtree (LayerNode indices).
struct LayerCost {
    int64_t params = 0;
    int64_t outputBytes = 0;  // sum of the activation bytes of the subtree's nodes
    int64_t savedBytes = 0;
    int64_t nodes = 0;
    int lastNode = -1;        // last graph node in topological order (its output is the layer's output)
    bool unknownShape = false;
};

// One pass over the nodes, then a bottom-up sum; the GUI tree and the CLI table both use it.
std::vector<LayerCost> aggregateLayers(const Model& model, const Evaluation& evaluation);

// One row of the displayed layer tree, the same in the GUI, the CLI table and the PDF: a child layer, a
// graph node, or (shapeNodes non-empty) the one folded "shape computations" row of a layer, which comes last.
struct TreeEntry {
    int layer = -1;
    int node = -1;
    std::vector<int> shapeNodes; // graph nodes, topological
};

// The children of `layer` in topological order. Unless showShapeComputations, the shape computations held
// directly by the layer and its shape-only child layers are folded into one trailing entry.
std::vector<TreeEntry> treeEntries(const Model& model, int layer, bool showShapeComputations);

} // namespace headroom
