// config.json -> ServeModel: the fields vLLM's model config reads (vllm/config/model.py @ 18ec662, docs/SERVING.md
// §2.1), the layer pattern of sliding-window models, MoE and MLA sizes, quantization_config, the vision tower.
#include "headroom/serving/serve_model.h"

#include "headroom/base/error.h"
#include "serving_rules.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace headroom {
namespace {

using json = nlohmann::json;

// A VLM keeps its decoder under text_config; everything else is at the root. Looks there first.
struct Fields
{
    const json& root;
    const json* text;

    const json* find(const char* key) const
    {
        if (text && text->contains(key) && !(*text)[key].is_null())
            return &(*text)[key];
        if (root.contains(key) && !root[key].is_null())
            return &root[key];
        return nullptr;
    }
    int64_t integer(const char* key, int64_t fallback = 0) const
    {
        const json* v = find(key);
        return v && v->is_number() ? v->get<int64_t>() : fallback;
    }
    bool flag(const char* key, bool fallback = false) const
    {
        const json* v = find(key);
        return v && v->is_boolean() ? v->get<bool>() : fallback;
    }
    std::string text_(const char* key) const
    {
        const json* v = find(key);
        return v && v->is_string() ? v->get<std::string>() : std::string();
    }
};

int64_t need(const Fields& f, const char* key, ServeModel& m)
{
    const int64_t v = f.integer(key);
    if (v <= 0)
        m.missing.emplace_back(key);
    return v;
}

// transformers' config classes default tie_word_embeddings to True (PretrainedConfig) unless they override it;
// the decoders vLLM serves mostly set False. Gemma's keep True, so a gemma-3 config.json omits it.
bool tiedByDefault(std::string_view modelType) { return modelType.starts_with("gemma"); }

// Model types whose every layer uses config.sliding_window when it is set (vLLM passes it to each layer).
constexpr std::array kAllSliding = {"mistral", "mixtral", "phi3", "starcoder2"};

void readLayerKinds(const Fields& f, ServeModel& m)
{
    m.layerKinds.assign(static_cast<size_t>(std::max<int64_t>(m.layers, 0)), LayerAttention::Full);
    if (m.kvLoraRank > 0) {
        std::fill(m.layerKinds.begin(), m.layerKinds.end(), LayerAttention::Mla);
        return;
    }
    m.slidingWindow = f.integer("sliding_window");
    const json* types = f.find("layer_types");
    if (types && types->is_array() && static_cast<int64_t>(types->size()) == m.layers) {
        // transformers >= 4.53 spells the pattern out (gemma2/3, gpt-oss, qwen2 with use_sliding_window)
        for (size_t i = 0; i < types->size(); ++i)
            if ((*types)[i].is_string() && (*types)[i].get<std::string>() == "sliding_attention")
                m.layerKinds[i] = LayerAttention::Sliding;
    } else if (m.modelType == "gemma2") {
        // modeling_gemma2.py: even layers slide (sliding_window if not layer_idx % 2)
        for (size_t i = 0; i < m.layerKinds.size(); i += 2)
            m.layerKinds[i] = LayerAttention::Sliding;
    } else if (m.modelType == "gemma3_text" || m.modelType == "gemma3") {
        // modeling_gemma3.py: one global layer every sliding_window_pattern (6) layers
        const int64_t pattern = f.integer("sliding_window_pattern", 6);
        for (size_t i = 0; i < m.layerKinds.size(); ++i)
            if ((static_cast<int64_t>(i) + 1) % pattern != 0)
                m.layerKinds[i] = LayerAttention::Sliding;
    } else if (f.find("use_sliding_window")) {
        // qwen2/qwen3: sliding only when use_sliding_window, from max_window_layers on
        if (f.flag("use_sliding_window"))
            for (size_t i = static_cast<size_t>(f.integer("max_window_layers")); i < m.layerKinds.size(); ++i)
                m.layerKinds[i] = LayerAttention::Sliding;
    } else if (m.slidingWindow > 0 &&
               std::find(kAllSliding.begin(), kAllSliding.end(), m.modelType) != kAllSliding.end())
        std::fill(m.layerKinds.begin(), m.layerKinds.end(), LayerAttention::Sliding);
    const bool anySliding = std::find(m.layerKinds.begin(), m.layerKinds.end(), LayerAttention::Sliding) !=
                            m.layerKinds.end();
    if (anySliding && m.slidingWindow <= 0)
        m.missing.emplace_back("sliding_window");
    if (!anySliding)
        m.slidingWindow = 0;
}

void readMoe(const Fields& f, ServeModel& m)
{
    for (const char* key : {"n_routed_experts", "num_local_experts", "num_experts"})
        if (const int64_t v = f.integer(key); v > 0 && m.experts == 0)
            m.experts = v;
    if (m.experts == 0)
        return;
    m.topK = f.integer("num_experts_per_tok", f.integer("experts_per_token"));
    if (m.topK <= 0)
        m.missing.emplace_back("num_experts_per_tok");
    // Mixtral and gpt-oss size their experts with intermediate_size and have no dense layers.
    m.moeIntermediate = f.integer("moe_intermediate_size");
    if (m.moeIntermediate == 0) {
        m.moeIntermediate = m.intermediate;
        m.intermediate = 0;
    }
    m.sharedIntermediate = f.integer("shared_expert_intermediate_size",
                                     f.integer("n_shared_experts") * m.moeIntermediate);
    m.firstDense = f.integer("first_k_dense_replace");
}

void readQuantization(const json& root, ServeModel& m)
{
    const auto q = root.find("quantization_config");
    if (q == root.end() || !q->is_object())
        return;
    const std::string method = q->value("quant_method", std::string());
    if (method == "fp8" || method == "fbgemm_fp8" || method == "modelopt")
        m.format = WeightFormat::Fp8;
    else if (method == "mxfp4")
        m.format = WeightFormat::Mxfp4;
    else if (method == "bitsandbytes")
        m.format = q->value("load_in_8bit", false) ? WeightFormat::Int8W8A8 : WeightFormat::Bnb4;
    else if (method == "gptq" || method == "awq" || method == "gptq_marlin" || method == "awq_marlin") {
        const int bits = q->value("bits", q->value("w_bit", 4));
        m.format = bits == 8 ? WeightFormat::Int8W8A8 : WeightFormat::W4A16;
        m.groupSize = q->value("group_size", q->value("q_group_size", int64_t{128}));
    } else if (method == "compressed-tensors") {
        // config_groups.<g>.weights: num_bits 8 float -> fp8, 8 int -> w8a8, 4 -> w4a16 (group_size per scale)
        const auto groups = q->find("config_groups");
        if (groups != q->end() && groups->is_object() && !groups->empty()) {
            const json& w = groups->begin()->value("weights", json::object());
            const int bits = w.value("num_bits", 0);
            const std::string type = w.value("type", std::string("int"));
            if (bits == 8)
                m.format = type == "float" ? WeightFormat::Fp8 : WeightFormat::Int8W8A8;
            else if (bits == 4) {
                m.format = WeightFormat::W4A16;
                if (w.contains("group_size") && w["group_size"].is_number())
                    m.groupSize = w["group_size"].get<int64_t>();
            }
        }
        if (m.format == WeightFormat::Auto)
            m.missing.emplace_back("quantization_config.config_groups (weights num_bits)");
    } else {
        m.missing.push_back("quantization_config.quant_method '" + method + "' (not modelled)");
    }
    if (m.groupSize <= 0) // -1: one scale per output channel
        m.groupSize = 1 << 30;
}

} // namespace

