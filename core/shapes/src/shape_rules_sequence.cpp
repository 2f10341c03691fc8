// Sequence and Optional rules (opset 11+ / 15, onnx/defs/sequence/defs.cc, onnx/defs/optional/defs.cc), which
// torch.onnx's dynamo exporter emits for torch.split/chunk/unbind when its optimizer does not fold them
// (optimize=False). Sequences are followed element by element, so shape arithmetic through them still folds.
#include "shape_rules.h"

namespace headroom::detail {
namespace {

bool sequenceEmpty(ShapeContext& c, const Node& n)
{
    c.setSeq(n, 0, {});
    return true;
}

bool sequenceConstruct(ShapeContext& c, const Node& n)
{
    ShapeContext::Seq s;
    for (size_t i = 0; i < n.inputs.size() - size_t(std::max(0, n.implicitInputs)); ++i)
        s.emplace_back(c.in(n, i), c.val(n, i));
    c.setSeq(n, 0, std::move(s));
    return true;
}

// One element per split (no split: per index along the axis, squeezed unless keepdims).
bool splitToSequence(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    if (x.empty())
        throw Fail{"SplitToSequence of a scalar"};
    const auto axis = static_cast<size_t>(normAxis(n.attrInt("axis", 0), x.size()));
    const bool keep = n.attrInt("keepdims", 1) != 0;
    // One entry per element: a sequence of millions of tensors (unbinding a huge dim) is not followed.
    constexpr int64_t kMaxElements = 1 << 16;
    Dims sizes;
    bool squeeze = false;
    if (!c.present(n, 1)) {
        if (x[axis] > kMaxElements)
            throw Fail{"SplitToSequence into " + std::to_string(x[axis]) + " tensors", true};
        sizes.assign(size_t(std::max<int64_t>(0, x[axis])), 1);
        squeeze = !keep;
    } else {
        const auto& sp = c.needVal(n, 1, "split");
        if (c.in(n, 1).empty()) { // a scalar: chunks of that size, the last one shorter
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
                throw Fail{"SplitToSequence split sums to " + std::to_string(sum) + ", the axis has " +
                           std::to_string(x[axis])};
        }
    }
    ShapeContext::Seq s;
    int64_t off = 0;
    for (int64_t len : sizes) {
        Dims d = x;
        Values v;
        if (x.size() == 1 && c.val(n, 0) && off + len <= static_cast<int64_t>(c.val(n, 0)->size()))
            v = std::vector<int64_t>(c.val(n, 0)->begin() + off, c.val(n, 0)->begin() + off + len);
        if (squeeze)
            d.erase(d.begin() + long(axis));
        else
            d[axis] = len;
        s.emplace_back(std::move(d), std::move(v));
        off += len;
    }
    c.setSeq(n, 0, std::move(s));
    return true;
}

bool sequenceAt(ShapeContext& c, const Node& n)
{
    const ShapeContext::Seq& s = c.seqIn(n, 0);
    const auto& e = s[c.seqPos(n, 1, s.size(), false)];
    c.out(n, 0, e.first, e.second);
    return true;
}

bool sequenceLength(ShapeContext& c, const Node& n)
{
    c.out(n, 0, {}, std::vector<int64_t>{static_cast<int64_t>(c.seqIn(n, 0).size())});
    return true;
}

bool sequenceInsert(ShapeContext& c, const Node& n)
{
    ShapeContext::Seq s = c.seqIn(n, 0);
    if (s.size() >= size_t(1) << 16)
        throw Fail{"SequenceInsert beyond 65536 tensors", true};
    const size_t p = c.present(n, 2) ? c.seqPos(n, 2, s.size(), true) : s.size();
    s.insert(s.begin() + long(p), {c.in(n, 1), c.val(n, 1)});
    c.setSeq(n, 0, std::move(s));
    return true;
}

bool sequenceErase(ShapeContext& c, const Node& n)
{
    ShapeContext::Seq s = c.seqIn(n, 0);
    if (s.empty())
        throw Fail{"SequenceErase on an empty sequence"};
    const size_t p = c.present(n, 1) ? c.seqPos(n, 1, s.size(), false) : s.size() - 1;
    s.erase(s.begin() + long(p));
    c.setSeq(n, 0, std::move(s));
    return true;
}

bool concatFromSequence(ShapeContext& c, const Node& n)
{
    const ShapeContext::Seq& s = c.seqIn(n, 0);
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
    c.out(n, 0, std::move(o), vals ? Values(std::move(v)) : std::nullopt);
    return true;
}

// Optional (opset 15): an optional tensor is sized as the tensor it holds.
bool optionalElement(ShapeContext& c, const Node& n)
{
    const std::string& op = n.op;
    if (!c.present(n, 0))
        throw Fail{op + " without an element", true};
    if (const ShapeContext::Seq* s = c.seqOf(n, 0))
        c.setSeq(n, 0, *s);
    else
        c.out(n, 0, c.in(n, 0), c.val(n, 0));
    return true;
}

bool optionalHasElement(ShapeContext& c, const Node& n)
{
    c.out(n, 0, {}, std::vector<int64_t>{c.present(n, 0) ? 1 : 0});
    return true;
}

// SequenceMap has a body: ONNX's inference or the file's declarations size it.
constexpr ShapeRule kRules[] = {
    {"SequenceEmpty", sequenceEmpty},
    {"SequenceConstruct", sequenceConstruct},
    {"SplitToSequence", splitToSequence},
    {"SequenceAt", sequenceAt},
    {"SequenceLength", sequenceLength},
    {"SequenceInsert", sequenceInsert},
    {"SequenceErase", sequenceErase},
    {"ConcatFromSequence", concatFromSequence},
    {"Optional", optionalElement},
    {"OptionalGetElement", optionalElement},
    {"OptionalHasElement", optionalHasElement},
};

} // namespace

std::span<const ShapeRule> sequenceShapeRules() { return kRules; }

} // namespace headroom::detail
