// The registry of shape rules (one per op, onnx/defs' schema-per-op model) and what the rules share:
// overflow-checked arithmetic, broadcasting, and the context's writers.
#include "shape_rules.h"

#include <unordered_map>
#include <vector>

namespace headroom::detail {

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

// --- the context's writers ---------------------------------------------------------------------------------

void ShapeContext::set(int t, Dims d, Values v)
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

void ShapeContext::setSeq(const Node& n, size_t o, Seq elems)
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

const ShapeContext::Seq& ShapeContext::seqIn(const Node& n, size_t i) const
{
    if (const Seq* s = seqOf(n, i))
        return *s;
    throw Fail{n.op + ": input " + std::to_string(i) + " is not a sequence Headroom could follow"};
}

// Position operand of SequenceAt/Insert/Erase: negative counts from the end.
size_t ShapeContext::seqPos(const Node& n, size_t i, size_t size, bool insert) const
{
    int64_t p = needVal(n, i, "the position").at(0);
    const auto sz = static_cast<int64_t>(size);
    if (p < 0)
        p += sz;
    if (p < 0 || p > sz || (!insert && p == sz))
        throw Fail{n.op + " position " + std::to_string(p) + " out of range for a sequence of " + std::to_string(size)};
    return static_cast<size_t>(p);
}

// --- the registry ------------------------------------------------------------------------------------------

namespace {

class Registry
{
public:
    Registry()
    {
        for (auto family : {elementwiseShapeRules(), tensorShapeRules(), nnShapeRules(), sequenceShapeRules()})
            for (const ShapeRule& r : family)
                domainMap(r.domain).emplace(r.op, r.fn);
    }
    ShapeRuleFn find(std::string_view op, std::string_view domain) const
    {
        if (domain == "ai.onnx")
            domain = {};
        for (const auto& [d, ops] : m_domains)
            if (d == domain) {
                const auto it = ops.find(op);
                return it == ops.end() ? nullptr : it->second;
            }
        return nullptr;
    }

private:
    using OpMap = std::unordered_map<std::string_view, ShapeRuleFn>;
    OpMap& domainMap(std::string_view domain)
    {
        for (auto& [d, ops] : m_domains)
            if (d == domain)
                return ops;
        return m_domains.emplace_back(domain, OpMap{}).second;
    }
    std::vector<std::pair<std::string_view, OpMap>> m_domains; // ai.onnx first, so its look-up is the first compare
};

const Registry& registry()
{
    static const Registry r;
    return r;
}

} // namespace

ShapeRuleFn findShapeRule(std::string_view op, std::string_view domain) { return registry().find(op, domain); }

bool hasShapeRule(std::string_view op, std::string_view domain)
{
    // Constant has no rule: the loader stores its value like an initializer's.
    return findShapeRule(op, domain) != nullptr || (op == "Constant" && (domain.empty() || domain == "ai.onnx"));
}

} // namespace headroom::detail
