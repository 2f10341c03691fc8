#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace headroom {

// Values of the model's symbols (batch, seq, ...), indexed like Model::symbols.
using Bindings = std::vector<int64_t>;

// One dimension as a function of the symbols: a multilinear polynomial with integer coefficients,
// sum(coeff * prod_{i in mask} symbol_i). It covers what exporters produce for batch/sequence dims
// (batch, batch*seq, seq-1, 4*seq, ...). Dimensions that are not of this form (strided convolutions on a
// symbolic spatial dim) are not represented; their tensors are re-inferred at the bound values instead.
struct DimTerm
{
    uint32_t mask = 0; // bit i set: symbol i is a factor
    int64_t coeff = 0;
    friend bool operator==(const DimTerm&, const DimTerm&) = default;
};

class DimExpr
{
public:
    DimExpr() = default;
    static DimExpr constant(int64_t value);
    static DimExpr symbol(int index);

    // std::nullopt on 64-bit overflow.
    std::optional<int64_t> eval(const Bindings& values) const noexcept;
    bool isConstant() const noexcept;
    std::optional<int64_t> constantValue() const noexcept;
    uint32_t symbolMask() const noexcept; // union of the masks of all terms
    const std::vector<DimTerm>& terms() const noexcept { return m_terms; }
    void addTerm(uint32_t mask, int64_t coeff); // merges equal masks, drops zero coefficients
    // "batch*seq", "4*seq - 1", "3": names come from the caller.
    std::string toString(const std::vector<std::string>& symbolNames) const;

    friend bool operator==(const DimExpr&, const DimExpr&) = default;

private:
    std::vector<DimTerm> m_terms; // sorted by mask
};

// A dim written as an expression of the symbols, the way exporters write value_info dims (PyTorch's
// dynamo exporter prints sympy: "batch*seq", "2*seq", "seq + 1", "floor(seq/2)", "(seq//2)", "ceil(seq/4)",
// "Max(1, seq)"). Evaluated exactly (rationals), so it also covers what DimExpr cannot (divisions).
class DimFormula
{
public:
    // std::nullopt when the text is not such an expression or names a symbol not in `symbolNames`.
    static std::optional<DimFormula> parse(std::string_view text, const std::vector<std::string>& symbolNames);
    // std::nullopt on overflow, division by zero or a non-integral result.
    std::optional<int64_t> eval(const Bindings& values) const noexcept;
    // The same function as a DimExpr when it is one (sums and products of distinct symbols).
    std::optional<DimExpr> polynomial() const;

    struct Op
    {
        enum class Kind : uint8_t { Const, Sym, Add, Sub, Mul, Div, FloorDiv, Mod, Neg, Floor, Ceil, Max, Min };
        Kind kind = Kind::Const;
        int64_t value = 0; // Const: the number; Sym: the symbol index
    };

private:
    std::vector<Op> m_rpn; // postfix
};

// Checked 64-bit arithmetic used wherever sizes are multiplied (a dim of 2^62 must not wrap). Inline: every
// tensor size of every slider tick goes through them (issue 16).
inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) noexcept
{
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r))
        return std::nullopt;
    return r;
}

inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) noexcept
{
    int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r))
        return std::nullopt;
    return r;
}

// Inline for the same reason.
inline std::optional<int64_t> DimExpr::eval(const Bindings& values) const noexcept
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

inline std::optional<int64_t> DimExpr::constantValue() const noexcept
{
    if (m_terms.empty())
        return 0;
    if (m_terms.size() == 1 && m_terms[0].mask == 0)
        return m_terms[0].coeff;
    return std::nullopt;
}

} // namespace headroom
