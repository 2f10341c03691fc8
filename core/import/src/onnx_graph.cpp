// ModelProto -> Model: tensors, nodes in topological order, symbols, stored tensors (never their bytes),
// model-local functions inlined, If/Loop/Scan bodies folded into their parent node.
#include "onnx_graph.h"

#include "headroom/base/error.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <queue>
#include <unordered_map>
#include <unordered_set>

namespace headroom::detail {
namespace {

constexpr int kMaxDepth = 16;           // nested functions / subgraphs: deeper is hostile input
constexpr int64_t kMaxValueElems = 256; // small integer stored tensors whose values shapes may need

std::string normDomain(const std::string& d) { return d == "ai.onnx" ? std::string() : d; }

bool isSubgraphAttr(const onnx::AttributeProto& a)
{
    return a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS || a.has_g() ||
           a.graphs_size() > 0;
}

std::optional<std::vector<int64_t>> smallValue(const onnx::TensorProto& t, int64_t numel);

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

template <typename T> T readLE(const std::string& raw, size_t i)
{
    T v{};
    std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
    return v;
}

// Values of a small integer tensor (shape constants, axes, indices); nullopt when not available.
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

std::string lower(std::string s)
{
    for (char& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

} // namespace

struct GraphBuilder
{
    GraphBuilder(const std::string& f, ImportContext& c, Model& model, ShapeGraph* sg, int d)
        : file(f), ctx(c), m(model), g(sg), depth(d)
    {
    }
    const std::string& file;
    ImportContext& ctx;
    Model& m;
    ShapeGraph* g; // null for subgraph bodies
    int depth;
    std::unordered_map<std::string, int> byName;
    std::deque<onnx::NodeProto> owned; // inlined function bodies
    std::vector<const onnx::NodeProto*> flat;
    std::vector<std::vector<int>> implicitInputs; // per flat node: outer-scope tensors its bodies read
    int inlineCounter = 0;

    void warn(std::string s) { m.warnings.push_back(file + ": " + std::move(s)); }

    [[noreturn]] void fail(const std::string& s) const { throw Error(file + ": " + s); }

    int newTensor(const std::string& name, TensorRole role)
    {
        Tensor t;
        t.name = name;
        t.role = role;
        m.tensors.push_back(std::move(t));
        const int idx = static_cast<int>(m.tensors.size() - 1);
        byName.emplace(name, idx);
        return idx;
    }

    // Dims, dtype and (small) value of a stored tensor; checks dims; notes external data.
    StoredTensor storeTensor(const onnx::TensorProto& t, const std::string& what)
    {
        StoredTensor s;
        int64_t numel = 1;
        for (int64_t d : t.dims()) {
            if (d < 0)
                fail(what + " '" + t.name() + "' has a negative dimension (" + std::to_string(d) + ")");
            auto p = checkedMul(numel, d);
            if (!p)
                fail(what + " '" + t.name() + "' has more elements than 64-bit sizes can hold");
            numel = *p;
            s.dims.push_back(d);
        }
        s.numel = numel;
        s.dtype = dtypeFromOnnx(t.data_type());
        if (t.data_location() == onnx::TensorProto::EXTERNAL) {
            s.external = true;
            std::string loc;
            for (const auto& kv : t.external_data())
                if (kv.key() == "location")
                    loc = kv.value();
            checkExternal(loc, t.name());
        } else {
            s.hasData = tensorHasData(t);
            if (isInteger(s.dtype) || s.dtype == DType::Bool || isFloating(s.dtype))
                s.value = smallValue(t, numel);
        }
        return s;
    }

    void checkExternal(const std::string& loc, const std::string& tensor)
    {
        if (ctx.checkedLocations.count(loc))
            return;
        ctx.checkedLocations.insert(loc);
        const std::filesystem::path p(loc);
        bool escapes = loc.empty() || p.is_absolute() || p.has_root_name() || p.has_root_directory();
        for (const auto& part : p)
            if (part == "..")
                escapes = true;
        if (escapes) {
            warn("initializer '" + tensor + "': external data location '" + loc +
                 "' is outside the model's folder; not followed");
            ctx.externalMissing = true;
            return;
        }
        std::error_code ec;
        if (ctx.folder.empty() || !std::filesystem::exists(std::filesystem::path(ctx.folder) / p, ec))
            ctx.externalMissing = true;
    }

    void addStored(int idx, const StoredTensor& s, bool initializer = true)
    {
        Tensor& t = m.tensors[size_t(idx)];
        t.dtype = s.dtype;
        t.externalData = s.external;
        t.shape.state = TensorShape::State::Exact;
        for (int64_t d : s.dims)
            t.shape.dims.push_back(DimExpr::constant(d));
        if (initializer) {
            ctx.storedCount++;
            ctx.storedWithData += s.hasData;
        }
        stored.emplace(idx, s);
    }
    std::unordered_map<int, StoredTensor> stored;

    // --- model-local functions -------------------------------------------------------------------------
    void expand(const onnx::NodeProto& node, int level)
    {
        auto it = ctx.functions.find({normDomain(node.domain()), node.op_type()});
        if (it == ctx.functions.end()) {
            flat.push_back(&node);
            return;
        }
        if (level >= kMaxDepth)
            fail("model-local function '" + node.op_type() + "' nests deeper than " + std::to_string(kMaxDepth) +
                 " levels (recursive?)");
        const onnx::FunctionProto& f = *it->second;
        const std::string prefix = node.name().empty() ? node.op_type() + "_" + std::to_string(inlineCounter++)
                                                       : node.name();
        std::unordered_map<std::string, std::string> rename;
        for (int i = 0; i < f.input_size(); ++i)
            rename[f.input(i)] = i < node.input_size() ? node.input(i) : std::string();
        for (int i = 0; i < f.output_size(); ++i)
            rename[f.output(i)] = i < node.output_size() ? node.output(i) : std::string();
        auto mapName = [&](const std::string& n) -> std::string {
            if (n.empty())
                return n;
            auto r = rename.find(n);
            return r != rename.end() ? r->second : prefix + "/" + n;
        };
        for (const onnx::NodeProto& bn : f.node()) {
            onnx::NodeProto& copy = owned.emplace_back(bn);
            copy.set_name(prefix + "/" + (bn.name().empty() ? bn.op_type() : bn.name()));
            for (int i = 0; i < copy.input_size(); ++i)
                copy.set_input(i, mapName(bn.input(i)));
            for (int i = 0; i < copy.output_size(); ++i)
                copy.set_output(i, mapName(bn.output(i)));
            if (copy.domain().empty() && !f.domain().empty() && ctx.functions.count({f.domain(), copy.op_type()}))
                copy.set_domain(f.domain());
            // Attribute references (ref_attr_name) take the caller's value, else the function's default.
            google::protobuf::RepeatedPtrField<onnx::AttributeProto> attrs;
            for (const onnx::AttributeProto& a : copy.attribute()) {
                if (a.ref_attr_name().empty()) {
                    *attrs.Add() = a;
                    continue;
                }
                const onnx::AttributeProto* src = nullptr;
                for (const auto& ca : node.attribute())
                    if (ca.name() == a.ref_attr_name())
                        src = &ca;
                if (src) {
                    onnx::AttributeProto* na = attrs.Add();
                    *na = *src;
                    na->set_name(a.name());
                }
            }
            *copy.mutable_attribute() = std::move(attrs);
            expand(copy, level + 1);
        }
    }

    // --- the graph ---------------------------------------------------------------------------------------
    // The graph's steps in order: flatten the nodes, stored tensors first, then inputs, then node outputs and
    // inputs, dangling names, topological order, graph outputs, aliases.
    void build(const onnx::GraphProto& gp)
    {
        for (const onnx::NodeProto& n : gp.node())
            expand(n, 0);
        if (ctx.cancelled())
            fail("cancelled");
        addStoredTensors(gp);
        const std::vector<std::pair<int, const onnx::ValueInfoProto*>> inputInfos = addGraphInputs(gp);
        std::vector<Node> nodes = nodesWithOutputs();
        wireNodeInputs(nodes);
        warnDangling(nodes);
        sortAndWire(nodes);
        addGraphOutputs(gp);
        aliasStoredIdentities();
        if (g)
            fillShapeGraph(gp, inputInfos);
    }

    // Initializers and sparse initializers (densified: only their size matters).
    void addStoredTensors(const onnx::GraphProto& gp)
    {
        for (const onnx::TensorProto& t : gp.initializer()) {
            if (byName.count(t.name())) {
                warn("initializer '" + t.name() + "' is defined twice; the first definition is used");
                continue;
            }
            const int idx = newTensor(t.name(), TensorRole::Buffer);
            addStored(idx, storeTensor(t, "initializer"));
        }
        for (const onnx::SparseTensorProto& st : gp.sparse_initializer()) {
            const std::string& nm = st.values().name();
            if (nm.empty() || byName.count(nm))
                continue;
            onnx::TensorProto dense;
            dense.set_name(nm);
            dense.set_data_type(st.values().data_type());
            for (int64_t d : st.dims())
                dense.add_dims(d);
            const int idx = newTensor(nm, TensorRole::Buffer);
            StoredTensor s = storeTensor(dense, "sparse initializer");
            s.hasData = true;
            addStored(idx, s);
        }
    }

    std::vector<std::pair<int, const onnx::ValueInfoProto*>> addGraphInputs(const onnx::GraphProto& gp)
    {
        std::vector<std::pair<int, const onnx::ValueInfoProto*>> inputInfos;
        for (const onnx::ValueInfoProto& vi : gp.input()) {
            if (byName.count(vi.name()))
                continue; // IR < 4 lists initializers as inputs too
            const int idx = newTensor(vi.name(), TensorRole::Input);
            m.inputs.push_back(idx);
            inputInfos.emplace_back(idx, &vi);
            if (vi.type().has_tensor_type())
                m.tensors[size_t(idx)].dtype = dtypeFromOnnx(vi.type().tensor_type().elem_type());
        }
        return inputInfos;
    }

    // Node outputs. A name produced twice is renamed so the graph stays well formed.
    std::vector<Node> nodesWithOutputs()
    {
        std::vector<Node> nodes(flat.size());
        implicitInputs.assign(flat.size(), {});
        for (size_t ni = 0; ni < flat.size(); ++ni) {
            const onnx::NodeProto& np = *flat[ni];
            Node& n = nodes[ni];
            n.name = np.name();
            n.op = np.op_type();
            n.domain = normDomain(np.domain());
            if (np.unknown_fields().field_count() > 0) {
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
            for (const auto& a : np.attribute()) {
                if (isSubgraphAttr(a))
                    n.hasSubgraphs = true;
                n.attrs.push_back(convertAttr(a));
            }
            for (const std::string& out : np.output()) {
                if (out.empty()) {
                    n.outputs.push_back(-1);
                    continue;
                }
                std::string nm = out;
                if (byName.count(nm)) {
                    warn("node '" + displayName(np, ni) + "': output '" + out +
                         "' is already defined elsewhere; renamed");
                    nm = out + "#dup" + std::to_string(ni);
                }
                const int idx = newTensor(nm, TensorRole::Activation);
                m.tensors[size_t(idx)].producer = static_cast<int>(ni);
                n.outputs.push_back(idx);
            }
            if (n.op == "Constant" && n.domain.empty())
                constantNode(np, n, ni);
        }
        return nodes;
    }

    // Inputs; names nobody defines are dangling (warned once the subgraph/outer scope is resolved).
    void wireNodeInputs(std::vector<Node>& nodes)
    {
        for (size_t ni = 0; ni < flat.size(); ++ni) {
            const onnx::NodeProto& np = *flat[ni];
            for (const std::string& in : np.input()) {
                if (in.empty()) {
                    nodes[ni].inputs.push_back(-1);
                    continue;
                }
                auto it = byName.find(in);
                int idx = it != byName.end() ? it->second : -1;
                if (idx < 0) {
                    idx = newTensor(in, TensorRole::Activation);
                    danglingTensors.push_back(idx);
                }
                nodes[ni].inputs.push_back(idx);
            }
            if (nodes[ni].hasSubgraphs)
                subgraphs(np, nodes[ni], ni);
        }
    }

    void warnDangling(const std::vector<Node>& nodes)
    {
        for (int idx : danglingTensors) {
            Tensor& t = m.tensors[size_t(idx)];
            if (depth == 0) {
                std::string user;
                for (size_t ni = 0; ni < nodes.size() && user.empty(); ++ni)
                    for (int in : nodes[ni].inputs)
                        if (in == idx)
                            user = displayName(*flat[ni], ni);
                warn("node '" + user + "': input '" + t.name + "' is not produced by any node, input or initializer");
                t.shape.state = TensorShape::State::Unknown;
                t.shape.unknownReason = "dangling input: nothing produces '" + t.name + "'";
            }
        }
    }

    void addGraphOutputs(const onnx::GraphProto& gp)
    {
        for (const onnx::ValueInfoProto& vi : gp.output()) {
            auto it = byName.find(vi.name());
            if (it == byName.end()) {
                warn("graph output '" + vi.name() + "' is not produced by any node");
                continue;
            }
            m.outputs.push_back(it->second);
            m.tensors[size_t(it->second)].isGraphOutput = true;
            Tensor& t = m.tensors[size_t(it->second)];
            if (t.dtype == DType::Undefined && vi.type().has_tensor_type())
                t.dtype = dtypeFromOnnx(vi.type().tensor_type().elem_type());
        }
    }

    // Identity outputs of stored tensors are the same storage.
    void aliasStoredIdentities()
    {
        for (const Node& n : m.nodes) {
            if (n.op != "Identity" || n.inputs.empty() || n.inputs[0] < 0 || n.outputs.empty() || n.outputs[0] < 0)
                continue;
            const Tensor& src = m.tensors[size_t(n.inputs[0])];
            const int root = src.aliasOf >= 0 ? src.aliasOf : (stored.count(n.inputs[0]) ? n.inputs[0] : -1);
            if (root >= 0)
                m.tensors[size_t(n.outputs[0])].aliasOf = root;
        }
    }
    std::vector<int> danglingTensors;
    std::vector<size_t> order; // sorted position -> flat index

    std::string displayName(const onnx::NodeProto& np, size_t ni) const
    {
        return np.name().empty() ? np.op_type() + "_" + std::to_string(ni) : np.name();
    }

    void constantNode(const onnx::NodeProto& np, Node& n, size_t ni)
    {
        if (n.outputs.empty() || n.outputs[0] < 0)
            return;
        onnx::TensorProto t;
        bool ok = false;
        for (const auto& a : np.attribute()) {
            if (a.name() == "value" && a.has_t()) {
                t = a.t();
                ok = true;
            } else if (a.name() == "value_int") {
                t.set_data_type(onnx::TensorProto::INT64);
                t.add_int64_data(a.i());
                ok = true;
            } else if (a.name() == "value_ints") {
                t.set_data_type(onnx::TensorProto::INT64);
                t.add_dims(a.ints_size());
                for (int64_t v : a.ints())
                    t.add_int64_data(v);
                ok = true;
            } else if (a.name() == "value_float") {
                t.set_data_type(onnx::TensorProto::FLOAT);
                t.add_float_data(a.f());
                ok = true;
            } else if (a.name() == "value_floats") {
                t.set_data_type(onnx::TensorProto::FLOAT);
                t.add_dims(a.floats_size());
                for (float v : a.floats())
                    t.add_float_data(v);
                ok = true;
            } else if (a.name() == "sparse_value" && a.has_sparse_tensor()) {
                t.set_data_type(a.sparse_tensor().values().data_type());
                for (int64_t d : a.sparse_tensor().dims())
                    t.add_dims(d);
                ok = true;
            }
        }
        if (!ok) {
            warn("node '" + displayName(np, ni) + "': Constant without a value");
            return;
        }
        t.set_name(m.tensors[size_t(n.outputs[0])].name);
        addStored(n.outputs[0], storeTensor(t, "Constant"), false);
        m.tensors[size_t(n.outputs[0])].role = TensorRole::Constant;
    }

    // Bodies of If/Loop/Scan: their stored tensors count (classified inside the body), their outer-scope
    // reads become trailing inputs of the parent node so ordering and liveness see them.
    void subgraphs(const onnx::NodeProto& np, Node& n, size_t ni)
    {
        if (depth + 1 >= kMaxDepth)
            fail("node '" + displayName(np, ni) + "': subgraphs nest deeper than " + std::to_string(kMaxDepth) +
                 " levels");
        std::vector<const onnx::GraphProto*> bodies;
        for (const auto& a : np.attribute()) {
            if (a.has_g())
                bodies.push_back(&a.g());
            for (const auto& gg : a.graphs())
                bodies.push_back(&gg);
        }
        for (const onnx::GraphProto* body : bodies) {
            Model sub;
            GraphBuilder b(file, ctx, sub, nullptr, depth + 1);
            b.build(*body);
            classifyTensors(sub);
            for (std::string& w : sub.warnings)
                m.warnings.push_back(std::move(w));
            for (Tensor& t : sub.tensors) {
                const bool isStored = t.producer < 0 && t.role != TensorRole::Input && t.role != TensorRole::Activation;
                const bool constOut = t.producer >= 0 && sub.nodes[size_t(t.producer)].op == "Constant";
                if (isStored || constOut ||
                    (t.inSubgraph && t.role != TensorRole::Activation && t.role != TensorRole::Input)) {
                    if (t.aliasOf >= 0)
                        continue;
                    Tensor copy = t;
                    copy.producer = -1;
                    copy.consumers.clear();
                    copy.inSubgraph = true;
                    copy.aliasOf = -1;
                    copy.isGraphOutput = false;
                    copy.name = (np.name().empty() ? np.op_type() : np.name()) + "/" + t.name;
                    m.tensors.push_back(std::move(copy));
                    const int idx = static_cast<int>(m.tensors.size() - 1);
                    bodyStored.emplace_back(idx, ni);
                }
            }
            for (int d : b.danglingTensors) {
                auto it = byName.find(sub.tensors[size_t(d)].name);
                int outer = -1;
                if (it != byName.end()) {
                    outer = it->second;
                } else {
                    outer = newTensor(sub.tensors[size_t(d)].name, TensorRole::Activation);
                    danglingTensors.push_back(outer);
                }
                if (std::find(implicitInputs[ni].begin(), implicitInputs[ni].end(), outer) ==
                        implicitInputs[ni].end() &&
                    std::find(n.inputs.begin(), n.inputs.end(), outer) == n.inputs.end())
                    implicitInputs[ni].push_back(outer);
            }
        }
        n.implicitInputs = static_cast<int>(implicitInputs[ni].size());
        for (int t : implicitInputs[ni])
            n.inputs.push_back(t);
    }
    std::vector<std::pair<int, size_t>> bodyStored; // tensor, flat node

    void sortAndWire(std::vector<Node>& nodes)
    {
        const size_t n = nodes.size();
        std::vector<int> indeg(n, 0);
        std::vector<std::vector<int>> succ(n);
        for (size_t i = 0; i < n; ++i)
            for (int in : nodes[i].inputs) {
                if (in < 0)
                    continue;
                const int p = m.tensors[size_t(in)].producer;
                if (p >= 0 && !stored.count(in)) {
                    succ[size_t(p)].push_back(static_cast<int>(i));
                    indeg[i]++;
                }
            }
        std::priority_queue<int, std::vector<int>, std::greater<>> ready;
        for (size_t i = 0; i < n; ++i)
            if (indeg[i] == 0)
                ready.push(static_cast<int>(i));
        order.clear();
        order.reserve(n);
        while (!ready.empty()) {
            const int i = ready.top();
            ready.pop();
            order.push_back(size_t(i));
            for (int s : succ[size_t(i)])
                if (--indeg[size_t(s)] == 0)
                    ready.push(s);
        }
        if (order.size() != n) {
            for (size_t i = 0; i < n; ++i)
                if (indeg[i] > 0)
                    fail("the graph has a cycle through node '" + displayName(*flat[i], i) + "'");
        }
        std::vector<int> newIndex(n);
        for (size_t k = 0; k < n; ++k)
            newIndex[order[k]] = static_cast<int>(k);
        m.nodes.clear();
        m.nodes.reserve(n);
        for (size_t k = 0; k < n; ++k)
            m.nodes.push_back(std::move(nodes[order[k]]));
        for (Tensor& t : m.tensors)
            if (t.producer >= 0)
                t.producer = newIndex[size_t(t.producer)];
        for (auto& [t, ni] : bodyStored)
            m.tensors[size_t(t)].consumers.push_back(newIndex[ni]);
        for (size_t k = 0; k < n; ++k)
            for (int in : m.nodes[k].inputs)
                if (in >= 0) {
                    auto& c = m.tensors[size_t(in)].consumers;
                    if (c.empty() || c.back() != static_cast<int>(k))
                        c.push_back(static_cast<int>(k));
                }
    }

    // --- symbols and the evaluator's view ------------------------------------------------------------
    void fillShapeGraph(const onnx::GraphProto& gp,
                        const std::vector<std::pair<int, const onnx::ValueInfoProto*>>& inputInfos)
    {
        const size_t nt = m.tensors.size();
        g->nodes = m.nodes;
        g->dtype.resize(nt);
        g->isInput.assign(nt, 0);
        g->isStored.assign(nt, 0);
        g->inputHasShape.assign(nt, 0);
        g->inputDims.resize(nt);
        g->storedDims.resize(nt);
        g->storedValue.resize(nt);
        g->declaredDims.resize(nt);
        g->fallback.resize(m.nodes.size());
        for (size_t i = 0; i < nt; ++i)
            g->dtype[i] = m.tensors[i].dtype;
        for (const auto& [idx, s] : stored) {
            g->isStored[size_t(idx)] = 1;
            g->storedDims[size_t(idx)] = s.dims;
            g->storedValue[size_t(idx)] = s.value;
        }
        inputSymbols(inputInfos);
        declaredShapes(gp);
        for (size_t k = 0; k < m.nodes.size(); ++k) {
            const Node& n = m.nodes[k];
            if (n.op != "Constant")
                g->fallback[k] = std::make_shared<const onnx::NodeProto>(*flat[order[k]]);
        }
    }

    // Graph inputs' dims: fixed values, or symbols (dim_param, else "<input>_dim<k>"), at most 31.
    void inputSymbols(const std::vector<std::pair<int, const onnx::ValueInfoProto*>>& inputInfos)
    {
        std::map<std::string, int> symByName;
        for (const auto& [idx, vi] : inputInfos) {
            g->isInput[size_t(idx)] = 1;
            if (!vi->type().has_tensor_type() || !vi->type().tensor_type().has_shape()) {
                warn("input '" + vi->name() + "' has no declared shape; tensors that depend on it stay unknown");
                continue;
            }
            g->inputHasShape[size_t(idx)] = 1;
            const auto& dims = vi->type().tensor_type().shape().dim();
            for (int k = 0; k < dims.size(); ++k) {
                const auto& d = dims[k];
                InputDim id;
                if (d.has_dim_value() && d.dim_value() >= 0) {
                    id.value = d.dim_value();
                } else {
                    const std::string nm = d.has_dim_param() && !d.dim_param().empty()
                                               ? d.dim_param()
                                               : vi->name() + "_dim" + std::to_string(k);
                    auto it = symByName.find(nm);
                    if (it == symByName.end()) {
                        if (m.symbols.size() >= 31) {
                            warn("more than 31 symbols; '" + nm + "' is fixed at 1");
                            id.value = 1;
                            g->inputDims[size_t(idx)].push_back(id);
                            continue;
                        }
                        Symbol s;
                        s.name = nm;
                        s.origin = vi->name() + "[" + std::to_string(k) + "]";
                        m.symbols.push_back(s);
                        it = symByName.emplace(nm, static_cast<int>(m.symbols.size() - 1)).first;
                        symbolAxis.push_back(k);
                    }
                    id.symbol = it->second;
                }
                g->inputDims[size_t(idx)].push_back(id);
            }
        }
    }

    // value_info and graph outputs: static dims, or sympy-style formulas of the symbols.
    void declaredShapes(const onnx::GraphProto& gp)
    {
        const size_t nt = m.tensors.size();
        g->declaredFormula.resize(nt);
        std::vector<std::string> symNames;
        for (const Symbol& s : m.symbols)
            symNames.push_back(s.name);
        auto declare = [&](const onnx::ValueInfoProto& vi) {
            auto it = byName.find(vi.name());
            if (it == byName.end() || !vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape())
                return;
            if (g->dtype[size_t(it->second)] == DType::Undefined)
                g->dtype[size_t(it->second)] = dtypeFromOnnx(vi.type().tensor_type().elem_type());
            std::vector<int64_t> dims;
            std::vector<DimFormula> formula;
            bool isStatic = true;
            for (const auto& d : vi.type().tensor_type().shape().dim()) {
                std::optional<DimFormula> f;
                if (d.has_dim_value() && d.dim_value() >= 0) {
                    dims.push_back(d.dim_value());
                    f = DimFormula::parse(std::to_string(d.dim_value()), symNames);
                } else {
                    isStatic = false;
                    if (d.has_dim_param())
                        f = DimFormula::parse(d.dim_param(), symNames);
                }
                if (!f)
                    return; // a dim the file leaves open or names with a symbol no input has
                formula.push_back(std::move(*f));
            }
            if (isStatic)
                g->declaredDims[size_t(it->second)] = std::move(dims);
            else
                g->declaredFormula[size_t(it->second)] = std::move(formula);
        };
        for (const auto& vi : gp.value_info())
            declare(vi);
        for (const auto& vi : gp.output())
            declare(vi);
    }
    std::vector<int> symbolAxis; // per symbol: the axis where it first appears
};

void importGraph(const onnx::ModelProto& mp, const std::string& file, ImportContext& ctx, Model& m, ShapeGraph& g)
{
    for (const onnx::FunctionProto& f : mp.functions())
        ctx.functions[{normDomain(f.domain()), f.name()}] = &f;
    GraphBuilder b(file, ctx, m, &g, 0);
    b.build(mp.graph());
    ctx.symbolAxis = b.symbolAxis;
    g.opsets = m.info.opsets;
    for (const auto& [d, v] : m.info.opsets)
        if (d.empty())
            g.opset = static_cast<int>(std::clamp<int64_t>(v, 1, 100));
    (void)lower;
}

} // namespace headroom::detail
