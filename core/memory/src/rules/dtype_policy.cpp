// Element sizes under each dtype policy of docs/DESIGN.md "The memory model".
#include "engine/engine_internal.h"
#include "rules/op_classes.h"
#include "rules/op_table.h"

namespace headroom {

namespace {
bool sixteenBit(DtypePolicy p) noexcept
{
    return p == DtypePolicy::FP16 || p == DtypePolicy::BF16 || p == DtypePolicy::MixedFP16 ||
           p == DtypePolicy::MixedBF16;
}
bool quantised(DtypePolicy p) noexcept { return p == DtypePolicy::INT8 || p == DtypePolicy::INT4; }
bool autocast(DtypePolicy p) noexcept { return p == DtypePolicy::AmpFP16 || p == DtypePolicy::AmpBF16; }
} // namespace

bool policyIsInference(const Config& config) noexcept { return config.mode == Mode::Infer || quantised(config.dtype); }

bool kbitPrepApplies(const Config& config) noexcept
{
    return config.finetune.quant != Quant::None && config.finetune.kbitPrep && !policyIsInference(config);
}

int64_t activationBytes(const Config& config, const PlanData& plan, int tensor, int64_t numel)
{
    if (numel <= 0)
        return 0;
    const Tensor& t = plan.model->tensors[static_cast<size_t>(tensor)];
    int64_t elem = bytesOf(t.dtype);
    if (t.dtype == DType::Undefined)
        elem = 4;
    if (isFloating(t.dtype) || t.dtype == DType::Undefined) {
        // weight-only quantisation computes in fp16; pure and mixed 16-bit policies hold 16-bit activations
        if (sixteenBit(config.dtype) || quantised(config.dtype))
            elem = 2;
        else if (autocast(config.dtype) && plan.amp16[static_cast<size_t>(tensor)])
            elem = 2;
        // PEFT's adapter casts and kbit preparation's fp32 stream (finetune/precision.cpp)
        if (static_cast<size_t>(tensor) < plan.actElem.size() && plan.actElem[static_cast<size_t>(tensor)])
            elem = plan.actElem[static_cast<size_t>(tensor)];
    }
    return checkedMul(numel, elem).value_or(0);
}

int64_t paramBytes(const Config& config, DType dt, int64_t numel)
{
    if (!isFloating(dt))
        return checkedMul(numel, bytesOf(dt)).value_or(0);
    switch (config.dtype) {
    case DtypePolicy::FP16:
    case DtypePolicy::BF16:
    case DtypePolicy::MixedFP16:
    case DtypePolicy::MixedBF16: return checkedMul(numel, 2).value_or(0);
    case DtypePolicy::INT8: return numel;
    case DtypePolicy::INT4: return (numel + 1) / 2;
    default: return checkedMul(numel, bytesOf(dt)).value_or(0);
    }
}

int64_t bufferBytes(const Config& config, DType dt, int64_t numel)
{
    // model.half() converts floating buffers too; quantised models keep them in fp16
    if (isFloating(dt) && (sixteenBit(config.dtype) || quantised(config.dtype)))
        return checkedMul(numel, 2).value_or(0);
    return checkedMul(numel, bytesOf(dt)).value_or(0);
}

int gradElemBytes(const Config& config) noexcept { return sixteenBit(config.dtype) ? 2 : 4; }

namespace {

struct AutocastRow
{
    std::string_view op;
    CastPolicy policy = CastPolicy::FallThrough;
    std::string_view torch = {}; // the PyTorch op autocast registers, which the ONNX op stands for
};

// Autocast's CUDA op lists (aten/src/ATen/autocast_mode.h: AT_FORALL_LOWER_PRECISION_FP, AT_FORALL_FP32,
// AT_FORALL_FP32_SET_OPT_DTYPE, AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE), per ONNX op. Ops on no list fall
// through to their inputs' dtype (mean and sqrt among them). Fused units take their class from the op they
// replace (engine_plan.cpp: scaled_dot_product_attention is lower_precision_fp, layer_norm and group_norm fp32).
constexpr auto kAutocast = opTable<AutocastRow>({
    // lower_precision_fp
    {.op = "Conv", .policy = CastPolicy::LowerPrecisionFp, .torch = "conv1d / conv2d / conv3d"},
    {.op = "ConvTranspose", .policy = CastPolicy::LowerPrecisionFp, .torch = "conv_transpose1d / 2d / 3d"},
    {.op = "MatMul", .policy = CastPolicy::LowerPrecisionFp, .torch = "matmul, linear"},
    {.op = "Gemm", .policy = CastPolicy::LowerPrecisionFp, .torch = "addmm, linear"},
    {.op = "Einsum", .policy = CastPolicy::LowerPrecisionFp, .torch = "einsum"},
    // nn.LSTM / GRU / RNN on CUDA: _cudnn_rnn, cast to 16 bits by aten/src/ATen/cudnn/AutocastRNN.cpp
    {.op = "LSTM", .policy = CastPolicy::LowerPrecisionFp, .torch = "_cudnn_rnn (lstm)"},
    {.op = "GRU", .policy = CastPolicy::LowerPrecisionFp, .torch = "_cudnn_rnn (gru)"},
    {.op = "RNN", .policy = CastPolicy::LowerPrecisionFp, .torch = "_cudnn_rnn (rnn_tanh / rnn_relu)"},
    // fp32
    {.op = "Acos", .policy = CastPolicy::Fp32, .torch = "acos"},
    {.op = "Asin", .policy = CastPolicy::Fp32, .torch = "asin"},
    {.op = "Cosh", .policy = CastPolicy::Fp32, .torch = "cosh"},
    {.op = "Sinh", .policy = CastPolicy::Fp32, .torch = "sinh"},
    {.op = "Tan", .policy = CastPolicy::Fp32, .torch = "tan"},
    {.op = "Exp", .policy = CastPolicy::Fp32, .torch = "exp"},
    {.op = "Log", .policy = CastPolicy::Fp32, .torch = "log"},
    {.op = "Pow", .policy = CastPolicy::Fp32, .torch = "pow"},
    {.op = "Reciprocal", .policy = CastPolicy::Fp32, .torch = "reciprocal"},
    {.op = "Softplus", .policy = CastPolicy::Fp32, .torch = "softplus"},
    {.op = "LayerNormalization", .policy = CastPolicy::Fp32, .torch = "layer_norm"},
    {.op = "GroupNormalization", .policy = CastPolicy::Fp32, .torch = "group_norm"},
    // torch.onnx exports GroupNorm as Reshape, InstanceNormalization, Reshape (fused_units.cpp)
    {.op = "InstanceNormalization", .policy = CastPolicy::Fp32, .torch = "group_norm"},
    {.op = "ReduceLogSumExp", .policy = CastPolicy::Fp32, .torch = "logsumexp"},
    // fp32_set_opt_dtype
    {.op = "Softmax", .policy = CastPolicy::Fp32, .torch = "softmax"},
    {.op = "LogSoftmax", .policy = CastPolicy::Fp32, .torch = "log_softmax"},
    {.op = "ReduceSum", .policy = CastPolicy::Fp32, .torch = "sum"},
    {.op = "ReduceSumSquare", .policy = CastPolicy::Fp32, .torch = "sum (of x ** 2)"},
    {.op = "ReduceProd", .policy = CastPolicy::Fp32, .torch = "prod"},
    {.op = "CumSum", .policy = CastPolicy::Fp32, .torch = "cumsum"},
    {.op = "ReduceL1", .policy = CastPolicy::Fp32, .torch = "linalg_vector_norm (ord=1)"},
    {.op = "ReduceL2", .policy = CastPolicy::Fp32, .torch = "linalg_vector_norm (ord=2)"},
    // fp32_append_dtype
    {.op = "LpNormalization", .policy = CastPolicy::Fp32, .torch = "norm (F.normalize)"},
    // Not on autocast's lists (mul, div, maximum, minimum fall through), but TensorIterator's type promotion
    // makes bf16 activation * fp32 weight fp32 (RMSNorm's weight * x). Add and Sub are left out: exporters
    // split linear(x, W, b) into MatMul + Add(b), which PyTorch runs as one bf16 addmm.
    {.op = "Mul", .policy = CastPolicy::TypePromotion, .torch = "mul"},
    {.op = "Div", .policy = CastPolicy::TypePromotion, .torch = "div"},
    {.op = "Max", .policy = CastPolicy::TypePromotion, .torch = "maximum"},
    {.op = "Min", .policy = CastPolicy::TypePromotion, .torch = "minimum"},
});

} // namespace

CastPolicy autocastPolicy(std::string_view op) noexcept
{
    const AutocastRow* r = kAutocast.find(op);
    return r ? r->policy : CastPolicy::FallThrough;
}

} // namespace headroom
