#pragma once
#include <cstdint>
#include <string_view>

namespace headroom {

// Element types as ONNX numbers them (TensorProto.DataType), so conversion is a cast.
enum class DType : int32_t {
    Undefined = 0,
    Float32 = 1,
    UInt8 = 2,
    Int8 = 3,
    UInt16 = 4,
    Int16 = 5,
    Int32 = 6,
    Int64 = 7,
    String = 8,
    Bool = 9,
    Float16 = 10,
    Float64 = 11,
    UInt32 = 12,
    UInt64 = 13,
    Complex64 = 14,
    Complex128 = 15,
    BFloat16 = 16,
    Float8E4M3FN = 17,
    Float8E4M3FNUZ = 18,
    Float8E5M2 = 19,
    Float8E5M2FNUZ = 20,
    UInt4 = 21,
    Int4 = 22,
};

// Bytes per element; 0 for Undefined/String (unknown size). Int4/UInt4 report 1 (rounded up per element
// is wrong for packed storage; callers that care use bitsOf()). Inline: a tick asks them per tensor, a few
// thousand times (docs/BENCHMARKS.md).
constexpr int bitsOf(DType t) noexcept
{
    switch (t) {
    case DType::Float64:
    case DType::Int64:
    case DType::UInt64:
    case DType::Complex64: return 64;
    case DType::Complex128: return 128;
    case DType::Float32:
    case DType::Int32:
    case DType::UInt32: return 32;
    case DType::Float16:
    case DType::BFloat16:
    case DType::Int16:
    case DType::UInt16: return 16;
    case DType::Int8:
    case DType::UInt8:
    case DType::Bool:
    case DType::Float8E4M3FN:
    case DType::Float8E4M3FNUZ:
    case DType::Float8E5M2:
    case DType::Float8E5M2FNUZ: return 8;
    case DType::Int4:
    case DType::UInt4: return 4;
    case DType::Undefined:
    case DType::String: return 0;
    }
    return 0;
}

constexpr int64_t bytesOf(DType t) noexcept
{
    const int bits = bitsOf(t);
    return bits == 0 ? 0 : (bits + 7) / 8;
}

constexpr bool isFloating(DType t) noexcept
{
    switch (t) {
    case DType::Float32:
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float64:
    case DType::Float8E4M3FN:
    case DType::Float8E4M3FNUZ:
    case DType::Float8E5M2:
    case DType::Float8E5M2FNUZ:
    case DType::Complex64:
    case DType::Complex128: return true;
    default: return false;
    }
}

constexpr bool isInteger(DType t) noexcept
{
    switch (t) {
    case DType::Int8:
    case DType::UInt8:
    case DType::Int16:
    case DType::UInt16:
    case DType::Int32:
    case DType::UInt32:
    case DType::Int64:
    case DType::UInt64:
    case DType::Int4:
    case DType::UInt4: return true;
    default: return false;
    }
}
std::string_view nameOf(DType t) noexcept;      // "float32", "int64", ...
DType dtypeFromOnnx(int32_t onnxType) noexcept; // unknown numbers map to Undefined

} // namespace headroom
