#pragma once
// The lookup under the plan builder's op tables (op_classes.cpp, dtype_policy.cpp): rows written in the order
// that reads best, sorted by op name when compiled, found by binary search. No start-up work and no hashing:
// a lookup is a handful of short string compares, which the plan builder makes a few times per node.
#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>

namespace headroom {

// A row is an op name (a set's member) or a struct whose `op` names the op.
constexpr std::string_view opOf(std::string_view op) { return op; }
template <class Row> constexpr std::string_view opOf(const Row& row) { return row.op; }

template <class Row, size_t N> class OpTable
{
public:
    consteval explicit OpTable(const Row (&rows)[N])
    {
        std::copy(rows, rows + N, m_rows.begin());
        std::sort(m_rows.begin(), m_rows.end(), [](const Row& a, const Row& b) { return opOf(a) < opOf(b); });
        const auto dup = std::adjacent_find(m_rows.begin(), m_rows.end(),
                                            [](const Row& a, const Row& b) { return opOf(a) == opOf(b); });
        if (dup != m_rows.end())
            throw "an op is listed twice in one table"; // not a constant expression: the build fails here
    }
    // The op's row, or nullptr when the table does not list it.
    constexpr const Row* find(std::string_view op) const
    {
        const auto it = std::lower_bound(m_rows.begin(), m_rows.end(), op,
                                         [](const Row& r, std::string_view o) { return opOf(r) < o; });
        return it != m_rows.end() && opOf(*it) == op ? &*it : nullptr;
    }
    constexpr bool contains(std::string_view op) const { return find(op) != nullptr; }

private:
    std::array<Row, N> m_rows{};
};

// opTable<Row>({...}): the row count comes from the list. A set of op names is opTable<std::string_view>.
template <class Row, size_t N> consteval OpTable<Row, N> opTable(const Row (&rows)[N]) { return OpTable<Row, N>(rows); }

} // namespace headroom
