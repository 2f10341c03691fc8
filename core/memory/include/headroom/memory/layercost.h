#pragma once
#include "headroom/memory/engine.h"

#include <vector>

namespace headroom {

// Figures of one layer-tree node, aggregated over its subtree (LayerNode indices).
struct LayerCost
{
    int64_t params = 0;
    int64_t outputBytes = 0; // sum of the activation bytes of the subtree's nodes
    int64_t savedBytes = 0;
    int64_t nodes = 0;
    int lastNode = -1; // last graph node in topological order (its output is the layer's output)
    bool unknownShape = false;
};

// One pass over the nodes, then a bottom-up sum; the GUI tree and the CLI table both use it.
std::vector<LayerCost> aggregateLayers(const Model& model, const Evaluation& evaluation);

} // namespace headroom
