// The layer tree from scoped node names (PyTorch "/layer1/layer1.0/conv1/Conv", TF "a/b/c", Paddle
// "conv2d_12.tmp_0"); unscoped graphs are grouped by their op sequence (a compute op and what follows it).
#include "headroom/import/import.h"
#include "import_internal.h"

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
    return op == "Conv" || op == "ConvTranspose" || op == "Gemm" || op == "MatMul" || op == "LSTM" || op == "GRU" ||
           op == "RNN" || op == "Einsum" || op == "Attention" || op == "MultiHeadAttention" || op == "QLinearConv" ||
           op == "QLinearMatMul" || op == "MatMulInteger" || op == "ConvInteger";
}

std::string lowerOp(const std::string& op)
{
    std::string r = op;
    for (char& c : r)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return r;
}

// Inputs that ONNX defines as shapes, indices of axes or counts rather than data (the op schemas in
// onnx/defs): what the exporter's Shape/Gather/Concat arithmetic ends in.
bool isShapeOperand(const std::string& op, size_t input)
{
    if (op == "Reshape" || op == "Expand" || op == "Tile" || op == "Unsqueeze" || op == "Squeeze" || op == "Split" ||
        op == "TopK" || op == "Upsample" || op == "OneHot" || op == "ReduceSum" || op == "ReduceMean" ||
        op == "ReduceMax" || op == "ReduceMin" || op == "ReduceProd" || op == "ReduceL2")
        return input == 1;
    if (op == "Slice")
        return input >= 1 && input <= 4;
    if (op == "Range" || op == "ConstantOfShape")
        return true;
    if (op == "Resize")
        return input >= 1 && input <= 3;
    if (op == "Pad")
        return input == 1 || input == 3;
    return false;
}

// Shape-sized: a scalar or a short vector of known length (a shape, an index, a count). A symbolic length
// (position ids over the sequence) is data, not a shape.
bool isShapeSized(const Tensor& t)
{
    if (t.shape.state != TensorShape::State::Exact || t.shape.dims.size() > 1 || t.dtype == DType::String)
        return false;
    if (t.shape.dims.empty())
        return true;
    const auto n = t.shape.dims.front().constantValue();
    return n && *n <= 64;
}

// Exporters spell `x.reshape(n, -1)` as Shape -> Gather -> Unsqueeze -> Concat -> Reshape, plus Constant,
// Cast, Div, Equal, Where on the way; those nodes carry no memory and hide the model's modules. A node is a
// shape computation when its outputs are shape-sized, not graph outputs, and either
//  - its value depends on shapes only: a Shape/Size, or every input comes from such nodes or is a small
//    stored tensor (SDPA's scale = 1 / sqrt(q.size(-1)) is one, though it ends in a float Mul), or
//  - every reader takes it as a shape operand or is itself a shape computation (the constants feeding them).
// Integer Constants of that size (indices, axes) are operands, never rows of their own.
void markShapeComputations(Model& m)
{
    auto shapeSizedOutputs = [&](const Node& n) {
        if (n.outputs.empty() || n.hasSubgraphs)
            return false;
        for (int t : n.outputs)
            if (t >= 0 && (m.tensors[size_t(t)].isGraphOutput || !isShapeSized(m.tensors[size_t(t)])))
                return false;
        return true;
    };
    // Forward: values that depend on shapes only.
    std::vector<char> derived(m.nodes.size(), 0);
    for (size_t k = 0; k < m.nodes.size(); ++k) {
        Node& n = m.nodes[k];
        if (!n.domain.empty() || !shapeSizedOutputs(n))
            continue;
        bool fromShapes = n.op == "Shape" || n.op == "Size";
        bool anyNode = fromShapes;
        if (n.op == "Constant") {
            derived[k] = 1;
            const Tensor& out = m.tensors[size_t(n.outputs.front() >= 0 ? n.outputs.front() : 0)];
            n.shapeComputation = isInteger(out.dtype) || out.dtype == DType::Bool;
            continue;
        }
        if (!fromShapes) {
            fromShapes = true;
            for (int t : n.inputs) {
                if (t < 0)
                    continue;
                const Tensor& in = m.tensors[size_t(t)];
                const bool stored = in.producer < 0 && in.role != TensorRole::Input;
                if (in.producer >= 0 && derived[size_t(in.producer)])
                    anyNode = true;
                else if (!(stored && isShapeSized(in)))
                    fromShapes = false;
            }
        }
        if (fromShapes && anyNode) {
            derived[k] = 1;
            n.shapeComputation = true;
        }
    }
    // Backward: read only as shapes (consumers come later in topological order).
    for (size_t k = m.nodes.size(); k-- > 0;) {
        Node& n = m.nodes[k];
        if (n.shapeComputation || !n.domain.empty() || !shapeSizedOutputs(n))
            continue;
        bool shape = true;
        for (int t : n.outputs) {
            if (t < 0)
                continue;
            const Tensor& out = m.tensors[size_t(t)];
            shape = shape && !out.consumers.empty();
            for (int c : out.consumers) {
                const Node& user = m.nodes[size_t(c)];
                if (!shape || user.shapeComputation)
                    continue;
                for (size_t i = 0; i < user.inputs.size() && shape; ++i)
                    if (user.inputs[i] == t)
                        shape = isShapeOperand(user.op, i) && user.domain.empty();
            }
        }
        n.shapeComputation = shape;
    }
}

