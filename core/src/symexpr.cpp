#include "headroom/symexpr.h"

#include <algorithm>
#include <cstdlib>

namespace headroom {

std::optional<int64_t> checkedMul(int64_t a, int64_t b) noexcept
{
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r))
        return std::nullopt;
    return r;
}

std::optional<int64_t> checkedAdd(int64_t a, int64_t b) noexcept
{
    int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r))
        return std::nullopt;
    return r;
}

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

std::optional<int64_t> DimExpr::eval(const Bindings& values) const noexcept
{
    int64_t sum = 0;
    for (const DimTerm& t : m_terms) {
        int64_t prod = t.coeff;
        for (uint32_t m = t.mask, i = 0; m != 0; m >>= 1, ++i) {
            if ((m & 1u) == 0)
                continue;
            if (i >= values.size())
                return std::nullopt;
            auto p = checkedMul(prod, values[i]);
            if (!p)
                return std::nullopt;
            prod = *p;
        }
        auto s = checkedAdd(sum, prod);
        if (!s)
            return std::nullopt;
        sum = *s;
    }
    return sum;
}

bool DimExpr::isConstant() const noexcept
{
    return m_terms.empty() || (m_terms.size() == 1 && m_terms[0].mask == 0);
}

std::optional<int64_t> DimExpr::constantValue() const noexcept
{
    if (m_terms.empty())
        return 0;
    if (m_terms.size() == 1 && m_terms[0].mask == 0)
        return m_terms[0].coeff;
    return std::nullopt;
}

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
            if (c < 0) { out += "-"; c = -c; }
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
