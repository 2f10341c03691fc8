// Stored tensors -> trainable parameters / buffers / constants (docs/DESIGN.md "Import").
#include "import_internal.h"

#include <algorithm>
#include <string_view>

namespace headroom::detail {
namespace {

// Ops exporters insert between a weight and its real consumer; they do not change what the weight is.
bool passesThrough(std::string_view op, size_t slot)
{
    if (op == "Identity" || op == "Transpose" || op == "Cast" || op == "Concat")
        return true;
    if (slot != 0)
        return false;
    return op == "Reshape" || op == "Unsqueeze" || op == "Squeeze" || op == "Slice" || op == "Split" ||
           op == "Flatten" || op == "CastLike" || op == "Expand" || op == "Tile";
}

enum class Use { None, Weight, BatchStat, Constant };

// torch.onnx writes F.instance_norm without a weight (InstanceNorm2d(affine=False)) and F.group_norm (whose
// affine is applied after a Reshape back) as InstanceNormalization with a ones/zeros scale and bias it makes
// itself: a Constant node, or an initializer named "onnx::InstanceNormalization_NN" (the prefix torch.onnx
// gives tensors that are not state_dict entries). Those are constants: nothing trains them, and PyTorch
// counts no parameter for them. A trained InstanceNorm scale is a module's state_dict tensor ("n1.weight")
// and stays a parameter; other exporters' names carry no "onnx::" prefix and are unaffected.
bool exporterMadeNormConstant(const Tensor& t, bool isConstantNode)
{
    return isConstantNode || std::string_view(t.name).starts_with("onnx::");
}

// A stored float tensor (through Expand/Tile) concatenated with activations is learned: class tokens,
// learned queries and registers (torch.cat((cls.expand(B, -1, -1), x), 1)) get a gradient from the concat.
bool concatWithActivation(const Node& n, const std::vector<char>& fromInput)
{
    return std::any_of(n.inputs.begin(), n.inputs.end(), [&](int t) { return t >= 0 && fromInput[size_t(t)]; });
}

// A matmul whose other operand is computed from the inputs' shapes only (torch.arange(seq) positions) makes
// no activation: the stored operand is a buffer used to build position tables, like the rotary embedding's
// `inv_freq` (a `register_buffer(..., persistent=False)` in Hugging Face's LlamaRotaryEmbedding: inv_freq @
// position_ids). Autograd never reaches it from the loss through an activation, so it is not trained.
bool shapeOnlyOperand(const Node& n, size_t slot, const std::vector<char>& fromInput, const std::vector<char>& fromData)
{
    if (n.inputs.size() != 2)
        return false;
    const int other = n.inputs[slot == 0 ? 1 : 0];
    return other >= 0 && fromInput[size_t(other)] && !fromData[size_t(other)];
}

Use useOf(const Model& m, const Node& n, size_t slot, int64_t numel, const std::vector<char>& fromInput,
          const std::vector<char>& fromData, const Tensor& self, bool isConstantNode)
{
    const std::string_view op = n.op;
    // DoRA's magnitude (PEFT's lora_magnitude_vector) meets the activations only through magnitude / ||W + dW||,
    // a quotient of stored tensors, which the rules below cannot tell from a constant: it is trained
    if (std::string_view(self.name).find(".lora_magnitude_vector.") != std::string_view::npos)
        return Use::Weight;
    if (op == "Conv" || op == "ConvTranspose")
        return slot >= 1 ? Use::Weight : Use::None;
    if (op == "GroupedMatMul") // MoE experts (import/src/hf_moe.h): [E, K, N] weights and [E, N] biases
        return slot >= 1 ? Use::Weight : Use::None;
    if (op == "Gemm" || op == "MatMul" || op == "Einsum")
        return shapeOnlyOperand(n, slot, fromInput, fromData) ? Use::BatchStat : Use::Weight; // a buffer
    if (op == "BatchNormalization")
        return slot == 1 || slot == 2 ? Use::Weight : (slot >= 3 ? Use::BatchStat : Use::None);
    if (op == "InstanceNormalization" && (slot == 1 || slot == 2) && exporterMadeNormConstant(self, isConstantNode))
        return Use::Constant;
    if (op == "Concat" && concatWithActivation(n, fromInput) && numel > 1 && !isConstantNode)
        return Use::Weight;
    if (op == "InstanceNormalization" || op == "LayerNormalization" || op == "GroupNormalization" ||
        op == "SimplifiedLayerNormalization" || op == "SkipLayerNormalization")
        return slot >= 1 ? Use::Weight : Use::None;
    if (op == "PRelu")
        return slot == 1 ? Use::Weight : Use::None;
    if (op == "Gather")
        return slot == 0 ? Use::Weight : Use::None;
    if (op == "LSTM" || op == "GRU" || op == "RNN")
        return slot >= 1 && slot <= 3 ? Use::Weight : Use::None;
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
        if (numel <= 1 || n.inputs.size() < 2)
            return Use::None; // scalars used as constants are not parameters
        const int other = n.inputs[slot == 0 ? 1 : 0];
        return other >= 0 && fromInput[size_t(other)] ? Use::Weight : Use::None;
    }
    (void)m;
    return Use::None;
}

} // namespace

