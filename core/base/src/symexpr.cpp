#include "headroom/base/symexpr.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>

namespace headroom {

DimExpr DimExpr::constant(int64_t value)
{
    DimExpr e;
    e.addTerm(0, value);
    return e;
}

DimExpr DimExpr::symbol(int index)
{
    DimExpr e;
    e.addTerm(1u << index, 1);
    return e;
}

void DimExpr::addTerm(uint32_t mask, int64_t coeff)
{
    auto it = std::lower_bound(m_terms.begin(), m_terms.end(), mask,
                               [](const DimTerm& t, uint32_t m) { return t.mask < m; });
    if (it != m_terms.end() && it->mask == mask) {
        it->coeff += coeff;
        if (it->coeff == 0)
            m_terms.erase(it);
    } else if (coeff != 0) {
        m_terms.insert(it, DimTerm{mask, coeff});
    }
}

bool DimExpr::isConstant() const noexcept { return m_terms.empty() || (m_terms.size() == 1 && m_terms[0].mask == 0); }

uint32_t DimExpr::symbolMask() const noexcept
{
    uint32_t m = 0;
    for (const DimTerm& t : m_terms)
        m |= t.mask;
    return m;
}

std::string DimExpr::toString(const std::vector<std::string>& symbolNames) const
{
    if (m_terms.empty())
        return "0";
    std::string out;
    // Highest-order terms first reads naturally: "4*seq - 1".
    for (auto it = m_terms.rbegin(); it != m_terms.rend(); ++it) {
        int64_t c = it->coeff;
        if (out.empty()) {
            if (c < 0) {
                out += "-";
                c = -c;
            }
        } else {
            out += c < 0 ? " - " : " + ";
            c = std::llabs(c);
        }
        std::string factors;
        for (uint32_t m = it->mask, i = 0; m != 0; m >>= 1, ++i) {
            if ((m & 1u) == 0)
                continue;
            if (!factors.empty())
                factors += "*";
            factors += i < symbolNames.size() ? symbolNames[i] : "s" + std::to_string(i);
        }
        if (factors.empty())
            out += std::to_string(c);
        else if (c == 1)
            out += factors;
        else
            out += std::to_string(c) + "*" + factors;
    }
    return out;
}

} // namespace headroom

namespace headroom {
namespace {

// Exact rationals for DimFormula: sympy prints floor(seq/2) with a true division inside.
struct Rational
{
    int64_t num = 0, den = 1;
};

std::optional<Rational> normalise(int64_t num, int64_t den)
{
    if (den == 0)
        return std::nullopt;
    if (den < 0) {
        if (num == INT64_MIN || den == INT64_MIN)
            return std::nullopt;
        num = -num;
        den = -den;
    }
    int64_t a = std::llabs(num), b = den;
    while (b != 0) {
        const int64_t t = a % b;
        a = b;
        b = t;
    }
    if (a > 1) {
        num /= a;
        den /= a;
    }
    return Rational{num, den};
}

std::optional<int64_t> floorOf(Rational r)
{
    int64_t q = r.num / r.den;
    if (r.num % r.den != 0 && r.num < 0)
        --q;
    return q;
}

class FormulaParser
{
public:
    FormulaParser(std::string_view s, const std::vector<std::string>& names) : m_s(s), m_names(names) {}
    bool run(std::vector<DimFormula::Op>& out)
    {
        m_out = &out;
        if (!sum())
            return false;
        skip();
        return m_p == m_s.size();
    }

private:
    using K = DimFormula::Op::Kind;
    std::string_view m_s;
    const std::vector<std::string>& m_names;
    size_t m_p = 0;
    int m_depth = 0;
    std::vector<DimFormula::Op>* m_out = nullptr;

