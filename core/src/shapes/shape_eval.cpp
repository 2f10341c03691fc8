// One concrete pass over the graph: output dims of every node and the values of small integer tensors
// (Shape -> Gather -> Concat -> Reshape chains that exporters build at run time). Ops without a rule here go
// to ONNX's own inference for that single node.
#include "import/loader_internal.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <unordered_set>

namespace headroom::detail {
namespace {

constexpr size_t kMaxValues = 1024; // small tensors whose values we track
using Dims = std::vector<int64_t>;
using Values = std::optional<std::vector<int64_t>>;

struct Fail {
    std::string reason;
    bool needsData = false; // a value we cannot compute, as opposed to an invalid graph
};

int64_t normAxis(int64_t axis, size_t rank)
{
    const auto r = static_cast<int64_t>(rank);
    if (axis < -r || axis >= r)
        throw Fail{"axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank)};
    return axis < 0 ? axis + r : axis;
}

std::optional<int64_t> numelOf(const Dims& d)
{
    int64_t n = 1;
    for (int64_t x : d) {
        if (x < 0)
            return std::nullopt;
        auto p = checkedMul(n, x);
        if (!p)
            return std::nullopt;
        n = *p;
    }
    return n;
}

int64_t floorDiv(int64_t a, int64_t b)
{
    if (b == 0)
        throw Fail{"division by zero in a shape computation"};
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        --q;
    return q;
}

int64_t add(int64_t a, int64_t b)
{
    auto r = checkedAdd(a, b);
    if (!r)
        throw Fail{"64-bit overflow in a shape computation"};
    return *r;
}

int64_t mul(int64_t a, int64_t b)
{
    auto r = checkedMul(a, b);
    if (!r)
        throw Fail{"64-bit overflow in a shape computation"};
    return *r;
}

Dims broadcast(const Dims& a, const Dims& b)
{
    const size_t r = std::max(a.size(), b.size());
    Dims out(r);
    for (size_t i = 0; i < r; ++i) {
        const int64_t x = i + a.size() >= r ? a[i + a.size() - r] : 1;
        const int64_t y = i + b.size() >= r ? b[i + b.size() - r] : 1;
        if (x == y || y == 1)
            out[i] = x;
        else if (x == 1)
            out[i] = y;
        else if (x < 0 || y < 0)
            out[i] = -1;
        else
            throw Fail{"cannot broadcast dims " + std::to_string(x) + " and " + std::to_string(y)};
    }
    return out;
}

// Index into a broadcast input for output element `flat` of `out`.
size_t broadcastIndex(size_t flat, const Dims& out, const Dims& in)
{
    size_t idx = 0, stride = 1;
    for (size_t k = out.size(); k-- > 0;) {
        const auto od = static_cast<size_t>(out[k]);
        const size_t coord = flat % od;
        flat /= od;
        const size_t ik = k + in.size();
        if (ik >= out.size()) {
            const size_t id = static_cast<size_t>(in[ik - out.size()]);
            idx += (id == 1 ? 0 : coord) * stride;
            stride *= id;
        }
    }
    return idx;
}

bool isFloatDT(DType t)
{
    return isFloating(t);
}

class Evaluator
{
public:
    Evaluator(const ShapeGraph& g, const Bindings& b) : m_g(g), m_b(b) {}

    EvalResult run()
    {
        const size_t nt = m_g.dtype.size();
        m_r.dims.assign(nt, {});
        m_r.known.assign(nt, 0);
        m_r.cause.assign(nt, -1);
        m_r.reason.assign(m_g.nodes.size(), {});
        m_r.dtype = m_g.dtype;
        m_has.assign(nt, 0);
        m_val.assign(nt, std::nullopt);
        m_seq.assign(nt, std::nullopt);
        for (size_t t = 0; t < nt; ++t) {
            if (m_g.isStored[t]) {
                set(static_cast<int>(t), m_g.storedDims[t], m_g.storedValue[t]);
            } else if (m_g.isInput[t] && m_g.inputHasShape[t]) {
                Dims d;
                for (const InputDim& id : m_g.inputDims[t])
                    d.push_back(id.symbol >= 0 && size_t(id.symbol) < m_b.size() ? m_b[size_t(id.symbol)] : id.value);
                set(static_cast<int>(t), std::move(d), std::nullopt);
            }
        }
        for (size_t k = 0; k < m_g.nodes.size(); ++k) {
            m_k = k;
            const Node& n = m_g.nodes[k];
            if (n.op == "Constant" && n.domain.empty())
                continue;
            std::string why;
            bool done = false, invalid = false;
            const int blocked = firstUnknownInput(n);
            if (blocked < 0) {
                try {
                    if (!n.hasSubgraphs)
                        done = rule(n);
                } catch (const Fail& f) {
                    why = f.reason;
                    invalid = !f.needsData;
                }
                if (!done && !invalid && m_g.fallback[k])
                    done = onnxInfer(n, *m_g.fallback[k], why);
            }
            for (int out : n.outputs) {
                if (out < 0)
                    continue;
                const std::optional<Dims> decl = declared(out);
                if (decl && done && m_has[size_t(out)] && !m_seq[size_t(out)])
                    checkDeclared(out, *decl);
                if (m_r.known[size_t(out)])
                    continue;
                if (decl) {
                    set(out, *decl, std::nullopt);
                    m_r.declaredUsed.push_back(out);
                    continue;
                }
                if (blocked >= 0) {
                    m_r.cause[size_t(out)] = m_r.cause[size_t(blocked)] >= 0 ? m_r.cause[size_t(blocked)] : static_cast<int>(k);
                    if (m_r.cause[size_t(blocked)] < 0 && m_r.reason[k].empty())
                        m_r.reason[k] = "input '" + std::to_string(blocked) + "' has no known shape";
                } else {
                    m_r.cause[size_t(out)] = static_cast<int>(k);
                    if (m_r.reason[k].empty())
                        m_r.reason[k] = why.empty() ? (n.domain.empty() ? "no shape rule for " + n.op + " and ONNX's inference left it unknown"
                                                                        : "custom op " + n.domain + "::" + n.op + " has no shape rule")
                                                    : why;
                }
            }
            for (int out : n.outputs)
                if (out >= 0 && m_r.dtype[size_t(out)] == DType::Undefined)
                    m_r.dtype[size_t(out)] = outType(n, 0 < n.outputs.size() && n.outputs[0] == out ? 0 : 1);
        }
        return std::move(m_r);
    }

private:
    const ShapeGraph& m_g;
    const Bindings& m_b;
    EvalResult m_r;
    std::vector<char> m_has; // rank known (dims may hold -1)
    std::vector<Values> m_val;
    // Sequence-typed tensors (SplitToSequence, SequenceConstruct, ...): their elements. The tensor itself is
    // sized as the sum of its elements (1-D), which is what the sequence holds in memory.
    using Seq = std::vector<std::pair<Dims, Values>>;
    std::vector<std::optional<Seq>> m_seq;
    size_t m_k = 0;

    // The file's value_info dims at these bindings (static, or expressions of the symbols).
    std::optional<Dims> declared(int t) const
    {
        if (m_g.declaredDims[size_t(t)])
            return *m_g.declaredDims[size_t(t)];
        if (size_t(t) >= m_g.declaredFormula.size() || !m_g.declaredFormula[size_t(t)])
            return std::nullopt;
        Dims d;
        for (const DimFormula& f : *m_g.declaredFormula[size_t(t)]) {
            const auto v = f.eval(m_b);
            if (!v || *v < 0)
                return std::nullopt;
            d.push_back(*v);
        }
        return d;
    }

    // Inference wins where both know a dim; the declaration fills the dims inference left open.
    void checkDeclared(int t, const Dims& decl)
    {
        Dims& d = m_r.dims[size_t(t)];
        if (d.size() != decl.size()) {
            m_r.disagree.push_back(t);
            return;
        }
        bool filled = false, differs = false;
        for (size_t i = 0; i < d.size(); ++i) {
            if (d[i] < 0) {
                d[i] = decl[i];
                filled = true;
            } else if (d[i] != decl[i]) {
                differs = true;
            }
        }
        if (differs)
            m_r.disagree.push_back(t);
        if (filled && !differs) {
            bool full = true;
            for (int64_t x : d)
                full = full && x >= 0;
            m_r.known[size_t(t)] = full;
            if (full)
                m_r.declaredUsed.push_back(t);
        }
    }

    void set(int t, Dims d, Values v)
    {
        bool full = true;
        for (int64_t x : d)
            full = full && x >= 0;
        if (v && (!full || numelOf(d).value_or(-1) != static_cast<int64_t>(v->size())))
            v.reset();
        m_r.dims[size_t(t)] = std::move(d);
        m_r.known[size_t(t)] = full;
        m_has[size_t(t)] = 1;
        m_val[size_t(t)] = std::move(v);
        m_seq[size_t(t)].reset();
        m_r.cause[size_t(t)] = -1;
    }

    void setSeq(const Node& n, size_t o, Seq elems)
    {
        if (o >= n.outputs.size() || n.outputs[o] < 0)
            return;
        int64_t total = 0;
        for (const auto& [d, v] : elems) {
            const auto ne = numelOf(d);
            if (!ne)
                throw Fail{"an element of the sequence has an unknown shape"};
            total = add(total, *ne);
        }
        for (auto& e : elems)
            if (e.second && e.second->size() > kMaxValues)
                e.second.reset();
        set(n.outputs[o], {total}, std::nullopt);
        m_seq[size_t(n.outputs[o])] = std::move(elems);
    }
    const Seq& seqIn(const Node& n, size_t i) const
    {
        if (!present(n, i) || !m_seq[size_t(n.inputs[i])])
            throw Fail{n.op + ": input " + std::to_string(i) + " is not a sequence Headroom could follow"};
        return *m_seq[size_t(n.inputs[i])];
    }
    // Position operand of SequenceAt/Insert/Erase: negative counts from the end.
    size_t seqPos(const Node& n, size_t i, size_t size, bool insert) const
    {
        int64_t p = needVal(n, i, "the position").at(0);
        const auto sz = static_cast<int64_t>(size);
        if (p < 0)
            p += sz;
        if (p < 0 || p > sz || (!insert && p == sz))
            throw Fail{n.op + " position " + std::to_string(p) + " out of range for a sequence of " + std::to_string(size)};
        return static_cast<size_t>(p);
    }

    int firstUnknownInput(const Node& n) const
    {
        const size_t explicitCount = n.inputs.size() - size_t(std::max(0, n.implicitInputs));
        for (size_t i = 0; i < explicitCount; ++i) {
            const int t = n.inputs[i];
            if (t >= 0 && !m_r.known[size_t(t)])
                return t;
        }
        return -1;
    }

    // --- accessors -------------------------------------------------------------------------------------
    bool present(const Node& n, size_t i) const { return i < n.inputs.size() && n.inputs[i] >= 0; }
    const Dims& in(const Node& n, size_t i) const
    {
        if (!present(n, i))
            throw Fail{n.op + " is missing input " + std::to_string(i)};
        return m_r.dims[size_t(n.inputs[i])];
    }
    DType dt(const Node& n, size_t i) const { return present(n, i) ? m_r.dtype[size_t(n.inputs[i])] : DType::Undefined; }
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
    void out(const Node& n, size_t i, Dims d, Values v = std::nullopt)
    {
        if (i < n.outputs.size() && n.outputs[i] >= 0) {
            if (v && v->size() > kMaxValues)
                v.reset();
            set(n.outputs[i], std::move(d), std::move(v));
        }
    }
    DType outType(const Node& n, size_t o) const
    {
        const std::string& op = n.op;
        if (op == "SequenceLength")
            return DType::Int64;
        if (op == "HannWindow" || op == "HammingWindow" || op == "BlackmanWindow")
            return dtypeFromOnnx(static_cast<int32_t>(n.attrInt("output_datatype", 1)));
        if (op == "OptionalHasElement")
            return DType::Bool;
        if (op == "SequenceEmpty")
            return dtypeFromOnnx(static_cast<int32_t>(n.attrInt("dtype", 1)));
        if (op == "Shape" || op == "Size" || op == "NonZero" || op == "ArgMax" || op == "ArgMin"
            || op == "NonMaxSuppression" || op == "Unique")
            return DType::Int64;
        if (op == "Equal" || op == "Greater" || op == "Less" || op == "GreaterOrEqual" || op == "LessOrEqual"
            || op == "Not" || op == "And" || op == "Or" || op == "Xor" || op == "IsNaN" || op == "IsInf")
            return DType::Bool;
        if (op == "Cast")
            return dtypeFromOnnx(static_cast<int32_t>(n.attrInt("to", 1)));
        if (op == "CastLike")
            return dt(n, 1);
        if (op == "ConstantOfShape") {
            const Attr* a = n.attr("value");
            return a && a->kind == Attr::Kind::Tensor ? dtypeFromOnnx(static_cast<int32_t>(a->i)) : DType::Float32;
        }
        if ((op == "TopK" || op == "MaxPool") && o == 1)
            return DType::Int64;
        if (op == "Dropout" && o == 1)
            return DType::Bool;
        if (op == "RandomNormal" || op == "RandomUniform")
            return dtypeFromOnnx(static_cast<int32_t>(n.attrInt("dtype", 1)));
        if (op == "RandomNormalLike" || op == "RandomUniformLike" || op == "EyeLike")
            return n.attr("dtype") ? dtypeFromOnnx(static_cast<int32_t>(n.attrInt("dtype", 1))) : dt(n, 0);
        if (op == "DequantizeLinear")
            return present(n, 1) ? dt(n, 1) : DType::Float32;
        if (op == "QuantizeLinear")
            return present(n, 2) ? dt(n, 2) : DType::UInt8;
        if (op == "DynamicQuantizeLinear")
            return o == 1 ? DType::Float32 : DType::UInt8;
        if (op == "MatMulInteger" || op == "ConvInteger")
            return DType::Int32;
        if (op == "Where")
            return dt(n, 1);
        if (op == "OneHot")
            return dt(n, 2);
        if (op == "Multinomial")
            return dtypeFromOnnx(static_cast<int32_t>(n.attrInt("dtype", 6)));
        return dt(n, 0);
    }

    std::vector<int64_t> axesOf(const Node& n, size_t inputIdx, int sinceOpset)
    {
        if (m_g.opset < sinceOpset || !present(n, inputIdx))
            return n.attrInts("axes");
        return needVal(n, inputIdx, "axes");
    }

    // --- rules -----------------------------------------------------------------------------------------
    bool rule(const Node& n);
    bool elementwise(const Node& n);
    bool convLike(const Node& n, bool pool);
    bool slice(const Node& n);
    bool sequence(const Node& n);
    bool einsum(const Node& n);
    bool onnxInfer(const Node& n, const onnx::NodeProto& proto, std::string& why);
};

#define OP(name) (op == name)

bool Evaluator::elementwise(const Node& n)
{
    const std::string& op = n.op;
    Dims d = in(n, 0);
    size_t count = 0;
    for (size_t i = 0; i < n.inputs.size() - size_t(std::max(0, n.implicitInputs)); ++i)
        if (present(n, i)) {
            d = count++ == 0 ? in(n, i) : broadcast(d, in(n, i));
        }
    Values v;
    auto total = numelOf(d);
    bool allVals = total && size_t(*total) <= kMaxValues;
    for (size_t i = 0; allVals && i < n.inputs.size(); ++i)
        allVals = present(n, i) && val(n, i).has_value();
    if (allVals && n.inputs.size() >= 1 && n.inputs.size() <= 3) {
        const bool fl = isFloatDT(dt(n, 0));
        std::vector<int64_t> r(static_cast<size_t>(*total));
        bool ok = true;
        for (size_t e = 0; e < r.size() && ok; ++e) {
            auto at = [&](size_t i) { return (*val(n, i))[broadcastIndex(e, d, in(n, i))]; };
            const int64_t a = at(0);
            const int64_t b = n.inputs.size() > 1 ? at(1) : 0;
            if (OP("Add") || OP("Sum")) r[e] = add(a, b);
            else if (OP("Sub")) r[e] = add(a, -b);
            else if (OP("Mul")) r[e] = mul(a, b);
            else if (OP("Div")) {
                if (b == 0) { ok = false; break; }
                if (fl && a % b != 0) { ok = false; break; }
                r[e] = a / b;
            } else if (OP("Mod")) {
                if (b == 0) { ok = false; break; }
                r[e] = n.attrInt("fmod", 0) ? a % b : a - floorDiv(a, b) * b;
            } else if (OP("Max")) r[e] = std::max(a, b);
            else if (OP("Min")) r[e] = std::min(a, b);
            else if (OP("Equal")) r[e] = a == b;
            else if (OP("Greater")) r[e] = a > b;
            else if (OP("Less")) r[e] = a < b;
            else if (OP("GreaterOrEqual")) r[e] = a >= b;
            else if (OP("LessOrEqual")) r[e] = a <= b;
            else if (OP("And")) r[e] = a && b;
            else if (OP("Or")) r[e] = a || b;
            else if (OP("Xor")) r[e] = (a != 0) != (b != 0);
            else if (OP("Where")) r[e] = a ? b : at(2);
            else if (OP("Pow")) {
                if (b < 0 || b > 62) { ok = false; break; }
                int64_t p = 1;
                for (int64_t k = 0; k < b; ++k) p = mul(p, a);
                r[e] = p;
            } else { ok = false; }
        }
        if (ok)
            v = std::move(r);
    }
    out(n, 0, std::move(d), std::move(v));
    return true;
}

bool Evaluator::convLike(const Node& n, bool pool)
{
    const std::string& op = n.op;
    const Dims& x = in(n, 0);
    if (x.size() < 3)
        throw Fail{op + " needs an input of rank >= 3, got " + std::to_string(x.size())};
    const size_t sp = x.size() - 2;
    Dims kernel = n.attrInts("kernel_shape");
    int64_t channels = x[1];
    if (!pool) {
        const Dims& w = in(n, 1);
        if (w.size() != x.size())
            throw Fail{op + " weight rank " + std::to_string(w.size()) + " does not match input rank"};
        if (kernel.empty())
            kernel.assign(w.begin() + 2, w.end());
        channels = OP("ConvTranspose") ? mul(w[1], n.attrInt("group", 1)) : w[0];
    }
    if (kernel.size() != sp)
        throw Fail{op + " kernel_shape has " + std::to_string(kernel.size()) + " dims for " + std::to_string(sp) + " spatial dims"};
    Dims strides = n.attrInts("strides"), dil = n.attrInts("dilations"), pads = n.attrInts("pads");
    strides.resize(sp, 1);
    dil.resize(sp, 1);
    pads.resize(2 * sp, 0);
    const std::string autoPad = n.attrString("auto_pad", "NOTSET");
    const bool ceilMode = n.attrInt("ceil_mode", 0) != 0;
    Dims o{x[0], channels};
    for (size_t i = 0; i < sp; ++i) {
        const int64_t in_ = x[2 + i], k = kernel[i], s = strides[i], d = dil[i];
        if (s <= 0 || d <= 0 || k <= 0)
            throw Fail{op + " has a non-positive kernel, stride or dilation"};
        const int64_t ek = add(mul(d, k - 1), 1);
        int64_t r = 0;
        if (OP("ConvTranspose")) {
            Dims outPad = n.attrInts("output_padding");
            outPad.resize(sp, 0);
            Dims outShape = n.attrInts("output_shape");
            if (outShape.size() == sp)
                r = outShape[i];
            else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")
                r = mul(in_, s);
            else
                r = add(add(mul(s, in_ - 1), outPad[i]), ek - pads[i] - pads[i + sp]);
        } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
            r = floorDiv(in_ + s - 1, s);
        } else if (autoPad == "VALID") {
            r = floorDiv(in_ - ek, s) + 1;
        } else {
            const int64_t span = add(add(in_, pads[i] + pads[i + sp]), -ek);
            r = ceilMode ? floorDiv(span + s - 1, s) + 1 : floorDiv(span, s) + 1;
            if (ceilMode && (r - 1) * s >= in_ + pads[i])
                --r;
        }
        if (r < 0)
            throw Fail{op + " output size " + std::to_string(r) + " is negative (input " + std::to_string(in_) + " too small)"};
        o.push_back(r);
    }
    out(n, 0, o);
    if (n.outputs.size() > 1)
        out(n, 1, o);
    return true;
}

bool Evaluator::slice(const Node& n)
{
    const Dims& x = in(n, 0);
    Dims starts, ends, axes, steps;
    if (m_g.opset < 10) {
        starts = n.attrInts("starts");
        ends = n.attrInts("ends");
        axes = n.attrInts("axes");
    } else {
        starts = needVal(n, 1, "starts");
        ends = needVal(n, 2, "ends");
        if (present(n, 3))
            axes = needVal(n, 3, "axes");
        if (present(n, 4))
            steps = needVal(n, 4, "steps");
    }
    if (axes.empty())
        for (size_t i = 0; i < starts.size(); ++i)
            axes.push_back(static_cast<int64_t>(i));
    steps.resize(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size())
        throw Fail{"Slice starts/ends/axes have different lengths"};
    Dims o = x;
    std::vector<int64_t> first(x.size(), 0), step(x.size(), 1);
    for (size_t i = 0; i < starts.size(); ++i) {
        const auto a = static_cast<size_t>(normAxis(axes[i], x.size()));
        const int64_t dim = x[a], st = steps[i];
        if (st == 0)
            throw Fail{"Slice step is 0"};
        auto clampIdx = [&](int64_t v, bool forStart) {
            if (v < 0)
                v = v < -dim ? (st > 0 ? 0 : -1) : v + dim;
            if (st > 0)
                return std::clamp<int64_t>(v, 0, dim);
            return std::clamp<int64_t>(v, -1, dim - 1) + (forStart ? 0 : 0);
        };
        const int64_t s = clampIdx(starts[i], true), e = clampIdx(ends[i], false);
        const int64_t len = st > 0 ? std::max<int64_t>(0, floorDiv(e - s + st - 1, st))
                                   : std::max<int64_t>(0, floorDiv(s - e + (-st) - 1, -st));
        o[a] = len;
        first[a] = s;
        step[a] = st;
    }
    Values v;
    if (x.size() == 1 && val(n, 0)) {
        std::vector<int64_t> r;
        for (int64_t i = 0; i < o[0]; ++i)
            r.push_back((*val(n, 0))[size_t(first[0] + i * step[0])]);
        v = std::move(r);
    }
    out(n, 0, std::move(o), std::move(v));
    return true;
}

// ONNX's sequence ops (opset 11+), which torch.onnx's dynamo exporter emits for torch.split/chunk/unbind
// when its optimizer does not fold them (optimize=False): onnx/defs/sequence/defs.cc.
bool Evaluator::sequence(const Node& n)
{
    const std::string& op = n.op;
    if (OP("SequenceEmpty")) {
        setSeq(n, 0, {});
        return true;
    }
    if (OP("SequenceConstruct")) {
        Seq s;
        for (size_t i = 0; i < n.inputs.size() - size_t(std::max(0, n.implicitInputs)); ++i)
            s.emplace_back(in(n, i), val(n, i));
        setSeq(n, 0, std::move(s));
        return true;
    }
    if (OP("SplitToSequence")) {
        const Dims& x = in(n, 0);
        if (x.empty())
            throw Fail{"SplitToSequence of a scalar"};
        const auto axis = static_cast<size_t>(normAxis(n.attrInt("axis", 0), x.size()));
        const bool keep = n.attrInt("keepdims", 1) != 0;
        // One entry per element: a sequence of millions of tensors (unbinding a huge dim) is not followed.
        constexpr int64_t kMaxElements = 1 << 16;
        Dims sizes;
        bool squeeze = false;
        if (!present(n, 1)) {
            if (x[axis] > kMaxElements)
                throw Fail{"SplitToSequence into " + std::to_string(x[axis]) + " tensors", true};
            sizes.assign(size_t(std::max<int64_t>(0, x[axis])), 1);
            squeeze = !keep;
        } else {
            const auto& sp = needVal(n, 1, "split");
            if (in(n, 1).empty()) { // a scalar: chunks of that size, the last one shorter
                if (sp.at(0) <= 0)
                    throw Fail{"SplitToSequence split must be positive"};
                if (x[axis] / sp[0] > kMaxElements)
                    throw Fail{"SplitToSequence into more than " + std::to_string(kMaxElements) + " tensors", true};
                for (int64_t left = x[axis]; left > 0; left -= sp[0])
                    sizes.push_back(std::min(left, sp[0]));
            } else {
                sizes = sp;
                int64_t sum = 0;
                for (int64_t v : sizes)
                    sum = add(sum, v);
                if (sum != x[axis])
                    throw Fail{"SplitToSequence split sums to " + std::to_string(sum) + ", the axis has " + std::to_string(x[axis])};
            }
        }
        Seq s;
        int64_t off = 0;
        for (int64_t len : sizes) {
            Dims d = x;
            Values v;
            if (x.size() == 1 && val(n, 0) && off + len <= static_cast<int64_t>(val(n, 0)->size()))
                v = std::vector<int64_t>(val(n, 0)->begin() + off, val(n, 0)->begin() + off + len);
            if (squeeze)
                d.erase(d.begin() + long(axis));
            else
                d[axis] = len;
            s.emplace_back(std::move(d), std::move(v));
            off += len;
        }
        setSeq(n, 0, std::move(s));
        return true;
    }
    if (OP("SequenceAt")) {
        const Seq& s = seqIn(n, 0);
        const auto& e = s[seqPos(n, 1, s.size(), false)];
        out(n, 0, e.first, e.second);
        return true;
    }
    if (OP("SequenceLength")) {
        out(n, 0, {}, std::vector<int64_t>{static_cast<int64_t>(seqIn(n, 0).size())});
        return true;
    }
    if (OP("SequenceInsert")) {
        Seq s = seqIn(n, 0);
        if (s.size() >= size_t(1) << 16)
            throw Fail{"SequenceInsert beyond 65536 tensors", true};
        const size_t p = present(n, 2) ? seqPos(n, 2, s.size(), true) : s.size();
        s.insert(s.begin() + long(p), {in(n, 1), val(n, 1)});
        setSeq(n, 0, std::move(s));
        return true;
    }
    if (OP("SequenceErase")) {
        Seq s = seqIn(n, 0);
        if (s.empty())
            throw Fail{"SequenceErase on an empty sequence"};
        const size_t p = present(n, 1) ? seqPos(n, 1, s.size(), false) : s.size() - 1;
        s.erase(s.begin() + long(p));
        setSeq(n, 0, std::move(s));
        return true;
    }
    if (OP("ConcatFromSequence")) {
        const Seq& s = seqIn(n, 0);
        if (s.empty())
            throw Fail{"ConcatFromSequence of an empty sequence"};
        const bool newAxis = n.attrInt("new_axis", 0) != 0;
        const Dims& first = s[0].first;
        const size_t rank = first.size() + (newAxis ? 1 : 0);
        const auto axis = static_cast<size_t>(normAxis(n.attrInt("axis", 0), rank));
        Dims o = first;
        if (newAxis)
            o.insert(o.begin() + long(axis), static_cast<int64_t>(s.size()));
        bool vals = first.size() <= 1;
        std::vector<int64_t> v;
        for (size_t i = 0; i < s.size(); ++i) {
            if (s[i].first.size() != first.size())
                throw Fail{"ConcatFromSequence elements have different ranks"};
            if (!newAxis && i > 0)
                o[axis] = add(o[axis], s[i].first[axis]);
            if (s[i].second)
                v.insert(v.end(), s[i].second->begin(), s[i].second->end());
            else
                vals = false;
        }
        out(n, 0, std::move(o), vals ? Values(std::move(v)) : std::nullopt);
        return true;
    }
    // Optional (opset 15): an optional tensor is sized as the tensor it holds.
    if (OP("Optional") || OP("OptionalGetElement")) {
        if (!present(n, 0))
            throw Fail{op + " without an element", true};
        if (m_seq[size_t(n.inputs[0])])
            setSeq(n, 0, *m_seq[size_t(n.inputs[0])]);
        else
            out(n, 0, in(n, 0), val(n, 0));
        return true;
    }
    if (OP("OptionalHasElement")) {
        out(n, 0, {}, std::vector<int64_t>{present(n, 0) ? 1 : 0});
        return true;
    }
    return false; // SequenceMap has a body: ONNX's inference or the file's declarations
}

bool Evaluator::einsum(const Node& n)
{
    std::string eq = n.attrString("equation");
    eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
    const size_t arrow = eq.find("->");
    const std::string lhs = eq.substr(0, arrow);
    std::vector<std::string> terms;
    for (size_t p = 0;;) {
        const size_t c = lhs.find(',', p);
        terms.push_back(lhs.substr(p, c == std::string::npos ? std::string::npos : c - p));
        if (c == std::string::npos)
            break;
        p = c + 1;
    }
    if (terms.size() + size_t(std::max(0, n.implicitInputs)) != n.inputs.size())
        throw Fail{"Einsum equation does not match its inputs"};
    int64_t letter[128];
    std::fill(std::begin(letter), std::end(letter), -2);
    std::unordered_set<char> seenTwice;
    std::string order;
    Dims ell;
    for (size_t t = 0; t < terms.size(); ++t) {
        const Dims& d = in(n, t);
        const std::string& s = terms[t];
        const size_t dots = s.find("...");
        const size_t named = s.size() - (dots == std::string::npos ? 0 : 3);
        if (named > d.size())
            throw Fail{"Einsum term '" + s + "' has more letters than its input has dims"};
        const size_t nEll = d.size() - named;
        size_t di = 0;
        for (size_t c = 0; c < s.size(); ++c) {
            if (s[c] == '.') {
                ell = broadcast(ell, Dims(d.begin() + long(di), d.begin() + long(di + nEll)));
                di += nEll;
                c += 2;
                continue;
            }
            const auto ch = static_cast<unsigned char>(s[c]) & 127u;
            if (letter[ch] == -2) {
                order += static_cast<char>(ch);
                letter[ch] = d[di];
            } else {
                seenTwice.insert(static_cast<char>(ch));
                if (letter[ch] == 1)
                    letter[ch] = d[di];
            }
            ++di;
        }
    }
    std::string rhs;
    if (arrow != std::string::npos) {
        rhs = eq.substr(arrow + 2);
    } else {
        std::string once;
        for (char c : order)
            if (!seenTwice.count(c))
                once += c;
        std::sort(once.begin(), once.end());
        rhs = (ell.empty() ? "" : "...") + once;
    }
    Dims o;
    for (size_t c = 0; c < rhs.size(); ++c) {
        if (rhs[c] == '.') {
            o.insert(o.end(), ell.begin(), ell.end());
            c += 2;
            continue;
        }
        const auto ch = static_cast<unsigned char>(rhs[c]) & 127u;
        if (letter[ch] == -2)
            throw Fail{"Einsum output letter not in inputs"};
        o.push_back(letter[ch]);
    }
    out(n, 0, std::move(o));
    return true;
}

bool Evaluator::rule(const Node& n)
{
    const std::string& op = n.op;
    if (!n.domain.empty() && n.domain != "ai.onnx")
        return false;
    // Same shape as input 0.
    static const std::unordered_set<std::string> same = {
        "Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Log", "Sqrt", "Neg", "Abs", "Reciprocal", "Floor", "Ceil", "Round",
        "Sign", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Softplus",
        "Softsign", "Elu", "Selu", "LeakyRelu", "ThresholdedRelu", "HardSigmoid", "HardSwish", "Mish", "Gelu", "Celu",
        "Clip", "Softmax", "LogSoftmax", "Hardmax", "Identity", "IsNaN", "IsInf", "Not", "LRN",
        "MeanVarianceNormalization", "LpNormalization", "InstanceNormalization", "CumSum", "Shrink", "Trilu",
        "ReverseSequence", "PRelu", "QuantizeLinear", "DequantizeLinear", "Cast", "CastLike", "BitwiseNot",
        "RandomNormalLike", "RandomUniformLike", "EyeLike", "Bernoulli", "Dropout", "GroupNormalization",
        "BatchNormalization", "LayerNormalization", "Scatter", "ScatterElements", "ScatterND", "Einsum_", "Det_",
        "RMSNormalization", "RotaryEmbedding"};
    static const std::unordered_set<std::string> binary = {
        "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Equal", "Greater", "Less",
        "GreaterOrEqual", "LessOrEqual", "And", "Or", "Xor", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Where"};
    if (binary.count(op))
        return elementwise(n);
    if (same.count(op)) {
        const Dims& x = in(n, 0);
        Values v;
        if (OP("Identity") || OP("Cast") || OP("CastLike"))
            v = val(n, 0);
        else if ((OP("Neg") || OP("Abs") || OP("Not")) && val(n, 0)) {
            v = *val(n, 0);
            for (int64_t& e : *v)
                e = OP("Neg") ? -e : OP("Abs") ? std::llabs(e) : !e;
        }
        if (v && OP("Cast") && dtypeFromOnnx(static_cast<int32_t>(n.attrInt("to", 1))) == DType::Bool)
            for (int64_t& e : *v)
                e = e != 0;
        out(n, 0, x, std::move(v));
        if (OP("Dropout"))
            out(n, 1, x);
        if (OP("BatchNormalization") && n.outputs.size() > 1) {
            out(n, 1, {x.size() > 1 ? x[1] : 1});
            out(n, 2, {x.size() > 1 ? x[1] : 1});
        }
        if (OP("LayerNormalization") && n.outputs.size() > 1) {
            const auto axis = static_cast<size_t>(normAxis(n.attrInt("axis", -1), x.size()));
            Dims s = x;
            for (size_t i = axis; i < s.size(); ++i)
                s[i] = 1;
            out(n, 1, s);
            out(n, 2, s);
        }
        return true;
    }
    if (OP("Shape")) {
        const Dims& x = in(n, 0);
        const auto r = static_cast<int64_t>(x.size());
        int64_t s = n.attrInt("start", 0), e = n.attrInt("end", r);
        if (s < 0) s += r;
        if (e < 0) e += r;
        s = std::clamp<int64_t>(s, 0, r);
        e = std::clamp<int64_t>(e, s, r);
        out(n, 0, {e - s}, std::vector<int64_t>(x.begin() + s, x.begin() + e));
        return true;
    }
    if (OP("Size")) {
        auto ne = numelOf(in(n, 0));
        out(n, 0, {}, ne ? Values(std::vector<int64_t>{*ne}) : std::nullopt);
        return true;
    }
    if (OP("ConstantOfShape")) {
        const auto& s = needVal(n, 0, "shape");
        for (int64_t d : s)
            if (d < 0)
                throw Fail{"ConstantOfShape with a negative dim"};
        const Attr* a = n.attr("value");
        const int64_t fill = a && !a->floats.empty() ? static_cast<int64_t>(a->floats[0]) : 0;
        auto ne = numelOf(s);
        Values v;
        if (ne && size_t(*ne) <= kMaxValues)
            v = std::vector<int64_t>(size_t(*ne), fill);
        out(n, 0, s, std::move(v));
        return true;
    }
    if (OP("Reshape")) {
        const Dims& x = in(n, 0);
        const auto& target = needVal(n, 1, "the target shape");
        const bool allowZero = n.attrInt("allowzero", 0) != 0;
        Dims o;
        int infer = -1;
        int64_t known = 1;
        for (size_t i = 0; i < target.size(); ++i) {
            int64_t d = target[i];
            if (d == 0 && !allowZero) {
                if (i >= x.size())
                    throw Fail{"Reshape copies dim " + std::to_string(i) + " that the input does not have"};
                d = x[i];
            }
            if (d == -1) {
                if (infer >= 0)
                    throw Fail{"Reshape target has two -1 dims"};
                infer = static_cast<int>(i);
            } else if (d < -1) {
                throw Fail{"Reshape target has dim " + std::to_string(d)};
            } else {
                known = mul(known, d);
            }
            o.push_back(d);
        }
        auto total = numelOf(x);
        if (!total)
            throw Fail{"Reshape input size overflows"};
        if (infer >= 0) {
            if (known == 0 || *total % known != 0)
                throw Fail{"Reshape cannot infer -1: " + std::to_string(*total) + " elements into " + std::to_string(known)};
            o[size_t(infer)] = *total / known;
        } else if (known != *total) {
            throw Fail{"Reshape changes the element count from " + std::to_string(*total) + " to " + std::to_string(known)};
        }
        out(n, 0, std::move(o), val(n, 0));
        return true;
    }
    if (OP("Flatten")) {
        const Dims& x = in(n, 0);
        const auto axis = static_cast<size_t>(x.empty() ? 0 : n.attrInt("axis", 1) < 0 ? n.attrInt("axis", 1) + int64_t(x.size()) : n.attrInt("axis", 1));
        if (axis > x.size())
            throw Fail{"Flatten axis out of range"};
        int64_t a = 1, b = 1;
        for (size_t i = 0; i < x.size(); ++i)
            (i < axis ? a : b) = mul(i < axis ? a : b, x[i]);
        out(n, 0, {a, b}, val(n, 0));
        return true;
    }
    if (OP("Transpose")) {
        const Dims& x = in(n, 0);
        Dims perm = n.attrInts("perm");
        if (perm.empty())
            for (size_t i = x.size(); i-- > 0;)
                perm.push_back(static_cast<int64_t>(i));
        if (perm.size() != x.size())
            throw Fail{"Transpose perm does not match the input rank"};
        Dims o;
        for (int64_t p : perm)
            o.push_back(x[size_t(normAxis(p, x.size()))]);
        out(n, 0, std::move(o), x.size() <= 1 ? val(n, 0) : std::nullopt);
        return true;
    }
    if (OP("Unsqueeze")) {
        const Dims& x = in(n, 0);
        Dims axes = axesOf(n, 1, 13);
        const size_t r = x.size() + axes.size();
        std::vector<char> ins(r, 0);
        for (int64_t a : axes)
            ins[size_t(normAxis(a, r))] = 1;
        Dims o;
        size_t j = 0;
        for (size_t i = 0; i < r; ++i)
            o.push_back(ins[i] ? 1 : (j < x.size() ? x[j++] : throw Fail{"Unsqueeze axes repeat"}));
        out(n, 0, std::move(o), val(n, 0));
        return true;
    }
    if (OP("Squeeze")) {
        const Dims& x = in(n, 0);
        Dims axes = axesOf(n, 1, 13);
        std::vector<char> drop(x.size(), 0);
        if (axes.empty()) {
            for (size_t i = 0; i < x.size(); ++i)
                drop[i] = x[i] == 1;
        } else {
            for (int64_t a : axes)
                drop[size_t(normAxis(a, x.size()))] = 1;
        }
        Dims o;
        for (size_t i = 0; i < x.size(); ++i)
            if (!drop[i])
                o.push_back(x[i]);
        out(n, 0, std::move(o), val(n, 0));
        return true;
    }
    if (OP("Concat")) {
        const size_t cnt = n.inputs.size() - size_t(std::max(0, n.implicitInputs));
        Dims o;
        bool first = true, allVals = true;
        std::vector<int64_t> v;
        int64_t axis = n.attrInt("axis", 0);
        for (size_t i = 0; i < cnt; ++i) {
            if (!present(n, i))
                continue;
            const Dims& d = in(n, i);
            if (first) {
                o = d;
                axis = normAxis(axis, d.size());
                first = false;
            } else {
                if (d.size() != o.size())
                    throw Fail{"Concat inputs have different ranks"};
                o[size_t(axis)] = add(o[size_t(axis)], d[size_t(axis)]);
            }
            if (val(n, i) && d.size() <= 1)
                v.insert(v.end(), val(n, i)->begin(), val(n, i)->end());
            else
                allVals = false;
        }
        if (first)
            throw Fail{"Concat without inputs"};
        out(n, 0, std::move(o), allVals ? Values(std::move(v)) : std::nullopt);
        return true;
    }
    if (OP("Split")) {
        const Dims& x = in(n, 0);
        const auto axis = static_cast<size_t>(normAxis(n.attrInt("axis", 0), x.size()));
        Dims split = m_g.opset >= 13 && present(n, 1) ? needVal(n, 1, "split") : n.attrInts("split");
        const size_t outs = n.outputs.size();
        if (split.empty()) {
            const int64_t parts = n.attr("num_outputs") ? n.attrInt("num_outputs", 1) : static_cast<int64_t>(outs);
            if (parts <= 0)
                throw Fail{"Split into 0 parts"};
            const int64_t each = floorDiv(x[axis] + parts - 1, parts);
            for (int64_t p = 0, left = x[axis]; p < parts; ++p, left -= each)
                split.push_back(std::clamp<int64_t>(left, 0, each));
        }
        int64_t off = 0;
        for (size_t i = 0; i < outs && i < split.size(); ++i) {
            Dims o = x;
            o[axis] = split[i];
            Values v;
            if (x.size() == 1 && val(n, 0) && off + split[i] <= static_cast<int64_t>(val(n, 0)->size()))
                v = std::vector<int64_t>(val(n, 0)->begin() + off, val(n, 0)->begin() + off + split[i]);
            off += split[i];
            out(n, i, std::move(o), std::move(v));
        }
        return true;
    }
    if (op.rfind("Sequence", 0) == 0 || OP("SplitToSequence") || OP("ConcatFromSequence") || op.rfind("Optional", 0) == 0)
        return sequence(n);
    if (OP("Slice"))
        return slice(n);
    // Opset 16-20 ops ONNX 1.12's inference may not know at the file's opset (onnx/defs/*/defs.cc).
    if (OP("GridSample")) {
        const Dims& x = in(n, 0);
        const Dims& grid = in(n, 1);
        if (x.size() < 3 || grid.size() != x.size())
            throw Fail{"GridSample input and grid ranks differ"};
        Dims o{x[0], x[1]};
        o.insert(o.end(), grid.begin() + 1, grid.end() - 1);
        out(n, 0, std::move(o));
        return true;
    }
    if (OP("AffineGrid")) {
        const auto& size = needVal(n, 1, "size");
        if (size.size() < 3)
            throw Fail{"AffineGrid size needs N, C and spatial dims"};
        Dims o{size[0]};
        o.insert(o.end(), size.begin() + 2, size.end());
        o.push_back(static_cast<int64_t>(size.size() - 2));
        out(n, 0, std::move(o));
        return true;
    }
    if (OP("CenterCropPad")) {
        Dims o = in(n, 0);
        const auto& shape = needVal(n, 1, "shape");
        Dims axes = n.attrInts("axes");
        if (axes.empty())
            for (size_t i = 0; i < o.size(); ++i)
                axes.push_back(static_cast<int64_t>(i));
        if (axes.size() != shape.size())
            throw Fail{"CenterCropPad shape does not match the axes"};
        for (size_t i = 0; i < axes.size(); ++i)
            o[size_t(normAxis(axes[i], o.size()))] = shape[i];
        out(n, 0, std::move(o));
        return true;
    }
    // DFT (opset 17; opset 20 moved `axis` to an input): the last dim holds (real, imaginary).
    if (OP("DFT")) {
        Dims o = in(n, 0);
        if (o.size() < 2)
            throw Fail{"DFT needs an input of rank >= 2"};
        int64_t axis = m_g.opset >= 20 ? (present(n, 2) ? needVal(n, 2, "axis").at(0) : -2) : n.attrInt("axis", 1);
        const auto a = static_cast<size_t>(normAxis(axis, o.size()));
        if (present(n, 1))
            o[a] = needVal(n, 1, "dft_length").at(0);
        if (n.attrInt("onesided", 0) != 0)
            o[a] = o[a] / 2 + 1;
        o.back() = 2;
        out(n, 0, std::move(o));
        return true;
    }
    if (OP("Col2Im")) {
        const Dims& x = in(n, 0);
        const auto& image = needVal(n, 1, "image_shape");
        const auto& block = needVal(n, 2, "block_shape");
        int64_t per = 1;
        for (int64_t b : block)
            per = mul(per, b);
        if (x.size() != 3 || per <= 0 || x[1] % per != 0)
            throw Fail{"Col2Im input does not match its block shape"};
        Dims o{x[0], x[1] / per};
        o.insert(o.end(), image.begin(), image.end());
        out(n, 0, std::move(o));
        return true;
    }
    if (OP("HannWindow") || OP("HammingWindow") || OP("BlackmanWindow")) {
        out(n, 0, {needVal(n, 0, "size").at(0)});
        return true;
    }
    if (OP("Gather")) {
        const Dims& x = in(n, 0);
        const Dims& idx = in(n, 1);
        const auto axis = static_cast<size_t>(normAxis(n.attrInt("axis", 0), x.size()));
        Dims o(x.begin(), x.begin() + long(axis));
        o.insert(o.end(), idx.begin(), idx.end());
        o.insert(o.end(), x.begin() + long(axis) + 1, x.end());
        Values v;
        if (x.size() == 1 && val(n, 0) && val(n, 1)) {
            std::vector<int64_t> r;
            for (int64_t i : *val(n, 1)) {
                const int64_t j = i < 0 ? i + x[0] : i;
                if (j < 0 || j >= x[0])
                    throw Fail{"Gather index " + std::to_string(i) + " out of range"};
                r.push_back((*val(n, 0))[size_t(j)]);
            }
            v = std::move(r);
        }
        out(n, 0, std::move(o), std::move(v));
        return true;
    }
    if (OP("GatherElements")) {
        out(n, 0, in(n, 1));
        return true;
    }
    if (OP("GatherND")) {
        const Dims& x = in(n, 0);
        const Dims& idx = in(n, 1);
        const auto b = static_cast<size_t>(n.attrInt("batch_dims", 0));
        if (idx.empty() || idx.back() < 0 || b + static_cast<size_t>(idx.back()) > x.size())
            throw Fail{"GatherND indices do not fit the data"};
        Dims o(idx.begin(), idx.end() - 1);
        o.insert(o.end(), x.begin() + long(b + static_cast<size_t>(idx.back())), x.end());
        out(n, 0, std::move(o));
        return true;
    }
    if (OP("Expand")) {
        const Dims& x = in(n, 0);
        const auto& s = needVal(n, 1, "the target shape");
        Dims o = broadcast(x, s);
        Values v;
        auto total = numelOf(o);
        if (val(n, 0) && total && size_t(*total) <= kMaxValues) {
            std::vector<int64_t> r(static_cast<size_t>(*total));
            for (size_t e = 0; e < r.size(); ++e)
                r[e] = (*val(n, 0))[broadcastIndex(e, o, x)];
            v = std::move(r);
        }
        out(n, 0, std::move(o), std::move(v));
        return true;
    }
    if (OP("Tile")) {
        const Dims& x = in(n, 0);
        const auto& rep = needVal(n, 1, "repeats");
        if (rep.size() != x.size())
            throw Fail{"Tile repeats do not match the rank"};
        Dims o = x;
        for (size_t i = 0; i < o.size(); ++i)
            o[i] = mul(o[i], rep[i]);
        out(n, 0, std::move(o));
        return true;
    }
    if (OP("Range")) {
        const auto& s = needVal(n, 0, "start");
        const auto& l = needVal(n, 1, "limit");
        const auto& d = needVal(n, 2, "delta");
        if (s.size() != 1 || l.size() != 1 || d.size() != 1 || d[0] == 0)
            throw Fail{"Range needs scalar start/limit/non-zero delta"};
        const int64_t cnt = std::max<int64_t>(0, floorDiv(l[0] - s[0] + d[0] + (d[0] > 0 ? -1 : 1), d[0]));
        Values v;
        if (size_t(cnt) <= kMaxValues) {
            std::vector<int64_t> r;
            for (int64_t i = 0; i < cnt; ++i)
                r.push_back(s[0] + i * d[0]);
            v = std::move(r);
        }
        out(n, 0, {cnt}, std::move(v));
        return true;
    }
    if (OP("MatMul") || OP("MatMulInteger")) {
        Dims a = in(n, 0), b = in(n, 1);
        if (a.empty() || b.empty())
            throw Fail{"MatMul of a scalar"};
        const bool a1 = a.size() == 1, b1 = b.size() == 1;
        if (a1) a.insert(a.begin(), 1);
        if (b1) b.push_back(1);
        if (a.back() >= 0 && b[b.size() - 2] >= 0 && a.back() != b[b.size() - 2])
            throw Fail{"MatMul inner dims differ: " + std::to_string(a.back()) + " vs " + std::to_string(b[b.size() - 2])};
        Dims o = broadcast(Dims(a.begin(), a.end() - 2), Dims(b.begin(), b.end() - 2));
        if (!a1) o.push_back(a[a.size() - 2]);
        if (!b1) o.push_back(b.back());
        out(n, 0, std::move(o));
        return true;
    }
    if (OP("Gemm")) {
        const Dims& a = in(n, 0);
        const Dims& b = in(n, 1);
        if (a.size() != 2 || b.size() != 2)
            throw Fail{"Gemm needs 2-D inputs"};
        const int64_t M = n.attrInt("transA", 0) ? a[1] : a[0];
        const int64_t N = n.attrInt("transB", 0) ? b[0] : b[1];
        out(n, 0, {M, N});
        return true;
    }
    if (OP("Conv") || OP("ConvTranspose") || OP("ConvInteger") || OP("DeformConv"))
        return convLike(n, false);
    if (OP("MaxPool") || OP("AveragePool") || OP("LpPool"))
        return convLike(n, true);
    if (OP("GlobalAveragePool") || OP("GlobalMaxPool") || OP("GlobalLpPool")) {
        Dims o = in(n, 0);
        for (size_t i = 2; i < o.size(); ++i)
            o[i] = 1;
        out(n, 0, std::move(o));
        return true;
    }
    if (op.rfind("Reduce", 0) == 0 || OP("ArgMax") || OP("ArgMin")) {
        const Dims& x = in(n, 0);
        const bool keep = n.attrInt("keepdims", 1) != 0;
        Dims axes;
        if (OP("ArgMax") || OP("ArgMin"))
            axes = {n.attrInt("axis", 0)};
        else
            axes = axesOf(n, 1, OP("ReduceSum") ? 13 : 18);
        std::vector<char> red(x.size(), axes.empty() && !n.attrInt("noop_with_empty_axes", 0));
        for (int64_t a : axes)
            red[size_t(normAxis(a, x.size()))] = 1;
        Dims o;
        Values v;
        for (size_t i = 0; i < x.size(); ++i)
            if (!red[i])
                o.push_back(x[i]);
            else if (keep)
                o.push_back(1);
        if (OP("ReduceProd") && val(n, 0) && x.size() <= 1) {
            int64_t p = 1;
            for (int64_t e : *val(n, 0))
                p = mul(p, e);
            v = std::vector<int64_t>{p};
        }
        out(n, 0, std::move(o), std::move(v));
        return true;
    }
    if (OP("Pad")) {
        const Dims& x = in(n, 0);
        Dims pads = m_g.opset < 11 ? n.attrInts("pads") : needVal(n, 1, "pads");
        Dims axes;
        if (present(n, 3))
            axes = needVal(n, 3, "axes");
        else
            for (size_t i = 0; i < x.size(); ++i)
                axes.push_back(static_cast<int64_t>(i));
        if (pads.size() != 2 * axes.size())
            throw Fail{"Pad pads do not match the axes"};
        Dims o = x;
        for (size_t i = 0; i < axes.size(); ++i) {
            const auto a = static_cast<size_t>(normAxis(axes[i], x.size()));
            o[a] = add(o[a], pads[i] + pads[i + axes.size()]);
            if (o[a] < 0)
                throw Fail{"Pad makes a dim negative"};
        }
        out(n, 0, std::move(o));
        return true;
    }
    if (OP("Resize") || OP("Upsample")) {
        const Dims& x = in(n, 0);
        const size_t sizesIdx = 3;
        const size_t scalesIdx = OP("Upsample") || m_g.opset < 11 ? 1 : 2;
        Dims o = x;
        if (OP("Resize") && present(n, sizesIdx) && in(n, sizesIdx).size() == 1 && in(n, sizesIdx)[0] > 0) {
            const auto& s = needVal(n, sizesIdx, "sizes");
            Dims axes = n.attrInts("axes");
            if (axes.empty())
                for (size_t i = 0; i < x.size(); ++i)
                    axes.push_back(static_cast<int64_t>(i));
            if (s.size() != axes.size())
                throw Fail{"Resize sizes do not match the axes"};
            for (size_t i = 0; i < s.size(); ++i)
                o[size_t(normAxis(axes[i], x.size()))] = s[i];
        } else {
            const auto& sc = needVal(n, scalesIdx, "scales");
            if (sc.size() != x.size())
                throw Fail{"Resize scales do not match the rank"};
            for (size_t i = 0; i < x.size(); ++i)
                o[i] = mul(x[i], sc[i]);
        }
        out(n, 0, std::move(o));
        return true;
    }
    if (OP("LSTM") || OP("GRU") || OP("RNN")) {
        const Dims& x = in(n, 0);
        if (x.size() != 3)
            throw Fail{op + " needs a 3-D input"};
        const int64_t dirs = n.attrString("direction", "forward") == "bidirectional" ? 2 : 1;
        int64_t hidden = n.attrInt("hidden_size", -1);
        if (hidden < 0 && present(n, 2))
            hidden = in(n, 2).size() == 3 ? in(n, 2)[2] : -1;
        if (hidden < 0)
            throw Fail{op + " without hidden_size"};
        const bool batchFirst = n.attrInt("layout", 0) != 0;
        const int64_t seq = batchFirst ? x[1] : x[0], batch = batchFirst ? x[0] : x[1];
        out(n, 0, batchFirst ? Dims{batch, seq, dirs, hidden} : Dims{seq, dirs, batch, hidden});
        const Dims state = batchFirst ? Dims{batch, dirs, hidden} : Dims{dirs, batch, hidden};
        out(n, 1, state);
        out(n, 2, state);
        return true;
    }
    if (OP("TopK")) {
        const Dims& x = in(n, 0);
        const int64_t k = m_g.opset >= 10 ? needVal(n, 1, "k").at(0) : n.attrInt("k", 1);
        Dims o = x;
        o[size_t(normAxis(n.attrInt("axis", -1), x.size()))] = k;
        out(n, 0, o);
        out(n, 1, o);
        return true;
    }
    if (OP("OneHot")) {
        const Dims& x = in(n, 0);
        const auto& depth = needVal(n, 1, "depth");
        Dims o = x;
        const int64_t axis = n.attrInt("axis", -1);
        const size_t a = static_cast<size_t>(normAxis(axis, x.size() + 1));
        o.insert(o.begin() + long(a), depth.at(0));
        out(n, 0, std::move(o));
        return true;
    }
    if (OP("DepthToSpace") || OP("SpaceToDepth")) {
        Dims o = in(n, 0);
        const int64_t b = n.attrInt("blocksize", 1);
        if (o.size() != 4 || b <= 0)
            throw Fail{op + " needs a 4-D input and a positive blocksize"};
        if (OP("DepthToSpace")) { o[1] = o[1] / (b * b); o[2] = mul(o[2], b); o[3] = mul(o[3], b); }
        else { o[1] = mul(o[1], b * b); o[2] /= b; o[3] /= b; }
        out(n, 0, std::move(o));
        return true;
    }
    if (OP("Einsum"))
        return einsum(n);
    if (OP("RandomNormal") || OP("RandomUniform")) {
        out(n, 0, n.attrInts("shape"));
        return true;
    }
    if (OP("NonZero") || OP("NonMaxSuppression") || OP("Compress") || OP("Unique"))
        throw Fail{op + " has a data-dependent output size"};
    return false;
}

#undef OP

bool Evaluator::onnxInfer(const Node& n, const onnx::NodeProto& proto, std::string& why)
{
    try {
        onnx::ModelProto mp;
        mp.set_ir_version(8);
        for (const auto& [d, v] : m_g.opsets) {
            auto* os = mp.add_opset_import();
            os->set_domain(d);
            os->set_version(v);
        }
        onnx::GraphProto* gp = mp.mutable_graph();
        onnx::NodeProto* np = gp->add_node();
        *np = proto;
        const size_t explicitCount = n.inputs.size() - size_t(std::max(0, n.implicitInputs));
        for (int i = 0; i < np->input_size() && size_t(i) < explicitCount; ++i) {
            const int t = n.inputs[size_t(i)];
            if (t < 0)
                continue;
            const std::string name = "i" + std::to_string(i);
            np->set_input(i, name);
            auto* vi = gp->add_input();
            vi->set_name(name);
            auto* tt = vi->mutable_type()->mutable_tensor_type();
            tt->set_elem_type(static_cast<int32_t>(m_r.dtype[size_t(t)] == DType::Undefined ? DType::Float32 : m_r.dtype[size_t(t)]));
            auto* sh = tt->mutable_shape();
            for (int64_t d : m_r.dims[size_t(t)])
                sh->add_dim()->set_dim_value(d);
            if (m_val[size_t(t)] && isInteger(m_r.dtype[size_t(t)])) {
                auto* init = gp->add_initializer();
                init->set_name(name);
                init->set_data_type(onnx::TensorProto::INT64);
                for (int64_t d : m_r.dims[size_t(t)])
                    init->add_dims(d);
                for (int64_t e : *m_val[size_t(t)])
                    init->add_int64_data(e);
                tt->set_elem_type(onnx::TensorProto::INT64);
            }
        }
        for (int i = 0; i < np->output_size(); ++i)
            if (!np->output(i).empty())
                np->set_output(i, "o" + std::to_string(i));
        onnx::ShapeInferenceOptions opts(false, 0, true);
        onnx::shape_inference::InferShapes(mp, onnx::OpSchemaRegistry::Instance(), opts);
        bool any = false;
        for (const auto& vi : mp.graph().value_info()) {
            const std::string& nm = vi.name();
            if (nm.size() < 2 || nm[0] != 'o')
                continue;
            const size_t o = static_cast<size_t>(std::atoi(nm.c_str() + 1));
            if (o >= n.outputs.size() || n.outputs[o] < 0 || !vi.type().has_tensor_type())
                continue;
            const auto& tt = vi.type().tensor_type();
            if (m_r.dtype[size_t(n.outputs[o])] == DType::Undefined)
                m_r.dtype[size_t(n.outputs[o])] = dtypeFromOnnx(tt.elem_type());
            if (!tt.has_shape())
                continue;
            Dims d;
            for (const auto& dim : tt.shape().dim())
                d.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
            out(n, o, std::move(d));
            any = true;
        }
        if (!any && why.empty())
            why = (n.domain.empty() ? n.op : n.domain + "::" + n.op) + ": ONNX's shape inference gives no output shape";
        return any;
    } catch (const std::exception& e) {
        std::string msg = e.what();
        if (const size_t nl = msg.find('\n'); nl != std::string::npos)
            msg.resize(nl);
        why = n.op + ": ONNX's shape inference failed: " + msg.substr(0, 200);
        return false;
    }
}

} // namespace

bool hasShapeRule(std::string_view op, std::string_view domain)
{
    if (!domain.empty() && domain != "ai.onnx")
        return false;
    static const std::unordered_set<std::string_view> ops = {
        "Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Log", "Sqrt", "Neg", "Abs", "Reciprocal", "Floor", "Ceil", "Round",
        "Sign", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Softplus",
        "Softsign", "Elu", "Selu", "LeakyRelu", "ThresholdedRelu", "HardSigmoid", "HardSwish", "Mish", "Gelu", "Celu",
        "Clip", "Softmax", "LogSoftmax", "Hardmax", "Identity", "IsNaN", "IsInf", "Not", "LRN",
        "MeanVarianceNormalization", "LpNormalization", "InstanceNormalization", "CumSum", "Shrink", "Trilu",
        "ReverseSequence", "PRelu", "QuantizeLinear", "DequantizeLinear", "Cast", "CastLike", "BitwiseNot",
        "RandomNormalLike", "RandomUniformLike", "EyeLike", "Bernoulli", "Dropout", "GroupNormalization",
        "BatchNormalization", "LayerNormalization", "Scatter", "ScatterElements", "ScatterND", "Add", "Sub", "Mul",
        "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual",
        "And", "Or", "Xor", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Where", "Shape", "Size",
        "ConstantOfShape", "Reshape", "Flatten", "Transpose", "Unsqueeze", "Squeeze", "Concat", "Split", "Slice",
        "Gather", "GatherElements", "GatherND", "Expand", "Tile", "Range", "MatMul", "MatMulInteger", "Gemm", "Conv",
        "ConvTranspose", "ConvInteger", "MaxPool", "AveragePool", "LpPool", "GlobalAveragePool", "GlobalMaxPool",
        "GlobalLpPool", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
        "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin", "Pad", "Resize", "Upsample", "LSTM",
        "GRU", "RNN", "TopK", "OneHot", "DepthToSpace", "SpaceToDepth", "Einsum", "RandomNormal", "RandomUniform",
        "NonZero", "NonMaxSuppression", "Compress", "Unique", "Constant", "SequenceEmpty", "SequenceConstruct",
        "SplitToSequence", "SequenceAt", "SequenceLength", "SequenceInsert", "SequenceErase", "ConcatFromSequence",
        "Optional", "OptionalGetElement", "OptionalHasElement", "RMSNormalization", "RotaryEmbedding", "GridSample",
        "AffineGrid", "CenterCropPad", "Col2Im", "DeformConv", "DFT", "HannWindow", "HammingWindow", "BlackmanWindow"};
    return ops.count(op) > 0;
}

EvalResult evaluateGraph(const ShapeGraph& g, const Bindings& values)
{
    return Evaluator(g, values).run();
}

} // namespace headroom::detail
