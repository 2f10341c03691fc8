// Saved-for-backward rules, one table entry per ONNX op, read from PyTorch's tools/autograd/derivatives.yaml:
// an op keeps whatever its backward formula references (`self`, `other`, `result`, indices, masks,
// statistics). Only what an input that requires grad needs is kept (mul keeps `other` for self's
// gradient and `self` for other's), so frozen layers and integer inputs save less, as in autograd.
// The table (kRules) is data like derivatives.yaml itself: per op, whether it has a gradient or is a view,
// which inputs/outputs it saves and for which operand's gradient, and flags; ops whose saved set needs
// arithmetic (statistics, indices, RNN workspaces, MAC counts) name a function. applyOpRule reads it.
#include "engine/engine_internal.h"

#include <algorithm>
#include <climits>
#include <string_view>
#include <unordered_map>

namespace headroom {

namespace {

using K = SavedItem::Kind;

struct Ctx
{
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

// --- the table's vocabulary ---------------------------------------------------------------------------------

enum class Grad : uint8_t {
    Yes,        // differentiable: the saves below apply when an input requires grad
    No,         // no gradient (integer/boolean results, shape computations, random generators); ai.onnx only
    View,       // output aliases input 0's storage and backward passes the gradient through as is
    ViewNewGrad // a view whose backward allocates an input-sized gradient (slice/expand/split backward)
};

// A tensor of the node: inputs 0.., outputs as out(i); or all inputs.
constexpr int8_t in0 = 0, in1 = 1;
constexpr int8_t out(int i) { return static_cast<int8_t>(-2 - i); }
constexpr int8_t everyInput = -1;
constexpr int8_t none = INT8_MIN; // an unused slot
constexpr int8_t always = -1;

// One saved tensor: kept when input `ifGradOf` requires grad (`always`: whenever anything upstream does).
struct Save
{
    int8_t tensor = none;
    int8_t ifGradOf = always;
};

struct SavedRule
{
    std::string_view op;
    Grad grad = Grad::Yes;
    Save saves[3] = {};              // in order; unused slots stay `none`
    void (*code)(Ctx&) = nullptr;    // what the saves cannot say (statistics, indices, MACs, RNN workspaces)
    bool (*aliasIf)(Ctx&) = nullptr; // checked before requires-grad: true when the node is a no-op view
    bool passGrad = false;           // backward hands the output gradient to same-sized inputs as is
    bool inplaceable = false;        // inplace=True form exists; it then saves its result instead of self
    bool inplaceSavesResult = false;
    std::string_view source = {}; // derivatives.yaml entry (or the PyTorch function) the rule reads
};

constexpr Save self{in0};
constexpr Save result{out(0)};

// --- rules that need code ----------------------------------------------------------------------------------

// Gather with a scalar index is select(): a view whose saver keeps the whole source storage
// (a classifier head on x[:, 0]); its backward allocates an input-sized gradient.
bool gatherSelectsOne(Ctx& c)
{
    const int x = c.input(0);
    if (!c.act(x) || !isFloating(c.model.tensors[static_cast<size_t>(x)].dtype))
        return false;
    const int idx = c.input(1);
    const Tensor* it = idx >= 0 ? &c.model.tensors[static_cast<size_t>(idx)] : nullptr;
    if (it && it->shape.state != TensorShape::State::Unknown && it->shape.dims.empty()) {
        c.unit.isView = true;
        return true;
    }
    return false;
}

// A constant-mode Pad that leaves every dim as it was has all-zero pads (the exporter writes one for
// AvgPool2d): a no-op that aliases its input, as PyTorch never ran it.
bool padIsNoOp(Ctx& c)
{
    const int x = c.input(0), y = c.output(0);
    if (!c.act(x) || y < 0 || c.node.attrString("mode", "constant") != "constant")
        return false;
    const TensorShape& xs = c.model.tensors[static_cast<size_t>(x)].shape;
    const TensorShape& ys = c.model.tensors[static_cast<size_t>(y)].shape;
    if (xs.state == TensorShape::State::Exact && ys.state == TensorShape::State::Exact && !xs.dims.empty() &&
        xs.dims == ys.dims) {
        c.unit.isView = true;
        c.unit.passGrad = true;
        return true;
    }
    return false;
}

// Tensor.to(dtype) / .float() on a tensor that already has that dtype returns the tensor itself (no
// copy): the exporter still writes a Cast (Hugging Face's softmax(dtype=float32).to(query.dtype) in fp32)
bool castIsNoOp(Ctx& c)
{
    const int x = c.input(0), y = c.output(0);
    if (!c.act(x) || y < 0)
        return false;
    const DType from = c.model.tensors[static_cast<size_t>(x)].dtype,
                to = c.model.tensors[static_cast<size_t>(y)].dtype;
    if (from != DType::Undefined && from == to) {
        c.unit.isView = true;
        c.unit.passGrad = true;
        return true;
    }
    return false;
}

// Forward MACs per output element: the weight's elements per output channel.
void convolutionMacs(Ctx& c)
{
    int64_t perOut = 1;
    const int w = c.input(1);
    for (size_t d = 1; d < c.rank(w); ++d)
        perOut *= std::max<int64_t>(1, c.constDim(w, d));
    if (c.node.op == "ConvTranspose") // MACs per input element instead; close enough per output
        perOut = std::max<int64_t>(1, c.constDim(w, 1)) * perOut / std::max<int64_t>(1, c.constDim(w, 1));
    c.unit.macTensor = c.output(0);
    c.unit.macPerElem = perOut;
}

void gemmMacs(Ctx& c)
{
    const bool transB = c.node.attrInt("transB", 0) != 0;
    const int64_t k = c.constDim(c.input(1), transB ? 1 : 0);
    c.unit.macTensor = c.output(0);
    c.unit.macPerElem = std::max<int64_t>(1, k);
}

// matmul saves each operand another operand's gradient needs, as the contiguous copy the kernel makes of a
// non-contiguous view (derivatives.yaml mm/bmm: self: mm_mat1_backward(grad, mat2, ...), mat2: ...(self)).
void matmulOperands(Ctx& c)
{
    const Node& node = c.node;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
        bool otherNeedsIt = false;
        for (size_t j = 0; j < node.inputs.size(); ++j)
            if (j != i && c.rg(node.inputs[j]))
                otherNeedsIt = true;
        if (otherNeedsIt)
            c.operand(node.inputs[i]);
    }
    const int x = c.input(0);
    c.unit.macTensor = c.output(0);
    if (node.op == "MatMul" && c.rank(x) >= 1) {
        c.unit.macDimTensor = x;
        c.unit.macDim = static_cast<int>(c.rank(x)) - 1;
    }
}

// MoE experts (import/src/hf_moe.h): transformers' grouped_mm fallback keeps its input whatever requires grad
// (tests/data/moe/truth.json, `grouped` layout); the per-expert nn.Linear loop (`always_saves_input` = 0) keeps it
// only for the experts' weight gradient, as mm does.
void groupedOperands(Ctx& c)
{
    const bool always = c.node.attrInt("always_saves_input", 1) != 0;
    if (always || c.rg(c.input(1)))
        c.operand(c.input(0));
    // the input's gradient needs the weight: kept when it is an activation (LoRA's W + delta, PEFT ParamWrapper)
    if (always || c.rg(c.input(0)))
        c.operand(c.input(1));
    c.unit.macTensor = c.output(0);
}

void maxPoolIndices(Ctx& c)
{
    c.extra(c.output(0), 1, 1, 8); // int64 indices, output-sized
}

void batchNormStats(Ctx& c)
{
    c.extra(c.input(1), 2, 1, 4, true); // save_mean, save_invstd per channel
}

// instance_norm runs batch_norm on x.view(1, N * C, ...): x, mean and rstd per (N, C), and with a trained
// scale the weight.repeat(N) it passes (N * C)
void instanceNormStats(Ctx& c)
{
    const int x = c.input(0);
    c.extra(x, 2, 1, 4, true, 0, 2);
    if (c.rg(c.input(1)))
        c.extra(x, 1, 1, 0, false, 0, 2);
}

void groupNormStats(Ctx& c)
{
    c.extra(c.input(0), 2 * std::max<int64_t>(1, c.node.attrInt("num_groups", 1)), 1, 4, true, 0, 1);
}

void layerNormStats(Ctx& c)
{
    const int x = c.input(0);
    int64_t axis = c.node.attrInt("axis", -1);
    const int r = static_cast<int>(c.rank(x));
    if (axis < 0)
        axis += r;
    c.extra(x, 2, 1, 4, true, 0, static_cast<int>(axis)); // mean, rstd per row
}

void dropoutMask(Ctx& c)
{
    c.unit.viewInInference = true;
    c.extra(c.output(0), 1, 1, 1); // the 1-byte mask
    // F.dropout on CUDA is native_dropout whether or not grad is recorded (Dropout.cpp dropout:
    // is_fused_kernel_acceptable), and dropout_cuda makes the mask before the output (Dropout.cu:
    // mask = at::empty_like(self, bool); ret = at::empty_like(self)). at::dropout returns the output only;
    // where grad is recorded the mask is saved, and made first all the same.
    if (c.plan.options.device == Device::CUDA && !c.unit.saved.empty()) {
        c.unit.unsavedScratch.push_back(c.unit.saved.back());
        c.unit.extrasBeforeOutputs = true;
    }
}

// PyTorch's native RNN (per-time-step cells). Per step and direction:
//  LSTM: gates (4H) + hx, cx, tanh(cy) (3H) = 7H;
//  GRU (gru_cell): hidden-side gates [B, 3H] (the in-place sigmoid r, z are views of it), the copy
//    of the n-gate chunk made for the in-place mul_(r) (H), n = tanh(...) (H), the copy of h - n
//    made for mul_(z) (H), the previous hidden state (H) = 7H; the input-side gates are not kept;
//  RNN: the hidden state (1H).
// The layer input feeds every direction's input projection. A batch_first input arrives as a
// transposed view: where it is contiguous at this binding (batch 1) the view's storage is kept
// once; otherwise each direction makes and keeps its own time-major copy.
void recurrentLayer(Ctx& c)
{
    const Node& node = c.node;
    const std::string& op = node.op;
    const int x = c.input(0);
    Unit& unit = c.unit;
    const int64_t perStep = op == "RNN" ? 1 : 7;
    const int64_t hidden = std::max<int64_t>(1, node.attrInt("hidden_size", 1));
    const int64_t dirs = node.attrString("direction", "forward") == "bidirectional" ? 2 : 1;
    if (c.plan.options.device == Device::CUDA) {
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
    } else if (c.act(x) && c.plan.nonContig[static_cast<size_t>(x)]) {
        SavedItem keep{K::Storage, c.plan.root[static_cast<size_t>(x)]};
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
    if (c.plan.options.device != Device::CUDA)
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
    unit.macPerElem = dirs * gates * hidden * (in + hidden);
}

// --- the table ---------------------------------------------------------------------------------------------
// Sources are derivatives.yaml entries by name (PyTorch 2.x); what an entry's formula reads is what is saved.

const SavedRule kRules[] = {
    // Views (ONNX gives them their own tensor; PyTorch aliases input 0's storage).
    {.op = "Reshape", .grad = Grad::View, .source = "view / _reshape_alias: grad.reshape(self.sym_sizes())"},
    {.op = "Flatten", .grad = Grad::View, .source = "view: grad.reshape(self.sym_sizes())"},
    {.op = "Squeeze", .grad = Grad::View, .source = "squeeze.dim: unsqueeze_to(grad, dim, self.sym_sizes())"},
    {.op = "Unsqueeze", .grad = Grad::View, .source = "unsqueeze: grad.squeeze(dim)"},
    {.op = "Transpose", .grad = Grad::View, .source = "permute: permute_backwards(grad, dims)"},
    {.op = "Identity", .grad = Grad::View, .source = "alias: grad"},
    {.op = "Split",
     .grad = Grad::ViewNewGrad,
     .source = "split.Tensor: split_backward(grads, split_size, dim, self.sym_sizes(), ...)"},
    {.op = "Slice",
     .grad = Grad::ViewNewGrad,
     .source = "slice.Tensor: slice_backward_wrapper(grad, self.sym_sizes(), ...)"},
    {.op = "Expand", .grad = Grad::ViewNewGrad, .source = "expand: at::sum_to(grad, self.sym_sizes())"},

    // Matrix products and convolutions: each operand for the other's gradient.
    {.op = "Conv",
     .saves = {{in0, in1}, {in1, in0}},
     .code = convolutionMacs,
     .source = "convolution: convolution_backward(grad, input, weight, ...); a strided view keeps its whole source"},
    {.op = "ConvTranspose",
     .saves = {{in0, in1}, {in1, in0}},
     .code = convolutionMacs,
     .source = "convolution (transposed=True): convolution_backward(grad, input, weight, ...)"},
    {.op = "Gemm",
     .saves = {{in0, in1}, {in1, in0}},
     .code = gemmMacs,
     .source = "addmm: self: maybe_multiply(grad, beta), mat1: mm_mat1_backward(grad, mat2, ...), mat2: "
               "mm_mat2_backward(grad, mat1, ...); BLAS takes strided 2-D matrices, so x[:, 0] keeps its source"},
    {.op = "MatMul", .code = matmulOperands, .source = "mm / bmm: self: grad.mm(mat2.t()), mat2: self.t().mm(grad)"},
    {.op = "Einsum", .code = matmulOperands, .source = "einsum decomposes into bmm (same saves)"},
    // Headroom's MoE ops (import/src/hf_moe.h). transformers' grouped_mm fallback (integrations/moe.py, a custom
    // autograd op) runs ctx.save_for_backward(input, weight) whatever requires grad; measured in
    // tests/data/moe/truth.json. The native torch._grouped_mm keeps the input only for the weight's gradient.
    {.op = "GroupedMatMul",
     .code = groupedOperands,
     .source = "transformers grouped_mm_fallback: ctx.save_for_backward(input, weight)"},
    {.op = "IndexAdd",
     .saves = {{in1, always}, {int8_t{2}, always}},
     .source = "index_add: source: maybe_multiply(grad.index_select(dim, index).expand_as(source), alpha)"},

    // Arithmetic.
    {.op = "Mul",
     .saves = {{in1, in0}, {in0, in1}},
     .source = "mul.Tensor: self: mul_tensor_backward(grad, other, ...), other: mul_tensor_backward(grad, self, ...)"},
    {.op = "Div",
     .saves = {{in1, in0}, {in0, in1}, {in1, in1}},
     .source =
         "div.Tensor: self: div_tensor_self_backward(grad, other, ...), other: div_tensor_other_backward(grad, self, other)"},
    {.op = "Pow",
     .saves = {{in0, always}, {in1, in1}, {out(0), in1}},
     .source =
         "pow.Tensor_Tensor: self: pow_backward_self(grad, self, exponent), exponent: pow_backward_exponent(grad, self, exponent, result)"},
    {.op = "Max",
     .saves = {{everyInput, always}},
     .source = "maximum: at::where(self == other, grad / 2, grad).masked_fill_(self < other, 0)"},
    {.op = "Min",
     .saves = {{everyInput, always}},
     .source = "minimum: at::where(self == other, grad / 2, grad).masked_fill_(self > other, 0)"},
    {.op = "Where",
     .saves = {{in0, always}},
     .source = "where.self: condition: non_differentiable, self: where(condition, grad, 0)"},
    {.op = "PRelu", .saves = {self}, .source = "_prelu_kernel: self, weight"},
    {.op = "Add", .passGrad = true, .source = "add.Tensor: self: handle_r_to_c(self.scalar_type(), grad)"},
    {.op = "Sum", .passGrad = true, .source = "add.Tensor (n-ary)"},
    {.op = "Sub",
     .source = "sub.Tensor: other: handle_r_to_c(..., maybe_multiply(-grad, alpha)): other's grad is allocated"},
    {.op = "Neg", .source = "neg: grad.neg()"},
    {.op = "Mean", .source = "mean of n tensors: grad / n"},
    {.op = "Concat", .passGrad = true, .source = "cat: cat_tensors_backward(grad, to_args_sizes(tensors), ...)"},
    {.op = "Cast",
     .aliasIf = castIsNoOp,
     .passGrad = true,
     .source = "_to_copy: _to_copy_backward(grad, self.options())"},
    {.op = "CastLike",
     .aliasIf = castIsNoOp,
     .passGrad = true,
     .source = "_to_copy: _to_copy_backward(grad, self.options())"},
    {.op = "Pad", .aliasIf = padIsNoOp, .source = "constant_pad_nd: constant_pad_nd_backward(grad, pad)"},
    {.op = "Tile", .source = "repeat: repeat_backward(grad, repeats, self.sym_sizes())"},
    {.op = "Resize", .source = "upsample_*: upsample_*_backward(grad, output_size, self.sym_sizes(), ...)"},
    {.op = "Upsample", .source = "upsample_*: upsample_*_backward(grad, output_size, self.sym_sizes(), ...)"},
    {.op = "CumSum", .source = "cumsum: cumsum_backward(grad.to(self.scalar_type()), dim)"},
    {.op = "DepthToSpace", .source = "pixel_shuffle: pixel_unshuffle(grad, upscale_factor)"},
    {.op = "SpaceToDepth", .source = "pixel_unshuffle: pixel_shuffle(grad, downscale_factor)"},
    {.op = "Trilu", .source = "tril / triu: grad.tril(diagonal)"},
    {.op = "ReverseSequence", .source = "flip: grad.flip(dims)"},
    {.op = "Compress", .source = "masked_select: masked_select_backward(grad, self, mask) (sizes only)"},

    // Indexing: the indices and the sizes.
    {.op = "Gather",
     .saves = {{in1, always}},
     .aliasIf = gatherSelectsOne,
     .source =
         "embedding: embedding_backward(grad, indices, ...) / index_select: index_select_backward(grad, self.sym_sizes(), dim, index)"},
    {.op = "GatherElements",
     .saves = {{in1, always}},
     .source = "gather: gather_backward(grad, self, dim, index, sparse_grad)"},
    {.op = "GatherND",
     .saves = {{in1, always}},
     .source = "index.Tensor: index_backward(grad.new_zeros_symint(self.sym_sizes(), ...), indices, grad)"},
    {.op = "ScatterND",
     .saves = {{in1, always}},
     .source = "index_put: self: grad.index_put(indices, zeros_like(values), accumulate)"},
    {.op = "ScatterElements",
     .saves = {{in1, always}},
     .source = "scatter.src: self: grad.scatter(dim, index, 0), src: grad.gather(dim, index)"},
    {.op = "TopK",
     .saves = {{out(1), always}},
     .source = "topk: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), true)"},

    // Pools and reductions.
    {.op = "MaxPool",
     .saves = {self},
     .code = maxPoolIndices,
     .source = "max_pool2d_with_indices: max_pool2d_with_indices_backward(grad, self, ..., result1)"},
    {.op = "GlobalMaxPool",
     .saves = {self},
     .code = maxPoolIndices,
     .source = "adaptive_max_pool2d: adaptive_max_pool2d_backward(grad, self, result1)"},
    {.op = "AveragePool", .saves = {self}, .source = "avg_pool2d: avg_pool2d_backward(grad, self, ...)"},
    {.op = "GlobalAveragePool",
     .saves = {self},
     .source = "_adaptive_avg_pool2d: _adaptive_avg_pool2d_backward(grad, self)"},
    {.op = "LpPool", .saves = {self, result}, .source = "LPPool2d is pow -> avg_pool2d -> pow: self and result"},
    {.op = "ReduceSum", .source = "sum.dim_IntList: sum_backward(grad, self.sym_sizes(), dim, keepdim)"},
    {.op = "ReduceMean", .source = "mean.dim: mean_backward(grad, self.sym_sizes(), dim, self.sym_numel(), keepdim)"},
    {.op = "ReduceL1",
     .saves = {self},
     .source = "linalg_vector_norm (ord 1): linalg_vector_norm_backward(grad, self, ord, result, ...)"},
    {.op = "ReduceSumSquare",
     .saves = {self},
     .source = "pow.Tensor_Scalar then sum: pow_backward(grad, self, exponent)"},
    {.op = "ReduceL2",
     .saves = {self, result},
     .source = "linalg_vector_norm: linalg_vector_norm_backward(grad, self, ord, result, dim, keepdim)"},
    {.op = "LpNormalization",
     .saves = {self, result},
     .source = "norm.ScalarOpt_dim: norm_backward(grad, self, p, result, dim, keepdim)"},
    {.op = "ReduceMax",
     .saves = {self, result},
     .source =
         "amax: scale_grad_by_count(restore_reduced_dims(grad, dim, keepdim), restore_reduced_dims(result, dim, keepdim) == self, dim)"},
    {.op = "ReduceMin", .saves = {self, result}, .source = "amin: as amax"},
    {.op = "ReduceProd",
     .saves = {self, result},
     .source = "prod.dim_int: prod_backward(grad, self.to(grad.scalar_type()), result, dim, keepdim)"},
    {.op = "ReduceLogSumExp",
     .saves = {self, result},
     .source = "logsumexp: logsumexp_backward(grad, self, result, dim, keepdim)"},

    // Normalizations: input and per-row/per-channel statistics.
    {.op = "BatchNormalization",
     .saves = {self},
     .code = batchNormStats,
     .source = "native_batch_norm: input, weight, running_mean, running_var, result1, result2"},
    {.op = "InstanceNormalization",
     .saves = {self},
     .code = instanceNormStats,
     .source = "instance_norm -> native_batch_norm on x.view(1, N * C, ...)"},
    {.op = "GroupNormalization",
     .saves = {self},
     .code = groupNormStats,
     .source = "native_group_norm: input, result1 (mean), result2 (rstd) per (N, group)"},
    {.op = "LayerNormalization",
     .saves = {self},
     .code = layerNormStats,
     .source = "native_layer_norm: input, result1 (mean), result2 (rstd), weight, bias"},

    {.op = "Dropout",
     .code = dropoutMask,
     .source = "native_dropout: input: native_dropout_backward(grad, result1, scale)"},
    {.op = "LSTM", .code = recurrentLayer, .source = "_cudnn_rnn (CUDA) / lstm_cell decomposition (CPU)"},
    {.op = "GRU", .code = recurrentLayer, .source = "_cudnn_rnn (CUDA) / gru_cell decomposition (CPU)"},
    {.op = "RNN", .code = recurrentLayer, .source = "_cudnn_rnn (CUDA) / rnn_tanh_cell decomposition (CPU)"},

    // Activations whose backward reads `result`.
    {.op = "Relu", .saves = {result}, .inplaceable = true, .source = "relu: threshold_backward(grad, result, 0)"},
    {.op = "Sigmoid", .saves = {result}, .inplaceable = true, .source = "sigmoid: sigmoid_backward(grad, result)"},
    {.op = "Tanh", .saves = {result}, .inplaceable = true, .source = "tanh: tanh_backward(grad, result)"},
    {.op = "Softmax",
     .saves = {result},
     .source = "_softmax: _softmax_backward_data(grad, result, dim, self.scalar_type())"},
    {.op = "LogSoftmax",
     .saves = {result},
     .source = "_log_softmax: _log_softmax_backward_data(grad, result, dim, self.scalar_type())"},
    {.op = "Exp", .saves = {result}, .source = "exp: grad * result.conj()"},
    {.op = "Sqrt", .saves = {result}, .source = "sqrt: grad / (2 * result.conj())"},
    {.op = "Reciprocal", .saves = {result}, .source = "reciprocal: -grad * (result * result).conj()"},

    // Activations whose backward reads `self`. Clip (ReLU6(inplace=True), hardtanh_) is not inplaceable here:
    // its backward reads the original self, and the H100 truth shows torchvision's inplace ReLU6 costs what
    // the out-of-place one does (mobilenet_v2: max_allocated matches the out-of-place saved set; the
    // in-place alias would be 31 % low).
    {.op = "Erf", .saves = {self}, .source = "erf: 2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad"},
    {.op = "Log", .saves = {self}, .source = "log: grad.div(self.conj())"},
    {.op = "Sin", .saves = {self}, .source = "sin: grad * self.cos().conj()"},
    {.op = "Cos", .saves = {self}, .source = "cos: grad * -self.sin().conj()"},
    {.op = "Tan", .saves = {self}, .source = "tan: grad * (1 + result.pow(2)).conj() (Headroom keeps self)"},
    {.op = "Asin", .saves = {self}, .source = "asin: grad * (-self * self + 1).rsqrt().conj()"},
    {.op = "Acos", .saves = {self}, .source = "acos: grad * -((-self * self + 1).rsqrt()).conj()"},
    {.op = "Atan", .saves = {self}, .source = "atan: grad / (self * self + 1).conj()"},
    {.op = "Sinh", .saves = {self}, .source = "sinh: grad * self.cosh().conj()"},
    {.op = "Cosh", .saves = {self}, .source = "cosh: grad * self.sinh().conj()"},
    {.op = "Asinh", .saves = {self}, .source = "asinh: grad * (self.pow(2) + 1).rsqrt().conj()"},
    {.op = "Acosh", .saves = {self}, .source = "acosh: grad * (self.pow(2) - 1).rsqrt().conj()"},
    {.op = "Atanh", .saves = {self}, .source = "atanh: grad * 1 / (1 - self.pow(2)).conj()"},
    {.op = "Abs", .saves = {self}, .source = "abs: grad * self.sgn()"},
    {.op = "Gelu", .saves = {self}, .source = "gelu: gelu_backward(grad, self, approximate)"},
    {.op = "LeakyRelu",
     .saves = {self},
     .inplaceable = true,
     .inplaceSavesResult = true,
     .source =
         "leaky_relu: leaky_relu_backward(grad, self, negative_slope, false); leaky_relu_: (grad, result, ..., true)"},
    {.op = "Elu",
     .saves = {self},
     .inplaceable = true,
     .inplaceSavesResult = true,
     .source = "elu: elu_backward(grad, alpha, scale, input_scale, /* is_result */ false, self); elu_: is_result true"},
    {.op = "Selu", .saves = {self}, .inplaceable = true, .inplaceSavesResult = true, .source = "selu -> elu (as Elu)"},
    {.op = "Celu", .saves = {self}, .inplaceable = true, .inplaceSavesResult = true, .source = "celu -> elu (as Elu)"},
    {.op = "HardSigmoid",
     .saves = {self},
     .inplaceable = true,
     .inplaceSavesResult = true,
     .source = "hardsigmoid: hardsigmoid_backward(grad, self)"},
    {.op = "HardSwish",
     .saves = {self},
     .inplaceable = true,
     .inplaceSavesResult = true,
     .source = "hardswish: hardswish_backward(grad, self)"},
    {.op = "Softplus", .saves = {self}, .source = "softplus: softplus_backward(grad, self, beta, threshold)"},
    {.op = "Softsign", .saves = {self}, .source = "softsign = x / (1 + |x|): self"},
    {.op = "Mish", .saves = {self}, .source = "mish: mish_backward(grad, self)"},
    {.op = "ThresholdedRelu", .saves = {self}, .source = "threshold: threshold_backward(grad, self, threshold)"},
    {.op = "Shrink", .saves = {self}, .source = "hardshrink / softshrink: *_backward(grad, self, lambd)"},
    {.op = "Clip", .saves = {self}, .source = "clamp: clamp_backward(grad, self, min, max)"},

    // No gradient (ai.onnx / ai.onnx.ml; a custom-domain op of one of these names gets the conservative rule).
    {.op = "Shape", .grad = Grad::No},
    {.op = "Size", .grad = Grad::No},
    {.op = "Range", .grad = Grad::No},
    {.op = "ConstantOfShape", .grad = Grad::No},
    {.op = "Constant", .grad = Grad::No},
    {.op = "Equal", .grad = Grad::No},
    {.op = "Greater", .grad = Grad::No},
    {.op = "Less", .grad = Grad::No},
    {.op = "GreaterOrEqual", .grad = Grad::No},
    {.op = "LessOrEqual", .grad = Grad::No},
    {.op = "And", .grad = Grad::No},
    {.op = "Or", .grad = Grad::No},
    {.op = "Xor", .grad = Grad::No},
    {.op = "Not", .grad = Grad::No},
    {.op = "IsNaN", .grad = Grad::No},
    {.op = "IsInf", .grad = Grad::No},
    {.op = "ArgMax", .grad = Grad::No},
    {.op = "ArgMin", .grad = Grad::No},
    {.op = "NonZero", .grad = Grad::No},
    {.op = "OneHot", .grad = Grad::No},
    {.op = "EyeLike", .grad = Grad::No},
    {.op = "RandomNormal", .grad = Grad::No},
    {.op = "RandomUniform", .grad = Grad::No},
    {.op = "RandomNormalLike", .grad = Grad::No},
    {.op = "RandomUniformLike", .grad = Grad::No},
    {.op = "Multinomial", .grad = Grad::No},
    {.op = "Bernoulli", .grad = Grad::No},
    // floor/ceil/sign/round: zeros_like(grad) in derivatives.yaml, nothing kept
    {.op = "Floor", .grad = Grad::No},
    {.op = "Ceil", .grad = Grad::No},
    {.op = "Sign", .grad = Grad::No},
    {.op = "Round", .grad = Grad::No},
    {.op = "QuantizeLinear", .grad = Grad::No},
    {.op = "DequantizeLinear", .grad = Grad::No},
    {.op = "DynamicQuantizeLinear", .grad = Grad::No},
    {.op = "MatMulInteger", .grad = Grad::No},
    {.op = "ConvInteger", .grad = Grad::No},
    {.op = "QLinearConv", .grad = Grad::No},
    {.op = "QLinearMatMul", .grad = Grad::No},
    {.op = "BitShift", .grad = Grad::No},
    {.op = "Mod", .grad = Grad::No},
    {.op = "Unique", .grad = Grad::No},
    {.op = "NonMaxSuppression", .grad = Grad::No},
    {.op = "StringNormalizer", .grad = Grad::No},
    {.op = "TfIdfVectorizer", .grad = Grad::No},
};

// The formulas an older PyTorch had where they keep something else than 2.x's (kRules): one row per version
// and op, read from derivatives.yaml at that release, replacing the kRules entry for that version only.
struct OlderRule
{
    TorchVersion torch;
    SavedRule rule;
};

const OlderRule kOlderRules[] = {
    // 1.13's mean.dim backward read the input's numel from the tensor itself, so its codegen kept `self`
    // (MeanBackward1::self_ in 1.13's generated Functions.h; 2.x saves self.sym_numel() as an integer); the
    // corpus CPU truth (1.13) reads the reduced result as kept too.
    {TorchVersion::V1_13,
     {.op = "ReduceMean",
      .saves = {self, result},
      .source = "v1.13.0 mean.dim: mean_backward(grad, self.sym_sizes(), dim, self.sym_numel(), keepdim)"}},
    // Before 1.11, softmax's and log_softmax's backward took the input tensor itself for its dtype, so autograd
    // kept it beside the result: v1.10 derivatives.yaml `_softmax: self: _softmax_backward_data(grad, result,
    // dim, self)` (likewise _log_softmax). pytorch/pytorch#64000 ("Softmax/logsoftmax use more memory for
    // backward than needed", Aug 2021) was fixed by #65242, relanded as #66018 (Oct 2021, after the 1.10
    // branch) with `self.scalar_type()`; transformers#16043 (Mar 2022: "_softmax_backward_data changed API
    // between 1.10 and 1.11, from requiring a tensor") adapted DeBERTa's XSoftmax to it. mean.dim has no 1.10 row:
    // the pre-1.11 derivatives.yaml read here (a 1.8-era fork, Kiyosora/pytorch@0e8acd9) divides by
    // _safe_size(self.sizes(), dim), sizes only, as 2.x; v1.10.0's own file was not read.
    {TorchVersion::V1_10,
     {.op = "Softmax",
      .saves = {self, result},
      .source = "v1.10.0 _softmax: _softmax_backward_data(grad, result, dim, self)"}},
    {TorchVersion::V1_10,
     {.op = "LogSoftmax",
      .saves = {self, result},
      .source = "v1.10.0 _log_softmax: _log_softmax_backward_data(grad, result, dim, self)"}},
};

const SavedRule* findSavedRule(std::string_view op, TorchVersion torch = TorchVersion::V2)
{
    if (torch != TorchVersion::V2)
        for (const OlderRule& o : kOlderRules)
            if (o.torch == torch && o.rule.op == op)
                return &o.rule;
    static const std::unordered_map<std::string_view, const SavedRule*> byOp = [] {
        std::unordered_map<std::string_view, const SavedRule*> m;
        for (const SavedRule& r : kRules)
            m.emplace(r.op, &r);
        return m;
    }();
    const auto it = byOp.find(op);
    return it == byOp.end() ? nullptr : it->second;
}

void save(Ctx& c, const Save& s)
{
    if (s.tensor == none)
        return;
    if (s.ifGradOf != always && !c.rg(c.input(static_cast<size_t>(s.ifGradOf))))
        return;
    if (s.tensor == everyInput) {
        for (int t : c.node.inputs)
            c.storage(t);
    } else if (s.tensor >= 0) {
        c.storage(c.input(static_cast<size_t>(s.tensor)));
    } else {
        c.storage(c.output(static_cast<size_t>(-2 - s.tensor)));
    }
}

// No rule: keep every input and output (an over-estimate, counted in the model's warnings).
void conservative(Ctx& c)
{
    c.unit.conservative = true;
    for (int t : c.node.inputs)
        c.storage(t);
    for (int t : c.node.outputs)
        c.storage(t);
}

} // namespace

bool logSoftmaxKeepsInput(TorchVersion torch) noexcept
{
    const SavedRule* r = findSavedRule("LogSoftmax", torch);
    return r && std::any_of(std::begin(r->saves), std::end(r->saves), [](const Save& s) { return s.tensor == in0; });
}

bool isViewOp(const std::string& op) noexcept
{
    const SavedRule* r = findSavedRule(op);
    return r && (r->grad == Grad::View || r->grad == Grad::ViewNewGrad);
}

void applyOpRule(const Model& model, const PlanData& plan, Unit& unit)
{
    const Node& node = model.nodes[static_cast<size_t>(unit.head)];
    Ctx c{model, plan, unit, node};
    const SavedRule* r = findSavedRule(node.op, plan.options.torch);
    const bool standardDomain = node.domain.empty() || node.domain == "ai.onnx" || node.domain == "ai.onnx.ml";
    if (r && r->grad == Grad::No && standardDomain) {
        unit.differentiable = false;
        return;
    }
    if (r && (r->grad == Grad::View || r->grad == Grad::ViewNewGrad)) {
        unit.isView = true;
        unit.passGrad = r->grad == Grad::View;
        return;
    }
    if (r && r->aliasIf && r->aliasIf(c))
        return;
    if (!c.anyRg())
        return; // nothing upstream requires grad: autograd records nothing
    if (!r || r->grad == Grad::No) {
        conservative(c);
        return;
    }
    for (const Save& s : r->saves)
        save(c, s);
    if (r->code)
        r->code(c);
    unit.passGrad = r->passGrad;
    unit.inplaceable = r->inplaceable;
    unit.inplaceSavesResult = r->inplaceSavesResult;
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
