#pragma once
// A torchvision ViT-B/16 as torch.onnx.export (TorchScript exporter, opset 17, dynamic batch) writes it:
// the same modules, parameter shapes and node names, and the exporter's shape arithmetic around every
// reshape (Shape -> Constant -> Gather -> Unsqueeze -> Concat -> Reshape, the class token's
// ConstantOfShape/Equal/Where before Expand). 86,567,656 parameters like torchvision's vit_b_16; over
// 1,500 nodes. Weights are declared external and absent: the loader needs only dims and dtypes.
#include "onnx_fixture.h"

#include <climits>
#include <map>
#include <string>
#include <vector>

namespace fixture {

class VitBuilder
{
public:
    explicit VitBuilder(Graph& g) : m_g(g) {}

    // A weight whose bytes live in an absent external file (architecture-only export).
    void weight(const std::string& name, std::initializer_list<int64_t> dims)
    {
        auto* t = m_g.g->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        for (int64_t d : dims)
            t->add_dims(d);
        t->set_data_location(onnx::TensorProto::EXTERNAL);
        auto* e = t->add_external_data();
        e->set_key("location");
        e->set_value("vit_b_16.weights");
    }
    // "/scope/Constant_k": a Constant node holding int64 values (a scalar when `scalar`).
    std::string constant(const std::string& scope, const std::vector<int64_t>& v, bool scalar = false)
    {
        const std::string out = fresh(scope, "Constant");
        auto* n = m_g.node("Constant", out, {}, {out + "_output_0"});
        auto* a = n->add_attribute();
        a->set_name("value");
        a->set_type(onnx::AttributeProto::TENSOR);
        auto* t = a->mutable_t();
        t->set_data_type(onnx::TensorProto::INT64);
        if (!scalar)
            t->add_dims(static_cast<int64_t>(v.size()));
        for (int64_t x : v)
            t->add_int64_data(x);
        return out + "_output_0";
    }
    std::string floatConstant(const std::string& scope, float v)
    {
        const std::string out = fresh(scope, "Constant");
        auto* n = m_g.node("Constant", out, {}, {out + "_output_0"});
        auto* a = n->add_attribute();
        a->set_name("value");
        a->set_type(onnx::AttributeProto::TENSOR);
        auto* t = a->mutable_t();
        t->set_data_type(onnx::TensorProto::FLOAT);
        t->add_float_data(v);
        return out + "_output_0";
    }
    std::string op(const std::string& scope, const std::string& type, std::initializer_list<std::string> in)
    {
        const std::string name = fresh(scope, type);
        m_g.node(type, name, in, {name + "_output_0"});
        return name + "_output_0";
    }
    onnx::NodeProto* last() { return m_g.g->mutable_node(m_g.g->node_size() - 1); }

    // x.shape[k] as the exporter traces it: Shape, Constant, Gather.
    std::string dim(const std::string& scope, const std::string& x, int64_t k)
    {
        const std::string s = op(scope, "Shape", {x});
        const std::string i = constant(scope, {k}, true);
        return op(scope, "Gather", {s, i});
    }
    std::string unsqueeze0(const std::string& scope, const std::string& x)
    {
        const std::string axes = constant(scope, {0});
        return op(scope, "Unsqueeze", {x, axes});
    }
    // x.reshape(parts...): each part a scalar tensor name, or a literal folded into one Constant.
    std::string reshape(const std::string& scope, const std::string& x, const std::vector<std::string>& scalars,
                        const std::vector<int64_t>& literals)
    {
        std::vector<std::string> pieces;
        for (const std::string& s : scalars)
            pieces.push_back(unsqueeze0(scope, s));
        for (int64_t l : literals)
            pieces.push_back(constant(scope, {l}));
        const std::string name = fresh(scope, "Concat");
        auto* c = m_g.g->add_node();
        c->set_op_type("Concat");
        c->set_name(name);
        for (const std::string& p : pieces)
            c->add_input(p);
        c->add_output(name + "_output_0");
        Graph::intAttr(c, "axis", 0);
        return op(scope, "Reshape", {x, name + "_output_0"});
    }
    std::string transpose(const std::string& scope, const std::string& x, std::initializer_list<int64_t> perm)
    {
        const std::string y = op(scope, "Transpose", {x});
        Graph::intsAttr(last(), "perm", perm);
        return y;
    }

private:
    std::string fresh(const std::string& scope, const std::string& type)
    {
        int& k = m_count[scope + "/" + type];
        const std::string name = scope + "/" + type + (k ? "_" + std::to_string(k) : std::string());
        ++k;
        return name;
    }

