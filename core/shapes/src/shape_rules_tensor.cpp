// Shape-manipulating rules (onnx/defs/tensor/defs.cc): views and copies of a tensor's layout (Reshape,
// Transpose, Slice, Concat...), indexing, and the ops that compute a shape from values (Shape, Range,
// ConstantOfShape). These fold small integer values so that exporters' shape arithmetic stays exact.
#include "shape_rules.h"

namespace headroom::detail {
namespace {

// Shape (opset 15: start and end): the dims as values.
bool shape(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    const auto r = static_cast<int64_t>(x.size());
    int64_t s = n.attrInt("start", 0), e = n.attrInt("end", r);
    if (s < 0)
        s += r;
    if (e < 0)
        e += r;
    s = std::clamp<int64_t>(s, 0, r);
    e = std::clamp<int64_t>(e, s, r);
    c.out(n, 0, {e - s}, std::vector<int64_t>(x.begin() + s, x.begin() + e));
    return true;
}

bool size(ShapeContext& c, const Node& n)
{
    auto ne = numelOf(c.in(n, 0));
    c.out(n, 0, {}, ne ? Values(std::vector<int64_t>{*ne}) : std::nullopt);
    return true;
}

bool constantOfShape(ShapeContext& c, const Node& n)
{
    const auto& s = c.needVal(n, 0, "shape");
    for (int64_t d : s)
        if (d < 0)
            throw Fail{"ConstantOfShape with a negative dim"};
    const Attr* a = n.attr("value");
    const int64_t fill = a && !a->floats.empty() ? static_cast<int64_t>(a->floats[0]) : 0;
    auto ne = numelOf(s);
    Values v;
    if (ne && size_t(*ne) <= kMaxValues)
        v = std::vector<int64_t>(size_t(*ne), fill);
    c.out(n, 0, s, std::move(v));
    return true;
}

// 0 copies the input dim (unless allowzero), -1 takes what is left.
bool reshape(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    const auto& target = c.needVal(n, 1, "the target shape");
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
            throw Fail{"Reshape cannot infer -1: " + std::to_string(*total) + " elements into " +
                       std::to_string(known)};
        o[size_t(infer)] = *total / known;
    } else if (known != *total) {
        throw Fail{"Reshape changes the element count from " + std::to_string(*total) + " to " + std::to_string(known)};
    }
    c.out(n, 0, std::move(o), c.val(n, 0));
    return true;
}

bool flatten(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    const auto axis = static_cast<size_t>(x.empty()                  ? 0
                                          : n.attrInt("axis", 1) < 0 ? n.attrInt("axis", 1) + int64_t(x.size())
                                                                     : n.attrInt("axis", 1));
    if (axis > x.size())
        throw Fail{"Flatten axis out of range"};
    int64_t a = 1, b = 1;
    for (size_t i = 0; i < x.size(); ++i)
        (i < axis ? a : b) = mul(i < axis ? a : b, x[i]);
    c.out(n, 0, {a, b}, c.val(n, 0));
    return true;
}

bool transpose(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    Dims perm = n.attrInts("perm");
    if (perm.empty())
        for (size_t i = x.size(); i-- > 0;)
            perm.push_back(static_cast<int64_t>(i));
    if (perm.size() != x.size())
        throw Fail{"Transpose perm does not match the input rank"};
    Dims o;
    for (int64_t p : perm)
        o.push_back(x[size_t(normAxis(p, x.size()))]);
    c.out(n, 0, std::move(o), x.size() <= 1 ? c.val(n, 0) : std::nullopt);
    return true;
}

// axes: an attribute before opset 13, an input from it on.
bool unsqueeze(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    Dims axes = c.axesOf(n, 1, 13);
    const size_t r = x.size() + axes.size();
    std::vector<char> ins(r, 0);
    for (int64_t a : axes)
        ins[size_t(normAxis(a, r))] = 1;
    Dims o;
    size_t j = 0;
    for (size_t i = 0; i < r; ++i)
        o.push_back(ins[i] ? 1 : (j < x.size() ? x[j++] : throw Fail{"Unsqueeze axes repeat"}));
    c.out(n, 0, std::move(o), c.val(n, 0));
    return true;
}

bool squeeze(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    Dims axes = c.axesOf(n, 1, 13);
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
    c.out(n, 0, std::move(o), c.val(n, 0));
    return true;
}

bool concat(ShapeContext& c, const Node& n)
{
    const size_t cnt = n.inputs.size() - size_t(std::max(0, n.implicitInputs));
    Dims o;
    bool first = true, allVals = true;
    std::vector<int64_t> v;
    int64_t axis = n.attrInt("axis", 0);
    for (size_t i = 0; i < cnt; ++i) {
        if (!c.present(n, i))
            continue;
        const Dims& d = c.in(n, i);
        if (first) {
            o = d;
            axis = normAxis(axis, d.size());
            first = false;
        } else {
            if (d.size() != o.size())
                throw Fail{"Concat inputs have different ranks"};
            o[size_t(axis)] = add(o[size_t(axis)], d[size_t(axis)]);
        }
        if (c.val(n, i) && d.size() <= 1)
            v.insert(v.end(), c.val(n, i)->begin(), c.val(n, i)->end());
        else
            allVals = false;
    }
    if (first)
        throw Fail{"Concat without inputs"};
    c.out(n, 0, std::move(o), allVals ? Values(std::move(v)) : std::nullopt);
    return true;
}

// split sizes: an input from opset 13; without them equal parts (opset 18: num_outputs), the last one shorter.
bool split(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    const auto axis = static_cast<size_t>(normAxis(n.attrInt("axis", 0), x.size()));
    Dims split = c.opset() >= 13 && c.present(n, 1) ? c.needVal(n, 1, "split") : n.attrInts("split");
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
        if (x.size() == 1 && c.val(n, 0) && off + split[i] <= static_cast<int64_t>(c.val(n, 0)->size()))
            v = std::vector<int64_t>(c.val(n, 0)->begin() + off, c.val(n, 0)->begin() + off + split[i]);
        off += split[i];
        c.out(n, i, std::move(o), std::move(v));
    }
    return true;
}

