// A Hugging Face config.json -> the ONNX graph its modeling_*.py runs in training mode (eager attention,
// the way `torch.onnx.export` writes it), so the loader, the layer tree and the engine treat it like an
// exported file. Module paths follow the model's named_modules() (`model.layers.3.self_attn.q_proj`).
#include "headroom/import/hfconfig.h"

#include "hf_builder.h"
#include "hf_families.h"
#include "hf_limits.h"
#include "hf_moe.h"

#include "headroom/base/error.h"

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace headroom {
namespace {

using json = nlohmann::json;
using detail::Builder;
using detail::OnnxBuilder;

int64_t need(const json& j, const char* key, const std::string& file) { return detail::needCount(j, key, file); }

int64_t optional(const json& j, const char* key, int64_t fallback, const std::string& file)
{
    auto it = j.find(key);
    if (it == j.end() || it->is_null())
        return fallback;
    return need(j, key, file);
}

double number(const json& j, const char* key, double fallback)
{
    auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

bool flag(const json& j, const char* key, bool fallback)
{
    auto it = j.find(key);
    return it != j.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

std::string lower(std::string s)
{
    for (char& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

} // namespace

bool isHfConfigPath(const std::string& path)
{
    std::error_code ec;
    const std::filesystem::path p(path);
    if (std::filesystem::is_directory(p, ec))
        return std::filesystem::is_regular_file(p / "config.json", ec);
    return lower(p.extension().string()) == ".json";
}

std::vector<std::string> peftDefaultTargets(std::string_view t)
{
    // peft/utils/constants.py TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING at 00073fe (olmo2 and the MoE
    // types qwen2_moe, qwen3_moe, olmoe, deepseek_v2/v3, granitemoe, gpt_oss have none there: PEFT raises "Please
    // specify `target_modules`"); phi3's fused qkv_proj is Headroom's own choice for a type PEFT does not list
    struct Row
    {
        std::string_view type;
        std::vector<std::string> targets;
    };
    static const Row kTargets[] = {
        {"llama", {"q_proj", "v_proj"}},
        {"mistral", {"q_proj", "v_proj"}},
        {"mixtral", {"q_proj", "v_proj"}},
        {"qwen2", {"q_proj", "v_proj"}},
        {"qwen3", {"q_proj", "v_proj"}},
        {"gemma", {"q_proj", "v_proj"}},
        {"gemma2", {"q_proj", "v_proj"}},
        {"gemma3_text", {"q_proj", "v_proj"}},
        {"stablelm", {"q_proj", "v_proj"}},
        {"phi3", {"qkv_proj"}},
        {"gpt2", {"c_attn"}},
        {"gpt_bigcode", {"c_attn"}},
        {"bert", {"query", "value"}},
        {"roberta", {"query", "value"}},
        {"deberta-v2", {"query_proj", "value_proj"}},
        {"gpt_neox", {"query_key_value"}},
        {"falcon", {"query_key_value"}},
        {"phi", {"q_proj", "v_proj", "fc1", "fc2"}},
    };
    for (const Row& r : kTargets)
        if (r.type == t)
            return r.targets;
    return {};
}

Ia3Defaults peftIa3Defaults(std::string_view t)
{
    // peft/utils/constants.py at 5d602fd, the model types Headroom builds
    struct Row
    {
        std::string_view type;
        Ia3Defaults d;
    };
    static const Row kIa3[] = {
        {"llama", {{"k_proj", "v_proj", "down_proj"}, {"down_proj"}}},
        {"mistral", {{"k_proj", "v_proj", "down_proj"}, {"down_proj"}}},
        {"mixtral", {{"k_proj", "v_proj", "w2"}, {"w2"}}},
        {"qwen2", {{"q_proj", "v_proj", "down_proj"}, {"down_proj"}}},
        {"qwen3", {{"q_proj", "v_proj", "down_proj"}, {"down_proj"}}},
        {"gemma", {{"q_proj", "v_proj", "down_proj"}, {"down_proj"}}},
        {"gemma2", {{"q_proj", "v_proj", "down_proj"}, {"down_proj"}}},
        {"gemma3_text", {{"q_proj", "v_proj", "down_proj"}, {"down_proj"}}},
        {"phi", {{"q_proj", "v_proj", "fc2"}, {"fc2"}}},
        {"gpt2", {{"c_attn", "mlp.c_proj"}, {"mlp.c_proj"}}},
        {"gpt_bigcode", {{"c_attn", "mlp.c_proj"}, {"mlp.c_proj"}}},
        {"bert", {{"key", "value", "output.dense"}, {"output.dense"}}},
        {"roberta", {{"key", "value", "output.dense"}, {"output.dense"}}},
        {"deberta-v2", {{"key_proj", "value_proj", "output.dense"}, {"output.dense"}}},
        {"gpt_neox", {{"query_key_value", "dense_4h_to_h"}, {"dense_4h_to_h"}}},
        {"falcon", {{"query_key_value", "dense_4h_to_h"}, {"dense_4h_to_h"}}},
    };
    for (const Row& r : kIa3)
        if (r.type == t)
            return r.d;
    return {};
}

HfArch parseHfConfig(std::string_view text, const std::string& file)
{
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {
        throw Error(file + ": not a valid JSON file (" + std::string(e.what()) + ")");
    }
    if (!j.is_object())
        throw Error(file + ": not a Hugging Face config.json (the top level is not an object)");
    if (!j.contains("model_type") || !j["model_type"].is_string())
        throw Error(file + ": not a Hugging Face config.json (no 'model_type')");
    HfArch a;
    a.modelType = j["model_type"].get<std::string>();
    const std::string& t = a.modelType;
    if (t == "gpt2") {
        a.hidden = need(j, "n_embd", file);
        a.layers = need(j, "n_layer", file);
        a.heads = need(j, "n_head", file);
        a.kvHeads = a.heads;
        a.intermediate = optional(j, "n_inner", 4 * a.hidden, file);
        a.positions = need(j, "n_positions", file);
        a.vocab = need(j, "vocab_size", file);
        a.tied = flag(j, "tie_word_embeddings", true); // PretrainedConfig's default
        a.normEps = number(j, "layer_norm_epsilon", 1e-5);
        // GPT2Config's default dropout 0.1 (embd/attn/resid); one rate for all three unless they differ
        a.dropout = number(j, "resid_pdrop", 0.1);
    } else if (t == "gemma3" && j.contains("text_config") && j["text_config"].is_object()) {
        // Gemma3ForConditionalGeneration: the text decoder under model.language_model, lm_head on top; the
        // SigLIP vision tower and the projector run once per image and are left out of the training graph
        json text = j["text_config"];
        text["model_type"] = "gemma3_text";
        a = parseHfConfig(text.dump(), file);
        a.modelType = t;
        a.family.root = "model.language_model";
        return a;
    } else if (t == "llama" || t == "mistral" || t == "qwen2" || t == "qwen3" || t == "gemma" || t == "gemma2" ||
               t == "phi3" || detail::isLlamaStyleType(t)) {
        a.hidden = need(j, "hidden_size", file);
        a.intermediate = need(j, "intermediate_size", file);
        a.layers = need(j, "num_hidden_layers", file);
        a.heads = need(j, "num_attention_heads", file);
        a.kvHeads = optional(j, "num_key_value_heads", a.heads, file);
        a.vocab = need(j, "vocab_size", file);
        // each modeling file's config default: Gemma ties the head to the embedding, the others do not
        a.tied = flag(j, "tie_word_embeddings", t == "gemma" || t == "gemma2");
        a.oBias = t != "qwen2" && flag(j, "attention_bias", false);
        a.qkvBias = t == "qwen2" || a.oBias;
        a.normEps = number(j, "rms_norm_eps", 1e-6);
        a.ropeTheta = number(j, "rope_theta", 10000.0);
        a.qkNorm = t == "qwen3";
        a.gemmaNorms = t == "gemma2";
        a.attnSoftcap = t == "gemma2" ? number(j, "attn_logit_softcapping", 0) : 0;
        a.finalSoftcap = t == "gemma2" ? number(j, "final_logit_softcapping", 0) : 0;
        a.gemma = t == "gemma" || t == "gemma2";
        detail::parseLlamaStyleFlags(j, a); // gemma3_text, olmo2 (hf_families.cpp)
    } else if (detail::isMoeModelType(t)) {
        detail::parseMoeConfig(j, a, file);
    } else if (detail::isFamilyType(t)) {
        detail::parseFamilyConfig(j, a, file);
    } else {
        throw Error(file + ": not supported yet: " + t);
    }
    a.headDim = optional(j, "head_dim", a.hidden / a.heads, file);
    if (a.mla.kvLoraRank > 0) // MLA: rotary tables and rotate_half cover the rope part only
        a.headDim = a.mla.rope;
    if (a.hidden % a.heads != 0 && !j.contains("head_dim"))
        throw Error(file + ": hidden size " + std::to_string(a.hidden) + " is not a multiple of " +
                    std::to_string(a.heads) + " heads");
    if (a.heads % a.kvHeads != 0)
        throw Error(file + ": " + std::to_string(a.heads) + " attention heads are not a multiple of " +
                    std::to_string(a.kvHeads) + " key/value heads");
    const bool rotary = a.family.layout == HfLayout::Llama ? t != "gpt2" : a.family.rotaryFraction > 0;
    if (rotary && static_cast<int64_t>(static_cast<double>(a.headDim) *
                                       (a.family.layout == HfLayout::Llama ? 1.0 : a.family.rotaryFraction)) %
                          2 !=
                      0)
        throw Error(file + ": head_dim " + std::to_string(a.headDim) + " is odd; rotary embeddings need it even");
    detail::checkTotal(a, file);
    return a;
}

namespace detail {

SeqShape seqShape(OnnxBuilder& g)
{
    SeqShape s;
    const std::string shape = g.node("Shape", "", {"input_ids"});
    s.batch = g.node("Slice", "", {shape, g.ints({0}), g.ints({1})});
    s.seq = g.node("Slice", "", {shape, g.ints({1}), g.ints({2})});
    s.seqScalar = g.node("Squeeze", "", {s.seq, g.ints({0})});
    s.positions = g.node("Range", "", {g.ints({0}, true), s.seqScalar, g.ints({1}, true)});
    return s;
}

// The causal mask as the eager attention path adds it: [B, 1, T, T], 0 or the dtype's minimum.
std::string causalMask(OnnxBuilder& g, const SeqShape& ss)
{
    const std::string& positions = ss.positions;
    const std::string &batch = ss.batch, &seq = ss.seq;
    const std::string rows = g.node("Unsqueeze", "/mask", {positions, g.ints({1})});
    const std::string cols = g.node("Unsqueeze", "/mask", {positions, g.ints({0})});
    const std::string allowed = g.node("LessOrEqual", "/mask", {cols, rows});
    const std::string m = g.node("Where", "/mask", {allowed, g.scalar(0.0), g.scalar(-3.4028234663852886e38)});
    const std::string target = g.node("Concat", "/mask", {batch, g.ints({1}), seq, seq});
    g.attrInt("axis", 0);
    return g.node("Expand", "/mask", {m, target});
}

// LlamaRotaryEmbedding: inv_freq = 1 / theta^(arange(0, d, 2) / d) is a buffer, not a parameter;
// cos/sin [B, T, d] are computed once per forward from position_ids and shared by every layer.
void rotaryTables(Builder& b, const SeqShape& ss, const std::string& root)
{
    const HfArch& a = b.a;
    OnnxBuilder& g = b.g;
    const std::string& positions = ss.positions;
    const std::string &batch = ss.batch, &seq = ss.seq;
    const std::string s = "/" + root + "/rotary_emb";
    const std::string even = g.node("Range", s, {g.ints({0}, true), g.ints({a.headDim}, true), g.ints({2}, true)});
    const std::string evenF = g.node("Cast", s, {even});
    g.attrInt("to", onnx::TensorProto::FLOAT);
    const std::string e = g.node("Div", s, {evenF, g.scalar(static_cast<double>(a.headDim))});
    std::string inv = g.node("Reciprocal", s, {g.node("Pow", s, {g.scalar(b.ropeTheta), e})});
    inv = g.node("Reshape", s, {inv, g.ints({1, a.headDim / 2, 1})});
    const std::string invShape = g.node("Concat", s, {batch, g.ints({a.headDim / 2, 1})});
    g.attrInt("axis", 0);
    inv = g.node("Expand", s, {inv, invShape});
    std::string pos = g.node("Cast", s, {positions});
    g.attrInt("to", onnx::TensorProto::FLOAT);
    pos = g.node("Unsqueeze", s, {pos, g.ints({0, 1})});
    const std::string posShape = g.node("Concat", s, {batch, g.ints({1}), seq});
    g.attrInt("axis", 0);
    pos = g.node("Expand", s, {pos, posShape});
    std::string freqs = g.node("Transpose", s, {g.node("MatMul", s, {inv, pos})});
    g.attrInts("perm", {0, 2, 1});
    const std::string emb = g.node("Concat", s, {freqs, freqs});
    g.attrInt("axis", -1);
    b.cos = g.node("Unsqueeze", s, {g.node("Cos", s, {emb}), g.ints({1})});
    b.sin = g.node("Unsqueeze", s, {g.node("Sin", s, {emb}), g.ints({1})});
}

} // namespace detail

using detail::SeqShape;

// One GPT-2 block (modeling_gpt2.py GPT2Block): pre-LN attention with a fused c_attn, pre-LN MLP.
std::string gpt2Block(Builder& b, std::string x, int64_t l, const std::string& root)
{
    const HfArch& a = b.a;
    OnnxBuilder& g = b.g;
    const std::string L = root + ".h." + std::to_string(l);
    const std::string S = "/" + Builder::dotsToPath(L);
    const std::string h = b.layerNorm(x, L + ".ln_1", a.hidden);
    const std::string qkv = b.linear(h, L + ".attn.c_attn", a.hidden, 3 * a.hidden, true);
    const auto parts = g.nodes("Split", S + "/attn", {qkv, g.ints({a.hidden, a.hidden, a.hidden})}, 3);
    g.attrInt("axis", -1);
    const std::string q = b.heads(parts[0], S + "/attn", a.heads);
    const std::string k = b.heads(parts[1], S + "/attn", a.heads);
    const std::string v = b.heads(parts[2], S + "/attn", a.heads);
    const std::string o = b.attention(q, k, v, S + "/attn", 1.0 / std::sqrt(static_cast<double>(a.headDim)));
    const std::string proj = b.dropoutOf(b.linear(o, L + ".attn.c_proj", a.hidden, a.hidden, true),
                                         S + "/attn/resid_dropout");
    x = g.node("Add", S, {x, proj});
    const std::string h2 = b.layerNorm(x, L + ".ln_2", a.hidden);
    const std::string fc = b.linear(h2, L + ".mlp.c_fc", a.hidden, a.intermediate, true);
    // NewGELUActivation, written out in Python: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
    const std::string s = S + "/mlp/act";
    std::string inner = g.node("Mul", s, {g.node("Pow", s, {fc, g.scalar(3.0)}), g.scalar(0.044715)});
    inner = g.node("Mul", s, {g.node("Add", s, {fc, inner}), g.scalar(std::sqrt(2.0 / M_PI))});
    const std::string act = g.node(
        "Mul", s,
        {g.node("Mul", s, {fc, g.scalar(0.5)}), g.node("Add", s, {g.node("Tanh", s, {inner}), g.scalar(1.0)})});
    const std::string down = b.dropoutOf(b.linear(act, L + ".mlp.c_proj", a.intermediate, a.hidden, true),
                                         S + "/mlp/dropout");
    return g.node("Add", S, {x, down});
}

std::string mlp(Builder& b, const std::string& x, int64_t l, const std::string& L, const std::string& S);

// One Llama-style decoder layer (Llama, Mistral, Qwen2/3, Gemma/Gemma 2, Phi-3): RMSNorm, attention with
// rotary positions and grouped KV heads, gated MLP.
std::string decoderLayer(Builder& b, std::string x, int64_t l, const std::string& root, const SeqShape& ss)
{
    const HfArch& a = b.a;
    OnnxBuilder& g = b.g;
    const std::string &batch = ss.batch, &seq = ss.seq;
    const int64_t qDim = a.heads * a.headDim, kvDim = a.kvHeads * a.headDim;
    const std::string L = root + ".layers." + std::to_string(l);
    const std::string S = "/" + Builder::dotsToPath(L);
    const std::string h = a.postNorms ? x : b.rmsNorm(x, L + ".input_layernorm", a.hidden);
    const std::string A = L + ".self_attn";
    const std::string AS = S + "/self_attn";
    std::string q, k, v;
    if (a.mla.kvLoraRank > 0) {
        x = g.node("Add", S, {x, detail::mlaAttention(b, h, A, AS)});
        return mlp(b, x, l, L, S);
    }
    if (a.modelType == "phi3") {
        const std::string qkv = b.linear(h, A + ".qkv_proj", a.hidden, qDim + 2 * kvDim, false);
        const auto parts = g.nodes("Split", AS, {qkv, g.ints({qDim, kvDim, kvDim})}, 3);
        g.attrInt("axis", -1);
        q = b.heads(parts[0], AS, a.heads);
        k = b.heads(parts[1], AS, a.kvHeads);
        v = b.heads(parts[2], AS, a.kvHeads);
    } else if (a.qkNormFull) {
        // OLMoE: q_norm/k_norm over the whole projections, before the heads are split
        q = b.heads(b.rmsNorm(b.linear(h, A + ".q_proj", a.hidden, qDim, a.qkvBias), A + ".q_norm", qDim), AS, a.heads);
        k = b.heads(b.rmsNorm(b.linear(h, A + ".k_proj", a.hidden, kvDim, a.qkvBias), A + ".k_norm", kvDim), AS,
                    a.kvHeads);
        v = b.heads(b.linear(h, A + ".v_proj", a.hidden, kvDim, a.qkvBias), AS, a.kvHeads);
    } else {
        q = b.heads(b.linear(h, A + ".q_proj", a.hidden, qDim, a.qkvBias), AS, a.heads, a.qkNorm ? A + ".q_norm" : "");
        k = b.heads(b.linear(h, A + ".k_proj", a.hidden, kvDim, a.qkvBias), AS, a.kvHeads,
                    a.qkNorm ? A + ".k_norm" : "");
        v = b.heads(b.linear(h, A + ".v_proj", a.hidden, kvDim, a.qkvBias), AS, a.kvHeads);
    }
    q = b.rotary(q, AS);
    k = b.rotary(k, AS);
    k = b.repeatKv(k, AS, batch, seq);
    v = b.repeatKv(v, AS, batch, seq);
    // Gemma 2 scales by query_pre_attn_scalar^-0.5 (its configs set it to head_dim)
    const double scaling = 1.0 / std::sqrt(static_cast<double>(a.headDim));
    std::string o = b.attention(q, k, v, AS, scaling, a.sinks ? A + ".sinks" : "");
    o = b.linear(o, A + ".o_proj", qDim, a.hidden, a.oBias);
    if (a.gemmaNorms || a.postNorms)
        o = b.rmsNorm(o, L + ".post_attention_layernorm", a.hidden);
    x = g.node("Add", S, {x, o});
    return mlp(b, x, l, L, S);
}

// The feed-forward half of a decoder layer: norm, gated MLP (or routed experts), residual.
std::string mlp(Builder& b, const std::string& x, int64_t l, const std::string& L, const std::string& S)
{
    const HfArch& a = b.a;
    OnnxBuilder& g = b.g;
    const std::string h2 = a.postNorms
                               ? x
                               : b.rmsNorm(
                                     x, L + (a.gemmaNorms ? ".pre_feedforward_layernorm" : ".post_attention_layernorm"),
                                     a.hidden);
    if (detail::isMoeLayer(a, l)) {
        auto linear = [&](const std::string& in, const std::string& module, int64_t i, int64_t o, bool bias) {
            return b.linear(in, module, i, o, bias);
        };
        auto silu = [&](const std::string& in, const std::string& scope) {
            return g.node("Mul", scope, {in, g.node("Sigmoid", scope, {in})});
        };
        const std::string y = detail::moeBlock(g, a, h2, L + "." + detail::moeModule(a), linear, Builder::dotsToPath,
                                               silu, b.routerLogits);
        return g.node("Add", S, {x, y});
    }
    const std::string M = L + ".mlp";
    const std::string MS = S + "/mlp";
    std::string gate, up;
    if (a.modelType == "phi3") {
        const std::string gu = b.linear(h2, M + ".gate_up_proj", a.hidden, 2 * a.intermediate, false);
        const auto parts = g.nodes("Split", MS, {gu, g.ints({a.intermediate, a.intermediate})}, 2);
        g.attrInt("axis", -1);
        gate = parts[0];
        up = parts[1];
    } else {
        gate = b.linear(h2, M + ".gate_proj", a.hidden, a.intermediate, false);
    }
    std::string act;
    if (a.gemma) {
        // gelu_pytorch_tanh: one F.gelu(approximate="tanh") call that keeps its input
        act = g.node("Gelu", MS + "/act_fn", {gate});
        g.attrString("approximate", "tanh");
    } else {
        // SiLU: x * sigmoid(x), as torch.onnx writes F.silu
        act = g.node("Mul", MS + "/act_fn", {gate, g.node("Sigmoid", MS + "/act_fn", {gate})});
    }
    // Python's order (LlamaMLP.forward: self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x)); Gemma,
    // Mistral, Qwen alike): the activation runs before up_proj does. (lit-gpt's LLaMAMLP computes fc_1 and fc_2
    // before the silu; none of its published rows moves between the two orders.)
    if (a.modelType != "phi3")
        up = b.linear(h2, M + ".up_proj", a.hidden, a.intermediate, false);
    std::string down = b.linear(g.node("Mul", MS, {act, up}), M + ".down_proj", a.intermediate, a.hidden, false);
    if (a.gemmaNorms || a.postNorms)
        down = b.rmsNorm(down, L + ".post_feedforward_layernorm", a.hidden);
    return g.node("Add", S, {x, down});
}

// MoE with output_router_logits: transformers'
// load_balancing_loss_func over every layer's router logits (MOE.md 2.5): cat -> softmax -> top-k -> one_hot
// (int64 [L*B, T, k, E], the spike) -> float -> means. Its scalar is the graph's second output.
void auxLoss(Builder& b)
{
    const HfArch& a = b.a;
    if (!a.moe.auxLoss || b.routerLogits.empty())
        return;
    OnnxBuilder& g = b.g;
    const std::string s = "/aux_loss";
    const std::string cat = g.node("Concat", s, b.routerLogits);
    g.attrInt("axis", 0);
    const std::string probs = g.node("Softmax", s, {cat});
    g.attrInt("axis", -1);
    const auto top = g.nodes("TopK", s, {probs, g.ints({a.moe.topK})}, 2);
    g.attrInt("axis", -1);
    const std::string hot = g.node("OneHot", s, {top[1], g.ints({a.moe.experts}, true), g.ints({0, 1})});
    std::string f = g.node("Cast", s, {hot});
    g.attrInt("to", onnx::TensorProto::FLOAT);
    const std::string tokens = g.node("ReduceMean", s, {f, g.ints({0, 1})});
    g.attrInt("keepdims", 0);
    const std::string prob = g.node("ReduceMean", s, {probs, g.ints({0, 1})});
    g.attrInt("keepdims", 0);
    const std::string loss = g.node("ReduceSum", s, {g.node("Mul", s, {tokens, prob})});
    g.attrInt("keepdims", 0);
    g.scalarOutput(loss, onnx::TensorProto::FLOAT);
}

std::string buildHfModel(const HfArch& a, const std::string& file)
{
    if (a.family.layout == HfLayout::Bert || a.family.layout == HfLayout::Roberta ||
        a.family.layout == HfLayout::DebertaV2)
        return detail::buildEncoderModel(a, file);
    if (a.family.layout != HfLayout::Llama)
        return detail::buildDecoderFamilyModel(a, file);
    OnnxBuilder g({.producer = std::string(kHfConfigProducer),
                   .opset = 18,
                   .weightsFile = "config.json.weights",
                   .namedConstantValues = true},
                  a.modelType + " (" + std::filesystem::path(file).filename().string() + ")");
    g.metadata("model_type", a.modelType);
    g.input("input_ids", onnx::TensorProto::INT64);
    Builder b{a, g, a.normEps, a.ropeTheta, 0.0, {}, {}, {}};

    const bool gpt2 = a.modelType == "gpt2";
    const std::string root = gpt2 ? "transformer" : a.family.root.empty() ? "model" : a.family.root;
    const std::string embedName = root + (gpt2 ? ".wte" : ".embed_tokens");
    const std::string embedW = g.weight(embedName + ".weight", {a.vocab, a.hidden});
    const SeqShape ss = seqShape(g);
    b.mask = causalMask(g, ss);

    std::string x = g.node("Gather", "/" + Builder::dotsToPath(embedName), {embedW, "input_ids"});
    if (gpt2) {
        b.dropout = a.dropout;
        const std::string pe = g.node("Gather", "/transformer/wpe",
                                      {g.weight("transformer.wpe.weight", {a.positions, a.hidden}), ss.positions});
        x = b.dropoutOf(g.node("Add", "/transformer", {x, pe}), "/transformer/drop");
    } else {
        rotaryTables(b, ss, root);
        if (a.gemma) // hidden_states * sqrt(hidden_size)
            x = g.node("Mul", "/" + root, {x, g.scalar(std::sqrt(static_cast<double>(a.hidden)))});
    }
    for (int64_t l = 0; l < a.layers; ++l)
        x = gpt2 ? gpt2Block(b, x, l, root) : decoderLayer(b, x, l, root, ss);
    x = gpt2 ? b.layerNorm(x, root + ".ln_f", a.hidden) : b.rmsNorm(x, root + ".norm", a.hidden);
    std::string logits;
    if (a.tied) {
        std::string w = g.node("Transpose", "/lm_head", {embedW});
        g.attrInts("perm", {1, 0});
        logits = g.node("MatMul", "/lm_head", {x, w});
    } else {
        logits = b.linear(x, "lm_head", a.hidden, a.vocab, false);
    }
    if (a.finalSoftcap > 0)
        logits = b.softcap(logits, "", a.finalSoftcap);
    g.output(logits, onnx::TensorProto::FLOAT, a.vocab); // [batch, seq, vocab]
    if (a.moe.experts > 0)
        auxLoss(b);
    return g.serialize();
}

std::string buildHfModelFromPath(const std::string& path, std::string* configText)
{
    std::error_code ec;
    std::filesystem::path p(path);
    if (std::filesystem::is_directory(p, ec))
        p /= "config.json";
    std::ifstream f(p, std::ios::binary);
    if (!f)
        throw Error(p.string() + ": cannot open the file");
    std::ostringstream ss;
    ss << f.rdbuf();
    std::string text = std::move(ss).str();
    const HfArch a = parseHfConfig(text, p.string());
    if (configText)
        *configText = std::move(text);
    return buildHfModel(a, p.string());
}

} // namespace headroom
