#pragma once
// Mixture-of-experts layers of a Hugging Face config.json as graph nodes (docs/MOE.md). The routed experts are
// written the way transformers 5.x runs them by default (3D expert parameters, the grouped_mm path of
// integrations/moe.py): every token's k copies are gathered into one [T*k, H] tensor, so the graph has a fixed
// number of nodes per layer whatever the number of experts (a per-expert graph would have 256 x 61 MLPs for
// DeepSeek-V3), and the shapes stay polynomials of batch and seq. Balanced routing is what this sums to:
// whatever the split among experts, the experts together see T*k rows (tests/data/moe/README.md).
//
// Two ops outside ai.onnx carry what ONNX cannot say (shape and saved rules: shapes/shape_rules_nn.cpp,
// memory/rules/saved_rules.cpp):
//   GroupedMatMul(x [S, K], w [E, K, N] (, bias [E, N])) -> [S, N]: torch._grouped_mm with row offsets;
//     always_saves_input = 1: transformers' fallback (saves x whatever trains), 0: the per-expert Linear loop;
//     top_k: tokens' experts (the gate_up matmul only); mxfp4 = 1: the weights ship as MXFP4
//   IndexAdd(self [N, H], index [S], source [S, H]) -> [N, H]: Tensor.index_add_ (4.x / "eager" loop)
#include "headroom/import/hfconfig.h"

#include <nlohmann/json_fwd.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace headroom::detail {

bool isMoeModelType(const std::string& modelType);
// Reads a MoE family's config.json into `a` (dims, attention variant, MoE fields); throws Error naming the file.
void parseMoeConfig(const nlohmann::json& j, HfArch& a, const std::string& file);
// Whether decoder layer `l` has routed experts, and the dense MLP width of a layer that has none.
bool isMoeLayer(const HfArch& a, int64_t l);
int64_t denseWidth(const HfArch& a);
// Module names of the block (transformers' named_modules()).
std::string moeModule(const HfArch& a);    // "mlp" or "block_sparse_moe"
std::string routerModule(const HfArch& a); // "gate", "router", "router.layer"

// The routed (and shared) experts of one layer: x [B, T, H] -> [B, T, H]. `linear(x, module, in, out, bias)`,
// `path(module)` and `silu(x, scope)` are the caller's; the router logits [B, T, E] go to `logits`.
template <class G, class Linear, class Path, class Silu>
std::string moeBlock(G& g, const HfArch& a, const std::string& x, const std::string& M, Linear linear, Path path,
                     Silu silu, std::vector<std::string>& logits)
{
    const HfMoe& m = a.moe;
    const int64_t H = a.hidden, I = m.expertWidth, E = m.experts, k = m.topK;
    const std::string S = "/" + path(M);
    // router: logits -> softmax (fp32) or sigmoid -> top-k -> renormalised weights
    const std::string R = M + "." + routerModule(a);
    const std::string lg = linear(x, R, H, E, m.routerBias);
    logits.push_back(lg);
    std::string scores;
    if (m.sigmoidRouter) {
        // DeepSeek-V3: e_score_correction_bias (a buffer, no gradient) only shifts which experts are picked
        scores = g.node("Sigmoid", "/" + path(R), {lg});
    } else {
        scores = g.node("Softmax", "/" + path(R), {lg});
        g.attrInt("axis", -1);
    }
    const auto top = g.nodes("TopK", "/" + path(R), {scores, g.ints({k})}, 2);
    g.attrInt("axis", -1);
    std::string w = top[0];
    if (m.normTopK || m.sigmoidRouter) {
        const std::string sum = g.node("ReduceSum", "/" + path(R), {w, g.ints({-1})});
        g.attrInt("keepdims", 1);
        w = g.node("Div", "/" + path(R), {w, sum});
    }
    // dispatch: the k copies of each token, sorted by expert (x[token_idx][perm])
    const std::string X = M + ".experts";
    const std::string XS = "/" + path(X);
    const std::string flat = g.node("Reshape", XS, {top[1], g.ints({-1})});
    const std::string x2 = g.node("Reshape", XS, {x, g.ints({-1, H})});
    const std::string picked = g.node("Gather", XS, {g.node("Gather", XS, {x2, flat}), flat});
    std::vector<std::string> in = {picked, g.weight(X + ".gate_up_proj", {E, H, 2 * I})};
    if (m.expertBias)
        in.push_back(g.weight(X + ".gate_up_proj_bias", {E, 2 * I}));
    const std::string gu = g.node("GroupedMatMul", XS, in);
    g.attrInt("always_saves_input", m.eager ? 0 : 1);
    g.attrInt("top_k", k); // for the layer tree's "E experts, k active per token" row (report/layer_tree.cpp)
    if (m.mxfp4)
        g.attrInt("mxfp4", 1); // the weights ship as MXFP4 (memory/finetune/quant_weights.cpp)
    const auto parts = g.nodes("Split", XS, {gu, g.ints({I, I})}, 2);
    g.attrInt("axis", -1);
    const std::string act = g.node("Mul", XS, {silu(parts[0], XS + "/act_fn"), parts[1]});
    in = {act, g.weight(X + ".down_proj", {E, I, H})};
    if (m.expertBias)
        in.push_back(g.weight(X + ".down_proj_bias", {E, H}));
    const std::string down = g.node("GroupedMatMul", XS, in);
    g.attrInt("always_saves_input", m.eager ? 0 : 1);
    if (m.mxfp4)
        g.attrInt("mxfp4", 1);
    const std::string ws = g.node("Gather", XS, {g.node("Reshape", XS, {w, g.ints({-1, 1})}), flat});
    const std::string weighted = g.node("Mul", XS, {down, ws});
    std::string y;
    if (m.eager) {
        // final.index_add_(0, top_x, out): keeps its source for backward (derivatives.yaml index_add)
        const std::string zeros = g.node("ConstantOfShape", XS, {g.node("Shape", XS, {x2})});
        y = g.node("IndexAdd", XS, {zeros, flat, weighted});
        y = g.node("Reshape", S, {y, g.node("Shape", S, {x})});
    } else {
        // weighted_out[inv_perm].view(T, k, H).sum(dim=1)
        const std::string back = g.node("Gather", XS, {weighted, flat});
        y = g.node("ReduceSum", XS, {g.node("Reshape", XS, {back, g.ints({-1, k, H})}), g.ints({1})});
        g.attrInt("keepdims", 0);
        y = g.node("Reshape", S, {y, g.node("Shape", S, {x})});
    }
    if (m.sharedWidth > 0) {
        const std::string SH = M + (a.modelType == "qwen2_moe" ? ".shared_expert" : ".shared_experts");
        const std::string gate = linear(x, SH + ".gate_proj", H, m.sharedWidth, false);
        const std::string up = linear(x, SH + ".up_proj", H, m.sharedWidth, false);
        const std::string sact = g.node("Mul", "/" + path(SH), {silu(gate, "/" + path(SH) + "/act_fn"), up});
        std::string shared = linear(sact, SH + ".down_proj", m.sharedWidth, H, false);
        if (m.sharedGate) {
            const std::string sg = linear(x, M + ".shared_expert_gate", H, 1, false);
            shared = g.node("Mul", S, {g.node("Sigmoid", S, {sg}), shared});
        }
        y = g.node("Add", S, {y, shared});
    }
    return y;
}

} // namespace headroom::detail