bool centerCropPad(ShapeContext& c, const Node& n)
{
    Dims o = c.in(n, 0);
    const auto& shape = c.needVal(n, 1, "shape");
    Dims axes = n.attrInts("axes");
    if (axes.empty())
        for (size_t i = 0; i < o.size(); ++i)
            axes.push_back(static_cast<int64_t>(i));
    if (axes.size() != shape.size())
        throw Fail{"CenterCropPad shape does not match the axes"};
    for (size_t i = 0; i < axes.size(); ++i)
        o[size_t(normAxis(axes[i], o.size()))] = shape[i];
    c.out(n, 0, std::move(o));
    return true;
}

bool gather(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    const Dims& idx = c.in(n, 1);
    const auto axis = static_cast<size_t>(normAxis(n.attrInt("axis", 0), x.size()));
    Dims o(x.begin(), x.begin() + long(axis));
    o.insert(o.end(), idx.begin(), idx.end());
    o.insert(o.end(), x.begin() + long(axis) + 1, x.end());
    Values v;
    if (x.size() == 1 && c.val(n, 0) && c.val(n, 1)) {
        std::vector<int64_t> r;
        for (int64_t i : *c.val(n, 1)) {
            const int64_t j = i < 0 ? i + x[0] : i;
            if (j < 0 || j >= x[0])
                throw Fail{"Gather index " + std::to_string(i) + " out of range"};
            r.push_back((*c.val(n, 0))[size_t(j)]);
        }
        v = std::move(r);
    }
    c.out(n, 0, std::move(o), std::move(v));
    return true;
}

bool gatherElements(ShapeContext& c, const Node& n)
{
    c.out(n, 0, c.in(n, 1));
    return true;
}

bool gatherND(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    const Dims& idx = c.in(n, 1);
    const auto b = static_cast<size_t>(n.attrInt("batch_dims", 0));
    if (idx.empty() || idx.back() < 0 || b + static_cast<size_t>(idx.back()) > x.size())
        throw Fail{"GatherND indices do not fit the data"};
    Dims o(idx.begin(), idx.end() - 1);
    o.insert(o.end(), x.begin() + long(b + static_cast<size_t>(idx.back())), x.end());
    c.out(n, 0, std::move(o));
    return true;
}

bool expand(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    const auto& s = c.needVal(n, 1, "the target shape");
    Dims o = broadcast(x, s);
    Values v;
    auto total = numelOf(o);
    if (c.val(n, 0) && total && size_t(*total) <= kMaxValues) {
        std::vector<int64_t> r(static_cast<size_t>(*total));
        for (size_t e = 0; e < r.size(); ++e)
            r[e] = (*c.val(n, 0))[broadcastIndex(e, o, x)];
        v = std::move(r);
    }
    c.out(n, 0, std::move(o), std::move(v));
    return true;
}

bool tile(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    const auto& rep = c.needVal(n, 1, "repeats");
    if (rep.size() != x.size())
        throw Fail{"Tile repeats do not match the rank"};
    Dims o = x;
    for (size_t i = 0; i < o.size(); ++i)
        o[i] = mul(o[i], rep[i]);
    c.out(n, 0, std::move(o));
    return true;
}