    Graph& m_g;
    std::map<std::string, int> m_count;
};

inline Graph vitB16(int layers = 12)
{
    constexpr int64_t hidden = 768, heads = 12, headDim = 64, mlp = 3072, patch = 16, image = 224, classes = 1000;
    constexpr int64_t tokens = (image / patch) * (image / patch) + 1;
    Graph g(17, 8);
    g.model.set_producer_name("pytorch");
    g.model.set_producer_version("2.11.0");
    g.input("x", {std::string("batch"), int64_t(3), image, image});
    VitBuilder b(g);

    b.weight("conv_proj.weight", {hidden, 3, patch, patch});
    b.weight("conv_proj.bias", {hidden});
    const std::string c = b.op("/conv_proj", "Conv", {"x", "conv_proj.weight", "conv_proj.bias"});
    Graph::intsAttr(b.last(), "kernel_shape", {patch, patch});
    Graph::intsAttr(b.last(), "strides", {patch, patch});

    // _process_input: n_h = h // p, n_w = w // p; x.reshape(n, hidden_dim, n_h * n_w).permute(0, 2, 1)
    const std::string n = b.dim("", "x", 0);
    const std::string nh = b.op("", "Div", {b.dim("", "x", 2), b.constant("", {patch}, true)});
    const std::string nw = b.op("", "Div", {b.dim("", "x", 3), b.constant("", {patch}, true)});
    const std::string nhw = b.op("", "Mul", {nh, nw});
    std::string x = b.reshape("", c, {n, nhw}, {});
    {
        // The hidden size sits between n and n_h * n_w in the target shape.
        onnx::NodeProto* concat = g.g->mutable_node(g.g->node_size() - 2);
        const std::string mid = b.constant("", {hidden});
        concat->add_input(mid);
        const std::string last = concat->input(1);
        concat->set_input(1, concat->input(2));
        concat->set_input(2, last);
        // The Constant was appended after the Reshape that reads the Concat: move it before the Concat.
        auto* nodes = g.g->mutable_node();
        for (int k = nodes->size() - 1; k > nodes->size() - 3; --k)
            nodes->SwapElements(k, k - 1);
    }
    x = b.transpose("", x, {0, 2, 1});

    // class_token.expand(n, -1, -1): the exporter's ConstantOfShape / Equal / Where around Expand.
    b.weight("class_token", {1, 1, hidden});
    const std::string n2 = b.dim("", x, 0);
    const std::string u = b.unsqueeze0("", n2);
    const std::string m1 = b.constant("", {-1});
    const std::string m2 = b.constant("", {-1});
    const std::string cat = b.op("", "Concat", {u, m1, m2});
    Graph::intAttr(b.last(), "axis", 0);
    const std::string three = b.constant("", {3});
    const std::string ones = b.op("", "ConstantOfShape", {three});
    {
        auto* a = b.last()->add_attribute();
        a->set_name("value");
        a->set_type(onnx::AttributeProto::TENSOR);
        a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
        a->mutable_t()->add_dims(1);
        a->mutable_t()->add_int64_data(1);
    }
    const std::string minus = b.constant("", {-1}, true);
    const std::string neg = b.op("", "Mul", {ones, minus});
    const std::string eq = b.op("", "Equal", {cat, neg});
    const std::string where = b.op("", "Where", {eq, ones, cat});
    const std::string cls = b.op("", "Expand", {"class_token", where});
    x = b.op("", "Concat", {cls, x});
    Graph::intAttr(b.last(), "axis", 1);

    b.weight("encoder.pos_embedding", {1, tokens, hidden});
    x = b.op("/encoder", "Add", {x, "encoder.pos_embedding"});

    for (int i = 0; i < layers; ++i) {
        const std::string p = "encoder.layers.encoder_layer_" + std::to_string(i);
        const std::string s = "/encoder/layers/encoder_layer_" + std::to_string(i);
        const std::string sa = s + "/self_attention";
        b.weight(p + ".ln_1.weight", {hidden});
        b.weight(p + ".ln_1.bias", {hidden});
        const std::string input = x;
        std::string h = b.op(s + "/ln_1", "LayerNormalization", {x, p + ".ln_1.weight", p + ".ln_1.bias"});
        Graph::intAttr(b.last(), "axis", -1);

        // nn.MultiheadAttention(batch_first=True) as F.multi_head_attention_forward traces it.
        h = b.transpose(sa, h, {1, 0, 2});
        const std::string tgt = b.dim(sa, h, 0), bsz = b.dim(sa, h, 1);
        b.dim(sa, h, 2); // embed_dim, checked by torch's asserts
        b.weight(p + ".self_attention.in_proj_weight_t", {hidden, 3 * hidden});
        b.weight(p + ".self_attention.in_proj_bias", {3 * hidden});
        std::string qkv = b.op(sa, "MatMul", {h, p + ".self_attention.in_proj_weight_t"});
        qkv = b.op(sa, "Add", {qkv, p + ".self_attention.in_proj_bias"});
        // unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2)
        qkv = b.reshape(sa, qkv, {b.dim(sa, qkv, 0), b.dim(sa, qkv, 1)}, {3, hidden});
        qkv = b.unsqueeze0(sa, qkv);
        qkv = b.transpose(sa, qkv, {3, 1, 2, 0, 4});
        qkv = b.op(sa, "Squeeze", {qkv, b.constant(sa, {3})});
        std::string qkvParts[3];
        for (int k = 0; k < 3; ++k) {
            qkvParts[k] = b.op(sa, "Gather", {qkv, b.constant(sa, {k}, true)});
            Graph::intAttr(b.last(), "axis", 0);
        }
        // q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1), the same for k and v
        std::string heads3[3];
        for (int k = 0; k < 3; ++k) {
            const std::string bh = b.op(sa, "Mul", {b.dim(sa, qkvParts[k], 1), b.constant(sa, {heads}, true)});
            const std::string len = k == 0 ? tgt : b.dim(sa, qkvParts[k], 0);
            heads3[k] = b.transpose(sa, b.reshape(sa, qkvParts[k], {len, bh}, {headDim}), {1, 0, 2});
        }
        // scaled_dot_product_attention's export: scale = 1 / sqrt(q.size(-1)), applied as sqrt(scale) to q and k.
        const std::string qShape = b.op(sa, "Shape", {heads3[0]});
        const std::string lastDim = b.op(sa, "Slice", {qShape, b.constant(sa, {-1}), b.constant(sa, {INT64_MAX})});
        const std::string d = b.op(sa, "Cast", {lastDim});
        Graph::intAttr(b.last(), "to", onnx::TensorProto::FLOAT);
        const std::string scale = b.op(sa, "Div", {b.floatConstant(sa, 1.0f), b.op(sa, "Sqrt", {d})});
        const std::string root = b.op(sa, "Sqrt", {scale});
        const std::string q = b.op(sa, "Mul", {heads3[0], root});
        const std::string kt = b.op(sa, "Mul", {b.transpose(sa, heads3[1], {0, 2, 1}), root});
        std::string a = b.op(sa, "MatMul", {q, kt});
        a = b.op(sa, "Softmax", {a});
        Graph::intAttr(b.last(), "axis", -1);
        a = b.op(sa, "MatMul", {a, heads3[2]});
        a = b.transpose(sa, a, {1, 0, 2});
        a = b.reshape(sa, a, {b.op(sa, "Mul", {tgt, bsz})}, {hidden});
        b.weight(p + ".self_attention.out_proj.weight", {hidden, hidden});
        b.weight(p + ".self_attention.out_proj.bias", {hidden});
        a = b.op(sa, "Gemm", {a, p + ".self_attention.out_proj.weight", p + ".self_attention.out_proj.bias"});
        Graph::intAttr(b.last(), "transB", 1);
        a = b.reshape(sa, a, {tgt, bsz}, {hidden});
        a = b.transpose(sa, a, {1, 0, 2});
        x = b.op(s, "Add", {a, input});

        b.weight(p + ".ln_2.weight", {hidden});
        b.weight(p + ".ln_2.bias", {hidden});
        const std::string mid = x;
        h = b.op(s + "/ln_2", "LayerNormalization", {x, p + ".ln_2.weight", p + ".ln_2.bias"});
        Graph::intAttr(b.last(), "axis", -1);
        b.weight(p + ".mlp.0.weight_t", {hidden, mlp});
        b.weight(p + ".mlp.0.bias", {mlp});
        h = b.op(s + "/mlp/mlp.0", "MatMul", {h, p + ".mlp.0.weight_t"});
        h = b.op(s + "/mlp/mlp.0", "Add", {h, p + ".mlp.0.bias"});
        // nn.GELU() below opset 20: x * 0.5 * (1 + erf(x / sqrt(2)))
        const std::string act = s + "/mlp/mlp.1";
        std::string e = b.op(act, "Div", {h, b.floatConstant(act, 1.4142135f)});
        e = b.op(act, "Erf", {e});
        e = b.op(act, "Add", {e, b.floatConstant(act, 1.0f)});
        e = b.op(act, "Mul", {h, e});
        h = b.op(act, "Mul", {e, b.floatConstant(act, 0.5f)});
        b.weight(p + ".mlp.3.weight_t", {mlp, hidden});
        b.weight(p + ".mlp.3.bias", {hidden});
        h = b.op(s + "/mlp/mlp.3", "MatMul", {h, p + ".mlp.3.weight_t"});
        h = b.op(s + "/mlp/mlp.3", "Add", {h, p + ".mlp.3.bias"});
        x = b.op(s, "Add", {h, mid});
    }
    b.weight("encoder.ln.weight", {hidden});
    b.weight("encoder.ln.bias", {hidden});
    x = b.op("/encoder/ln", "LayerNormalization", {x, "encoder.ln.weight", "encoder.ln.bias"});
    Graph::intAttr(b.last(), "axis", -1);
    // x[:, 0]
    x = b.op("", "Gather", {x, b.constant("", {0}, true)});
    Graph::intAttr(b.last(), "axis", 1);
    b.weight("heads.head.weight", {classes, hidden});
    b.weight("heads.head.bias", {classes});
    x = b.op("/heads/head", "Gemm", {x, "heads.head.weight", "heads.head.bias"});
    Graph::intAttr(b.last(), "transB", 1);
    g.output(x);
    return g;
}

} // namespace fixture
