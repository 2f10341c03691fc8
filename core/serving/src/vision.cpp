// VLM vision towers and projectors, counted from config.json's vision_config: vLLM loads them with the decoder
// (in the model dtype: compressed-tensors recipes ignore them), so "Model loading took" includes them.
#include "serving_rules.h"

#include <nlohmann/json.hpp>

#include <string_view>

namespace headroom {
namespace {

using json = nlohmann::json;

int64_t get(const json& j, const char* key, int64_t fallback = 0)
{
    return j.contains(key) && j[key].is_number() ? j[key].get<int64_t>() : fallback;
}

// The ViT encoders vLLM ships: weight matrices per MLP and how positions are stored.
struct TowerRule
{
    std::string_view modelType;
    int mlpMatrices; // 2: fc1/fc2 with biases (SigLIP, MoonViT); 3: gated, no biases (Pixtral)
    bool biases;
    bool learnedGrid; // a learned position table of (image_size / patch_size)^2 (SigLIP)
};
constexpr TowerRule kTowers[] = {
    {"siglip_vision_model", 2, true, true}, // gemma3 (transformers modeling_siglip.py)
    {"moonvit", 2, true, false},            // kimi_vl: learned init_pos_emb_height x width table, read below
    {"pixtral", 3, false, false},           // mistral3: 2D RoPE, no position table
};

// Projectors from the vision width to the decoder's (vh: vision hidden, th: text hidden, s: spatial merge).
int64_t projectorParams(std::string_view rootType, const json& root, int64_t vh, int64_t th)
{
    if (rootType == "gemma3") // Gemma3MultiModalProjector: mm_input_projection_weight + soft-emb norm
        return vh * th + vh;
    if (rootType == "mistral3") { // Mistral3PatchMerger (s^2 vh -> vh) + 2-layer MLP to th
        const int64_t s = get(root, "spatial_merge_size", 2);
        return s * s * vh * vh + vh + vh * th + th * th;
    }
    if (rootType == "kimi_vl") // KimiVLMultiModalProjector: LayerNorm(4 vh), 4vh -> 4vh -> th with biases
        return 2 * 4 * vh + 4 * vh * 4 * vh + 4 * vh + 4 * vh * th + th;
    return -1;
}

} // namespace

int64_t visionTowerParams(const json& root, ServeModel& m)
{
    const auto vc = root.find("vision_config");
    if (vc == root.end() || !vc->is_object())
        return 0;
    const std::string type = vc->value("model_type", std::string());
    const std::string rootType = root.value("model_type", std::string());
    const TowerRule* rule = nullptr;
    for (const TowerRule& r : kTowers)
        if (r.modelType == type)
            rule = &r;
    const int64_t vh = get(*vc, "hidden_size"), inter = get(*vc, "intermediate_size");
    const int64_t layers = get(*vc, "num_hidden_layers", get(*vc, "depth"));
    const int64_t proj = projectorParams(rootType, root, vh, m.hidden);
    if (!rule || vh <= 0 || inter <= 0 || layers <= 0 || proj < 0) {
        m.missing.push_back("vision_config of " + rootType + " (" + type + " tower not modelled)");
        return 0;
    }
    const int64_t patch = get(*vc, "patch_size", 14), channels = get(*vc, "num_channels", 3);
    const int64_t b = rule->biases ? 1 : 0;
    const int64_t attention = 4 * vh * vh + 4 * vh * b;
    const int64_t mlp = rule->mlpMatrices * vh * inter + (inter + vh) * b;
    const int64_t norms = 2 * vh * (1 + b);
    int64_t params = layers * (attention + mlp + norms) + channels * patch * patch * vh + vh * b + 2 * vh;
    if (rule->learnedGrid) {
        const int64_t side = get(*vc, "image_size") / patch;
        params += side * side * vh;
    }
    params += get(*vc, "init_pos_emb_height") * get(*vc, "init_pos_emb_width") * vh;
    return params + proj;
}

} // namespace headroom
