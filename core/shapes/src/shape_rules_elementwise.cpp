// Elementwise shape rules: ops whose output has input 0's shape (activations, normalizations, casts), and the
// broadcasting ops (onnx/defs/math/defs.cc, "Multidirectional Broadcasting"). The broadcasting ops also fold
// small integer values, which is how exporters' shape arithmetic (Shape -> Mul -> Concat) stays exact.
#include "shape_rules.h"

#include <cstdlib>

namespace headroom::detail {
namespace {

// --- same shape as input 0 ---------------------------------------------------------------------------------

bool sameShape(ShapeContext& c, const Node& n)
{
    c.out(n, 0, c.in(n, 0));
    return true;
}

// Identity and CastLike pass small integer values through.
bool passValues(ShapeContext& c, const Node& n)
{
    c.out(n, 0, c.in(n, 0), c.val(n, 0));
    return true;
}

bool cast(ShapeContext& c, const Node& n)
{
    Values v = c.val(n, 0);
    if (v && dtypeFromOnnx(static_cast<int32_t>(n.attrInt("to", 1))) == DType::Bool)
        for (int64_t& e : *v)
            e = e != 0;
    c.out(n, 0, c.in(n, 0), std::move(v));
    return true;
}

template <int64_t (*F)(int64_t)> bool unaryValues(ShapeContext& c, const Node& n)
{
    Values v;
    if (c.val(n, 0)) {
        v = *c.val(n, 0);
        for (int64_t& e : *v)
            e = F(e);
    }
    c.out(n, 0, c.in(n, 0), std::move(v));
    return true;
}
int64_t negate(int64_t e) { return -e; }
int64_t absolute(int64_t e) { return std::llabs(e); }
int64_t logicalNot(int64_t e) { return !e; }

// Dropout's second output is the mask, input-sized.
bool dropout(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    c.out(n, 0, x);
    c.out(n, 1, x);
    return true;
}

// Training-mode outputs: running mean and variance, per channel.
bool batchNormalization(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    c.out(n, 0, x);
    if (n.outputs.size() > 1) {
        c.out(n, 1, {x.size() > 1 ? x[1] : 1});
        c.out(n, 2, {x.size() > 1 ? x[1] : 1});
    }
    return true;
}

// Mean and inverse std-dev: the input's shape with the normalized dims (axis on) set to 1.
bool layerNormalization(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    c.out(n, 0, x);
    if (n.outputs.size() > 1) {
        const auto axis = static_cast<size_t>(normAxis(n.attrInt("axis", -1), x.size()));
        Dims s = x;
        for (size_t i = axis; i < s.size(); ++i)
            s[i] = 1;
        c.out(n, 1, s);
        c.out(n, 2, s);
    }
    return true;
}

// --- broadcasting ------------------------------------------------------------------------------------------

// One output element from the inputs' elements (c3: Where's third operand, else 0); false: no value (the
// result is not an exact integer, or the op has no integer meaning).
using ScalarFn = bool (*)(const Node& n, bool isFloat, int64_t a, int64_t b, int64_t c3, int64_t& r);

// The output is the inputs broadcast together; where every input's values are known and the result is small,
// F computes them.
template <ScalarFn F> bool broadcasting(ShapeContext& c, const Node& n)
{
    Dims d = c.in(n, 0);
    size_t count = 0;
    for (size_t i = 0; i < c.explicitInputs(n); ++i)
        if (c.present(n, i))
            d = count++ == 0 ? c.in(n, i) : broadcast(d, c.in(n, i));
    Values v;
    if constexpr (F != nullptr) {
        auto total = numelOf(d);
        bool allVals = total && size_t(*total) <= kMaxValues;
        for (size_t i = 0; allVals && i < n.inputs.size(); ++i)
            allVals = c.present(n, i) && c.val(n, i).has_value();
        if (allVals && n.inputs.size() >= 1 && n.inputs.size() <= 3) {
            const bool fl = isFloating(c.dt(n, 0));
            std::vector<int64_t> r(static_cast<size_t>(*total));
            bool ok = true;
            for (size_t e = 0; e < r.size() && ok; ++e) {
                auto at = [&](size_t i) { return (*c.val(n, i))[broadcastIndex(e, d, c.in(n, i))]; };
                const int64_t a = at(0);
                const int64_t b = n.inputs.size() > 1 ? at(1) : 0;
                const int64_t c3 = n.inputs.size() > 2 ? at(2) : 0;
                ok = F(n, fl, a, b, c3, r[e]);
            }
            if (ok)
                v = std::move(r);
        }
    }
    c.out(n, 0, std::move(d), std::move(v));
    return true;
}

bool addValues(const Node&, bool, int64_t a, int64_t b, int64_t, int64_t& r)
{
    r = add(a, b);
    return true;
}
bool subValues(const Node&, bool, int64_t a, int64_t b, int64_t, int64_t& r)
{
    r = add(a, -b);
    return true;
}
bool mulValues(const Node&, bool, int64_t a, int64_t b, int64_t, int64_t& r)
{
    r = mul(a, b);
    return true;
}
// Integer division truncates; a float division that leaves a remainder is no integer.
bool divValues(const Node&, bool isFloat, int64_t a, int64_t b, int64_t, int64_t& r)
{
    if (b == 0 || (isFloat && a % b != 0))
        return false;
    r = a / b;
    return true;
}
// fmod=0 takes the divisor's sign (Python's %), fmod=1 the dividend's (C's fmod).
bool modValues(const Node& n, bool, int64_t a, int64_t b, int64_t, int64_t& r)
{
    if (b == 0)
        return false;
    r = n.attrInt("fmod", 0) ? a % b : a - floorDiv(a, b) * b;
    return true;
}
bool maxValues(const Node&, bool, int64_t a, int64_t b, int64_t, int64_t& r)
{
    r = std::max(a, b);
    return true;
}
bool minValues(const Node&, bool, int64_t a, int64_t b, int64_t, int64_t& r)
{
    r = std::min(a, b);
    return true;
}
bool equalValues(const Node&, bool, int64_t a, int64_t b, int64_t, int64_t& r)
{
    r = a == b;
    return true;
}
bool greaterValues(const Node&, bool, int64_t a, int64_t b, int64_t, int64_t& r)
{
    r = a > b;
    return true;
}
bool lessValues(const Node&, bool, int64_t a, int64_t b, int64_t, int64_t& r)
{
    r = a < b;
    return true;
}
bool greaterOrEqualValues(const Node&, bool, int64_t a, int64_t b, int64_t, int64_t& r)
{
    r = a >= b;
    return true;
}
bool lessOrEqualValues(const Node&, bool, int64_t a, int64_t b, int64_t, int64_t& r)
{
    r = a <= b;
    return true;
}
bool andValues(const Node&, bool, int64_t a, int64_t b, int64_t, int64_t& r)
{
    r = a && b;
    return true;
}
bool orValues(const Node&, bool, int64_t a, int64_t b, int64_t, int64_t& r)
{
    r = a || b;
    return true;
}
bool xorValues(const Node&, bool, int64_t a, int64_t b, int64_t, int64_t& r)
{
    r = (a != 0) != (b != 0);
    return true;
}
bool whereValues(const Node&, bool, int64_t a, int64_t b, int64_t c3, int64_t& r)
{
    r = a ? b : c3;
    return true;
}
// Small non-negative integer exponents only.
bool powValues(const Node&, bool, int64_t a, int64_t b, int64_t, int64_t& r)
{
    if (b < 0 || b > 62)
        return false;
    int64_t p = 1;
    for (int64_t k = 0; k < b; ++k)
        p = mul(p, a);
    r = p;
    return true;
}

// Add's and Sum's values are a + b: like the rule this replaces, a third Sum operand is not added (its dims are).
constexpr ShapeRule kRules[] = {
    // activations and other same-shape ops (onnx/defs/math, nn, tensor)
    {"Relu", sameShape},
    {"Sigmoid", sameShape},
    {"Tanh", sameShape},
    {"Erf", sameShape},
    {"Exp", sameShape},
    {"Log", sameShape},
    {"Sqrt", sameShape},
    {"Reciprocal", sameShape},
    {"Floor", sameShape},
    {"Ceil", sameShape},
    {"Round", sameShape},
    {"Sign", sameShape},
    {"Sin", sameShape},
    {"Cos", sameShape},
    {"Tan", sameShape},
    {"Asin", sameShape},
    {"Acos", sameShape},
    {"Atan", sameShape},
    {"Sinh", sameShape},
    {"Cosh", sameShape},
    {"Asinh", sameShape},
    {"Acosh", sameShape},
    {"Atanh", sameShape},
    {"Softplus", sameShape},
    {"Softsign", sameShape},
    {"Elu", sameShape},
    {"Selu", sameShape},
    {"LeakyRelu", sameShape},
    {"ThresholdedRelu", sameShape},
    {"HardSigmoid", sameShape},
    {"HardSwish", sameShape},
    {"Mish", sameShape},
    {"Gelu", sameShape},
    {"Celu", sameShape},
    {"Clip", sameShape},
    {"Softmax", sameShape},
    {"LogSoftmax", sameShape},
    {"Hardmax", sameShape},
    {"IsNaN", sameShape},
    {"IsInf", sameShape},
    {"LRN", sameShape},
    {"MeanVarianceNormalization", sameShape},
    {"LpNormalization", sameShape},
    {"InstanceNormalization", sameShape},
    {"GroupNormalization", sameShape},
    {"RMSNormalization", sameShape},
    {"RotaryEmbedding", sameShape},
    {"CumSum", sameShape},
    {"Shrink", sameShape},
    {"Trilu", sameShape},
    {"ReverseSequence", sameShape},
    {"PRelu", sameShape},
    {"QuantizeLinear", sameShape},
    {"DequantizeLinear", sameShape},
    {"BitwiseNot", sameShape},
    {"RandomNormalLike", sameShape},
    {"RandomUniformLike", sameShape},
    {"EyeLike", sameShape},
    {"Bernoulli", sameShape},
    {"Scatter", sameShape},
    {"ScatterElements", sameShape},
    {"ScatterND", sameShape},
    {"Identity", passValues},
    {"CastLike", passValues},
    {"Cast", cast},
    {"Neg", unaryValues<negate>},
    {"Abs", unaryValues<absolute>},
    {"Not", unaryValues<logicalNot>},
    {"Dropout", dropout},
    {"BatchNormalization", batchNormalization},
    {"LayerNormalization", layerNormalization},
    // broadcasting
    {"Add", broadcasting<addValues>},
    {"Sum", broadcasting<addValues>},
    {"Sub", broadcasting<subValues>},
    {"Mul", broadcasting<mulValues>},
    {"Div", broadcasting<divValues>},
    {"Mod", broadcasting<modValues>},
    {"Pow", broadcasting<powValues>},
    {"Max", broadcasting<maxValues>},
    {"Min", broadcasting<minValues>},
    {"Mean", broadcasting<nullptr>},
    {"Equal", broadcasting<equalValues>},
    {"Greater", broadcasting<greaterValues>},
    {"Less", broadcasting<lessValues>},
    {"GreaterOrEqual", broadcasting<greaterOrEqualValues>},
    {"LessOrEqual", broadcasting<lessOrEqualValues>},
    {"And", broadcasting<andValues>},
    {"Or", broadcasting<orValues>},
    {"Xor", broadcasting<xorValues>},
    {"BitShift", broadcasting<nullptr>},
    {"BitwiseAnd", broadcasting<nullptr>},
    {"BitwiseOr", broadcasting<nullptr>},
    {"BitwiseXor", broadcasting<nullptr>},
    {"Where", broadcasting<whereValues>},
};

} // namespace

std::span<const ShapeRule> elementwiseShapeRules() { return kRules; }

} // namespace headroom::detail