namespace headroom::detail {

// DeepseekV2Attention / DeepseekV3Attention (multi-head latent attention), eager: q through an optional
// low-rank pair (q_a_proj, q_a_layernorm, q_b_proj), k and v from one compressed kv_a_proj_with_mqa
// (kv_lora_rank + a shared rotary key of qk_rope_head_dim), kv_a_layernorm, kv_b_proj to per-head nope keys and
// values; rotary only on the rope part. `b` is hfconfig.cpp's builder (linear, rmsNorm, rotary, attention).
template <class B> std::string mlaAttention(B& b, const std::string& h, const std::string& A, const std::string& AS)
{
    auto& g = b.g;
    const HfArch& a = b.a;
    const HfMla& m = a.mla;
    const int64_t n = a.heads, qk = m.nope + m.rope;
    auto heads = [&](const std::string& x, int64_t count, int64_t d) {
        const std::string v = g.node("Reshape", AS, {x, g.ints({0, 0, count, d})});
        const std::string t = g.node("Transpose", AS, {v});
        g.attrInts("perm", {0, 2, 1, 3});
        return t;
    };
    auto split = [&](const std::string& x, int64_t first, int64_t second) {
        const auto parts = g.nodes("Split", AS, {x, g.ints({first, second})}, 2);
        g.attrInt("axis", -1);
        return parts;
    };
    std::string q;
    if (m.qLoraRank > 0) {
        const std::string qa = b.linear(h, A + ".q_a_proj", a.hidden, m.qLoraRank, false);
        q = b.linear(b.rmsNorm(qa, A + ".q_a_layernorm", m.qLoraRank), A + ".q_b_proj", m.qLoraRank, n * qk, false);
    } else {
        q = b.linear(h, A + ".q_proj", a.hidden, n * qk, false);
    }
    const auto qParts = split(heads(q, n, qk), m.nope, m.rope);
    const std::string ckv = b.linear(h, A + ".kv_a_proj_with_mqa", a.hidden, m.kvLoraRank + m.rope, false);
    const auto kvParts = split(ckv, m.kvLoraRank, m.rope);
    const std::string kv = b.linear(b.rmsNorm(kvParts[0], A + ".kv_a_layernorm", m.kvLoraRank), A + ".kv_b_proj",
                                    m.kvLoraRank, n * (m.nope + m.v), false);
    const auto kvs = split(heads(kv, n, m.nope + m.v), m.nope, m.v);
    const std::string qRot = b.rotary(qParts[1], AS);
    std::string kRot = b.rotary(heads(kvParts[1], 1, m.rope), AS);
    kRot = g.node("Expand", AS, {kRot, g.ints({1, n, 1, 1})});
    const std::string query = g.node("Concat", AS, {qParts[0], qRot});
    g.attrInt("axis", -1);
    const std::string key = g.node("Concat", AS, {kvs[0], kRot});
    g.attrInt("axis", -1);
    const std::string o = b.attention(query, key, kvs[1], AS, 1.0 / std::sqrt(static_cast<double>(qk)));
    return b.linear(o, A + ".o_proj", n * m.v, a.hidden, false);
}

} // namespace headroom::detail
