// The config.json fields of the mixture-of-experts families (docs/MOE.md section 1) and what follows from them:
// which layers route, the dense width, and the parameters a token passes through.
#include "hf_moe.h"

#include "hf_limits.h"

#include "headroom/base/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace headroom::detail {
namespace {

using json = nlohmann::json;

int64_t need(const json& j, const char* key, const std::string& file) { return needCount(j, key, file); }

// A count that may be absent, null or 0 (q_lora_rank: null, first_k_dense_replace: 0).
int64_t count(const json& j, const char* key, int64_t fallback)
{
    auto it = j.find(key);
    return it != j.end() && it->is_number_integer() && it->get<int64_t>() >= 0 ? it->get<int64_t>() : fallback;
}

bool flag(const json& j, const char* key, bool fallback)
{
    auto it = j.find(key);
    return it != j.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

std::string text(const json& j, const char* key)
{
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The expert count under the names vLLM's get_num_experts reads (vllm/config/model.py).
int64_t experts(const json& j, const std::string& file)
{
    for (const char* key : {"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"})
        if (j.contains(key) && !j[key].is_null())
            return need(j, key, file);
    throw Error(file + ": config.json names no expert count (num_local_experts, num_experts, n_routed_experts)");
}

} // namespace

bool isMoeModelType(const std::string& t)
{
    static const char* const kTypes[] = {"mixtral",     "qwen2_moe", "qwen3_moe", "deepseek_v2",
                                         "deepseek_v3", "gpt_oss",   "olmoe",     "granitemoe"};
    return std::any_of(std::begin(kTypes), std::end(kTypes), [&](const char* k) { return t == k; });
}

void parseMoeConfig(const json& j, HfArch& a, const std::string& file)
{
    const std::string& t = a.modelType;
    HfMoe& m = a.moe;
    a.hidden = need(j, "hidden_size", file);
    a.layers = need(j, "num_hidden_layers", file);
    a.heads = need(j, "num_attention_heads", file);
    a.kvHeads = count(j, "num_key_value_heads", a.heads);
    checkCount("num_key_value_heads", a.kvHeads, file);
    a.vocab = need(j, "vocab_size", file);
    a.tied = flag(j, "tie_word_embeddings", false);
    a.normEps = j.value("rms_norm_eps", 1e-6);
    a.ropeTheta = j.contains("rope_theta") && j["rope_theta"].is_number() ? j["rope_theta"].get<double>() : 10000.0;
    m.experts = experts(j, file);
    m.topK = need(j, "num_experts_per_tok", file);
    if (m.topK > m.experts)
        throw Error(file + ": num_experts_per_tok " + std::to_string(m.topK) + " exceeds the " +
                    std::to_string(m.experts) + " experts");
    // the two meanings of intermediate_size: the expert width (Mixtral, OLMoE, gpt-oss, Granite) or the dense
    // layers' (Qwen, DeepSeek, whose experts have moe_intermediate_size)
    const bool separateExpertWidth = t == "qwen2_moe" || t == "qwen3_moe" || t.rfind("deepseek", 0) == 0;
    a.intermediate = need(j, "intermediate_size", file);
    m.expertWidth = separateExpertWidth ? need(j, "moe_intermediate_size", file) : a.intermediate;
    m.normTopK = t == "mixtral" || t == "gpt_oss" || t == "granitemoe" ? true : flag(j, "norm_topk_prob", false);
    m.auxLoss = flag(j, "output_router_logits", false);
    const std::string impl = text(j, "experts_implementation") + text(j, "_experts_implementation");
    m.eager = impl == "eager";
    a.oBias = flag(j, "attention_bias", false);
    a.qkvBias = a.oBias || t == "qwen2_moe";
    if (t == "qwen2_moe" || t == "qwen3_moe") {
        m.sparseStep = count(j, "decoder_sparse_step", 1);
        if (j.contains("mlp_only_layers") && j["mlp_only_layers"].is_array())
            for (const json& l : j["mlp_only_layers"])
                if (l.is_number_integer())
                    m.mlpOnly.push_back(l.get<int64_t>());
        a.qkNorm = t == "qwen3_moe";
        if (t == "qwen2_moe") {
            m.sharedWidth = count(j, "shared_expert_intermediate_size", 0);
            m.sharedGate = m.sharedWidth > 0;
        }
    } else if (t.rfind("deepseek", 0) == 0) {
        m.sharedWidth = m.expertWidth * count(j, "n_shared_experts", 0);
        m.firstDense = count(j, "first_k_dense_replace", 0);
        m.sparseStep = std::max<int64_t>(1, count(j, "moe_layer_freq", 1));
        m.sigmoidRouter = text(j, "scoring_func") == "sigmoid";
        HfMla& mla = a.mla;
        mla.qLoraRank = count(j, "q_lora_rank", 0);
        mla.kvLoraRank = need(j, "kv_lora_rank", file);
        mla.nope = need(j, "qk_nope_head_dim", file);
        mla.rope = need(j, "qk_rope_head_dim", file);
        mla.v = need(j, "v_head_dim", file);
    } else if (t == "gpt_oss") {
        m.routerBias = m.expertBias = a.sinks = true;
        const auto q = j.find("quantization_config");
        m.mxfp4 = q != j.end() && q->is_object() && q->value("quant_method", "") == "mxfp4";
    } else if (t == "olmoe") {
        a.qkNormFull = true;
    }
}

bool isMoeLayer(const HfArch& a, int64_t l)
{
    const HfMoe& m = a.moe;
    if (m.experts == 0 || l < m.firstDense)
        return false;
    if (std::find(m.mlpOnly.begin(), m.mlpOnly.end(), l) != m.mlpOnly.end())
        return false;
    // Qwen: (layer_idx + 1) % decoder_sparse_step == 0; DeepSeek: layer_idx % moe_layer_freq == 0
    if (a.modelType.rfind("deepseek", 0) == 0)
        return l % m.sparseStep == 0;
    return (l + 1) % m.sparseStep == 0;
}

int64_t denseWidth(const HfArch& a) { return a.intermediate; }

std::string moeModule(const HfArch& a) { return a.modelType == "mixtral" ? "block_sparse_moe" : "mlp"; }

std::string routerModule(const HfArch& a)
{
    return a.modelType == "gpt_oss" ? "router" : a.modelType == "granitemoe" ? "router.layer" : "gate";
}

} // namespace headroom::detail

namespace headroom {

HfActiveParams hfActiveParams(const HfArch& a, int64_t total)
{
    const HfMoe& m = a.moe;
    if (m.experts == 0)
        return {};
    int64_t moeLayers = 0;
    for (int64_t l = 0; l < a.layers; ++l)
        moeLayers += detail::isMoeLayer(a, l) ? 1 : 0;
    int64_t perExpert = 3 * a.hidden * m.expertWidth;
    if (m.expertBias)
        perExpert += 2 * m.expertWidth + a.hidden;
    HfActiveParams r;
    r.withEmbedding = total - moeLayers * (m.experts - m.topK) * perExpert;
    // the input embedding is a lookup; a tied one is also the lm_head's matmul and stays
    r.withoutEmbedding = r.withEmbedding - (a.tied ? 0 : a.vocab * a.hidden);
    return r;
}

HfMoeSummary hfMoeSummary(const std::string& path, int64_t total)
{
    try {
        std::filesystem::path p(path);
        std::error_code ec;
        if (std::filesystem::is_directory(p, ec))
            p /= "config.json";
        std::ifstream f(p, std::ios::binary);
        std::ostringstream text;
        text << f.rdbuf();
        const HfArch a = parseHfConfig(text.str(), p.string());
        if (a.moe.experts == 0)
            return {};
        int64_t moeLayers = 0;
        for (int64_t l = 0; l < a.layers; ++l)
            moeLayers += detail::isMoeLayer(a, l) ? 1 : 0;
        return {std::to_string(a.moe.experts) + " experts, " + std::to_string(a.moe.topK) + " active per token",
                hfActiveParams(a, total),
                a.moe.experts,
                a.moe.topK,
                a.hidden,
                a.moe.expertWidth,
                moeLayers};
    } catch (const Error&) {
        return {};
    }
}

HfHotExpert hfHotExpert(const HfMoeSummary& moe, double share, int64_t tokens)
{
    HfHotExpert h;
    if (moe.experts <= 0)
        return h;
    // a token picks k distinct experts, so the hottest one sees at least k/E of the tokens and at most all
    const double balanced = static_cast<double>(moe.topK) / static_cast<double>(moe.experts);
    h.balanced = share <= balanced;
    h.share = std::min(1.0, h.balanced ? balanced : share);
    h.tokens = static_cast<int64_t>(std::ceil(h.share * static_cast<double>(tokens) - 1e-9));
    h.savedElements = h.tokens * (2 * moe.hidden + 4 * moe.expertWidth) * moe.moeLayers;
    return h;
}

} // namespace headroom
