// Saved-for-backward rules, one per ONNX op, derived from PyTorch's tools/autograd/derivatives.yaml:
// an op keeps whatever its backward formula references (`self`, `other`, `result`, indices, masks,
// statistics). Only what an input that requires grad needs is kept (mul keeps `other` for self's
// gradient and `self` for other's), so frozen layers and integer inputs save less, as in autograd.
#include "memory/engine_internal.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace headroom {

namespace {

using K = SavedItem::Kind;

bool in(std::string_view op, std::initializer_list<std::string_view> list) noexcept
{
    return std::find(list.begin(), list.end(), op) != list.end();
}

struct Ctx {
    const Model& model;
    const PlanData& plan;
    Unit& unit;
    const Node& node;

    int input(size_t i) const { return i < node.inputs.size() ? node.inputs[i] : -1; }
    int output(size_t i) const { return i < node.outputs.size() ? node.outputs[i] : -1; }
    bool act(int t) const { return t >= 0 && plan.dynamic[static_cast<size_t>(t)]; }
    bool rg(int t) const { return t >= 0 && plan.reqGrad[static_cast<size_t>(t)]; }
    bool anyRg() const
    {
        return std::any_of(node.inputs.begin(), node.inputs.end(), [&](int t) { return rg(t); });
    }
    void storage(int t)
    {
        if (act(t))
            unit.saved.push_back({K::Storage, plan.root[static_cast<size_t>(t)]});
    }
    // matmul/conv kernels need contiguous operands: a non-contiguous view is copied and the copy saved.
    void operand(int t)
    {
        if (!act(t))
            return;
        if (plan.nonContig[static_cast<size_t>(t)])
            unit.saved.push_back({K::Copy, t});
        else
            storage(t);
    }
    void extra(int t, int64_t num, int64_t den, int elemBytes, bool fp32Stat = false, int d0 = -1, int d1 = -1)
    {
        if (t < 0)
            return;
        SavedItem s{K::Extra, t};
        s.num = num;
        s.den = den;
        s.elemBytes = elemBytes;
        s.fp32Stat = fp32Stat;
        s.dimBegin = d0;
        s.dimEnd = d1;
        unit.saved.push_back(s);
    }
    int64_t constDim(int t, size_t d) const
    {
        if (t < 0)
            return -1;
        const auto& dims = model.tensors[static_cast<size_t>(t)].shape.dims;
        if (d >= dims.size())
            return -1;
        auto v = dims[d].constantValue();
        return v ? *v : -1;
    }
    size_t rank(int t) const { return t < 0 ? 0 : model.tensors[static_cast<size_t>(t)].shape.dims.size(); }
};

// Ops whose output aliases input 0's storage in PyTorch (views); ONNX gives them their own tensor.
constexpr std::array kViewOps{std::string_view("Reshape"), std::string_view("Flatten"),
    std::string_view("Squeeze"), std::string_view("Unsqueeze"), std::string_view("Transpose"),
    std::string_view("Identity"), std::string_view("Split"), std::string_view("Slice"),
    std::string_view("Expand")};

// Elementwise activations whose backward needs `result` (derivatives.yaml: relu, sigmoid, tanh, exp...).
bool savesResult(std::string_view op)
{
    return in(op, {"Relu", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Exp", "Sqrt", "Reciprocal"});
}
// ... and those whose backward needs `self`.
bool savesSelf(std::string_view op)
{
    return in(op, {"Erf", "Log", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh",
                   "Acosh", "Atanh", "Abs", "Gelu", "LeakyRelu", "Elu", "Selu", "Celu", "Softplus",
                   "Softsign", "HardSigmoid", "HardSwish", "Mish", "ThresholdedRelu", "Shrink", "Clip",
                   "GlobalAveragePool", "AveragePool", "ReduceL1", "ReduceSumSquare"});
}
// Ops with no gradient (integer/boolean results, shape computations, random generators).
bool nonDifferentiable(std::string_view op)
{
    return in(op, {"Shape", "Size", "Range", "ConstantOfShape", "Constant", "Equal", "Greater", "Less",
                   "GreaterOrEqual", "LessOrEqual", "And", "Or", "Xor", "Not", "IsNaN", "IsInf", "ArgMax",
                   "ArgMin", "NonZero", "OneHot", "EyeLike", "RandomNormal", "RandomUniform",
                   "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli", "Floor", "Ceil",
                   "Sign", "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "MatMulInteger",
                   "ConvInteger", "QLinearConv", "QLinearMatMul", "BitShift", "Mod", "Unique",
                   "NonMaxSuppression", "StringNormalizer", "TfIdfVectorizer", "Round"});
}
// Ops that keep nothing big: linear in their inputs, or reductions/reshapes whose backward needs sizes.
bool savesNothing(std::string_view op)
{
    return in(op, {"Add", "Sub", "Neg", "Concat", "Sum", "Mean", "ReduceSum", "Cast",
                   "CastLike", "Pad", "Tile", "Resize", "Upsample", "CumSum", "DepthToSpace",
                   "SpaceToDepth", "Trilu", "ReverseSequence", "Compress"});
}

} // namespace

bool isViewOp(const std::string& op) noexcept
{
    return std::find(kViewOps.begin(), kViewOps.end(), op) != kViewOps.end();
}

void applyOpRule(const Model& model, const PlanData& plan, Unit& unit)
{
    const Node& node = model.nodes[static_cast<size_t>(unit.head)];
    Ctx c{model, plan, unit, node};
    const std::string& op = node.op;
    const int x = c.input(0);
    const int y = c.output(0);

    if (!node.domain.empty() && node.domain != "ai.onnx" && node.domain != "ai.onnx.ml") {
        // Custom-domain ops fall through to the conservative rule below.
    } else if (nonDifferentiable(op)) {
        unit.differentiable = false;
        return;
    }
    if (isViewOp(op)) {
        unit.isView = true;
        unit.passGrad = op != "Split" && op != "Slice" && op != "Expand"; // those allocate input-sized grads
        return;
    }
    // Gather with a scalar index is select(): a view whose saver keeps the whole source storage
    // (a classifier head on x[:, 0]); its backward allocates an input-sized gradient.
    if (op == "Gather" && c.act(x) && isFloating(model.tensors[static_cast<size_t>(x)].dtype)) {
        const int idx = c.input(1);
        const Tensor* it = idx >= 0 ? &model.tensors[static_cast<size_t>(idx)] : nullptr;
        if (it && it->shape.state != TensorShape::State::Unknown && it->shape.dims.empty()) {
            unit.isView = true;
            return;
        }
    }
    // A constant-mode Pad that leaves every dim as it was has all-zero pads (the exporter writes one for
    // AvgPool2d): a no-op that aliases its input, as PyTorch never ran it.
    if (op == "Pad" && c.act(x) && y >= 0 && node.attrString("mode", "constant") == "constant") {
        const TensorShape& xs = model.tensors[static_cast<size_t>(x)].shape;
        const TensorShape& ys = model.tensors[static_cast<size_t>(y)].shape;
        if (xs.state == TensorShape::State::Exact && ys.state == TensorShape::State::Exact && !xs.dims.empty() &&
            xs.dims == ys.dims) {
            unit.isView = true;
            unit.passGrad = true;
            return;
        }
    }
    // Tensor.to(dtype) / .float() on a tensor that already has that dtype returns the tensor itself (no
    // copy): the exporter still writes a Cast (Hugging Face's softmax(dtype=float32).to(query.dtype) in fp32)
    if (op == "Cast" && c.act(x) && y >= 0) {
        const DType from = model.tensors[static_cast<size_t>(x)].dtype, to = model.tensors[static_cast<size_t>(y)].dtype;
        if (from != DType::Undefined && from == to) {
            unit.isView = true;
            unit.passGrad = true;
            return;
        }
    }
    if (!c.anyRg())
        return; // nothing upstream requires grad: autograd records nothing

    if (op == "Conv" || op == "ConvTranspose") {
        // convolution saves `input` and `weight` as given: a strided view (x.chunk(2, 1)) keeps its whole
        // source storage alive; the contiguous copy the kernel makes is its own temporary
        if (c.rg(c.input(1)))
            c.storage(x);
        if (c.rg(x))
            c.storage(c.input(1));
        int64_t perOut = 1;
        const int w = c.input(1);
        for (size_t d = 1; d < c.rank(w); ++d)
            perOut *= std::max<int64_t>(1, c.constDim(w, d));
        if (op == "ConvTranspose") // MACs per input element instead; close enough per output
            perOut = std::max<int64_t>(1, c.constDim(w, 1)) * perOut / std::max<int64_t>(1, c.constDim(w, 1));
        unit.macTensor = y;
        unit.macPerElem = perOut;
    } else if (op == "Gemm") {
        // addmm saves mat1/mat2 as given (BLAS takes strided 2-D matrices): a selected row x[:, 0] keeps
        // the whole source alive
        const int a = x, b = c.input(1);
        if (c.rg(b))
            c.storage(a);
        if (c.rg(a))
            c.storage(b);
        const bool transB = node.attrInt("transB", 0) != 0;
        const int64_t k = c.constDim(b, transB ? 1 : 0);
        unit.macTensor = y;
        unit.macPerElem = std::max<int64_t>(1, k);
    } else if (op == "MatMul" || op == "Einsum") {
        for (size_t i = 0; i < node.inputs.size(); ++i) {
            bool otherNeedsIt = false;
            for (size_t j = 0; j < node.inputs.size(); ++j)
                if (j != i && c.rg(node.inputs[j]))
                    otherNeedsIt = true;
            if (otherNeedsIt)
                c.operand(node.inputs[i]);
        }
        unit.macTensor = y;
        if (op == "MatMul" && c.rank(x) >= 1) {
            unit.macDimTensor = x;
            unit.macDim = static_cast<int>(c.rank(x)) - 1;
        }
    } else if (op == "Mul") {
        const int a = x, b = c.input(1);
        if (c.rg(a))
            c.storage(b);
        if (c.rg(b))
            c.storage(a);
    } else if (op == "Div") {
        const int a = x, b = c.input(1);
        if (c.rg(a))
            c.storage(b);
        if (c.rg(b)) {
            c.storage(a);
            c.storage(b);
        }
    } else if (op == "Pow") {
        c.storage(x);
        if (c.rg(c.input(1))) {
            c.storage(c.input(1));
            c.storage(y);
        }
    } else if (op == "Max" || op == "Min") {
        for (int t : node.inputs)
            c.storage(t);
    } else if (op == "PRelu") {
        c.storage(x);
    } else if (op == "Where") {
        c.storage(x); // the boolean condition
    } else if (op == "Gather" || op == "GatherElements" || op == "GatherND" || op == "ScatterND" ||
               op == "ScatterElements") {
        // embedding / index_select / gather backward needs the indices and the sizes only
        const int idx = op.starts_with("Scatter") ? c.input(1) : c.input(1);
        c.storage(idx);
    } else if (op == "MaxPool" || op == "GlobalMaxPool") {
        c.storage(x);
        c.extra(y, 1, 1, 8); // int64 indices, output-sized
    } else if (op == "BatchNormalization") {
        c.storage(x);
        c.extra(c.input(1), 2, 1, 4, true); // save_mean, save_invstd per channel
    } else if (op == "InstanceNormalization") {
        // instance_norm runs batch_norm on x.view(1, N * C, ...): x, mean and rstd per (N, C), and with
        // a trained scale the weight.repeat(N) it passes (N * C)
        c.storage(x);
        c.extra(x, 2, 1, 4, true, 0, 2);
        if (c.rg(c.input(1)))
            c.extra(x, 1, 1, 0, false, 0, 2);
    } else if (op == "GroupNormalization") {
        c.storage(x);
        c.extra(x, 2 * std::max<int64_t>(1, node.attrInt("num_groups", 1)), 1, 4, true, 0, 1);
    } else if (op == "LayerNormalization") {
        c.storage(x);
        int64_t axis = node.attrInt("axis", -1);
        const int r = static_cast<int>(c.rank(x));
        if (axis < 0)
            axis += r;
        c.extra(x, 2, 1, 4, true, 0, static_cast<int>(axis)); // mean, rstd per row
    } else if (op == "ReduceMean") {
        // torch 1.13's mean.dim backward reads self.numel() / result.numel(), so autograd keeps both (the
        // corpus truth is 1.13); PyTorch 2 keeps only sizes (derivatives.yaml: mean_backward(grad,
        // self.sym_sizes(), dim, self.sym_numel(), keepdim))
        if (plan.options.torch == TorchVersion::V1_13) {
            c.storage(x);
            c.storage(y);
        }
    } else if (op == "LpNormalization" || op == "ReduceL2" || op == "ReduceMax" || op == "ReduceMin" ||
               op == "ReduceProd" || op == "ReduceLogSumExp" || op == "LpPool") {
        c.storage(x);
        c.storage(y);
    } else if (op == "TopK") {
        c.storage(c.output(1)); // indices
    } else if (op == "Dropout") {
        unit.viewInInference = true;
        c.extra(y, 1, 1, 1); // the 1-byte mask
    } else if (op == "LSTM" || op == "GRU" || op == "RNN") {
        // PyTorch's native RNN (per-time-step cells). Per step and direction:
        //  LSTM: gates (4H) + hx, cx, tanh(cy) (3H) = 7H;
        //  GRU (gru_cell): hidden-side gates [B, 3H] (the in-place sigmoid r, z are views of it), the copy
        //    of the n-gate chunk made for the in-place mul_(r) (H), n = tanh(...) (H), the copy of h - n
        //    made for mul_(z) (H), the previous hidden state (H) = 7H; the input-side gates are not kept;
        //  RNN: the hidden state (1H).
        // The layer input feeds every direction's input projection. A batch_first input arrives as a
        // transposed view: where it is contiguous at this binding (batch 1) the view's storage is kept
        // once; otherwise each direction makes and keeps its own time-major copy.
        const int64_t perStep = op == "RNN" ? 1 : 7;
        const int64_t hidden = std::max<int64_t>(1, node.attrInt("hidden_size", 1));
        const int64_t dirs = node.attrString("direction", "forward") == "bidirectional" ? 2 : 1;
        if (plan.options.device == Device::CUDA) {
            // cuDNN (derivatives.yaml `_cudnn_rnn`): backward reads input (as passed: a batch_first tensor is
            // transposed inside the kernel call, so its storage is kept once), weight, hx, cx, output
            // (result0) and the reserve space (result3) that cuDNN fills with the per-step gate values. The
            // reserve is sized here like the per-step cells above (perStep x H per step and direction) at
            // the output's dtype, so it is 16-bit under autocast: cudnnGetRNNTrainingReserveSize is not
            // public arithmetic, and on the H100 truth this estimate is within 2 % at lstm_tagger (32, 512).
            c.storage(x);
            const int yOut = c.output(0);
            if (yOut >= 0 && c.rank(yOut) == 4) {
                c.storage(yOut);
                c.extra(yOut, hidden * perStep, 1, 0, false, 0, 3); // [T, dirs, B] x H x perStep
            } else {
                c.extra(x, hidden * dirs * perStep, 1, 0, false, 0, 2);
            }
        } else if (c.act(x) && plan.nonContig[static_cast<size_t>(x)]) {
            SavedItem keep{K::Storage, plan.root[static_cast<size_t>(x)]};
            keep.condView = x;
            keep.condContig = true;
            unit.saved.push_back(keep);
            SavedItem copies{K::Copy, x};
            copies.num = dirs;
            copies.condView = x;
            copies.condContig = false;
            unit.saved.push_back(copies);
        } else {
            c.storage(x);
        }
        // elements = T * B (dims 0..2 of X) * H * dirs * perStep
        if (plan.options.device != Device::CUDA)
            c.extra(x, hidden * dirs * perStep, 1, 0, false, 0, 2);
        // On the CPU path each direction first computes linear_ih(input) for every step ([T, B, gates*H]),
        // held while that direction runs; backward stacks the per-step gate gradients into one such tensor
        // before linear_ih's backward. Charged once per unit: by then the direction's per-step saved
        // tensors are mostly freed, which the unit-level release here cannot show (2x overshoots the
        // corpus LSTM, 1x is within 9 % on the held-out GRU).
        const int64_t gates = op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
        SavedItem ws{K::Extra, x};
        ws.num = gates * hidden;
        ws.dimBegin = 0;
        ws.dimEnd = 2;
        unit.forwardScratch.push_back(ws);
        ws.num = gates * hidden;
        unit.backwardScratch.push_back(ws);
        const int64_t in = std::max<int64_t>(1, c.constDim(x, 2));
        unit.macTensor = -1;
        unit.macDimTensor = x;
        unit.macDim = -2; // LSTM MACs: T*B*dirs*gates*H*(I+H), computed in unitMacs
        unit.macPerElem = dirs * (op == "LSTM" ? 4 : op == "GRU" ? 3 : 1) * hidden * (in + hidden);
    } else if (savesResult(op)) {
        c.storage(y);
        unit.inplaceable = op == "Relu" || op == "Sigmoid" || op == "Tanh";
    } else if (savesSelf(op)) {
        c.storage(x);
        // Clip (ReLU6(inplace=True), hardtanh_) is left out: its backward reads the original self, and the
        // H100 truth shows torchvision's inplace ReLU6 costs what the out-of-place one does (mobilenet_v2:
        // max_allocated matches the out-of-place saved set; the in-place alias would be 31 % low)
        unit.inplaceable = in(op, {"LeakyRelu", "Elu", "Selu", "Celu", "HardSigmoid", "HardSwish"});
        // hardtanh_/elu_ (inplace) keep the result instead of self
        unit.inplaceSavesResult = unit.inplaceable;
    } else if (savesNothing(op)) {
        unit.passGrad = op == "Add" || op == "Sum" || op == "Cast" || op == "Concat";
    } else {
        unit.conservative = true;
        for (int t : node.inputs)
            c.storage(t);
        for (int t : node.outputs)
            c.storage(t);
    }
    if (op == "Sub") // self passes through, other gets -grad (allocated)
        unit.passGrad = false;
}

bool globMatch(std::string_view p, std::string_view s) noexcept
{
    size_t pi = 0, si = 0, star = std::string_view::npos, mark = 0;
    while (si < s.size()) {
        if (pi < p.size() && (p[pi] == '?' || p[pi] == s[si])) {
            ++pi;
            ++si;
        } else if (pi < p.size() && p[pi] == '*') {
            star = pi++;
            mark = si;
        } else if (star != std::string_view::npos) {
            pi = star + 1;
            si = ++mark;
        } else {
            return false;
        }
    }
    while (pi < p.size() && p[pi] == '*')
        ++pi;
    return pi == p.size();
}

} // namespace headroom
