// Stored tensors: initializers, sparse initializers, Constant nodes' values, and the Identity outputs that
// alias them. Dims, dtype and small values only, never the bytes; external data is checked, not read.
#include "onnx_graph_builder.h"
#include "onnx_parse.h"

#include <filesystem>

namespace headroom::detail {

// Initializers and sparse initializers (densified: only their size matters).
void GraphBuilder::addStoredTensors(const onnx::GraphProto& gp)
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

// Dims, dtype and (small) value of a stored tensor; checks dims; notes external data.
StoredTensor GraphBuilder::storeTensor(const onnx::TensorProto& t, const std::string& what)
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

void GraphBuilder::checkExternal(const std::string& loc, const std::string& tensor)
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

void GraphBuilder::addStored(int idx, const StoredTensor& s, bool initializer)
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

void GraphBuilder::constantNode(const onnx::NodeProto& np, Node& n, size_t ni)
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

// Identity outputs of stored tensors are the same storage.
void GraphBuilder::aliasStoredIdentities()
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

} // namespace headroom::detail
