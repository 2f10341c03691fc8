// If/Loop/Scan bodies (GRAPH and GRAPHS attributes), each built by a nested GraphBuilder into a Model of its
// own.
#include "onnx_graph_builder.h"

#include <algorithm>

namespace headroom::detail {

// Bodies of If/Loop/Scan: their stored tensors count (classified inside the body), their outer-scope
// reads become trailing inputs of the parent node so ordering and liveness see them.
void GraphBuilder::subgraphs(const onnx::NodeProto& np, Node& n, size_t ni)
{
    if (depth + 1 >= kMaxDepth)
        fail("node '" + displayName(np, ni) + "': subgraphs nest deeper than " + std::to_string(kMaxDepth) + " levels");
    std::vector<const onnx::GraphProto*> bodies;
    for (const auto& a : np.attribute()) {
        if (a.has_g())
            bodies.push_back(&a.g());
        for (const auto& gg : a.graphs())
            bodies.push_back(&gg);
    }
    for (const onnx::GraphProto* body : bodies) {
        Model sub;
        GraphBuilder b(file, ctx, sub, nullptr, depth + 1);
        b.build(*body);
        classifyTensors(sub);
        for (std::string& w : sub.warnings)
            m.warnings.push_back(std::move(w));
        for (Tensor& t : sub.tensors) {
            const bool isStored = t.producer < 0 && t.role != TensorRole::Input && t.role != TensorRole::Activation;
            const bool constOut = t.producer >= 0 && sub.nodes[size_t(t.producer)].op == "Constant";
            if (isStored || constOut ||
                (t.inSubgraph && t.role != TensorRole::Activation && t.role != TensorRole::Input)) {
                if (t.aliasOf >= 0)
                    continue;
                Tensor copy = t;
                copy.producer = -1;
                copy.consumers.clear();
                copy.inSubgraph = true;
                copy.aliasOf = -1;
                copy.isGraphOutput = false;
                copy.name = (np.name().empty() ? np.op_type() : np.name()) + "/" + t.name;
                m.tensors.push_back(std::move(copy));
                const int idx = static_cast<int>(m.tensors.size() - 1);
                bodyStored.emplace_back(idx, ni);
            }
        }
        for (int d : b.danglingTensors) {
            auto it = byName.find(sub.tensors[size_t(d)].name);
            int outer = -1;
            if (it != byName.end()) {
                outer = it->second;
            } else {
                outer = newTensor(sub.tensors[size_t(d)].name, TensorRole::Activation);
                danglingTensors.push_back(outer);
            }
            if (std::find(implicitInputs[ni].begin(), implicitInputs[ni].end(), outer) == implicitInputs[ni].end() &&
                std::find(n.inputs.begin(), n.inputs.end(), outer) == n.inputs.end())
                implicitInputs[ni].push_back(outer);
        }
    }
    n.implicitInputs = static_cast<int>(implicitInputs[ni].size());
    for (int t : implicitInputs[ni])
        n.inputs.push_back(t);
}

} // namespace headroom::detail