// Nodes computed from the integer inputs (input_ids' shape, attention_mask, position ids) and constants alone,
// no parameter and no float activation on the way: the causal/padding mask and the positions that a model's
// forward builds before its first block (transformers' create_causal_mask, BERT's get_extended_attention_mask).
// Shape computations count as such inputs.
void markInputOnlyNodes(Model& m)
{
    for (Node& n : m.nodes) {
        bool only = n.domain.empty() && !n.hasSubgraphs && !n.shapeComputation && !n.outputs.empty();
        for (int t : n.inputs) {
            if (!only || t < 0)
                continue;
            const Tensor& in = m.tensors[size_t(t)];
            if (in.producer >= 0) {
                const Node& p = m.nodes[size_t(in.producer)];
                only = p.fromInputsOnly || p.shapeComputation;
            } else if (in.role == TensorRole::Input) {
                only = isInteger(in.dtype) || in.dtype == DType::Bool;
            } else {
                only = in.role != TensorRole::Parameter; // a constant or a buffer (GPT-2's causal `bias`)
            }
        }
        for (int t : n.outputs)
            only = only && (t < 0 || !m.tensors[size_t(t)].isGraphOutput);
        n.fromInputsOnly = only;
    }
}

// Where the nodes' layer paths come from: the first source that covers the graph wins.
enum class Naming { Module, Scope, Paddle, Anchor };

Naming chooseNaming(const Model& m)
{
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
    if (metadata || (anyModule && scoped < half && paddle < half))
        return Naming::Module;
    if (scoped >= half && scoped > 0)
        return Naming::Scope;
    if (paddle >= half && paddle > 0)
        return Naming::Paddle;
    return Naming::Anchor;
}

// Every node into the layer its path names (Node::layer), creating the layers on the way from the root.
void placeNodes(Model& m, Naming naming)
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

    std::unordered_map<std::string, int> groupCount;
    std::vector<std::string> group;
    for (size_t k = 0; k < m.nodes.size(); ++k) {
        Node& n = m.nodes[k];
        std::vector<std::string> parts;
        if (naming == Naming::Module) {
            parts = splitPath(n.module);
        } else if (naming == Naming::Scope) {
            parts = splitPath(n.name);
            if (!parts.empty())
                parts.pop_back(); // the op instance ("Conv", "Add_1")
        } else if (naming == Naming::Paddle) {
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
}

// Each layer's node range (firstNode..lastNode), over its whole subtree.
void setNodeRanges(Model& m)
{
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
}

// A layer is shape-only when every node under it is a shape computation (markShapeComputations first).
void markShapeOnlyLayers(Model& m)
{
    std::vector<int> plain(m.layers.size(), 0), folded(m.layers.size(), 0);
    for (const Node& n : m.nodes)
        for (int l = n.layer; l >= 0; l = m.layers[size_t(l)].parent)
            ++(n.shapeComputation ? folded : plain)[size_t(l)];
    for (size_t l = 0; l < m.layers.size(); ++l)
        m.layers[l].shapeOnly = plain[l] == 0 && folded[l] > 0;
}

// Parameters counted at the layer of their first consumer and every layer above it.
void sumParameters(Model& m)
{
    for (const Tensor& t : m.tensors) {
        if (t.role != TensorRole::Parameter || t.aliasOf >= 0 ||
            (t.producer >= 0 && m.nodes[size_t(t.producer)].op != "Constant"))
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

} // namespace

void buildLayerTree(Model& m)
{
    placeNodes(m, chooseNaming(m));
    setNodeRanges(m);
    markShapeComputations(m);
    markInputOnlyNodes(m);
    markShapeOnlyLayers(m);
    sumParameters(m);
}

} // namespace headroom::detail
