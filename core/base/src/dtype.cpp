#include "headroom/base/dtype.h"

namespace headroom {

int bitsOf(DType t) noexcept
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

int64_t bytesOf(DType t) noexcept
{
    const int bits = bitsOf(t);
    return bits == 0 ? 0 : (bits + 7) / 8;
}

bool isFloating(DType t) noexcept
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

bool isInteger(DType t) noexcept
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
