#pragma once
// What the plan builder needs to know about an op besides its saved-for-backward rule (saved_rules.cpp):
// its autocast class, whether requires-grad stops at it, which fused decomposition it anchors, the part it
// plays in scaled-dot-product attention, and how a view of it lays out its storage. Each is one table
// (op_classes.cpp; the autocast classes in dtype_policy.cpp beside the other dtype rules): adding an op to
// a class is adding a row.
#include "engine/engine_internal.h"

#include <cstdint>
#include <string_view>

namespace headroom {

// Autocast's cast policies (aten/src/ATen/autocast_mode.h CastPolicy), as far as they decide an output's
// dtype: lower_precision_fp ops run in 16 bits (and autocast caches a 16-bit copy of the weights they read),
// fp32 ops (fp32, fp32_set_opt_dtype, fp32_append_dtype) produce fp32, and every other op falls through to
// its inputs' dtype. TypePromotion is a fall-through op whose result type counts a non-scalar fp32
// parameter operand (at::result_type), so bf16 activation * fp32 weight is fp32.
enum class CastPolicy : uint8_t { FallThrough, LowerPrecisionFp, Fp32, TypePromotion };
CastPolicy autocastPolicy(std::string_view op) noexcept; // dtype_policy.cpp

// Requires-grad stops at these ops' outputs (comparisons, shape arithmetic, rounding).
bool stopsRequiresGrad(std::string_view op) noexcept;

// The fused unit an op anchors: the node the pattern search starts from (UnitKind::Op: none).
UnitKind fusionAnchor(std::string_view op) noexcept;

// Mul or Div by a constant: GELU's 1/sqrt(2), attention's 1/sqrt(d) on the query.
bool scalesByConstant(std::string_view op) noexcept;

// A MatMul, Gemm or Conv whose following Add of a 1-D bias PyTorch runs inside the same kernel.
bool addsBiasInKernel(std::string_view op) noexcept;

// The ops fused attention absorbs between the score MatMul and Softmax: which operand carries the scores.
enum class ScoreStep : uint8_t {
    None,          // not part of the pattern
    FirstOperand,  // scores - mask, scores / scale
    EitherOperand, // scores + mask, scores * scale (commutative)
    MaskedFill,    // Where(mask, scores, fill) or Where(mask, fill, scores)
    Cast,          // the scores' dtype cast
};
ScoreStep scoreStep(std::string_view op) noexcept;
// The ops it absorbs between Softmax and the value MatMul (the probabilities' cast and dropout).
bool passesProbabilities(std::string_view op) noexcept;

// How a view's output lays out its storage relative to its input (PlanData::nonContig).
enum class ViewLayout : uint8_t {
    Same,            // as its input
    Permuted,        // Transpose: permuted unless the permutation is the identity
    StridedOffAxis0, // strided unless it works on axis 0 (Split, Gather)
    Strided,         // strided (Slice, Expand)
    Reshaped,        // contiguous if its input is; a permuted input is copied (torch.reshape)
};
ViewLayout viewLayout(std::string_view op) noexcept;

} // namespace headroom
