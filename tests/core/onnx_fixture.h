#pragma once
// Test-only helpers that build small ONNX models with the protobuf API (the files tests feed the loader).
#ifndef ONNX_ML
#define ONNX_ML 1
#endif
#ifndef ONNX_NAMESPACE
#define ONNX_NAMESPACE onnx
#endif
#include <onnx/onnx_pb.h>

#include <initializer_list>
#include <string>
#include <variant>
#include <vector>

namespace fixture {

using Dim = std::variant<int64_t, std::string>;

struct Graph
{
    onnx::ModelProto model;
    onnx::GraphProto* g;

    explicit Graph(int opset = 14, int ir = 7)
    {
        model.set_ir_version(ir);
        model.set_producer_name("fixture");
        auto* o = model.add_opset_import();
        o->set_domain("");
        o->set_version(opset);
        g = model.mutable_graph();
        g->set_name("fixture");
    }

    static void setType(onnx::ValueInfoProto* vi, int elem, const std::vector<Dim>& dims)
    {
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(elem);
        auto* sh = tt->mutable_shape();
        for (const Dim& d : dims) {
            auto* dd = sh->add_dim();
            if (std::holds_alternative<int64_t>(d))
                dd->set_dim_value(std::get<int64_t>(d));
            else if (!std::get<std::string>(d).empty())
                dd->set_dim_param(std::get<std::string>(d));
        }
    }
    void input(const std::string& name, const std::vector<Dim>& dims, int elem = onnx::TensorProto::FLOAT)
    {
        setType(g->add_input(), elem, dims);
        g->mutable_input(g->input_size() - 1)->set_name(name);
    }
    void output(const std::string& name, int elem = onnx::TensorProto::FLOAT)
    {
        auto* o = g->add_output();
        o->set_name(name);
        o->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
    }
    onnx::TensorProto* weight(const std::string& name, std::initializer_list<int64_t> dims,
                              int elem = onnx::TensorProto::FLOAT)
    {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(elem);
        int64_t n = 1;
        for (int64_t d : dims) {
            t->add_dims(d);
            n *= d;
        }
        if (elem == onnx::TensorProto::INT64)
            for (int64_t i = 0; i < n; ++i)
                t->add_int64_data(0);
        else
            t->set_raw_data(std::string(static_cast<size_t>(n) * 4, '\0'));
        return t;
    }
    onnx::TensorProto* ints(const std::string& name, const std::vector<int64_t>& v)
    {
        auto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::INT64);
        t->add_dims(static_cast<int64_t>(v.size()));
        for (int64_t x : v)
            t->add_int64_data(x);
        return t;
    }
    onnx::NodeProto* node(const std::string& op, const std::string& name, std::initializer_list<std::string> in,
                          std::initializer_list<std::string> out)
    {
        auto* n = g->add_node();
        n->set_op_type(op);
        n->set_name(name);
        for (const auto& i : in)
            n->add_input(i);
        for (const auto& o : out)
            n->add_output(o);
        return n;
    }
    static void intsAttr(onnx::NodeProto* n, const std::string& name, std::initializer_list<int64_t> v)
    {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t x : v)
            a->add_ints(x);
    }
    static void intAttr(onnx::NodeProto* n, const std::string& name, int64_t v)
    {
        auto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(v);
    }
    std::string bytes() const { return model.SerializeAsString(); }
};

// input[N, 3, H, W] -> Conv 3x3 stride 2 pad 1 -> Relu -> Conv 1x1 -> GlobalAveragePool -> Flatten -> Gemm
inline Graph smallConvNet(bool symbolicSpatial)
{
    Graph m;
    if (symbolicSpatial)
        m.input("x", {std::string("N"), int64_t(3), std::string("H"), std::string("W")});
    else
        m.input("x", {std::string("N"), int64_t(3), int64_t(32), int64_t(32)});
    m.weight("stem.weight", {8, 3, 3, 3});
    m.weight("stem.bias", {8});
    auto* c = m.node("Conv", "/stem/Conv", {"x", "stem.weight", "stem.bias"}, {"c1"});
    Graph::intsAttr(c, "strides", {2, 2});
    Graph::intsAttr(c, "pads", {1, 1, 1, 1});
    Graph::intsAttr(c, "kernel_shape", {3, 3});
    m.node("Relu", "/stem/Relu", {"c1"}, {"r1"});
    m.weight("block.conv.weight", {16, 8, 1, 1});
    m.node("Conv", "/block/conv/Conv", {"r1", "block.conv.weight"}, {"c2"});
    m.node("GlobalAveragePool", "/pool/GlobalAveragePool", {"c2"}, {"p"});
    auto* f = m.node("Flatten", "/Flatten", {"p"}, {"f"});
    Graph::intAttr(f, "axis", 1);
    m.weight("fc.weight", {10, 16});
    m.weight("fc.bias", {10});
    auto* gm = m.node("Gemm", "/fc/Gemm", {"f", "fc.weight", "fc.bias"}, {"y"});
    Graph::intAttr(gm, "transB", 1);
    m.output("y");
    return m;
}

} // namespace fixture
