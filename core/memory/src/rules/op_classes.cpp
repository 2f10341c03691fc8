// The plan builder's op classes (op_classes.h), one table each.
#include "rules/op_classes.h"

#include "rules/op_table.h"

namespace headroom {

namespace {

// Ops whose outputs never require grad: comparisons, logic, shape arithmetic, indices and rounding (floor,
// ceil, sign, round: zeros_like(grad) in derivatives.yaml). A subset of saved_rules.cpp's Grad::No rows:
// the random, quantized and integer-only ops there still pass requires-grad on to their outputs here.
constexpr auto kNoRequiresGrad = opTable<std::string_view>({
    "Shape",   "Size",   "Range",          "ConstantOfShape", "Constant", "Equal",
    "Greater", "Less",   "GreaterOrEqual", "LessOrEqual",     "And",      "Or",
    "Xor",     "Not",    "IsNaN",          "IsInf",           "ArgMax",   "ArgMin",
    "NonZero", "OneHot", "EyeLike",        "Floor",           "Ceil",     "Sign",
    "Round",
});

struct Anchor
{
    std::string_view op;
    UnitKind unit = UnitKind::Op;
    std::string_view torch = {}; // the PyTorch op the decomposition stands for
};

// Where each decomposition's search starts (fused_units.cpp holds the patterns).
constexpr auto kFusionAnchors = opTable<Anchor>({
    {.op = "Softmax", .unit = UnitKind::Attention, .torch = "scaled_dot_product_attention"},
    {.op = "ReduceMean", .unit = UnitKind::LayerNorm, .torch = "native_layer_norm (the mean of x)"},
    {.op = "Erf", .unit = UnitKind::Gelu, .torch = "gelu (approximate='none')"},
    {.op = "Sigmoid", .unit = UnitKind::Silu, .torch = "silu (x * sigmoid(x))"},
    {.op = "InstanceNormalization", .unit = UnitKind::GroupNorm, .torch = "native_group_norm (torch.onnx's export)"},
});

constexpr auto kConstantScales = opTable<std::string_view>({"Mul", "Div"});

// F.linear as MatMul + Add (at::linear: addmm, or matmul then add_), Gemm's C operand (addmm) and the conv
// bias (cudnn_convolution adds it): one output tensor, no second one for the sum.
constexpr auto kBiasInKernel = opTable<std::string_view>({"MatMul", "Gemm", "Conv"});

struct AttentionPiece
{
    std::string_view op;
    ScoreStep scores = ScoreStep::None;
    bool probabilities = false;
    std::string_view torch = {}; // what the model wrote around F.scaled_dot_product_attention's math
};

// The math kernel's graph (aten/src/ATen/native/transformers/attention.cpp _scaled_dot_product_attention_math)
// and the eager attention Hugging Face models write out.
constexpr auto kAttentionPieces = opTable<AttentionPiece>({
    {.op = "Add", .scores = ScoreStep::EitherOperand, .torch = "attn_weight += attn_bias (a float mask)"},
    {.op = "Sub", .scores = ScoreStep::FirstOperand, .torch = "scores - mask"},
    {.op = "Mul", .scores = ScoreStep::EitherOperand, .torch = "q @ k.T * scale_factor"},
    {.op = "Div", .scores = ScoreStep::FirstOperand, .torch = "q @ k.T / sqrt(d)"},
    {.op = "Where", .scores = ScoreStep::MaskedFill, .torch = "masked_fill(mask, -inf)"},
    {.op = "Cast",
     .scores = ScoreStep::Cast,
     .probabilities = true,
     .torch = "softmax(..., dtype=torch.float32).to(query.dtype)"},
    {.op = "Dropout", .probabilities = true, .torch = "torch.dropout(attn_weight, dropout_p)"},
});

struct ViewRow
{
    std::string_view op;
    ViewLayout layout = ViewLayout::Same;
};

constexpr auto kViewLayouts = opTable<ViewRow>({
    {.op = "Transpose", .layout = ViewLayout::Permuted},
    {.op = "Split", .layout = ViewLayout::StridedOffAxis0},
    {.op = "Gather", .layout = ViewLayout::StridedOffAxis0},
    {.op = "Slice", .layout = ViewLayout::Strided},
    {.op = "Expand", .layout = ViewLayout::Strided},
    {.op = "Reshape", .layout = ViewLayout::Reshaped},
    {.op = "Flatten", .layout = ViewLayout::Reshaped},
});

} // namespace

bool stopsRequiresGrad(std::string_view op) noexcept { return kNoRequiresGrad.contains(op); }

UnitKind fusionAnchor(std::string_view op) noexcept
{
    const Anchor* a = kFusionAnchors.find(op);
    return a ? a->unit : UnitKind::Op;
}

bool scalesByConstant(std::string_view op) noexcept { return kConstantScales.contains(op); }

bool addsBiasInKernel(std::string_view op) noexcept { return kBiasInKernel.contains(op); }

ScoreStep scoreStep(std::string_view op) noexcept
{
    const AttentionPiece* p = kAttentionPieces.find(op);
    return p ? p->scores : ScoreStep::None;
}

bool passesProbabilities(std::string_view op) noexcept
{
    const AttentionPiece* p = kAttentionPieces.find(op);
    return p && p->probabilities;
}

ViewLayout viewLayout(std::string_view op) noexcept
{
    const ViewRow* v = kViewLayouts.find(op);
    return v ? v->layout : ViewLayout::Same;
}

} // namespace headroom