void classifyTensors(Model& m)
{
    // Which tensors are computed from the graph inputs (activations), as opposed to from stored tensors.
    std::vector<char> fromInput(m.tensors.size(), 0);
    for (int i : m.inputs)
        fromInput[size_t(i)] = 1;
    for (size_t t = 0; t < m.tensors.size(); ++t)
        if (m.tensors[t].producer < 0 && m.tensors[t].role == TensorRole::Activation)
            fromInput[t] = 1; // dangling / outer-scope values behave like inputs
    // fromData: depends on the inputs' values, not only on their shapes (Shape/Size cut the dependence)
    std::vector<char> fromData(fromInput);
    for (const Node& n : m.nodes) {
        bool any = false, data = false;
        for (int in : n.inputs) {
            any = any || (in >= 0 && fromInput[size_t(in)]);
            data = data || (in >= 0 && fromData[size_t(in)]);
        }
        data = data && n.op != "Shape" && n.op != "Size";
        for (int out : n.outputs)
            if (out >= 0) {
                fromInput[size_t(out)] = fromInput[size_t(out)] || any;
                fromData[size_t(out)] = fromData[size_t(out)] || data;
            }
    }

    std::vector<int> queue;
    std::vector<char> seen(m.tensors.size(), 0);
    for (size_t ti = 0; ti < m.tensors.size(); ++ti) {
        Tensor& t = m.tensors[ti];
        if (t.aliasOf >= 0 ||
            (t.role != TensorRole::Buffer && t.role != TensorRole::Constant && t.role != TensorRole::Parameter))
            continue;
        if (t.inSubgraph)
            continue; // classified inside its If/Loop/Scan body
        const bool isConstantNode = t.producer >= 0;
        int64_t numel = 1;
        for (const DimExpr& d : t.shape.dims)
            numel = checkedMul(numel, d.constantValue().value_or(0)).value_or(INT64_MAX);

        bool weight = false, batchStat = false, constant = false;
        queue.assign(1, static_cast<int>(ti));
        std::vector<int> visited{static_cast<int>(ti)};
        seen[ti] = 1;
        for (size_t q = 0; q < queue.size() && !weight; ++q) {
            const Tensor& cur = m.tensors[size_t(queue[q])];
            for (int c : cur.consumers) {
                const Node& n = m.nodes[size_t(c)];
                const size_t explicitCount = n.inputs.size() - size_t(std::max(0, n.implicitInputs));
                for (size_t k = 0; k < explicitCount; ++k) {
                    if (n.inputs[k] != queue[q])
                        continue;
                    const Use u = useOf(m, n, k, numel, fromInput, fromData, t, isConstantNode);
                    weight = weight || u == Use::Weight;
                    batchStat = batchStat || u == Use::BatchStat;
                    constant = constant || u == Use::Constant;
                    if (u != Use::None)
                        continue;
                    if (passesThrough(n.op, k)) {
                        for (int out : n.outputs)
                            if (out >= 0 && !seen[size_t(out)]) {
                                seen[size_t(out)] = 1;
                                visited.push_back(out);
                                queue.push_back(out);
                            }
                        continue;
                    }
                }
            }
        }
        for (int v : visited)
            seen[size_t(v)] = 0;

        if (isFloating(t.dtype) && weight && !constant)
            t.role = TensorRole::Parameter;
        else if (isConstantNode || constant)
            t.role = TensorRole::Constant;
        else if (batchStat || numel > 1)
            t.role = TensorRole::Buffer;
        else
            t.role = TensorRole::Constant;
    }
    for (Tensor& t : m.tensors)
        if (t.aliasOf >= 0)
            t.role = m.tensors[size_t(t.aliasOf)].role;
}

} // namespace headroom::detail