ServeModel parseServeModel(std::string_view text, const std::string& file)
{
    json root;
    try {
        root = json::parse(text);
    } catch (const json::exception& e) {
        throw Error(file + ": not valid JSON (" + std::string(e.what()) + ")");
    }
    if (!root.is_object())
        throw Error(file + ": not a config.json (expected a JSON object)");
    const auto tc = root.find("text_config");
    const Fields f{root, tc != root.end() && tc->is_object() ? &*tc : nullptr};
    ServeModel m;
    m.file = file;
    m.modelType = f.text_("model_type");
    m.hidden = need(f, "hidden_size", m);
    m.layers = need(f, "num_hidden_layers", m);
    m.heads = need(f, "num_attention_heads", m);
    m.vocab = need(f, "vocab_size", m);
    // model.py get_total_num_kv_heads: no num_key_value_heads means multi-head attention
    m.kvHeads = f.integer("num_key_value_heads", m.heads);
    // model.py get_head_size: head_dim, else hidden_size // num_attention_heads
    m.headDim = f.integer("head_dim", m.heads > 0 ? m.hidden / m.heads : 0);
    m.intermediate = f.integer("intermediate_size");
    m.maxPositions = f.integer("max_position_embeddings");
    m.tied = f.flag("tie_word_embeddings", root.value("tie_word_embeddings", tiedByDefault(m.modelType)));
    m.qkvBias = f.flag("attention_bias") || m.modelType == "qwen2";
    std::string dtype = f.text_("torch_dtype");
    if (dtype.empty())
        dtype = f.text_("dtype");
    // vLLM's dtype "auto": the config's 16-bit type; float32 (or none) checkpoints are served in bfloat16
    m.dtypeName = dtype == "float16" ? "float16" : "bfloat16";
    m.kvLoraRank = f.integer("kv_lora_rank");
    if (m.kvLoraRank > 0) {
        m.qLoraRank = f.integer("q_lora_rank");
        m.qkNopeDim = need(f, "qk_nope_head_dim", m);
        m.qkRopeDim = need(f, "qk_rope_head_dim", m);
        m.vHeadDim = need(f, "v_head_dim", m);
    }
    readMoe(f, m);
    if (m.experts == 0 && m.intermediate <= 0)
        m.missing.emplace_back("intermediate_size");
    readLayerKinds(f, m);
    readQuantization(root, m);
    m.visionParams = visionTowerParams(root, m);
    return m;
}

