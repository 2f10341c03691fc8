// Dims as functions of the symbols: evaluate the graph on a 2^k grid of bindings, fit each dim as a
// multilinear polynomial, verify at fresh bindings; what does not verify is re-inferred on demand.
#include "import/loader_internal.h"

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

    // Graph inputs: their dims are the symbols themselves.
    for (int i : m.inputs) {
        Tensor& t = m.tensors[size_t(i)];
        if (!graph->inputHasShape[size_t(i)]) {
            t.shape.state = TensorShape::State::Unknown;
            t.shape.unknownReason = "input '" + t.name + "' has no declared shape";
            continue;
        }
        t.shape.state = TensorShape::State::Exact;
        t.shape.dims.clear();
        for (const InputDim& d : graph->inputDims[size_t(i)])
            t.shape.dims.push_back(d.symbol >= 0 ? DimExpr::symbol(d.symbol) : DimExpr::constant(d.value));
    }

    auto isComputed = [&](size_t t) {
        return !graph->isStored[t] && !graph->isInput[t];
    };

    // Sample grids: retry with larger bases when small values make the graph invalid (positions sliced to
    // seq, convolutions that need a minimum size).
    std::vector<EvalResult> grid;
    int64_t base = 2;
    const bool fit = k > 0 && k <= kMaxFitSymbols;
    if (fit) {
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
                g.push_back(evaluateGraph(*graph, b));
                for (size_t t = 0; t < nt; ++t)
                    unknown += isComputed(t) && atUser.known[t] && !g.back().known[t];
            }
            if (unknown < bestUnknown) {
                bestUnknown = unknown;
                best = std::move(g);
                bestBase = a;
            }
            if (unknown == 0)
                break;
        }
        grid = std::move(best);
        base = bestBase;
    }
    std::vector<EvalResult> checks;
    if (k > 0) {
        Bindings v(k);
        for (size_t i = 0; i < k; ++i)
            v[i] = base + 3 + 2 * static_cast<int64_t>(i);
        checks.push_back(evaluateGraph(*graph, v));
    }

    std::map<int, int> unknownByCause;
    std::vector<int64_t> corner(grid.size());
    for (size_t t = 0; t < nt; ++t) {
        if (!isComputed(t) || t >= atUser.known.size())
            continue;
        Tensor& ten = m.tensors[t];
        if (ten.producer < 0 && ten.role == TensorRole::Activation && ten.shape.state == TensorShape::State::Unknown
            && !ten.shape.unknownReason.empty()) {
            continue; // dangling: the loader already said why
        }
        TensorShape& sh = ten.shape;
        sh.dims.clear();
        if (!atUser.known[t]) {
            sh.state = TensorShape::State::Unknown;
            sh.unknownNode = atUser.cause[t];
            sh.unknownReason = sh.unknownNode >= 0 ? atUser.reason[size_t(sh.unknownNode)] : "unknown";
            if (sh.unknownNode >= 0)
                unknownByCause[sh.unknownNode]++;
            continue;
        }
        const std::vector<int64_t>& ud = atUser.dims[t];
        if (k == 0) {
            sh.state = TensorShape::State::Exact;
            for (int64_t d : ud)
                sh.dims.push_back(DimExpr::constant(d));
            continue;
        }
        bool ok = true;
        if (fit) {
            for (const EvalResult& g : grid)
                ok = ok && g.known[t] && g.dims[t].size() == ud.size();
            for (size_t j = 0; ok && j < ud.size(); ++j) {
                bool constant = true;
                for (size_t s = 0; s < grid.size(); ++s) {
                    corner[s] = grid[s].dims[t][j];
                    constant = constant && corner[s] == corner[0];
                }
                if (constant) {
                    sh.dims.push_back(DimExpr::constant(corner[0]));
                    continue;
                }
                auto e = fitDim(corner, k, base);
                if (!e) {
                    ok = false;
                    break;
                }
                sh.dims.push_back(std::move(*e));
            }
        } else {
            // Too many symbols to fit: dims equal at two bindings are taken as constant, others re-inferred.
            for (size_t j = 0; ok && j < ud.size(); ++j) {
                ok = checks[0].known[t] && checks[0].dims[t].size() == ud.size() && checks[0].dims[t][j] == ud[j];
                sh.dims.push_back(DimExpr::constant(ud[j]));
            }
        }
        auto agrees = [&](const EvalResult& r, const Bindings& b) {
            if (!r.known[t] || r.dims[t].size() != sh.dims.size())
                return false;
            for (size_t j = 0; j < sh.dims.size(); ++j)
                if (sh.dims[j].eval(b) != std::optional<int64_t>(r.dims[t][j]))
                    return false;
            return true;
        };
        if (ok) {
            Bindings v(k);
            for (size_t i = 0; i < k; ++i)
                v[i] = base + 3 + 2 * static_cast<int64_t>(i);
            ok = agrees(checks[0], v) && agrees(atUser, user);
        }
        if (ok) {
            sh.state = TensorShape::State::Exact;
        } else {
            sh.state = TensorShape::State::Reinfer;
            sh.dims.clear();
            for (int64_t d : ud)
                sh.dims.push_back(DimExpr::constant(d)); // dims at the load-time binding, for display
        }
    }
    for (const auto& [node, count] : unknownByCause) {
        const Node& n = m.nodes[size_t(node)];
        m.warnings.push_back(m.info.file + ": node '" + (n.name.empty() ? n.op + "_" + std::to_string(node) : n.name)
                             + "' (" + n.op + "): " + atUser.reason[size_t(node)] + "; " + std::to_string(count)
                             + (count == 1 ? " tensor has" : " tensors have") + " an unknown shape");
    }
    if (!atUser.disagree.empty()) {
        const Tensor& t = m.tensors[size_t(atUser.disagree.front())];
        m.warnings.push_back(m.info.file + ": " + std::to_string(atUser.disagree.size())
                             + (atUser.disagree.size() == 1 ? " tensor's" : " tensors'")
                             + " declared shape (value_info) disagrees with Headroom's inference, first '" + t.name
                             + "'; the inferred shape is used");
    }
    // Sizes that overflow 64-bit at the load-time binding are reported, not wrapped.
    for (size_t t = 0; t < nt; ++t) {
        const Tensor& ten = m.tensors[t];
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
    m.oracle = std::make_shared<GraphOracle>(std::move(graph));
}

} // namespace headroom::detail
