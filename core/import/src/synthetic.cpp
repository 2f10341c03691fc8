// A generated GPT-style graph for benchmarks and tests (see synthetic.h).
#include "headroom/import/synthetic.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <initializer_list>
#include <vector>

namespace headroom {
namespace {

class Builder
{
public:
    explicit Builder(onnx::GraphProto* g) : m_g(g) {}

    std::string node(const std::string& op, const std::string& name, std::initializer_list<std::string> inputs,
                     const std::vector<std::pair<std::string, std::vector<int64_t>>>& ints = {}, int outputs = 1)
    {
        onnx::NodeProto* n = m_g->add_node();
        n->set_op_type(op);
        n->set_name(name);
        for (const std::string& i : inputs)
            n->add_input(i);
        for (int o = 0; o < outputs; ++o)
            n->add_output(name + "_output_" + std::to_string(o));
        for (const auto& [an, av] : ints) {
            onnx::AttributeProto* a = n->add_attribute();
            a->set_name(an);
            if (an == "axis" || an == "to" || an == "keepdims") {
                a->set_type(onnx::AttributeProto::INT);
                a->set_i(av.empty() ? 0 : av[0]);
            } else {
                a->set_type(onnx::AttributeProto::INTS);
                for (int64_t v : av)
                    a->add_ints(v);
            }
        }
        return name + "_output_0";
    }

    // PyTorch exports scalars and shape pieces as Constant nodes.
    std::string constInts(const std::string& name, const std::vector<int64_t>& v, bool scalar = false)
    {
        onnx::NodeProto* n = m_g->add_node();
        n->set_op_type("Constant");
        n->set_name(name);
        n->add_output(name + "_output_0");
        onnx::AttributeProto* a = n->add_attribute();
        a->set_name("value");
        a->set_type(onnx::AttributeProto::TENSOR);
        onnx::TensorProto* t = a->mutable_t();
        t->set_data_type(onnx::TensorProto::INT64);
        if (!scalar)
            t->add_dims(static_cast<int64_t>(v.size()));
        for (int64_t x : v)
            t->add_int64_data(x);
        return name + "_output_0";
    }

    std::string constFloat(const std::string& name, float v)
    {
        onnx::NodeProto* n = m_g->add_node();
        n->set_op_type("Constant");
        n->set_name(name);
        n->add_output(name + "_output_0");
        onnx::AttributeProto* a = n->add_attribute();
        a->set_name("value");
        a->set_type(onnx::AttributeProto::TENSOR);
        a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
        a->mutable_t()->add_float_data(v);
        return name + "_output_0";
    }

    std::string weight(const std::string& name, std::initializer_list<int64_t> dims)
    {
        onnx::TensorProto* t = m_g->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        for (int64_t d : dims)
            t->add_dims(d);
        t->set_data_location(onnx::TensorProto::EXTERNAL);
        auto* loc = t->add_external_data();
        loc->set_key("location");
        loc->set_value("synthetic.weights");
        auto* off = t->add_external_data();
        off->set_key("offset");
        off->set_value(std::to_string(m_offset));
        int64_t n = 4;
        for (int64_t d : dims)
            n *= d;
        m_offset += n;
        return name;
    }

