#include "headroom/base/dtype.h"

namespace headroom {

std::string_view nameOf(DType t) noexcept
{
    switch (t) {
    case DType::Undefined: return "undefined";
    case DType::Float32: return "float32";
    case DType::UInt8: return "uint8";
    case DType::Int8: return "int8";
    case DType::UInt16: return "uint16";
    case DType::Int16: return "int16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::String: return "string";
    case DType::Bool: return "bool";
    case DType::Float16: return "float16";
    case DType::Float64: return "float64";
    case DType::UInt32: return "uint32";
    case DType::UInt64: return "uint64";
    case DType::Complex64: return "complex64";
    case DType::Complex128: return "complex128";
    case DType::BFloat16: return "bfloat16";
    case DType::Float8E4M3FN: return "float8e4m3fn";
    case DType::Float8E4M3FNUZ: return "float8e4m3fnuz";
    case DType::Float8E5M2: return "float8e5m2";
    case DType::Float8E5M2FNUZ: return "float8e5m2fnuz";
    case DType::UInt4: return "uint4";
    case DType::Int4: return "int4";
    }
    return "undefined";
}

DType dtypeFromOnnx(int32_t onnxType) noexcept
{
    if (onnxType < 0 || onnxType > static_cast<int32_t>(DType::Int4))
        return DType::Undefined;
    return static_cast<DType>(onnxType);
}

} // namespace headroom
