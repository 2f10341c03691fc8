// Output element types, one entry per op whose outputs do not take input 0's type (onnx/defs: each schema's
// TypeConstraint and its inference function's propagateElemTypeFromAttributeToOutput / ...FromInputToOutput).
// Read for every node whose output type the file does not declare, with or without a shape rule, in any domain.
#include "shape_rules.h"

#include <unordered_map>

namespace headroom::detail {
namespace {

using TypeRuleFn = DType (*)(const ShapeContext&, const Node&, size_t o);

DType fromAttr(const Node& n, std::string_view attr, int64_t onnxDefault)
{
    return dtypeFromOnnx(static_cast<int32_t>(n.attrInt(attr, onnxDefault)));
}

DType int64Out(const ShapeContext&, const Node&, size_t) { return DType::Int64; }
DType boolOut(const ShapeContext&, const Node&, size_t) { return DType::Bool; }
DType int32Out(const ShapeContext&, const Node&, size_t) { return DType::Int32; }
DType typeOfInput1(const ShapeContext& c, const Node& n, size_t) { return c.dt(n, 1); }
DType typeOfInput2(const ShapeContext& c, const Node& n, size_t) { return c.dt(n, 2); }
DType castTo(const ShapeContext&, const Node& n, size_t) { return fromAttr(n, "to", 1); }
DType dtypeAttr(const ShapeContext&, const Node& n, size_t) { return fromAttr(n, "dtype", 1); }   // float default
DType multinomial(const ShapeContext&, const Node& n, size_t) { return fromAttr(n, "dtype", 6); } // int32 default
DType window(const ShapeContext&, const Node& n, size_t) { return fromAttr(n, "output_datatype", 1); }
DType constantOfShape(const ShapeContext&, const Node& n, size_t)
{
    const Attr* a = n.attr("value");
    return a && a->kind == Attr::Kind::Tensor ? dtypeFromOnnx(static_cast<int32_t>(a->i)) : DType::Float32;
}
// TopK's and MaxPool's second output: int64 indices.
DType indicesSecond(const ShapeContext& c, const Node& n, size_t o) { return o == 1 ? DType::Int64 : c.dt(n, 0); }
// Dropout's second output: the boolean mask.
DType maskSecond(const ShapeContext& c, const Node& n, size_t o) { return o == 1 ? DType::Bool : c.dt(n, 0); }
DType likeInput(const ShapeContext& c, const Node& n, size_t)
{
    return n.attr("dtype") ? fromAttr(n, "dtype", 1) : c.dt(n, 0);
}
DType dequantize(const ShapeContext& c, const Node& n, size_t) { return c.present(n, 1) ? c.dt(n, 1) : DType::Float32; }
DType quantize(const ShapeContext& c, const Node& n, size_t) { return c.present(n, 2) ? c.dt(n, 2) : DType::UInt8; }
DType dynamicQuantize(const ShapeContext&, const Node&, size_t o) { return o == 1 ? DType::Float32 : DType::UInt8; }

const std::unordered_map<std::string_view, TypeRuleFn>& typeRules()
{
    static const std::unordered_map<std::string_view, TypeRuleFn> rules = {
        {"Shape", int64Out},
        {"Size", int64Out},
        {"NonZero", int64Out},
        {"ArgMax", int64Out},
        {"ArgMin", int64Out},
        {"NonMaxSuppression", int64Out},
        {"Unique", int64Out},
        {"SequenceLength", int64Out},
        {"Equal", boolOut},
        {"Greater", boolOut},
        {"Less", boolOut},
        {"GreaterOrEqual", boolOut},
        {"LessOrEqual", boolOut},
        {"Not", boolOut},
        {"And", boolOut},
        {"Or", boolOut},
        {"Xor", boolOut},
        {"IsNaN", boolOut},
        {"IsInf", boolOut},
        {"OptionalHasElement", boolOut},
        {"MatMulInteger", int32Out},
        {"ConvInteger", int32Out},
        {"Cast", castTo},
        {"CastLike", typeOfInput1},
        {"Where", typeOfInput1},
        {"OneHot", typeOfInput2},
        {"ConstantOfShape", constantOfShape},
        {"TopK", indicesSecond},
        {"MaxPool", indicesSecond},
        {"Dropout", maskSecond},
        {"RandomNormal", dtypeAttr},
        {"RandomUniform", dtypeAttr},
        {"SequenceEmpty", dtypeAttr},
        {"Multinomial", multinomial},
        {"RandomNormalLike", likeInput},
        {"RandomUniformLike", likeInput},
        {"EyeLike", likeInput},
        {"HannWindow", window},
        {"HammingWindow", window},
        {"BlackmanWindow", window},
        {"DequantizeLinear", dequantize},
        {"QuantizeLinear", quantize},
        {"DynamicQuantizeLinear", dynamicQuantize},
    };
    return rules;
}

} // namespace

DType outputType(const ShapeContext& c, const Node& n, size_t o)
{
    const auto& rules = typeRules();
    const auto it = rules.find(n.op);
    return it != rules.end() ? it->second(c, n, o) : c.dt(n, 0);
}

} // namespace headroom::detail