    // Shape(x)[axis] as a 1-D tensor, the way PyTorch builds reshape targets.
    std::string dimOf(const std::string& scope, const std::string& x, int64_t axis, int idx)
    {
        const std::string s = std::to_string(idx);
        const std::string shape = node("Shape", scope + "/Shape_" + s, {x});
        const std::string ax = constInts(scope + "/Constant_g" + s, {axis}, true);
        const std::string g = node("Gather", scope + "/Gather_" + s, {shape, ax}, {{"axis", {0}}});
        const std::string axes = constInts(scope + "/Constant_u" + s, {0});
        return node("Unsqueeze", scope + "/Unsqueeze_" + s, {g, axes});
    }

private:
    onnx::GraphProto* m_g;
    int64_t m_offset = 0;
};

onnx::ModelProto emptyModel(const std::string& graphName)
{
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.set_producer_name("headroom-synthetic");
    model.set_producer_version("1");
    auto* op = model.add_opset_import();
    op->set_domain("");
    op->set_version(17);
    model.mutable_graph()->set_name(graphName);
    return model;
}

void addSymbolicValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
                      int elemType, int64_t lastDim)
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

std::string makeSyntheticChain(int blocks, int width)
{
    blocks = std::max(1, blocks);
    width = std::max(1, width);
    const int64_t d = width;
    onnx::ModelProto model = emptyModel("synthetic_chain");
    onnx::GraphProto* g = model.mutable_graph();
    Builder b(g);
    addSymbolicValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, d);
    std::string x = "x";
    for (int i = 0; i < blocks; ++i) {
        const std::string s = "/blocks." + std::to_string(i);
        const std::string p = "blocks." + std::to_string(i);
        std::string y = b.node("MatMul", s + "/fc/MatMul", {x, b.weight(p + ".fc.weight", {d, d})});
        y = b.node("Add", s + "/fc/Add", {b.weight(p + ".fc.bias", {d}), y});
        y = b.node("Relu", s + "/act/Relu", {y});
        x = b.node("Add", s + "/Add", {x, y});
    }
    addSymbolicValue(g->mutable_output(), x, onnx::TensorProto::FLOAT, d);
    return model.SerializeAsString();
}

int syntheticChainBlocksFor(int nodes) { return std::max(1, nodes / 4); }

int syntheticTransformerLayersFor(int nodes)
{
    // Counted on makeSyntheticTransformer: 12 nodes outside the layers, 86 per layer.
    return std::max(1, (nodes - 12 + 43) / 86);
}