ServeModel loadServeModel(const std::string& path)
{
    std::filesystem::path p(path);
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec))
        p /= "config.json";
    std::ifstream in(p, std::ios::binary);
    if (!in)
        throw Error(p.string() + ": cannot open");
    std::ostringstream s;
    s << in.rdbuf();
    return parseServeModel(s.str(), p.string());
}

std::string_view toString(WeightFormat f) noexcept
{
    switch (f) {
    case WeightFormat::Auto: return "auto";
    case WeightFormat::Bf16: return "bf16";
    case WeightFormat::Fp16: return "fp16";
    case WeightFormat::Fp32: return "fp32";
    case WeightFormat::Fp8: return "fp8";
    case WeightFormat::Int8W8A8: return "int8-w8a8";
    case WeightFormat::W4A16: return "w4a16";
    case WeightFormat::Bnb4: return "bnb-4bit";
    case WeightFormat::Mxfp4: return "mxfp4";
    }
    return "auto";
}

std::optional<WeightFormat> parseWeightFormat(std::string_view s) noexcept
{
    for (WeightFormat f :
         {WeightFormat::Auto, WeightFormat::Bf16, WeightFormat::Fp16, WeightFormat::Fp32, WeightFormat::Fp8,
          WeightFormat::Int8W8A8, WeightFormat::W4A16, WeightFormat::Bnb4, WeightFormat::Mxfp4})
        if (s == toString(f))
            return f;
    // vLLM's own spellings (--quantization, --dtype)
    if (s == "bfloat16")
        return WeightFormat::Bf16;
    if (s == "float16" || s == "half")
        return WeightFormat::Fp16;
    if (s == "float32" || s == "float")
        return WeightFormat::Fp32;
    if (s == "int8" || s == "w8a8")
        return WeightFormat::Int8W8A8;
    if (s == "gptq" || s == "awq" || s == "int4")
        return WeightFormat::W4A16;
    if (s == "bitsandbytes")
        return WeightFormat::Bnb4;
    return std::nullopt;
}

} // namespace headroom
