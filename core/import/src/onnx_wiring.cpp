// Tensors and nodes wired into the Model: graph inputs, node outputs and inputs, dangling names, the
// topological order (ties broken by file order) and graph outputs.
#include "onnx_graph_builder.h"
#include "onnx_parse.h"

#include <queue>

namespace headroom::detail {

GraphBuilder::InputInfos GraphBuilder::addGraphInputs(const onnx::GraphProto& gp)
{
    InputInfos inputInfos;
    for (const onnx::ValueInfoProto& vi : gp.input()) {
        if (byName.count(vi.name()))
            continue; // IR < 4 lists initializers as inputs too
        const int idx = newTensor(vi.name(), TensorRole::Input);
        m.inputs.push_back(idx);
        inputInfos.emplace_back(idx, &vi);
        if (vi.type().has_tensor_type())
            m.tensors[size_t(idx)].dtype = dtypeFromOnnx(vi.type().tensor_type().elem_type());
    }
    return inputInfos;
}

// Node outputs. A name produced twice is renamed so the graph stays well formed.
std::vector<Node> GraphBuilder::nodesWithOutputs()
{
    std::vector<Node> nodes(flat.size());
    implicitInputs.assign(flat.size(), {});
    for (size_t ni = 0; ni < flat.size(); ++ni) {
        const onnx::NodeProto& np = *flat[ni];
        Node& n = nodes[ni];
        n.name = np.name();
        n.op = np.op_type();
        n.domain = normDomain(np.domain());
        readNodeModule(np, n);
        for (const auto& a : np.attribute()) {
            if (isSubgraphAttr(a))
                n.hasSubgraphs = true;
            n.attrs.push_back(convertAttr(a));
        }
        for (const std::string& out : np.output()) {
            if (out.empty()) {
                n.outputs.push_back(-1);
                continue;
            }
            std::string nm = out;
            if (byName.count(nm)) {
                warn("node '" + displayName(np, ni) + "': output '" + out + "' is already defined elsewhere; renamed");
                nm = out + "#dup" + std::to_string(ni);
            }
            const int idx = newTensor(nm, TensorRole::Activation);
            m.tensors[size_t(idx)].producer = static_cast<int>(ni);
            n.outputs.push_back(idx);
        }
        if (n.op == "Constant" && n.domain.empty())
            constantNode(np, n, ni);
    }
    return nodes;
}

// Inputs; names nobody defines are dangling (warned once the subgraph/outer scope is resolved).
void GraphBuilder::wireNodeInputs(std::vector<Node>& nodes)
{
    for (size_t ni = 0; ni < flat.size(); ++ni) {
        const onnx::NodeProto& np = *flat[ni];
        for (const std::string& in : np.input()) {
            if (in.empty()) {
                nodes[ni].inputs.push_back(-1);
                continue;
            }
            auto it = byName.find(in);
            int idx = it != byName.end() ? it->second : -1;
            if (idx < 0) {
                idx = newTensor(in, TensorRole::Activation);
                danglingTensors.push_back(idx);
            }
            nodes[ni].inputs.push_back(idx);
        }
        if (nodes[ni].hasSubgraphs)
            subgraphs(np, nodes[ni], ni);
    }
}

void GraphBuilder::warnDangling(const std::vector<Node>& nodes)
{
    for (int idx : danglingTensors) {
        Tensor& t = m.tensors[size_t(idx)];
        if (depth == 0) {
            std::string user;
            for (size_t ni = 0; ni < nodes.size() && user.empty(); ++ni)
                for (int in : nodes[ni].inputs)
                    if (in == idx)
                        user = displayName(*flat[ni], ni);
            warn("node '" + user + "': input '" + t.name + "' is not produced by any node, input or initializer");
            t.shape.state = TensorShape::State::Unknown;
            t.shape.unknownReason = "dangling input: nothing produces '" + t.name + "'";
        }
    }
}

void GraphBuilder::sortAndWire(std::vector<Node>& nodes)
{
    const size_t n = nodes.size();
    std::vector<int> indeg(n, 0);
    std::vector<std::vector<int>> succ(n);
    for (size_t i = 0; i < n; ++i)
        for (int in : nodes[i].inputs) {
            if (in < 0)
                continue;
            const int p = m.tensors[size_t(in)].producer;
            if (p >= 0 && !stored.count(in)) {
                succ[size_t(p)].push_back(static_cast<int>(i));
                indeg[i]++;
            }
        }
    std::priority_queue<int, std::vector<int>, std::greater<>> ready;
    for (size_t i = 0; i < n; ++i)
        if (indeg[i] == 0)
            ready.push(static_cast<int>(i));
    order.clear();
    order.reserve(n);
    while (!ready.empty()) {
        const int i = ready.top();
        ready.pop();
        order.push_back(size_t(i));
        for (int s : succ[size_t(i)])
            if (--indeg[size_t(s)] == 0)
                ready.push(s);
    }
    if (order.size() != n) {
        for (size_t i = 0; i < n; ++i)
            if (indeg[i] > 0)
                fail("the graph has a cycle through node '" + displayName(*flat[i], i) + "'");
    }
    std::vector<int> newIndex(n);
    for (size_t k = 0; k < n; ++k)
        newIndex[order[k]] = static_cast<int>(k);
    m.nodes.clear();
    m.nodes.reserve(n);
    for (size_t k = 0; k < n; ++k)
        m.nodes.push_back(std::move(nodes[order[k]]));
    for (Tensor& t : m.tensors)
        if (t.producer >= 0)
            t.producer = newIndex[size_t(t.producer)];
    for (auto& [t, ni] : bodyStored)
        m.tensors[size_t(t)].consumers.push_back(newIndex[ni]);
    for (size_t k = 0; k < n; ++k)
        for (int in : m.nodes[k].inputs)
            if (in >= 0) {
                auto& c = m.tensors[size_t(in)].consumers;
                if (c.empty() || c.back() != static_cast<int>(k))
                    c.push_back(static_cast<int>(k));
            }
}

void GraphBuilder::addGraphOutputs(const onnx::GraphProto& gp)
{
    for (const onnx::ValueInfoProto& vi : gp.output()) {
        auto it = byName.find(vi.name());
        if (it == byName.end()) {
            warn("graph output '" + vi.name() + "' is not produced by any node");
            continue;
        }
        m.outputs.push_back(it->second);
        m.tensors[size_t(it->second)].isGraphOutput = true;
        Tensor& t = m.tensors[size_t(it->second)];
        if (t.dtype == DType::Undefined && vi.type().has_tensor_type())
            t.dtype = dtypeFromOnnx(vi.type().tensor_type().elem_type());
    }
}

} // namespace headroom::detail
