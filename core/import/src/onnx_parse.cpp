// Reading ONNX proto fields: attributes (old files leave `type` unset), small stored tensors' values in any of
// the typed fields, and the module stack PyTorch's dynamo exporter records in metadata_props.
#include "onnx_parse.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace headroom::detail {
namespace {

constexpr int64_t kMaxValueElems = 256; // small integer stored tensors whose values shapes may need

// Tensor attributes keep only what shapes need: element type in `i`, dims in `ints`, a one-element value in
// `floats` (ConstantOfShape's fill value feeds PyTorch's expand arithmetic).
void tensorAttr(const onnx::TensorProto& t, Attr& r)
{
    r.kind = Attr::Kind::Tensor;
    r.i = t.data_type();
    int64_t numel = 1;
    for (int64_t d : t.dims()) {
        r.ints.push_back(d);
        numel = d >= 0 ? checkedMul(numel, d).value_or(-1) : -1;
    }
    if (numel == 1) {
        if (auto v = smallValue(t, 1))
            r.floats.push_back(static_cast<double>((*v)[0]));
    }
}

template <typename T> T readLE(const std::string& raw, size_t i)
{
    T v{};
    std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
    return v;
}

// PyTorch's dynamo exporter records each node's module stack in NodeProto.metadata_props (field 9, ONNX
// 1.16). ONNX 1.12's classes do not know the field, so it arrives among the unknown fields as repeated
// length-delimited StringStringEntryProto messages (key = 1, value = 2).
std::vector<std::pair<std::string, std::string>> nodeMetadata(const onnx::NodeProto& np)
{
    std::vector<std::pair<std::string, std::string>> out;
    const google::protobuf::UnknownFieldSet& u = np.unknown_fields();
    for (int i = 0; i < u.field_count(); ++i) {
        const google::protobuf::UnknownField& f = u.field(i);
        if (f.number() != 9 || f.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
            continue;
        onnx::StringStringEntryProto e;
        if (e.ParseFromString(f.length_delimited()) && !e.key().empty())
            out.emplace_back(e.key(), e.value());
    }
    return out;
}

// The hook name torch.export gives nodes that belong to no module (shape arithmetic at the top level).
bool isNoModule(std::string_view s) { return s.empty() || s.rfind("_empty_nn_module_stack", 0) == 0; }

// Module stack entries -> tree levels, the way TorchScript scopes nodes ("/layer1/layer1.0/conv1/Conv",
// "/model/layers.3/self_attn/q_proj/MatMul"): each entry is one level named by what it adds to the one
// before ("m.model.layers.3" after "m.model" -> "layers.3"); a bare index after a called container
// ("layer1.0" after "layer1") keeps the container's name ("layer1.0"), as TorchScript does.
std::string levelsPath(const std::vector<std::string>& stack)
{
    std::string path, prev;
    for (const std::string& e : stack) {
        if (isNoModule(e))
            continue;
        std::string level = e;
        if (!prev.empty() && e.size() > prev.size() + 1 && e.rfind(prev + ".", 0) == 0) {
            level = e.substr(prev.size() + 1);
            if (std::all_of(level.begin(), level.end(),
                            [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
                const size_t dot = prev.rfind('.');
                level = prev.substr(dot == std::string::npos ? 0 : dot + 1) + "." + level;
            }
        }
        path += (path.empty() ? "" : "/") + level;
        prev = e;
    }
    return path;
}

// "['', 'm', 'm.model', 'm.model.layers.0', 'linear']": the module stack, then the FX node itself.
std::string moduleFromNameScopes(const std::string& v)
{
    std::vector<std::string> items;
    for (size_t p = 0; p < v.size();) {
        const char q = v[p];
        if (q != '\'' && q != '"') {
            ++p;
            continue;
        }
        const size_t e = v.find(q, p + 1);
        if (e == std::string::npos)
            break;
        items.push_back(v.substr(p + 1, e - p - 1));
        p = e + 1;
    }
    if (!items.empty())
        items.pop_back();
    return levelsPath(items);
}

// "namespace": ": Wrapper/m: LlamaForCausalLM/m.model: LlamaModel/.../linear: aten.linear.default".
std::string moduleFromNamespace(const std::string& v)
{
    std::vector<std::string> names;
    for (size_t p = 0; p <= v.size();) {
        size_t e = v.find('/', p);
        if (e == std::string::npos)
            e = v.size();
        const std::string seg = v.substr(p, e - p);
        const size_t colon = seg.find(':');
        names.push_back(colon == std::string::npos ? seg : seg.substr(0, colon));
        p = e + 1;
    }
    if (!names.empty())
        names.pop_back();
    return levelsPath(names);
}

} // namespace

std::string normDomain(const std::string& d) { return d == "ai.onnx" ? std::string() : d; }

bool isSubgraphAttr(const onnx::AttributeProto& a)
{
    return a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS || a.has_g() ||
           a.graphs_size() > 0;
}

Attr convertAttr(const onnx::AttributeProto& a)
{
    Attr r;
    r.name = a.name();
    switch (a.type()) {
    case onnx::AttributeProto::INT:
        r.kind = Attr::Kind::Int;
        r.i = a.i();
        break;
    case onnx::AttributeProto::FLOAT:
        r.kind = Attr::Kind::Float;
        r.f = a.f();
        break;
    case onnx::AttributeProto::STRING:
        r.kind = Attr::Kind::String;
        r.s = a.s();
        break;
    case onnx::AttributeProto::INTS:
        r.kind = Attr::Kind::Ints;
        r.ints.assign(a.ints().begin(), a.ints().end());
        break;
    case onnx::AttributeProto::FLOATS:
        r.kind = Attr::Kind::Floats;
        r.floats.assign(a.floats().begin(), a.floats().end());
        break;
    case onnx::AttributeProto::STRINGS:
        r.kind = Attr::Kind::Strings;
        r.strings.assign(a.strings().begin(), a.strings().end());
        break;
    case onnx::AttributeProto::TENSOR: tensorAttr(a.t(), r); break;
    case onnx::AttributeProto::GRAPH:
    case onnx::AttributeProto::GRAPHS: r.kind = Attr::Kind::Graph; break;
    default:
        // Old files leave `type` unset: infer it from the field that is present.
        if (a.has_i()) {
            r.kind = Attr::Kind::Int;
            r.i = a.i();
        } else if (a.has_f()) {
            r.kind = Attr::Kind::Float;
            r.f = a.f();
        } else if (a.has_s()) {
            r.kind = Attr::Kind::String;
            r.s = a.s();
        } else if (a.ints_size() > 0) {
            r.kind = Attr::Kind::Ints;
            r.ints.assign(a.ints().begin(), a.ints().end());
        } else if (a.floats_size() > 0) {
            r.kind = Attr::Kind::Floats;
            r.floats.assign(a.floats().begin(), a.floats().end());
        } else if (a.has_t())
            tensorAttr(a.t(), r);
        else if (a.has_g())
            r.kind = Attr::Kind::Graph;
        break;
    }
    return r;
}

std::optional<std::vector<int64_t>> smallValue(const onnx::TensorProto& t, int64_t numel)
{
    if (numel > kMaxValueElems || numel < 0 || t.data_location() == onnx::TensorProto::EXTERNAL)
        return std::nullopt;
    const auto n = static_cast<size_t>(numel);
    std::vector<int64_t> v;
    v.reserve(n);
    const std::string& raw = t.raw_data();
    switch (t.data_type()) {
    case onnx::TensorProto::INT64:
        if (!raw.empty() && raw.size() == n * 8) {
            for (size_t i = 0; i < n; ++i)
                v.push_back(readLE<int64_t>(raw, i));
        } else if (static_cast<size_t>(t.int64_data_size()) == n)
            v.assign(t.int64_data().begin(), t.int64_data().end());
        break;
    case onnx::TensorProto::INT32:
        if (!raw.empty() && raw.size() == n * 4) {
            for (size_t i = 0; i < n; ++i)
                v.push_back(readLE<int32_t>(raw, i));
        } else if (static_cast<size_t>(t.int32_data_size()) == n)
            v.assign(t.int32_data().begin(), t.int32_data().end());
        break;
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::BOOL: {
        const bool wide = t.data_type() == onnx::TensorProto::INT16 || t.data_type() == onnx::TensorProto::UINT16;
        if (!raw.empty() && raw.size() == n * (wide ? 2 : 1)) {
            for (size_t i = 0; i < n; ++i) {
                if (t.data_type() == onnx::TensorProto::INT16)
                    v.push_back(readLE<int16_t>(raw, i));
                else if (t.data_type() == onnx::TensorProto::UINT16)
                    v.push_back(readLE<uint16_t>(raw, i));
                else if (t.data_type() == onnx::TensorProto::INT8)
                    v.push_back(readLE<int8_t>(raw, i));
                else
                    v.push_back(readLE<uint8_t>(raw, i));
            }
        } else if (static_cast<size_t>(t.int32_data_size()) == n) {
            v.assign(t.int32_data().begin(), t.int32_data().end());
        }
        break;
    }
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::DOUBLE: {
        // Float scalars occasionally feed shape arithmetic (PyTorch's sqrt(head_dim)); keep integral ones.
        const bool dbl = t.data_type() == onnx::TensorProto::DOUBLE;
        std::vector<double> d;
        if (!raw.empty() && raw.size() == n * (dbl ? 8 : 4)) {
            for (size_t i = 0; i < n; ++i)
                d.push_back(dbl ? readLE<double>(raw, i) : double(readLE<float>(raw, i)));
        } else if (!dbl && static_cast<size_t>(t.float_data_size()) == n) {
            d.assign(t.float_data().begin(), t.float_data().end());
        } else if (dbl && static_cast<size_t>(t.double_data_size()) == n) {
            d.assign(t.double_data().begin(), t.double_data().end());
        }
        for (double x : d) {
            if (!(x >= -9.0e15 && x <= 9.0e15) || x != static_cast<double>(static_cast<int64_t>(x)))
                return std::nullopt;
            v.push_back(static_cast<int64_t>(x));
        }
        break;
    }
    default: return std::nullopt;
    }
    if (v.size() != n)
        return std::nullopt;
    return v;
}

bool tensorHasData(const onnx::TensorProto& t)
{
    return !t.raw_data().empty() || t.float_data_size() > 0 || t.int32_data_size() > 0 || t.int64_data_size() > 0 ||
           t.double_data_size() > 0 || t.uint64_data_size() > 0 || t.string_data_size() > 0;
}

void readNodeModule(const onnx::NodeProto& np, Node& n)
{
    if (np.unknown_fields().field_count() == 0)
        return;
    std::string scopes, ns;
    bool any = false;
    for (const auto& [k, v] : nodeMetadata(np)) {
        if (k == "pkg.torch.onnx.name_scopes") {
            scopes = v;
            any = true;
        } else if (k == "namespace") {
            ns = v;
            any = true;
        }
    }
    n.module = !scopes.empty() ? moduleFromNameScopes(scopes) : moduleFromNamespace(ns);
    n.moduleFromMetadata = any;
}

} // namespace headroom::detail
