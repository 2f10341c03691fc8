// A generated GPT-style graph for benchmarks and tests (see synthetic.h).
#include "headroom/import/synthetic.h"

#include "onnx_builder.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <vector>

namespace headroom {
namespace {

using detail::OnnxBuilder;

// Every weight at its own offset in one weights file (never read: dims and dtype are what count).
const detail::OnnxStyle kStyle{
    .producer = "headroom-synthetic", .opset = 17, .weightsFile = "synthetic.weights", .weightOffsets = true};

// Shape(x)[axis] as a 1-D tensor, the way PyTorch builds reshape targets.
std::string dimOf(OnnxBuilder& b, const std::string& scope, const std::string& x, int64_t axis, int idx)
{
    const std::string s = std::to_string(idx);
    const std::string shape = b.namedNode("Shape", scope + "/Shape_" + s, {x});
    const std::string ax = b.ints({axis}, true, scope + "/Constant_g" + s);
    const std::string g = b.namedNode("Gather", scope + "/Gather_" + s, {shape, ax});
    b.attrInt("axis", 0);
    const std::string axes = b.ints({0}, false, scope + "/Constant_u" + s);
    return b.namedNode("Unsqueeze", scope + "/Unsqueeze_" + s, {g, axes});
}

} // namespace

std::string makeSyntheticChain(int blocks, int width)
{
    blocks = std::max(1, blocks);
    width = std::max(1, width);
    const int64_t d = width;
    OnnxBuilder b(kStyle, "synthetic_chain");
    b.input("x", onnx::TensorProto::FLOAT, d);
    std::string x = "x";
    for (int i = 0; i < blocks; ++i) {
        const std::string s = "/blocks." + std::to_string(i);
        const std::string p = "blocks." + std::to_string(i);
        std::string y = b.namedNode("MatMul", s + "/fc/MatMul", {x, b.weight(p + ".fc.weight", {d, d})});
        y = b.namedNode("Add", s + "/fc/Add", {b.weight(p + ".fc.bias", {d}), y});
        y = b.namedNode("Relu", s + "/act/Relu", {y});
        x = b.namedNode("Add", s + "/Add", {x, y});
    }
    b.output(x, onnx::TensorProto::FLOAT, d);
    return b.serialize();
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

    OnnxBuilder b(kStyle, "synthetic_gpt");
    b.input("input_ids", onnx::TensorProto::INT64);

    const std::string tok = b.weight("tok_emb.weight", {vocab, h});
    const std::string pos = b.weight("pos_emb.weight", {4096, h});
    std::string x = b.namedNode("Gather", "/tok_emb/Gather", {tok, "input_ids"});
    {
        const std::string seq = b.namedNode(
            "Gather", "/Gather", {b.namedNode("Shape", "/Shape", {"input_ids"}), b.ints({1}, true, "/Constant")});
        const std::string range = b.namedNode(
            "Range", "/Range", {b.ints({0}, true, "/Constant_1"), seq, b.ints({1}, true, "/Constant_2")});
        const std::string pe = b.namedNode("Gather", "/pos_emb/Gather", {pos, range});
        x = b.namedNode("Add", "/Add", {x, pe});
    }
    for (int l = 0; l < layers; ++l) {
        const std::string s = "/blocks." + std::to_string(l);
        const std::string p = "blocks." + std::to_string(l);
        const std::string ln1 = b.namedNode("LayerNormalization", s + "/ln1/LayerNormalization",
                                            {x, b.weight(p + ".ln1.weight", {h}), b.weight(p + ".ln1.bias", {h})});
        b.attrInt("axis", -1);
        std::string qkv = b.namedNode("MatMul", s + "/attn/qkv/MatMul",
                                      {ln1, b.weight(p + ".attn.qkv.weight", {h, 3 * h})});
        qkv = b.namedNode("Add", s + "/attn/qkv/Add", {b.weight(p + ".attn.qkv.bias", {3 * h}), qkv});
        const std::string split = b.ints({h, h, h}, false, s + "/attn/Constant_split");
        b.namedNode("Split", s + "/attn/Split", {qkv, split}, 3);
        b.attrInt("axis", 2);
        std::string heads4[3];
        const char* nm[3] = {"q", "k", "v"};
        for (int i = 0; i < 3; ++i) {
            const std::string part = s + "/attn/Split_output_" + std::to_string(i);
            const std::string sc = s + "/attn/" + nm[i];
            const std::string bdim = dimOf(b, sc, part, 0, 0);
            const std::string tdim = dimOf(b, sc, part, 1, 1);
            const std::string target = b.namedNode(
                "Concat", sc + "/Concat",
                {bdim, tdim, b.ints({nh}, false, sc + "/Constant_h"), b.ints({hd}, false, sc + "/Constant_d")});
            b.attrInt("axis", 0);
            const std::string r = b.namedNode("Reshape", sc + "/Reshape", {part, target});
            heads4[i] = b.namedNode("Transpose", sc + "/Transpose", {r});
            b.attrInts("perm", i == 1 ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3});
        }
        std::string att = b.namedNode("MatMul", s + "/attn/MatMul", {heads4[0], heads4[1]});
        att = b.namedNode("Div", s + "/attn/Div", {att, b.scalar(8.0f, s + "/attn/Constant_scale")});
        att = b.namedNode("Softmax", s + "/attn/Softmax", {att});
        b.attrInt("axis", -1);
        std::string ctx = b.namedNode("MatMul", s + "/attn/MatMul_1", {att, heads4[2]});
        ctx = b.namedNode("Transpose", s + "/attn/Transpose", {ctx});
        b.attrInts("perm", {0, 2, 1, 3});
        const std::string bdim = dimOf(b, s + "/attn/out", ctx, 0, 0);
        const std::string tdim = dimOf(b, s + "/attn/out", ctx, 1, 1);
        const std::string target = b.namedNode("Concat", s + "/attn/out/Concat",
                                               {bdim, tdim, b.ints({h}, false, s + "/attn/out/Constant_h")});
        b.attrInt("axis", 0);
        ctx = b.namedNode("Reshape", s + "/attn/Reshape", {ctx, target});
        std::string proj = b.namedNode("MatMul", s + "/attn/proj/MatMul",
                                       {ctx, b.weight(p + ".attn.proj.weight", {h, h})});
        proj = b.namedNode("Add", s + "/attn/proj/Add", {b.weight(p + ".attn.proj.bias", {h}), proj});
        x = b.namedNode("Add", s + "/Add", {x, proj});

        const std::string ln2 = b.namedNode("LayerNormalization", s + "/ln2/LayerNormalization",
                                            {x, b.weight(p + ".ln2.weight", {h}), b.weight(p + ".ln2.bias", {h})});
        b.attrInt("axis", -1);
        std::string fc = b.namedNode("MatMul", s + "/fc/MatMul", {ln2, b.weight(p + ".fc.weight", {h, 4 * h})});
        fc = b.namedNode("Add", s + "/fc/Add", {b.weight(p + ".fc.bias", {4 * h}), fc});
        // Gelu as PyTorch exports it at opset < 20: x * 0.5 * (1 + erf(x / sqrt(2))).
        std::string ge = b.namedNode("Div", s + "/act/Div", {fc, b.scalar(1.41421356f, s + "/act/Constant")});
        ge = b.namedNode("Erf", s + "/act/Erf", {ge});
        ge = b.namedNode("Add", s + "/act/Add", {ge, b.scalar(1.0f, s + "/act/Constant_1")});
        ge = b.namedNode("Mul", s + "/act/Mul", {fc, ge});
        ge = b.namedNode("Mul", s + "/act/Mul_1", {ge, b.scalar(0.5f, s + "/act/Constant_2")});
        std::string fc2 = b.namedNode("MatMul", s + "/fc2/MatMul", {ge, b.weight(p + ".fc2.weight", {4 * h, h})});
        fc2 = b.namedNode("Add", s + "/fc2/Add", {b.weight(p + ".fc2.bias", {h}), fc2});
        x = b.namedNode("Add", s + "/Add_1", {x, fc2});
    }
    x = b.namedNode("LayerNormalization", "/ln_f/LayerNormalization",
                    {x, b.weight("ln_f.weight", {h}), b.weight("ln_f.bias", {h})});
    b.attrInt("axis", -1);
    const std::string headW = b.namedNode("Transpose", "/lm_head/Transpose", {tok});
    b.attrInts("perm", {1, 0});
    const std::string logits = b.namedNode("MatMul", "/lm_head/MatMul", {x, headW});
    b.output(logits, onnx::TensorProto::FLOAT, vocab);
    return b.serialize();
}

} // namespace headroom
