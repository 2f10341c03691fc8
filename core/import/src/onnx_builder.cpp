// The ONNX writer hfconfig.cpp and synthetic.cpp share (see onnx_builder.h).
#include "onnx_builder.h"

#include <utility>

namespace headroom::detail {

OnnxBuilder::OnnxBuilder(OnnxStyle style, const std::string& graphName)
    : m_style(std::move(style)), m_g(m_model.mutable_graph())
{
    m_model.set_ir_version(8);
    m_model.set_producer_name(m_style.producer);
    m_model.set_producer_version("1");
    auto* op = m_model.add_opset_import();
    op->set_domain("");
    op->set_version(m_style.opset);
    m_g->set_name(graphName);
}

void OnnxBuilder::metadata(const std::string& key, const std::string& value)
{
    auto* mt = m_model.add_metadata_props();
    mt->set_key(key);
    mt->set_value(value);
}

namespace {

void addValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name, int elemType,
              int64_t lastDim)
{
    auto* v = list->Add();
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elemType);
    tt->mutable_shape()->add_dim()->set_dim_param("batch");
    tt->mutable_shape()->add_dim()->set_dim_param("seq");
    if (lastDim > 0)
        tt->mutable_shape()->add_dim()->set_dim_value(lastDim);
}

} // namespace

void OnnxBuilder::input(const std::string& name, int elemType, int64_t lastDim)
{
    addValue(m_g->mutable_input(), name, elemType, lastDim);
}

void OnnxBuilder::scalarOutput(const std::string& name, int elemType)
{
    auto* out = m_g->add_output();
    out->set_name(name);
    auto* t = out->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elemType);
    t->mutable_shape();
}

void OnnxBuilder::outputRows(const std::string& name, int elemType, int64_t lastDim)
{
    auto* v = m_g->add_output();
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elemType);
    tt->mutable_shape()->add_dim()->set_dim_param("batch");
    tt->mutable_shape()->add_dim()->set_dim_value(lastDim);
}

void OnnxBuilder::output(const std::string& name, int elemType, int64_t lastDim)
{
    addValue(m_g->mutable_output(), name, elemType, lastDim);
}

onnx::NodeProto* OnnxBuilder::addNode(const std::string& op, const std::string& name,
                                      const std::vector<std::string>& in, int outputs)
{
    onnx::NodeProto* n = m_g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const std::string& i : in)
        n->add_input(i);
    for (int o = 0; o < outputs; ++o)
        n->add_output(name + "_output_" + std::to_string(o));
    m_last = n;
    return n;
}

std::vector<std::string> OnnxBuilder::nodes(const std::string& op, const std::string& scope,
                                            const std::vector<std::string>& in, int outputs)
{
    const std::string base = scope + "/" + op;
    const int k = m_count[base]++;
    const onnx::NodeProto* n = addNode(op, k == 0 ? base : base + "_" + std::to_string(k), in, outputs);
    return {n->output().begin(), n->output().end()};
}

std::string OnnxBuilder::namedNode(const std::string& op, const std::string& name, const std::vector<std::string>& in,
                                   int outputs)
{
    return addNode(op, name, in, outputs)->output(0);
}

onnx::AttributeProto* OnnxBuilder::addAttr(const std::string& name, onnx::AttributeProto::AttributeType type)
{
    auto* a = m_last->add_attribute();
    a->set_name(name);
    a->set_type(type);
    return a;
}

void OnnxBuilder::attrInt(const std::string& name, int64_t v) { addAttr(name, onnx::AttributeProto::INT)->set_i(v); }

void OnnxBuilder::attrInts(const std::string& name, const std::vector<int64_t>& v)
{
    auto* a = addAttr(name, onnx::AttributeProto::INTS);
    for (int64_t x : v)
        a->add_ints(x);
}

void OnnxBuilder::attrFloat(const std::string& name, double v)
{
    addAttr(name, onnx::AttributeProto::FLOAT)->set_f(static_cast<float>(v));
}

void OnnxBuilder::attrString(const std::string& name, const std::string& v)
{
    addAttr(name, onnx::AttributeProto::STRING)->set_s(v);
}

std::pair<std::string, onnx::TensorProto*> OnnxBuilder::constant(const std::string& name)
{
    // Not m_last: the attributes that follow belong to the node the constant feeds.
    onnx::NodeProto* n = m_g->add_node();
    n->set_op_type("Constant");
    n->set_name(name.empty() ? "Constant_" + std::to_string(m_consts++) : name);
    n->add_output(n->name() + "_output_0");
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    if (m_style.namedConstantValues)
        a->mutable_t()->set_name(n->output(0));
    return {n->output(0), a->mutable_t()};
}

std::string OnnxBuilder::ints(const std::vector<int64_t>& v, bool scalar, const std::string& name)
{
    auto [out, t] = constant(name);
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar)
        t->add_dims(static_cast<int64_t>(v.size()));
    for (int64_t x : v)
        t->add_int64_data(x);
    return out;
}

std::string OnnxBuilder::scalar(double v, const std::string& name)
{
    auto [out, t] = constant(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_float_data(static_cast<float>(v));
    return out;
}

std::string OnnxBuilder::boolean(bool v)
{
    auto [out, t] = constant({});
    t->set_data_type(onnx::TensorProto::BOOL);
    t->add_int32_data(v ? 1 : 0);
    return out;
}

std::string OnnxBuilder::weight(const std::string& name, const std::vector<int64_t>& dims)
{
    onnx::TensorProto* t = m_g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims)
        t->add_dims(d);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* loc = t->add_external_data();
    loc->set_key("location");
    loc->set_value(m_style.weightsFile);
    if (m_style.weightOffsets) {
        auto* off = t->add_external_data();
        off->set_key("offset");
        off->set_value(std::to_string(m_offset));
        int64_t bytes = 4;
        for (int64_t d : dims)
            bytes *= d;
        m_offset += bytes;
    }
    return name;
}

} // namespace headroom::detail