std::string makeSyntheticTransformer(int layers, int hidden, int heads, int vocab)
{
    layers = std::max(1, layers);
    heads = std::max(1, heads);
    hidden = std::max(heads, hidden - hidden % heads);
    vocab = std::max(2, vocab);
    const int64_t h = hidden, hd = hidden / heads, nh = heads;

    onnx::ModelProto model = emptyModel("synthetic_gpt");
    onnx::GraphProto* g = model.mutable_graph();
    Builder b(g);

    auto* in = g->add_input();
    in->set_name("input_ids");
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::INT64);
    tt->mutable_shape()->add_dim()->set_dim_param("batch");
    tt->mutable_shape()->add_dim()->set_dim_param("seq");

    const std::string tok = b.weight("tok_emb.weight", {vocab, h});
    const std::string pos = b.weight("pos_emb.weight", {4096, h});
    std::string x = b.node("Gather", "/tok_emb/Gather", {tok, "input_ids"});
    {
        const std::string seq = b.node("Gather", "/Gather",
                                       {b.node("Shape", "/Shape", {"input_ids"}), b.constInts("/Constant", {1}, true)});
        const std::string range = b.node(
            "Range", "/Range", {b.constInts("/Constant_1", {0}, true), seq, b.constInts("/Constant_2", {1}, true)});
        const std::string pe = b.node("Gather", "/pos_emb/Gather", {pos, range});
        x = b.node("Add", "/Add", {x, pe});
    }
    for (int l = 0; l < layers; ++l) {
        const std::string s = "/blocks." + std::to_string(l);
        const std::string p = "blocks." + std::to_string(l);
        const std::string ln1 = b.node("LayerNormalization", s + "/ln1/LayerNormalization",
                                       {x, b.weight(p + ".ln1.weight", {h}), b.weight(p + ".ln1.bias", {h})},
                                       {{"axis", {-1}}});
        std::string qkv = b.node("MatMul", s + "/attn/qkv/MatMul", {ln1, b.weight(p + ".attn.qkv.weight", {h, 3 * h})});
        qkv = b.node("Add", s + "/attn/qkv/Add", {b.weight(p + ".attn.qkv.bias", {3 * h}), qkv});
        const std::string split = b.constInts(s + "/attn/Constant_split", {h, h, h});
        b.node("Split", s + "/attn/Split", {qkv, split}, {{"axis", {2}}}, 3);
        std::string heads4[3];
        const char* nm[3] = {"q", "k", "v"};
        for (int i = 0; i < 3; ++i) {
            const std::string part = s + "/attn/Split_output_" + std::to_string(i);
            const std::string sc = s + "/attn/" + nm[i];
            const std::string bdim = b.dimOf(sc, part, 0, 0);
            const std::string tdim = b.dimOf(sc, part, 1, 1);
            const std::string target = b.node(
                "Concat", sc + "/Concat",
                {bdim, tdim, b.constInts(sc + "/Constant_h", {nh}), b.constInts(sc + "/Constant_d", {hd})},
                {{"axis", {0}}});
            const std::string r = b.node("Reshape", sc + "/Reshape", {part, target});
            heads4[i] = b.node(
                "Transpose", sc + "/Transpose", {r},
                {{"perm", i == 1 ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3}}});
        }
        std::string att = b.node("MatMul", s + "/attn/MatMul", {heads4[0], heads4[1]});
        att = b.node("Div", s + "/attn/Div", {att, b.constFloat(s + "/attn/Constant_scale", 8.0f)});
        att = b.node("Softmax", s + "/attn/Softmax", {att}, {{"axis", {-1}}});
        std::string ctx = b.node("MatMul", s + "/attn/MatMul_1", {att, heads4[2]});
        ctx = b.node("Transpose", s + "/attn/Transpose", {ctx}, {{"perm", {0, 2, 1, 3}}});
        const std::string bdim = b.dimOf(s + "/attn/out", ctx, 0, 0);
        const std::string tdim = b.dimOf(s + "/attn/out", ctx, 1, 1);
        const std::string target = b.node("Concat", s + "/attn/out/Concat",
                                          {bdim, tdim, b.constInts(s + "/attn/out/Constant_h", {h})}, {{"axis", {0}}});
        ctx = b.node("Reshape", s + "/attn/Reshape", {ctx, target});
        std::string proj = b.node("MatMul", s + "/attn/proj/MatMul", {ctx, b.weight(p + ".attn.proj.weight", {h, h})});
        proj = b.node("Add", s + "/attn/proj/Add", {b.weight(p + ".attn.proj.bias", {h}), proj});
        x = b.node("Add", s + "/Add", {x, proj});

        const std::string ln2 = b.node("LayerNormalization", s + "/ln2/LayerNormalization",
                                       {x, b.weight(p + ".ln2.weight", {h}), b.weight(p + ".ln2.bias", {h})},
                                       {{"axis", {-1}}});
        std::string fc = b.node("MatMul", s + "/fc/MatMul", {ln2, b.weight(p + ".fc.weight", {h, 4 * h})});
        fc = b.node("Add", s + "/fc/Add", {b.weight(p + ".fc.bias", {4 * h}), fc});
        // Gelu as PyTorch exports it at opset < 20: x * 0.5 * (1 + erf(x / sqrt(2))).
        std::string ge = b.node("Div", s + "/act/Div", {fc, b.constFloat(s + "/act/Constant", 1.41421356f)});
        ge = b.node("Erf", s + "/act/Erf", {ge});
        ge = b.node("Add", s + "/act/Add", {ge, b.constFloat(s + "/act/Constant_1", 1.0f)});
        ge = b.node("Mul", s + "/act/Mul", {fc, ge});
        ge = b.node("Mul", s + "/act/Mul_1", {ge, b.constFloat(s + "/act/Constant_2", 0.5f)});
        std::string fc2 = b.node("MatMul", s + "/fc2/MatMul", {ge, b.weight(p + ".fc2.weight", {4 * h, h})});
        fc2 = b.node("Add", s + "/fc2/Add", {b.weight(p + ".fc2.bias", {h}), fc2});
        x = b.node("Add", s + "/Add_1", {x, fc2});
    }
    x = b.node("LayerNormalization", "/ln_f/LayerNormalization",
               {x, b.weight("ln_f.weight", {h}), b.weight("ln_f.bias", {h})}, {{"axis", {-1}}});
    const std::string headW = b.node("Transpose", "/lm_head/Transpose", {tok}, {{"perm", {1, 0}}});
    const std::string logits = b.node("MatMul", "/lm_head/MatMul", {x, headW});
    auto* out = g->add_output();
    out->set_name(logits);
    auto* ot = out->mutable_type()->mutable_tensor_type();
    ot->set_elem_type(onnx::TensorProto::FLOAT);
    ot->mutable_shape()->add_dim()->set_dim_param("batch");
    ot->mutable_shape()->add_dim()->set_dim_param("seq");
    ot->mutable_shape()->add_dim()->set_dim_value(vocab);
    return model.SerializeAsString();
}

} // namespace headroom