bool range(ShapeContext& c, const Node& n)
{
    const auto& s = c.needVal(n, 0, "start");
    const auto& l = c.needVal(n, 1, "limit");
    const auto& d = c.needVal(n, 2, "delta");
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
    c.out(n, 0, {cnt}, std::move(v));
    return true;
}

bool pad(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    Dims pads = c.opset() < 11 ? n.attrInts("pads") : c.needVal(n, 1, "pads");
    Dims axes;
    if (c.present(n, 3))
        axes = c.needVal(n, 3, "axes");
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
    c.out(n, 0, std::move(o));
    return true;
}

bool topK(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    const int64_t k = c.opset() >= 10 ? c.needVal(n, 1, "k").at(0) : n.attrInt("k", 1);
    Dims o = x;
    o[size_t(normAxis(n.attrInt("axis", -1), x.size()))] = k;
    c.out(n, 0, o);
    c.out(n, 1, o);
    return true;
}

bool oneHot(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    const auto& depth = c.needVal(n, 1, "depth");
    Dims o = x;
    const int64_t axis = n.attrInt("axis", -1);
    const size_t a = static_cast<size_t>(normAxis(axis, x.size() + 1));
    o.insert(o.begin() + long(a), depth.at(0));
    c.out(n, 0, std::move(o));
    return true;
}

// Moves blocksize x blocksize channels into space (DepthToSpace) or back (SpaceToDepth), NCHW.
template <bool ToSpace> bool depthSpace(ShapeContext& c, const Node& n)
{
    const std::string& op = n.op;
    Dims o = c.in(n, 0);
    const int64_t b = n.attrInt("blocksize", 1);
    if (o.size() != 4 || b <= 0)
        throw Fail{op + " needs a 4-D input and a positive blocksize"};
    if (ToSpace) {
        o[1] = o[1] / (b * b);
        o[2] = mul(o[2], b);
        o[3] = mul(o[3], b);
    } else {
        o[1] = mul(o[1], b * b);
        o[2] /= b;
        o[3] /= b;
    }
    c.out(n, 0, std::move(o));
    return true;
}

bool randomShape(ShapeContext& c, const Node& n)
{
    c.out(n, 0, n.attrInts("shape"));
    return true;
}

// starts/ends/axes/steps: attributes before opset 10, inputs from it on; indices clamp as numpy's do.
bool slice(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    Dims starts, ends, axes, steps;
    if (c.opset() < 10) {
        starts = n.attrInts("starts");
        ends = n.attrInts("ends");
        axes = n.attrInts("axes");
    } else {
        starts = c.needVal(n, 1, "starts");
        ends = c.needVal(n, 2, "ends");
        if (c.present(n, 3))
            axes = c.needVal(n, 3, "axes");
        if (c.present(n, 4))
            steps = c.needVal(n, 4, "steps");
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
    if (x.size() == 1 && c.val(n, 0)) {
        std::vector<int64_t> r;
        for (int64_t i = 0; i < o[0]; ++i)
            r.push_back((*c.val(n, 0))[size_t(first[0] + i * step[0])]);
        v = std::move(r);
    }
    c.out(n, 0, std::move(o), std::move(v));
    return true;
}

// The output's size depends on the data (how many elements are non-zero, unique, kept).
bool dataDependent(ShapeContext&, const Node& n) { throw Fail{n.op + " has a data-dependent output size"}; }

constexpr ShapeRule kRules[] = {
    {"Shape", shape},
    {"Size", size},
    {"ConstantOfShape", constantOfShape},
    {"Range", range},
    {"Reshape", reshape},
    {"Flatten", flatten},
    {"Transpose", transpose},
    {"Unsqueeze", unsqueeze},
    {"Squeeze", squeeze},
    {"Concat", concat},
    {"Split", split},
    {"Slice", slice},
    {"Expand", expand},
    {"Tile", tile},
    {"Pad", pad},
    {"CenterCropPad", centerCropPad},
    {"DepthToSpace", depthSpace<true>},
    {"SpaceToDepth", depthSpace<false>},
    {"Gather", gather},
    {"GatherElements", gatherElements},
    {"GatherND", gatherND},
    {"TopK", topK},
    {"OneHot", oneHot},
    {"RandomNormal", randomShape},
    {"RandomUniform", randomShape},
    {"NonZero", dataDependent},
    {"NonMaxSuppression", dataDependent},
    {"Compress", dataDependent},
    {"Unique", dataDependent},
};

} // namespace

std::span<const ShapeRule> tensorShapeRules() { return kRules; }

} // namespace headroom::detail
