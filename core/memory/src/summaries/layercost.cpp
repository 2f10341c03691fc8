// Per-layer costs (layercost.h): an evaluation's per-node figures (parameters, output and saved bytes) summed
// into every layer-tree node above the node, for the GUI's layer tree, the PDF and the CLI table.
#include "headroom/memory/layercost.h"

namespace headroom {

std::vector<LayerCost> aggregateLayers(const Model& model, const Evaluation& evaluation)
{
    std::vector<LayerCost> out(model.layers.size());
    for (size_t n = 0; n < model.nodes.size(); ++n) {
        const NodeCost cost = n < evaluation.nodes.size() ? evaluation.nodes[n] : NodeCost{};
        for (int l = model.nodes[n].layer; l >= 0; l = model.layers[static_cast<size_t>(l)].parent) {
            LayerCost& c = out[static_cast<size_t>(l)];
            c.params += cost.params;
            c.outputBytes += cost.outputBytes;
            c.savedBytes += cost.savedBytes;
            c.nodes += 1;
            c.lastNode = static_cast<int>(n);
            c.unknownShape = c.unknownShape || cost.unknownShape;
        }
    }
    return out;
}

} // namespace headroom
