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
// is wrong for packed storage; callers that care use bitsOf()).
int64_t bytesOf(DType t) noexcept;
int bitsOf(DType t) noexcept;
bool isFloating(DType t) noexcept;
bool isInteger(DType t) noexcept;
std::string_view nameOf(DType t) noexcept;      // "float32", "int64", ...
DType dtypeFromOnnx(int32_t onnxType) noexcept; // unknown numbers map to Undefined

} // namespace headroom