    void skip()
    {
        while (m_p < m_s.size() && (m_s[m_p] == ' ' || m_s[m_p] == '\t'))
            ++m_p;
    }
    bool eat(std::string_view t)
    {
        skip();
        if (m_s.substr(m_p, t.size()) != t)
            return false;
        m_p += t.size();
        return true;
    }
    void emit(K k, int64_t v = 0) { m_out->push_back({k, v}); }
    bool sum()
    {
        if (!product())
            return false;
        for (;;) {
            if (eat("+")) {
                if (!product())
                    return false;
                emit(K::Add);
            } else if (eat("-")) {
                if (!product())
                    return false;
                emit(K::Sub);
            } else {
                return true;
            }
        }
    }
    bool product()
    {
        if (!unary())
            return false;
        for (;;) {
            if (eat("//")) {
                if (!unary())
                    return false;
                emit(K::FloorDiv);
            } else if (eat("*")) {
                if (!unary())
                    return false;
                emit(K::Mul);
            } else if (eat("/")) {
                if (!unary())
                    return false;
                emit(K::Div);
            } else if (eat("%")) {
                if (!unary())
                    return false;
                emit(K::Mod);
            } else {
                return true;
            }
        }
    }
    bool unary()
    {
        if (eat("-")) {
            if (!unary())
                return false;
            emit(K::Neg);
            return true;
        }
        return atom();
    }
    bool atom()
    {
        if (++m_depth > 64)
            return false;
        skip();
        bool ok = false;
        if (m_p < m_s.size() && std::isdigit(static_cast<unsigned char>(m_s[m_p]))) {
            int64_t v = 0;
            while (m_p < m_s.size() && std::isdigit(static_cast<unsigned char>(m_s[m_p]))) {
                auto a = checkedMul(v, 10);
                auto b = a ? checkedAdd(*a, m_s[m_p] - '0') : std::nullopt;
                if (!b)
                    return false;
                v = *b;
                ++m_p;
            }
            emit(K::Const, v);
            ok = true;
        } else if (eat("(")) {
            ok = sum() && eat(")");
        } else {
            const size_t start = m_p;
            while (m_p < m_s.size() &&
                   (std::isalnum(static_cast<unsigned char>(m_s[m_p])) || m_s[m_p] == '_' || m_s[m_p] == '.'))
                ++m_p;
            const std::string word(m_s.substr(start, m_p - start));
            if (word.empty())
                return false;
            std::string lowerWord = word;
            for (char& c : lowerWord)
                c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            const bool isCall = (lowerWord == "floor" || lowerWord == "ceiling" || lowerWord == "ceil" ||
                                 lowerWord == "max" || lowerWord == "min" || lowerWord == "floordiv" ||
                                 lowerWord == "mod") &&
                                eat("(");
            if (isCall) {
                if (!sum())
                    return false;
                if (lowerWord == "floor" || lowerWord == "ceil" || lowerWord == "ceiling") {
                    emit(lowerWord == "floor" ? K::Floor : K::Ceil);
                } else {
                    if (!eat(",") || !sum())
                        return false;
                    emit(lowerWord == "max"   ? K::Max
                         : lowerWord == "min" ? K::Min
                         : lowerWord == "mod" ? K::Mod
                                              : K::FloorDiv);
                }
                ok = eat(")");
            } else {
                for (size_t i = 0; i < m_names.size() && !ok; ++i)
                    if (m_names[i] == word) {
                        emit(K::Sym, static_cast<int64_t>(i));
                        ok = true;
                    }
            }
        }
        --m_depth;
        return ok;
    }
};

} // namespace

std::optional<DimFormula> DimFormula::parse(std::string_view text, const std::vector<std::string>& symbolNames)
{
    DimFormula f;
    FormulaParser p(text, symbolNames);
    if (text.empty() || text.size() > 256 || !p.run(f.m_rpn))
        return std::nullopt;
    return f;
}

std::optional<int64_t> DimFormula::eval(const Bindings& values) const noexcept
{
    using K = Op::Kind;
    std::vector<Rational> st;
    st.reserve(m_rpn.size());
    for (const Op& op : m_rpn) {
        if (op.kind == K::Const) {
            st.push_back({op.value, 1});
            continue;
        }
        if (op.kind == K::Sym) {
            if (op.value < 0 || size_t(op.value) >= values.size())
                return std::nullopt;
            st.push_back({values[size_t(op.value)], 1});
            continue;
        }
        if (st.empty())
            return std::nullopt;
        const Rational b = st.back();
        if (op.kind == K::Neg || op.kind == K::Floor || op.kind == K::Ceil) {
            if (op.kind == K::Neg) {
                if (b.num == INT64_MIN)
                    return std::nullopt;
                st.back() = {-b.num, b.den};
            } else {
                auto f = floorOf(b);
                st.back() = {*f + (op.kind == K::Ceil && b.num % b.den != 0 ? 1 : 0), 1};
            }
            continue;
        }
        st.pop_back();
        if (st.empty())
            return std::nullopt;
        const Rational a = st.back();
        std::optional<Rational> r;
        // a/x + b/y = (a*y + b*x) / (x*y), all checked.
        auto cross = [](int64_t p, int64_t q) { return checkedMul(p, q); };
        switch (op.kind) {
        case K::Add:
        case K::Sub: {
            auto l = cross(a.num, b.den), rr = cross(b.num, a.den), d = cross(a.den, b.den);
            if (!l || !rr || !d)
                return std::nullopt;
            auto s = checkedAdd(*l, op.kind == K::Add ? *rr : -*rr);
            if (!s)
                return std::nullopt;
            r = normalise(*s, *d);
            break;
        }
        case K::Mul: {
            auto n = cross(a.num, b.num), d = cross(a.den, b.den);
            if (!n || !d)
                return std::nullopt;
            r = normalise(*n, *d);
            break;
        }
        case K::Div:
        case K::FloorDiv:
        case K::Mod: {
            auto n = cross(a.num, b.den), d = cross(a.den, b.num);
            if (!n || !d)
                return std::nullopt;
            r = normalise(*n, *d);
            if (r && op.kind != K::Div) {
                const int64_t q = *floorOf(*r);
                if (op.kind == K::FloorDiv) {
                    r = Rational{q, 1};
                } else {
                    // a - q*b, exact on integers (sympy Mod)
                    if (a.den != 1 || b.den != 1)
                        return std::nullopt;
                    auto qb = checkedMul(q, b.num);
                    auto m = qb ? checkedAdd(a.num, -*qb) : std::nullopt;
                    if (!m)
                        return std::nullopt;
                    r = Rational{*m, 1};
                }
            }
            break;
        }
        case K::Max:
        case K::Min: {
            auto l = cross(a.num, b.den), rr = cross(b.num, a.den);
            if (!l || !rr)
                return std::nullopt;
            r = ((*l >= *rr) == (op.kind == K::Max)) ? a : b;
            break;
        }
        default: return std::nullopt;
        }
        if (!r)
            return std::nullopt;
        st.back() = *r;
    }
    if (st.size() != 1 || st[0].den != 1)
        return std::nullopt;
    return st[0].num;
}

std::optional<DimExpr> DimFormula::polynomial() const
{
    using K = Op::Kind;
    std::vector<DimExpr> st;
    for (const Op& op : m_rpn) {
        switch (op.kind) {
        case K::Const: st.push_back(DimExpr::constant(op.value)); continue;
        case K::Sym:
            if (op.value < 0 || op.value >= 31)
                return std::nullopt;
            st.push_back(DimExpr::symbol(static_cast<int>(op.value)));
            continue;
        case K::Neg: {
            if (st.empty())
                return std::nullopt;
            DimExpr n;
            for (const DimTerm& t : st.back().terms())
                n.addTerm(t.mask, -t.coeff);
            st.back() = n;
            continue;
        }
        case K::Add:
        case K::Sub:
        case K::Mul: {
            if (st.size() < 2)
                return std::nullopt;
            const DimExpr b = st.back();
            st.pop_back();
            DimExpr& a = st.back();
            DimExpr r;
            if (op.kind == K::Mul) {
                for (const DimTerm& x : a.terms())
                    for (const DimTerm& y : b.terms()) {
                        if (x.mask & y.mask)
                            return std::nullopt; // seq*seq: not multilinear
                        auto c = checkedMul(x.coeff, y.coeff);
                        if (!c)
                            return std::nullopt;
                        r.addTerm(x.mask | y.mask, *c);
                    }
            } else {
                r = a;
                for (const DimTerm& y : b.terms())
                    r.addTerm(y.mask, op.kind == K::Add ? y.coeff : -y.coeff);
            }
            a = r;
            continue;
        }
        default: return std::nullopt;
        }
    }
    if (st.size() != 1)
        return std::nullopt;
    return st[0];
}

} // namespace headroom
