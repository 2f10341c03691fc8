// Element sizes under each dtype policy of docs/DESIGN.md "The memory model".
#include "engine_internal.h"

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

} // namespace headroom
