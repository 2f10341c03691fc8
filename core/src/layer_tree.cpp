// The layer tree from scoped node names (PyTorch "/layer1/layer1.0/conv1/Conv", TF "a/b/c", Paddle
// "conv2d_12.tmp_0"); unscoped graphs are grouped by their op sequence (a compute op and what follows it).
#include "loader_internal.h"

#include <algorithm>
#include <unordered_map>

namespace headroom::detail {
namespace {

std::vector<std::string> splitPath(const std::string& name)
{
    std::vector<std::string> parts;
    size_t p = 0;
    while (p <= name.size()) {
        size_t q = name.find('/', p);
        if (q == std::string::npos)
            q = name.size();
        if (q > p)
            parts.push_back(name.substr(p, q - p));
        p = q + 1;
    }
    return parts;
}

// "conv2d_12.tmp_0" -> "conv2d_12"; "" when the name is not Paddle-style.
std::string paddleLayer(const std::string& n)
{
    const size_t t = n.find(".tmp_");
    return t != std::string::npos && t > 0 ? n.substr(0, t) : std::string();
}

bool isAnchor(const std::string& op)
{
    return op == "Conv" || op == "ConvTranspose" || op == "Gemm" || op == "MatMul" || op == "LSTM" || op == "GRU"
           || op == "RNN" || op == "Einsum" || op == "Attention" || op == "MultiHeadAttention" || op == "QLinearConv"
           || op == "QLinearMatMul" || op == "MatMulInteger" || op == "ConvInteger";
}

std::string lowerOp(const std::string& op)
{
    std::string r = op;
    for (char& c : r)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return r;
}

} // namespace

void buildLayerTree(Model& m)
{
    m.layers.clear();
    LayerNode root;
    root.name = "";
    root.path = "";
    m.layers.push_back(root);
    std::unordered_map<std::string, int> byPath;
    byPath.emplace("", 0);

    auto layerFor = [&](const std::vector<std::string>& parts) {
        int cur = 0;
        std::string path;
        for (const std::string& p : parts) {
            path += (path.empty() ? "" : "/") + p;
            auto it = byPath.find(path);
            if (it == byPath.end()) {
                LayerNode ln;
                ln.name = p;
                ln.path = path;
                ln.parent = cur;
                ln.depth = m.layers[size_t(cur)].depth + 1;
                m.layers.push_back(std::move(ln));
                const int idx = static_cast<int>(m.layers.size() - 1);
                m.layers[size_t(cur)].children.push_back(idx);
                it = byPath.emplace(path, idx).first;
            }
            cur = it->second;
        }
        return cur;
    };

    size_t scoped = 0, paddle = 0;
    for (const Node& n : m.nodes) {
        scoped += n.name.find('/') != std::string::npos;
        const std::string out = !n.outputs.empty() && n.outputs[0] >= 0 ? m.tensors[size_t(n.outputs[0])].name : "";
        paddle += !paddleLayer(out).empty() || !paddleLayer(n.name).empty();
    }
    const size_t half = (m.nodes.size() + 1) / 2;
    // Module paths (Node::module): the dynamo exporter's metadata wins; guessed from parameter names only
    // where the names themselves carry no scope.
    bool metadata = false, anyModule = false;
    for (const Node& n : m.nodes) {
        metadata = metadata || n.moduleFromMetadata;
        anyModule = anyModule || !n.module.empty();
    }
    const bool byModule = metadata || (anyModule && scoped < half && paddle < half);
    std::unordered_map<std::string, int> groupCount;
    std::vector<std::string> group;
    for (size_t k = 0; k < m.nodes.size(); ++k) {
        Node& n = m.nodes[k];
        std::vector<std::string> parts;
        if (byModule) {
            parts = splitPath(n.module);
        } else if (scoped >= half && scoped > 0) {
            parts = splitPath(n.name);
            if (!parts.empty())
                parts.pop_back(); // the op instance ("Conv", "Add_1")
        } else if (paddle >= half && paddle > 0) {
            const std::string out = !n.outputs.empty() && n.outputs[0] >= 0 ? m.tensors[size_t(n.outputs[0])].name : "";
            std::string l = paddleLayer(out);
            if (l.empty())
                l = paddleLayer(n.name);
            if (!l.empty())
                parts.push_back(l);
        } else {
            if (isAnchor(n.op)) {
                const std::string op = lowerOp(n.op);
                group.assign(1, op + "_" + std::to_string(groupCount[op]++));
            }
            parts = group;
        }
        n.layer = layerFor(parts);
    }

    // Ranges and parameters, aggregated up the tree.
    for (size_t k = 0; k < m.nodes.size(); ++k) {
        const int leaf = m.nodes[k].layer;
        m.layers[size_t(leaf)].nodes.push_back(static_cast<int>(k));
        for (int l = leaf; l >= 0; l = m.layers[size_t(l)].parent) {
            LayerNode& ln = m.layers[size_t(l)];
            if (ln.firstNode < 0 || static_cast<int>(k) < ln.firstNode)
                ln.firstNode = static_cast<int>(k);
            ln.lastNode = std::max(ln.lastNode, static_cast<int>(k));
        }
    }
    for (const Tensor& t : m.tensors) {
        if (t.role != TensorRole::Parameter || t.aliasOf >= 0 || (t.producer >= 0 && m.nodes[size_t(t.producer)].op != "Constant"))
            continue;
        if (t.consumers.empty())
            continue;
        int64_t numel = 1;
        for (const DimExpr& d : t.shape.dims)
            numel = checkedMul(numel, d.constantValue().value_or(0)).value_or(0);
        for (int l = m.nodes[size_t(t.consumers.front())].layer; l >= 0; l = m.layers[size_t(l)].parent)
            m.layers[size_t(l)].params += numel;
    }
}

} // namespace headroom::detail
