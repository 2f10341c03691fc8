// Module paths for nodes whose names carry none (PyTorch's dynamo exporter names nodes "node_MatMul_12"):
// from the exporter's metadata_props (read at import), else from the state_dict names of the parameters a
// node consumes ("transformer.h.0.attn.c_attn.weight" -> "transformer.h.0.attn.c_attn"), spread to the
// parameter-free nodes between two such nodes as the modules they share.
#include "import_internal.h"

#include <algorithm>
#include <cctype>

namespace headroom::detail {
namespace {

// The non-empty pieces of `s` between `sep`s ("a..b." -> a, b).
std::vector<std::string> split(const std::string& s, char sep)
{
    std::vector<std::string> out;
    for (size_t p = 0; p <= s.size();) {
        size_t e = s.find(sep, p);
        if (e == std::string::npos)
            e = s.size();
        if (e > p)
            out.push_back(s.substr(p, e - p));
        p = e + 1;
    }
    return out;
}

bool allDigits(const std::string& s)
{
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// A state_dict-style name ("a.b.weight"); exporter-made names ("onnx::MatMul_12", "val_3") are not.
std::string moduleOfParameter(const std::string& name)
{
    if (name.find("::") != std::string::npos)
        return {};
    const size_t dot = name.rfind('.');
    if (dot == std::string::npos || dot == 0)
        return {};
    return name.substr(0, dot);
}

std::string commonModule(const std::string& a, const std::string& b)
{
    const auto pa = split(a, '/'), pb = split(b, '/');
    std::string out;
    for (size_t i = 0; i < pa.size() && i < pb.size() && pa[i] == pb[i]; ++i)
        out += (out.empty() ? "" : "/") + pa[i];
    return out;
}

} // namespace

std::vector<std::string> modulePathParts(const std::string& dotted)
{
    // ModuleList/Sequential children are "<name>.<int>": one tree level, as TorchScript's "/layer1/layer1.0/".
    std::vector<std::string> parts;
    for (std::string& p : split(dotted, '.')) {
        if (allDigits(p) && !parts.empty())
            parts.back() += "." + p;
        else
            parts.push_back(std::move(p));
    }
    return parts;
}

void assignModules(Model& m)
{
    const bool metadata = std::any_of(m.nodes.begin(), m.nodes.end(),
                                      [](const Node& n) { return n.moduleFromMetadata; });
    std::vector<char> known(m.nodes.size(), 0);
    for (size_t k = 0; k < m.nodes.size(); ++k) {
        Node& n = m.nodes[k];
        if (n.moduleFromMetadata) {
            known[k] = 1;
            continue;
        }
        if (metadata)
            continue; // a file that carries module stacks: nodes without one are spread below
        for (int in : n.inputs) {
            if (in < 0)
                continue;
            const Tensor* t = &m.tensors[size_t(in)];
            const size_t users = t->consumers.size();
            if (t->aliasOf >= 0)
                t = &m.tensors[size_t(t->aliasOf)];
            if (t->role != TensorRole::Parameter && !(t->role == TensorRole::Buffer && isFloating(t->dtype)))
                continue;
            // A tensor several nodes read says nothing about which module each belongs to: tied weights, and
            // the exporter's optimizer merging equal initializers (every all-ones norm weight of a
            // random-init export becomes "model.layers.0.input_layernorm.weight").
            if (users > 1 || t->consumers.size() > 1)
                continue;
            const std::string mod = moduleOfParameter(t->name);
            if (!mod.empty()) {
                for (const std::string& part : modulePathParts(mod))
                    n.module += (n.module.empty() ? "" : "/") + part;
                known[k] = 1;
                break;
            }
        }
    }
    // Parameter-free nodes between two known ones belong to the modules both share.
    int prev = -1;
    for (size_t k = 0; k < m.nodes.size(); ++k) {
        if (known[k]) {
            prev = static_cast<int>(k);
            continue;
        }
        size_t next = k + 1;
        while (next < m.nodes.size() && !known[next])
            ++next;
        if (prev >= 0 && next < m.nodes.size())
            m.nodes[k].module = commonModule(m.nodes[size_t(prev)].module, m.nodes[next].module);
    }
}

} // namespace headroom::detail
