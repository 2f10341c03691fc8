// Dims as functions of the symbols: evaluate the graph on a 2^k grid of bindings, fit each dim as a
// multilinear polynomial, verify at fresh bindings; what does not verify is re-inferred on demand.
#include "headroom/shapes/shape_fit.h"

#include <algorithm>
#include <map>

namespace headroom::detail {
namespace {

constexpr size_t kMaxFitSymbols = 8; // 2^8 evaluations; beyond that, dims that vary are re-inferred

class GraphOracle final : public ShapeOracle
{
public:
    explicit GraphOracle(std::shared_ptr<const ShapeGraph> g) : m_g(std::move(g)) {}
    std::vector<std::vector<int64_t>> inferAt(const Bindings& values) const override
    {
        EvalResult r = evaluateGraph(*m_g, values);
        for (size_t t = 0; t < r.dims.size(); ++t)
            if (!r.known[t])
                r.dims[t].clear();
        return std::move(r.dims);
    }

private:
    std::shared_ptr<const ShapeGraph> m_g;
};

// Coefficients of the multilinear f over the grid {a, a+1}^k from its 2^k corner values (bit i of the
// corner index set: symbol i = a+1). Möbius inversion in u = x - a, then expansion of prod(x_i - a).
std::optional<DimExpr> fitDim(const std::vector<int64_t>& corner, size_t k, int64_t a)
{
    const size_t n = size_t(1) << k;
    std::vector<int64_t> c(corner);
    for (size_t i = 0; i < k; ++i)
        for (size_t s = 0; s < n; ++s)
            if (s & (size_t(1) << i)) {
                auto d = checkedAdd(c[s], -c[s ^ (size_t(1) << i)]);
                if (!d)
                    return std::nullopt;
                c[s] = *d;
            }
    DimExpr e;
    for (size_t s = 0; s < n; ++s) {
        if (c[s] == 0)
            continue;
        // prod_{i in s} (x_i - a) = sum_{r subset s} (-a)^{|s \ r|} prod_{i in r} x_i
        for (size_t r = s;; r = (r - 1) & s) {
            int64_t coeff = c[s];
            const int missing = __builtin_popcountll(s & ~r);
            for (int j = 0; j < missing; ++j) {
                auto p = checkedMul(coeff, -a);
                if (!p)
                    return std::nullopt;
                coeff = *p;
            }
            e.addTerm(static_cast<uint32_t>(r), coeff);
            if (r == 0)
                break;
        }
    }
    return e;
}

// Graph inputs: their dims are the symbols themselves.
void seedInputShapes(Model& m, const ShapeGraph& graph)
{
    for (int i : m.inputs) {
        Tensor& t = m.tensors[size_t(i)];
        if (!graph.inputHasShape[size_t(i)]) {
            t.shape.state = TensorShape::State::Unknown;
            t.shape.unknownReason = "input '" + t.name + "' has no declared shape";
            continue;
        }
        t.shape.state = TensorShape::State::Exact;
        t.shape.dims.clear();
        for (const InputDim& d : graph.inputDims[size_t(i)])
            t.shape.dims.push_back(d.symbol >= 0 ? DimExpr::symbol(d.symbol) : DimExpr::constant(d.value));
    }
}

bool isComputed(const ShapeGraph& graph, size_t t) { return !graph.isStored[t] && !graph.isInput[t]; }

// The evaluations a fit reads: the 2^k grid {base, base+1}^k (empty when there are too many symbols to fit)
// and one check binding off the grid.
struct Samples
{
    bool fit = false;
    int64_t base = 2;
    std::vector<EvalResult> grid;
    std::vector<EvalResult> checks;
};

Bindings checkBinding(size_t k, int64_t base)
{
    Bindings v(k);
    for (size_t i = 0; i < k; ++i)
        v[i] = base + 3 + 2 * static_cast<int64_t>(i);
    return v;
}

// Sample grids: retry with larger bases when small values make the graph invalid (positions sliced to
// seq, convolutions that need a minimum size).
Samples sample(const ShapeGraph& graph, const EvalResult& atUser, size_t k, size_t nt)
{
    Samples sm;
    sm.fit = k > 0 && k <= kMaxFitSymbols;
    if (sm.fit) {
        size_t bestUnknown = SIZE_MAX;
        std::vector<EvalResult> best;
        int64_t bestBase = 2;
        for (int64_t a : {2, 8, 32, 100}) {
            std::vector<EvalResult> g;
            size_t unknown = 0;
            for (size_t s = 0; s < (size_t(1) << k); ++s) {
                Bindings b(k);
                for (size_t i = 0; i < k; ++i)
                    b[i] = a + ((s >> i) & 1);
                g.push_back(evaluateGraph(graph, b));
                for (size_t t = 0; t < nt; ++t)
                    unknown += isComputed(graph, t) && atUser.known[t] && !g.back().known[t];
            }
            if (unknown < bestUnknown) {
                bestUnknown = unknown;
                best = std::move(g);
                bestBase = a;
            }
            if (unknown == 0)
                break;
        }
        sm.grid = std::move(best);
        sm.base = bestBase;
    }
    if (k > 0)
        sm.checks.push_back(evaluateGraph(graph, checkBinding(k, sm.base)));
    return sm;
}

// Tensor t's dims as polynomials of the symbols; false when they do not fit (then they are re-inferred).
bool fitTensorDims(size_t t, const Samples& sm, const std::vector<int64_t>& ud, size_t k, std::vector<DimExpr>& dims)
{
    bool ok = true;
    if (sm.fit) {
        std::vector<int64_t> corner(sm.grid.size());
        for (const EvalResult& g : sm.grid)
            ok = ok && g.known[t] && g.dims[t].size() == ud.size();
        for (size_t j = 0; ok && j < ud.size(); ++j) {
            bool constant = true;
            for (size_t s = 0; s < sm.grid.size(); ++s) {
                corner[s] = sm.grid[s].dims[t][j];
                constant = constant && corner[s] == corner[0];
            }
            if (constant) {
                dims.push_back(DimExpr::constant(corner[0]));
                continue;
            }
            auto e = fitDim(corner, k, sm.base);
            if (!e)
                return false;
            dims.push_back(std::move(*e));
        }
    } else {
        // Too many symbols to fit: dims equal at two bindings are taken as constant, others re-inferred.
        const EvalResult& check = sm.checks[0];
        for (size_t j = 0; ok && j < ud.size(); ++j) {
            ok = check.known[t] && check.dims[t].size() == ud.size() && check.dims[t][j] == ud[j];
            dims.push_back(DimExpr::constant(ud[j]));
        }
    }
    return ok;
}

bool agreesWith(const std::vector<DimExpr>& dims, size_t t, const EvalResult& r, const Bindings& b)
{
    if (!r.known[t] || r.dims[t].size() != dims.size())
        return false;
    for (size_t j = 0; j < dims.size(); ++j)
        if (dims[j].eval(b) != std::optional<int64_t>(r.dims[t][j]))
            return false;
    return true;
}

// One computed tensor's shape: unknown (with the node that made it so), constant, fitted and verified at
// the check binding and the user's, or Reinfer (evaluated again at each binding).
void settleTensorShape(Model& m, size_t t, const EvalResult& atUser, const Bindings& user, const Samples& sm,
                       std::map<int, int>& unknownByCause)
{
    const size_t k = m.symbols.size();
    Tensor& ten = m.tensors[t];
    if (ten.producer < 0 && ten.role == TensorRole::Activation && ten.shape.state == TensorShape::State::Unknown &&
        !ten.shape.unknownReason.empty()) {
        return; // dangling: the loader already said why
    }
    TensorShape& sh = ten.shape;
    sh.dims.clear();
    if (!atUser.known[t]) {
        sh.state = TensorShape::State::Unknown;
        sh.unknownNode = atUser.cause[t];
        sh.unknownReason = sh.unknownNode >= 0 ? atUser.reason[size_t(sh.unknownNode)] : "unknown";
        if (sh.unknownNode >= 0)
            unknownByCause[sh.unknownNode]++;
        return;
    }
    const std::vector<int64_t>& ud = atUser.dims[t];
    if (k == 0) {
        sh.state = TensorShape::State::Exact;
        for (int64_t d : ud)
            sh.dims.push_back(DimExpr::constant(d));
        return;
    }
    bool ok = fitTensorDims(t, sm, ud, k, sh.dims);
    if (ok)
        ok = agreesWith(sh.dims, t, sm.checks[0], checkBinding(k, sm.base)) && agreesWith(sh.dims, t, atUser, user);
    if (ok) {
        sh.state = TensorShape::State::Exact;
    } else {
        sh.state = TensorShape::State::Reinfer;
        sh.dims.clear();
        for (int64_t d : ud)
            sh.dims.push_back(DimExpr::constant(d)); // dims at the load-time binding, for display
    }
}

void warnUnknownAndDisagreeing(Model& m, const EvalResult& atUser, const std::map<int, int>& unknownByCause)
{
    for (const auto& [node, count] : unknownByCause) {
        const Node& n = m.nodes[size_t(node)];
        m.warnings.push_back(m.info.file + ": node '" + (n.name.empty() ? n.op + "_" + std::to_string(node) : n.name) +
                             "' (" + n.op + "): " + atUser.reason[size_t(node)] + "; " + std::to_string(count) +
                             (count == 1 ? " tensor has" : " tensors have") + " an unknown shape");
    }
    if (!atUser.disagree.empty()) {
        const Tensor& t = m.tensors[size_t(atUser.disagree.front())];
        m.warnings.push_back(m.info.file + ": " + std::to_string(atUser.disagree.size()) +
                             (atUser.disagree.size() == 1 ? " tensor's" : " tensors'") +
                             " declared shape (value_info) disagrees with Headroom's inference, first '" + t.name +
                             "'; the inferred shape is used");
    }
}

// Sizes that overflow 64-bit at the load-time binding are reported, not wrapped.
void warnOverflow(Model& m, const Bindings& user)
{
    for (const Tensor& ten : m.tensors) {
        if (ten.shape.state != TensorShape::State::Exact)
            continue;
        std::optional<int64_t> numel = 1;
        for (const DimExpr& d : ten.shape.dims) {
            auto v = d.eval(user);
            numel = v && numel ? checkedMul(*numel, *v) : std::nullopt;
        }
        if (numel)
            numel = checkedMul(*numel, std::max<int64_t>(1, bytesOf(ten.dtype)));
        if (!numel) {
            m.warnings.push_back(m.info.file + ": tensor '" + ten.name + "': its size overflows 64-bit bytes");
            break;
        }
    }
}

} // namespace

void fitShapes(Model& m, std::shared_ptr<ShapeGraph> graph)
{
    const size_t k = m.symbols.size();
    const Bindings user = m.defaultBindings();
    const EvalResult atUser = evaluateGraph(*graph, user);
    const size_t nt = m.tensors.size();

    for (size_t t = 0; t < nt; ++t)
        if (m.tensors[t].dtype == DType::Undefined && t < atUser.dtype.size())
            m.tensors[t].dtype = atUser.dtype[t];
    seedInputShapes(m, *graph);
    const Samples sm = sample(*graph, atUser, k, nt);
    std::map<int, int> unknownByCause;
    for (size_t t = 0; t < nt; ++t)
        if (isComputed(*graph, t) && t < atUser.known.size())
            settleTensorShape(m, t, atUser, user, sm, unknownByCause);
    warnUnknownAndDisagreeing(m, atUser, unknownByCause);
    warnOverflow(m, user);
    m.oracle = std::make_shared<GraphOracle>(std::move(graph));
}

} // namespace headroom::detail
