#include "headroom/import/model.h"

namespace headroom {

const Attr* Node::attr(std::string_view n) const noexcept
{
    for (const Attr& a : attrs)
        if (a.name == n)
            return &a;
    return nullptr;
}

int64_t Node::attrInt(std::string_view n, int64_t fallback) const noexcept
{
    const Attr* a = attr(n);
    return a && a->kind == Attr::Kind::Int ? a->i : fallback;
}

double Node::attrFloat(std::string_view n, double fallback) const noexcept
{
    const Attr* a = attr(n);
    return a && a->kind == Attr::Kind::Float ? a->f : fallback;
}

std::vector<int64_t> Node::attrInts(std::string_view n) const
{
    const Attr* a = attr(n);
    return a && a->kind == Attr::Kind::Ints ? a->ints : std::vector<int64_t>{};
}

std::string Node::attrString(std::string_view n, std::string_view fallback) const
{
    const Attr* a = attr(n);
    return a && a->kind == Attr::Kind::String ? a->s : std::string(fallback);
}

Bindings Model::defaultBindings() const
{
    Bindings b;
    b.reserve(symbols.size());
    for (const Symbol& s : symbols)
        b.push_back(s.value);
    return b;
}

int Model::symbolIndex(std::string_view name) const noexcept
{
    for (size_t i = 0; i < symbols.size(); ++i)
        if (symbols[i].name == name)
            return static_cast<int>(i);
    return -1;
}

std::string Model::nodePath(int node) const
{
    const Node& n = nodes.at(static_cast<size_t>(node));
    if (n.layer > 0) {
        const std::string& p = layers.at(static_cast<size_t>(n.layer)).path;
        return p + "/" + n.op;
    }
    return n.name.empty() ? n.op + "_" + std::to_string(node) : n.name;
}

std::vector<std::string> Model::symbolNames() const
{
    std::vector<std::string> names;
    names.reserve(symbols.size());
    for (const Symbol& s : symbols)
        names.push_back(s.name);
    return names;
}

} // namespace headroom
