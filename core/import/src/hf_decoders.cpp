// The decoder families whose layers differ from Llama's in more than a flag, in training mode with eager
// attention: LayerNorm (with bias), partial rotary or learned positions, fused or separate q/k/v, parallel or
// sequential residuals, plain or gated MLP. Module names per family from a table, following named_modules() of
// modeling_phi.py (PhiForCausalLM), modeling_stablelm.py (StableLmForCausalLM), modeling_gpt_neox.py
// (GPTNeoXForCausalLM), modeling_gpt_bigcode.py (GPTBigCodeForCausalLM), modeling_falcon.py (FalconForCausalLM).
#include "hf_builder.h"
#include "hf_families.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>

namespace headroom::detail {
namespace {

// How the fused projection lays out q, k and v.
enum class Qkv : uint8_t {
    Separate,    // q_proj, k_proj, v_proj
    PerHead,     // gpt_neox query_key_value: view(B, T, heads, 3 * head_dim), then chunk(3) per head
    Concatenated // gpt_bigcode c_attn, falcon query_key_value: [q | k | v] (falcon 7B: heads + 2 rows of head_dim)
};
enum class Bias : uint8_t { Never, Always, Flag }; // Flag: the config's bias key (HfFamily::bias)

struct Names
{
    HfLayout layout;
    const char *root, *embed, *positions, *layers, *finalNorm, *lmHead;
    const char *ln1, *ln2; // ln2 nullptr: a parallel layer's MLP reads ln1's output (phi, falcon 7B)
    const char *attn, *qkv, *q, *k, *v, *out;
    Qkv layout2;
    Bias qkvBias, outBias, mlpBias;
    bool lmBias;
    const char *mlp, *up, *gate, *down; // gate nullptr: fc1 -> act -> fc2
};

// clang-format off
constexpr Names kNames[] = {
    // layout, root, embed, positions, layers, final norm, lm head, ln1, ln2, attention, fused qkv, q, k, v, out,
    // qkv layout, qkv / out / MLP bias, lm head bias, MLP, up (fc1), gate, down (fc2)
    {HfLayout::Phi, "model", "embed_tokens", nullptr, "layers", "final_layernorm", "lm_head",
     "input_layernorm", nullptr, "self_attn", nullptr, "q_proj", "k_proj", "v_proj", "dense",
     Qkv::Separate, Bias::Always, Bias::Always, Bias::Always, true, "mlp", "fc1", nullptr, "fc2"},
    {HfLayout::StableLm, "model", "embed_tokens", nullptr, "layers", "norm", "lm_head",
     "input_layernorm", "post_attention_layernorm", "self_attn", nullptr, "q_proj", "k_proj", "v_proj", "o_proj",
     Qkv::Separate, Bias::Flag, Bias::Never, Bias::Never, false, "mlp", "up_proj", "gate_proj", "down_proj"},
    {HfLayout::GptNeox, "gpt_neox", "embed_in", nullptr, "layers", "final_layer_norm", "embed_out",
     "input_layernorm", "post_attention_layernorm", "attention", "query_key_value", nullptr, nullptr, nullptr,
     "dense", Qkv::PerHead, Bias::Flag, Bias::Flag, Bias::Always, false, "mlp", "dense_h_to_4h", nullptr,
     "dense_4h_to_h"},
    {HfLayout::GptBigCode, "transformer", "wte", "wpe", "h", "ln_f", "lm_head",
     "ln_1", "ln_2", "attn", "c_attn", nullptr, nullptr, nullptr, "c_proj",
     Qkv::Concatenated, Bias::Always, Bias::Always, Bias::Always, false, "mlp", "c_fc", nullptr, "c_proj"},
    {HfLayout::Falcon, "transformer", "word_embeddings", nullptr, "h", "ln_f", "lm_head",
     "input_layernorm", nullptr, "self_attention", "query_key_value", nullptr, nullptr, nullptr, "dense",
     Qkv::Concatenated, Bias::Flag, Bias::Flag, Bias::Flag, false, "mlp", "dense_h_to_4h", nullptr,
     "dense_4h_to_h"},
};
// clang-format on

const Names& namesOf(HfLayout l)
{
    for (const Names& n : kNames)
        if (n.layout == l)
            return n;
    return kNames[0];
}

bool biased(Bias b, const HfArch& a) { return b == Bias::Always || (b == Bias::Flag && a.family.bias); }

// rotary_ndims = int(head_dim * partial_rotary_factor) (modeling_gpt_neox.py GPTNeoXAttention, PhiAttention)
int64_t rotaryWidth(const HfArch& a)
{
    return static_cast<int64_t>(static_cast<double>(a.headDim) * a.family.rotaryFraction);
}

// apply_rotary_pos_emb on the first rotary_ndims of head_dim: cat(rotated x[..., :r], x[..., r:])
std::string partialRotary(Builder& b, const std::string& x, const std::string& scope)
{
    const int64_t r = rotaryWidth(b.a);
    if (r <= 0)
        return x;
    if (r == b.a.headDim)
        return b.rotary(x, scope);
    OnnxBuilder& g = b.g;
    const std::string rot = g.node("Slice", scope, {x, g.ints({0}), g.ints({r}), g.ints({3})});
    const std::string pass = g.node("Slice", scope, {x, g.ints({r}), g.ints({b.a.headDim}), g.ints({3})});
    const std::string y = g.node("Concat", scope, {b.rotary(rot, scope, r), pass});
    g.attrInt("axis", -1);
    return y;
}

struct QkvOut
{
    std::string q, k, v;
};

QkvOut projections(Builder& b, const Names& n, const std::string& h, const std::string& A, const std::string& AS)
{
    const HfArch& a = b.a;
    OnnxBuilder& g = b.g;
    const int64_t qDim = a.heads * a.headDim, kvDim = a.kvHeads * a.headDim;
    const bool bias = biased(n.qkvBias, a);
    if (n.layout2 == Qkv::Separate)
        return {b.heads(b.linear(h, A + "." + n.q, a.hidden, qDim, bias), AS, a.heads),
                b.heads(b.linear(h, A + "." + n.k, a.hidden, kvDim, bias), AS, a.kvHeads),
                b.heads(b.linear(h, A + "." + n.v, a.hidden, kvDim, bias), AS, a.kvHeads)};
    const std::string qkv = b.linear(h, A + "." + n.qkv, a.hidden, qDim + 2 * kvDim, bias);
    if (n.layout2 == Qkv::PerHead) {
        std::string t = g.node("Reshape", AS, {qkv, g.ints({0, 0, a.heads, 3 * a.headDim})});
        t = g.node("Transpose", AS, {t});
        g.attrInts("perm", {0, 2, 1, 3});
        const auto p = g.nodes("Split", AS, {t, g.ints({a.headDim, a.headDim, a.headDim})}, 3);
        g.attrInt("axis", -1);
        return {p[0], p[1], p[2]};
    }
    const auto p = g.nodes("Split", AS, {qkv, g.ints({qDim, kvDim, kvDim})}, 3);
    g.attrInt("axis", -1);
    return {b.heads(p[0], AS, a.heads), b.heads(p[1], AS, a.kvHeads), b.heads(p[2], AS, a.kvHeads)};
}

std::string feedForward(Builder& b, const Names& n, const std::string& h, const std::string& L)
{
    const HfArch& a = b.a;
    OnnxBuilder& g = b.g;
    const std::string M = L + "." + n.mlp;
    const std::string MS = "/" + Builder::dotsToPath(M);
    const bool bias = biased(n.mlpBias, a);
    std::string act;
    if (n.gate != nullptr) {
        const std::string gate = b.linear(h, M + "." + n.gate, a.hidden, a.intermediate, bias);
        const std::string up = b.linear(h, M + "." + n.up, a.hidden, a.intermediate, bias);
        act = g.node("Mul", MS, {b.activation(gate, MS + "/act_fn", a.family.act), up});
    } else {
        act = b.activation(b.linear(h, M + "." + n.up, a.hidden, a.intermediate, bias), MS + "/act", a.family.act);
    }
    return b.dropoutOf(b.linear(act, M + "." + n.down, a.intermediate, a.hidden, bias), MS + "/dropout");
}

// One layer: norm, attention, residual; the MLP either on the same normed input, both added to the residual
// (phi, gpt_neox use_parallel_residual, falcon parallel_attn), or after the attention's residual.
std::string layer(Builder& b, const Names& n, std::string x, int64_t l, const SeqShape& ss)
{
    const HfArch& a = b.a;
    OnnxBuilder& g = b.g;
    const std::string L = std::string(n.root) + "." + n.layers + "." + std::to_string(l);
    const std::string S = "/" + Builder::dotsToPath(L);
    const bool newArch = a.family.newArch; // falcon 40B/180B: ln_attn and ln_mlp
    const std::string h = b.layerNorm(x, L + (newArch ? ".ln_attn" : std::string(".") + n.ln1), a.hidden);
    const std::string A = L + "." + n.attn;
    const std::string AS = "/" + Builder::dotsToPath(A);
    QkvOut p = projections(b, n, h, A, AS);
    p.q = partialRotary(b, p.q, AS);
    p.k = partialRotary(b, p.k, AS);
    if (a.kvHeads > 1) { // one KV head (gpt_bigcode, falcon 7B) broadcasts in the matmuls, not copied
        p.k = b.repeatKv(p.k, AS, ss.batch, ss.seq);
        p.v = b.repeatKv(p.v, AS, ss.batch, ss.seq);
    }
    std::string o = b.attention(p.q, p.k, p.v, AS, 1.0 / std::sqrt(static_cast<double>(a.headDim)));
    o = b.dropoutOf(b.linear(o, A + "." + n.out, a.heads * a.headDim, a.hidden, biased(n.outBias, a)),
                    AS + "/resid_dropout");
    if (a.family.parallel) {
        const std::string hm = newArch            ? b.layerNorm(x, L + ".ln_mlp", a.hidden)
                               : n.ln2 != nullptr ? b.layerNorm(x, L + "." + n.ln2, a.hidden)
                                                  : h;
        const std::string m = feedForward(b, n, hm, L);
        return g.node("Add", S, {g.node("Add", S, {m, o}), x});
    }
    x = g.node("Add", S, {x, o});
    return g.node("Add", S, {x, feedForward(b, n, b.layerNorm(x, L + "." + n.ln2, a.hidden), L)});
}

} // namespace

std::string buildDecoderFamilyModel(const HfArch& a, const std::string& file)
{
    OnnxBuilder g({.producer = std::string(kHfConfigProducer),
                   .opset = 18,
                   .weightsFile = "config.json.weights",
                   .namedConstantValues = true},
                  a.modelType + " (" + std::filesystem::path(file).filename().string() + ")");
    g.metadata("model_type", a.modelType);
    g.input("input_ids", onnx::TensorProto::INT64);
    const Names& n = namesOf(a.family.layout);
    Builder b{a, g, a.normEps, a.ropeTheta, a.dropout, {}, {}, {}};
    const std::string root = n.root;
    const std::string embedName = root + "." + n.embed;
    const std::string embedW = g.weight(embedName + ".weight", {a.vocab, a.hidden});
    const SeqShape ss = seqShape(g);
    b.mask = causalMask(g, ss);
    std::string x = g.node("Gather", "/" + Builder::dotsToPath(embedName), {embedW, "input_ids"});
    if (n.positions != nullptr) { // gpt_bigcode: learned positions
        const std::string P = root + "." + n.positions;
        const std::string pe = g.node("Gather", "/" + Builder::dotsToPath(P),
                                      {g.weight(P + ".weight", {a.positions, a.hidden}), ss.positions});
        x = g.node("Add", "/" + root, {x, pe});
    }
    x = b.dropoutOf(x, "/" + root + "/drop");
    if (rotaryWidth(a) > 0) { // the cos/sin tables cover the rotated part of head_dim
        HfArch rotated = a;
        rotated.headDim = rotaryWidth(a);
        Builder tables{rotated, g, a.normEps, a.ropeTheta, 0.0, {}, {}, {}};
        rotaryTables(tables, ss, root);
        b.cos = tables.cos;
        b.sin = tables.sin;
    }
    for (int64_t l = 0; l < a.layers; ++l)
        x = layer(b, n, x, l, ss);
    x = b.layerNorm(x, root + "." + n.finalNorm, a.hidden);
    std::string logits;
    if (a.tied) {
        std::string w = g.node("Transpose", "/lm_head", {embedW});
        g.attrInts("perm", {1, 0});
        logits = g.node("MatMul", "/lm_head", {x, w});
    } else {
        logits = b.linear(x, n.lmHead, a.hidden, a.vocab, n.lmBias);
    }
    g.output(logits, onnx::TensorProto::FLOAT, a.vocab); // [batch, seq, vocab]
    return g.serialize();
}

} // namespace headroom::detail
