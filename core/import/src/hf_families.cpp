// The config.json fields of the families in hf_families.h, one table row per model_type: which key holds each
// size and the default each configuration_<type>.py gives when the key is absent.
#include "hf_families.h"

#include "hf_limits.h"

#include "headroom/base/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string_view>

namespace headroom::detail {
namespace {

using json = nlohmann::json;

struct FamilyRow
{
    std::string_view type;
    HfLayout layout;
    const char *hidden, *layers, *heads;
    const char* kvHeads; // nullptr: as many as the query heads
    const char* inner;   // the MLP width's key
    int64_t innerTimesH; // when that key is absent or null: this many times hidden (0: required)
    const char* eps;     // the norms' epsilon
    double epsDefault;
    const char* act;        // the activation's key
    const char* actDefault; // ... and its default
    const char* rotary;     // the rotated share of head_dim (nullptr: learned positions)
    double rotaryDefault;
    const char* positions; // the learned position table's rows (nullptr: none)
    int64_t positionsDefault;
    const char* dropout; // the dropout every nn.Dropout of the model uses in training mode
    double dropoutDefault;
    bool tiedDefault; // tie_word_embeddings' default
    const char* bias; // the key saying the Linear layers carry biases (nullptr: biasDefault)
    bool biasDefault;
    const char* parallel; // the key saying attention and MLP run in parallel (nullptr: parallelDefault)
    bool parallelDefault;
};

// Defaults from transformers' configuration_<type>.py (BertConfig, RobertaConfig, DebertaV2Config, PhiConfig,
// StableLmConfig, GPTNeoXConfig, GPTBigCodeConfig, FalconConfig). BERT and RoBERTa run hidden_dropout_prob and
// attention_probs_dropout_prob (0.1 both) in training mode; the decoders' defaults are 0 (gpt_bigcode: 0.1).
// clang-format off
constexpr FamilyRow kFamilies[] = {
    // type, layout, hidden, layers, heads, kv heads, MLP width (x hidden when absent), eps, activation,
    // rotary share, position table, dropout, tied, bias key, parallel key
    {"bert", HfLayout::Bert, "hidden_size", "num_hidden_layers", "num_attention_heads", nullptr,
     "intermediate_size", 0, "layer_norm_eps", 1e-12, "hidden_act", "gelu", nullptr, 0,
     "max_position_embeddings", 512, "hidden_dropout_prob", 0.1, false, nullptr, true, nullptr, false},
    {"roberta", HfLayout::Roberta, "hidden_size", "num_hidden_layers", "num_attention_heads", nullptr,
     "intermediate_size", 0, "layer_norm_eps", 1e-12, "hidden_act", "gelu", nullptr, 0,
     "max_position_embeddings", 512, "hidden_dropout_prob", 0.1, false, nullptr, true, nullptr, false},
    {"deberta-v2", HfLayout::DebertaV2, "hidden_size", "num_hidden_layers", "num_attention_heads", nullptr,
     "intermediate_size", 0, "layer_norm_eps", 1e-7, "hidden_act", "gelu", nullptr, 0,
     nullptr, 0, "hidden_dropout_prob", 0.1, false, nullptr, true, nullptr, false},
    {"phi", HfLayout::Phi, "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
     "intermediate_size", 0, "layer_norm_eps", 1e-5, "hidden_act", "gelu_new", "partial_rotary_factor", 0.5,
     nullptr, 0, "resid_pdrop", 0.0, false, nullptr, true, nullptr, true},
    {"stablelm", HfLayout::StableLm, "hidden_size", "num_hidden_layers", "num_attention_heads",
     "num_key_value_heads", "intermediate_size", 0, "layer_norm_eps", 1e-5, "hidden_act", "silu",
     "partial_rotary_factor", 0.25, nullptr, 0, "hidden_dropout", 0.0, false, "use_qkv_bias", false,
     "use_parallel_residual", false},
    {"gpt_neox", HfLayout::GptNeox, "hidden_size", "num_hidden_layers", "num_attention_heads", nullptr,
     "intermediate_size", 0, "layer_norm_eps", 1e-5, "hidden_act", "gelu", "rotary_pct", 0.25,
     nullptr, 0, "hidden_dropout", 0.0, false, "attention_bias", true, "use_parallel_residual", true},
    {"gpt_bigcode", HfLayout::GptBigCode, "n_embd", "n_layer", "n_head", nullptr,
     "n_inner", 4, "layer_norm_epsilon", 1e-5, "activation_function", "gelu_pytorch_tanh", nullptr, 0,
     "n_positions", 1024, "resid_pdrop", 0.1, true, nullptr, true, nullptr, false},
    {"falcon", HfLayout::Falcon, "hidden_size", "num_hidden_layers", "num_attention_heads", nullptr,
     "ffn_hidden_size", 4, "layer_norm_epsilon", 1e-5, "activation", "gelu", nullptr, 1.0,
     nullptr, 0, "hidden_dropout", 0.0, true, "bias", false, "parallel_attn", true},
};
// clang-format on

double number(const json& j, const char* key, double fallback)
{
    auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

bool flag(const json& j, const char* key, bool fallback)
{
    if (key == nullptr)
        return fallback;
    auto it = j.find(key);
    return it != j.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

int64_t countOr(const json& j, const char* key, int64_t fallback, const std::string& file)
{
    auto it = j.find(key);
    return it == j.end() || it->is_null() ? fallback : needCount(j, key, file);
}

const FamilyRow* rowOf(std::string_view t)
{
    for (const FamilyRow& r : kFamilies)
        if (r.type == t)
            return &r;
    return nullptr;
}

// Llama-style rows: Gemma3TextConfig (modeling_gemma3.py Gemma3DecoderLayer: gemma2's four norms, per-head
// q_norm/k_norm, tied, no soft-capping by default) and Olmo2Config (modeling_olmo2.py Olmo2DecoderLayer: RMSNorm
// over the whole q and k projections, norms after attention and MLP only, untied).
struct LlamaStyleRow
{
    std::string_view type;
    bool tied, gemma, qkNorm, qkNormFull, postNorms;
};
constexpr LlamaStyleRow kLlamaStyle[] = {
    {"gemma3_text", true, true, true, false, false},
    {"olmo2", false, false, false, true, true},
};

const LlamaStyleRow* llamaStyleRow(std::string_view t)
{
    for (const LlamaStyleRow& r : kLlamaStyle)
        if (r.type == t)
            return &r;
    return nullptr;
}

} // namespace

bool isLlamaStyleType(const std::string& t) { return llamaStyleRow(t) != nullptr; }

void parseLlamaStyleFlags(const json& j, HfArch& a)
{
    const LlamaStyleRow* r = llamaStyleRow(a.modelType);
    if (r == nullptr)
        return;
    a.tied = flag(j, "tie_word_embeddings", r->tied);
    a.gemma = r->gemma;
    a.gemmaNorms = r->gemma;
    a.qkNorm = r->qkNorm;
    a.qkNormFull = r->qkNormFull;
    a.postNorms = r->postNorms;
    a.attnSoftcap = r->gemma ? number(j, "attn_logit_softcapping", 0) : 0;
    a.finalSoftcap = r->gemma ? number(j, "final_logit_softcapping", 0) : 0;
}

bool isFamilyType(const std::string& t) { return rowOf(t) != nullptr; }

void parseFamilyConfig(const json& j, HfArch& a, const std::string& file)
{
    const FamilyRow& r = *rowOf(a.modelType);
    HfFamily& f = a.family;
    f.layout = r.layout;
    a.hidden = needCount(j, r.hidden, file);
    a.layers = needCount(j, r.layers, file);
    a.heads = needCount(j, r.heads, file);
    a.kvHeads = r.kvHeads ? countOr(j, r.kvHeads, a.heads, file) : a.heads;
    a.intermediate = r.innerTimesH > 0 ? countOr(j, r.inner, r.innerTimesH * a.hidden, file)
                                       : needCount(j, r.inner, file);
    a.vocab = needCount(j, "vocab_size", file);
    a.normEps = number(j, r.eps, r.epsDefault);
    a.ropeTheta = number(j, "rope_theta", number(j, "rotary_emb_base", 10000.0));
    a.dropout = number(j, r.dropout, r.dropoutDefault);
    a.tied = flag(j, "tie_word_embeddings", r.tiedDefault);
    a.positions = r.positions ? countOr(j, r.positions, r.positionsDefault, file) : 0;
    const auto act = j.find(r.act);
    f.act = act != j.end() && act->is_string() ? act->get<std::string>() : r.actDefault;
    static constexpr std::string_view kActs[] = {"gelu", "gelu_pytorch_tanh", "gelu_new", "gelu_fast", "silu", "swish",
                                                 "relu"};
    if (std::find(std::begin(kActs), std::end(kActs), f.act) == std::end(kActs))
        throw Error(file + ": config.json's '" + r.act + "' " + f.act + " is not supported yet");
    f.rotaryFraction = r.rotary ? number(j, r.rotary, r.rotaryDefault) : r.rotaryDefault;
    f.bias = flag(j, r.bias, r.biasDefault);
    f.parallel = flag(j, r.parallel, r.parallelDefault);
    if (f.layout == HfLayout::DebertaV2) {
        // DebertaV2Config: relative attention (c2p and p2c) over position_buckets, one shared rel_embeddings
        // table, no absolute positions (position_biased_input false), no token types (type_vocab_size 0)
        const int64_t buckets = countOr(j, "position_buckets", 256, file);
        const auto maxRel = j.find("max_relative_positions");
        const int64_t maxRelative = maxRel != j.end() && maxRel->is_number_integer() && maxRel->get<int64_t>() > 0
                                        ? maxRel->get<int64_t>()
                                        : countOr(j, "max_position_embeddings", 512, file);
        f.relativeSpan = buckets > 0 ? buckets : maxRelative;
        checkCount("position_buckets", f.relativeSpan, file);
        if (!flag(j, "relative_attention", true) || flag(j, "position_biased_input", false) ||
            !flag(j, "share_att_key", true))
            throw Error(file + ": deberta-v2 other than relative attention with shared keys is not supported yet");
        const auto types = j.find("type_vocab_size");
        if (types != j.end() && types->is_number_integer() && types->get<int64_t>() != 0)
            throw Error(file + ": deberta-v2 with token type embeddings is not supported yet");
    }
    if (f.layout == HfLayout::Bert || f.layout == HfLayout::Roberta || f.layout == HfLayout::DebertaV2) {
        f.typeVocab = f.layout == HfLayout::DebertaV2 ? 0 : countOr(j, "type_vocab_size", 2, file);
        // PretrainedConfig: num_labels is len(id2label), 2 when neither is given
        const auto labels = j.find("id2label");
        f.labels = labels != j.end() && labels->is_object() && !labels->empty() ? static_cast<int64_t>(labels->size())
                                                                                : countOr(j, "num_labels", 2, file);
    } else if (f.layout == HfLayout::GptBigCode) {
        a.kvHeads = flag(j, "multi_query", true) ? 1 : a.heads; // GPTBigCodeConfig multi_query=True
    } else if (f.layout == HfLayout::Falcon) {
        // FalconConfig: new_decoder_architecture (40B/180B) groups num_kv_heads; otherwise multi_query (7B) has
        // one KV head. rope unless alibi.
        f.newArch = flag(j, "new_decoder_architecture", false);
        a.kvHeads = f.newArch ? countOr(j, "num_kv_heads", a.heads, file) : flag(j, "multi_query", true) ? 1 : a.heads;
        if (flag(j, "alibi", false))
            throw Error(file + ": falcon with alibi positions (alibi: true) is not supported yet");
        if (f.newArch && number(j, "num_ln_in_parallel_attn", 2) != 2)
            throw Error(file + ": falcon's num_ln_in_parallel_attn other than 2 is not supported yet");
    } else if (f.layout == HfLayout::StableLm && flag(j, "qk_layernorm", false)) {
        throw Error(file + ": stablelm with qk_layernorm is not supported yet");
    }
}

} // namespace headroom::detail
