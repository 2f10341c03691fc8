#pragma once
// The shape rules' contract: one function per ONNX op (families share a helper), registered by op type the way
// ONNX registers an inference function with each op schema (onnx/defs/*/defs.cc, TypeAndShapeInferenceFunction).
// The evaluator (shape_eval.cpp) looks a node's op up in the registry (shape_rules.cpp) and calls the rule; a
// rule reads its inputs' dims and small integer values through ShapeContext and writes its outputs with out().
// Adding an op is adding a function and one table entry in the family file it belongs to
// (shape_rules_elementwise.cpp, shape_rules_tensor.cpp, shape_rules_nn.cpp, shape_rules_sequence.cpp).
#include "headroom/shapes/shape_fit.h"

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace headroom::detail {

inline constexpr size_t kMaxValues = 1024; // small tensors whose values we track
using Dims = std::vector<int64_t>;
using Values = std::optional<std::vector<int64_t>>;

// Thrown by a rule: the node's outputs stay unknown with this reason.
struct Fail
{
    std::string reason;
    bool needsData = false; // a value we cannot compute, as opposed to an invalid graph
};

// Arithmetic the rules share; each throws Fail instead of overflowing or dividing by zero.
int64_t normAxis(int64_t axis, size_t rank);
std::optional<int64_t> numelOf(const Dims& d);
int64_t floorDiv(int64_t a, int64_t b);
int64_t add(int64_t a, int64_t b);
int64_t mul(int64_t a, int64_t b);
Dims broadcast(const Dims& a, const Dims& b); // numpy broadcasting (onnx/defs/shape_inference.h)
// Index into a broadcast input for output element `flat` of `out`.
size_t broadcastIndex(size_t flat, const Dims& out, const Dims& in);

// What a rule sees of the evaluation in progress: its inputs (dims, dtype, small integer values, sequences) and
// where it writes its outputs. The evaluator owns the state; rules only use these accessors.
class ShapeContext
{
public:
    // Sequence-typed tensors (SplitToSequence, SequenceConstruct, ...): their elements. The tensor itself is
    // sized as the sum of its elements (1-D), which is what the sequence holds in memory.
    using Seq = std::vector<std::pair<Dims, Values>>;

    int opset() const { return m_g.opset; }

    bool present(const Node& n, size_t i) const { return i < n.inputs.size() && n.inputs[i] >= 0; }
    // Inputs the node names itself (its subgraphs' outer-scope reads excluded).
    size_t explicitInputs(const Node& n) const { return n.inputs.size() - size_t(std::max(0, n.implicitInputs)); }
    const Dims& in(const Node& n, size_t i) const
    {
        if (!present(n, i))
            throw Fail{n.op + " is missing input " + std::to_string(i)};
        return m_r.dims[size_t(n.inputs[i])];
    }
    DType dt(const Node& n, size_t i) const
    {
        return present(n, i) ? m_r.dtype[size_t(n.inputs[i])] : DType::Undefined;
    }
    const Values& val(const Node& n, size_t i) const
    {
        static const Values none;
        return present(n, i) ? m_val[size_t(n.inputs[i])] : none;
    }
    const std::vector<int64_t>& needVal(const Node& n, size_t i, const char* what) const
    {
        const Values& v = val(n, i);
        if (!v)
            throw Fail{std::string(what) + " of " + n.op + " is computed from data Headroom cannot evaluate", true};
        return *v;
    }
    // Reduce/Squeeze/Unsqueeze axes: an attribute before `sinceOpset`, an input from it on.
    std::vector<int64_t> axesOf(const Node& n, size_t inputIdx, int sinceOpset) const
    {
        if (opset() < sinceOpset || !present(n, inputIdx))
            return n.attrInts("axes");
        return needVal(n, inputIdx, "axes");
    }
    void out(const Node& n, size_t i, Dims d, Values v = std::nullopt)
    {
        if (i < n.outputs.size() && n.outputs[i] >= 0) {
            if (v && v->size() > kMaxValues)
                v.reset();
            set(n.outputs[i], std::move(d), std::move(v));
        }
    }

    // Sequences.
    const Seq* seqOf(const Node& n, size_t i) const
    {
        return present(n, i) && m_seq[size_t(n.inputs[i])] ? &*m_seq[size_t(n.inputs[i])] : nullptr;
    }
    const Seq& seqIn(const Node& n, size_t i) const;
    size_t seqPos(const Node& n, size_t i, size_t size, bool insert) const;
    void setSeq(const Node& n, size_t o, Seq elems);

protected:
    ShapeContext(const ShapeGraph& g, const Bindings& b) : m_g(g), m_b(b) {}
    void set(int t, Dims d, Values v);

    const ShapeGraph& m_g;
    const Bindings& m_b;
    EvalResult m_r;
    std::vector<char> m_has; // rank known (dims may hold -1)
    std::vector<Values> m_val;
    std::vector<std::optional<Seq>> m_seq;
};

// A rule: true when it sized the node's outputs, false when it leaves them to ONNX's inference; throws Fail
// when the node cannot be sized.
using ShapeRuleFn = bool (*)(ShapeContext&, const Node&);

struct ShapeRule
{
    std::string_view op;
    ShapeRuleFn fn;
    std::string_view domain = {}; // "" is ai.onnx
};

// The families' tables, collected by the registry.
std::span<const ShapeRule> elementwiseShapeRules();
std::span<const ShapeRule> tensorShapeRules();
std::span<const ShapeRule> nnShapeRules();
std::span<const ShapeRule> sequenceShapeRules();

// Output o's element type where the file does not declare it (o: 0 for the first output, 1 for the others);
// input 0's type unless the op's entry in shape_rules_types.cpp says otherwise.
DType outputType(const ShapeContext& c, const Node& n, size_t o);

// The rule for this op, or nullptr ("ai.onnx" is the default domain "").
ShapeRuleFn findShapeRule(std::string_view op, std::string_view domain);

} // namespace headroom::detail
