// Hugging Face gradient checkpointing (PreTrainedModel.gradient_checkpointing_enable(): the decoder's
// `for decoder_layer in self.layers` loop calls self._gradient_checkpointing_func(decoder_layer.__call__,
// ...) = torch.utils.checkpoint.checkpoint(use_reentrant=True by default): one checkpoint per decoder
// layer. Each layer keeps only its inputs during forward and is recomputed just before its own backward;
// what runs outside the layers (final norm, lm_head, loss) keeps its tensors as usual.
// Expressed as the timeline's checkpoint segments: segment i = decoder layer i (with whatever precedes
// layer 0, which saves no activation of its own in these models), the last segment = after the layers.
#include "engine/engine_internal.h"

#include <cctype>

namespace headroom {

namespace {

// "layers.12" -> 12, "h.3" -> 3; -1 when the name is not "<name>.<int>".
int indexOf(const std::string& name)
{
    const size_t dot = name.rfind('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 >= name.size())
        return -1;
    int v = 0;
    for (size_t i = dot + 1; i < name.size(); ++i) {
        if (!std::isdigit(static_cast<unsigned char>(name[i])) || v > 1'000'000)
            return -1;
        v = v * 10 + (name[i] - '0');
    }
    return v;
}

} // namespace

std::vector<int> layerCheckpointSegments(const PlanData& plan)
{
    const Model& m = *plan.model;
    const size_t nU = plan.units.size();
    // The decoder-layer list: the layer-tree node with the most "layers.<int>"-style children (a ModuleList).
    int container = -1;
    size_t most = 1;
    for (size_t l = 0; l < m.layers.size(); ++l) {
        size_t n = 0;
        for (int c : m.layers[static_cast<size_t>(l)].children) {
            // Hugging Face names its decoder-layer lists layers (Llama & co.), h (GPT-2), layer (BERT), blocks
            const std::string& name = m.layers[static_cast<size_t>(c)].name;
            const std::string list = name.substr(0, name.rfind('.'));
            if (indexOf(name) >= 0 && (list == "layers" || list == "h" || list == "layer" || list == "blocks"))
                ++n;
        }
        if (n > most) {
            most = n;
            container = static_cast<int>(l);
        }
    }
    if (container < 0)
        return {};
    std::vector<int> seg(nU, 0);
    int cur = 0, last = -1;
    for (size_t u = 0; u < nU; ++u) {
        int layer = m.nodes[static_cast<size_t>(plan.units[u].head)].layer;
        int index = -1;
        while (layer > 0) {
            const LayerNode& ln = m.layers[static_cast<size_t>(layer)];
            if (ln.parent == container) {
                index = indexOf(ln.name);
                break;
            }
            layer = ln.parent;
        }
        if (index >= 0 && index > last) { // the next decoder layer starts
            cur = last < 0 ? 0 : cur + 1;
            last = index;
        } else if (index < 0 && last >= 0 && cur == static_cast<int>(most) - 1) {
            cur = static_cast<int>(most); // past the last layer: runs normally
        }
        seg[u] = cur;
    }
    // every segment but the one after the layers is checkpointed
    if (seg.back() != static_cast<int>(most))
        return {};
    return seg;
}

} // namespace headroom
