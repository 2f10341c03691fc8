#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace headroom {

// How the checkpoint's linear layers are stored (docs/SERVING.md §4). Embeddings, lm_head, norms, routers and
// vision towers stay in the model dtype in every format vLLM loads.
enum class WeightFormat { Auto, Bf16, Fp16, Fp32, Fp8, Int8W8A8, W4A16, Bnb4, Mxfp4 };

// The attention a decoder layer runs, as vLLM's KV-cache spec types (kv_cache_interface.py).
enum class LayerAttention { Full, Sliding, Mla };

// What vLLM reads from a Hugging Face config.json to size weights, activations and the KV cache. A VLM's
// decoder comes from `text_config`; its vision tower is counted from `vision_config`.
struct ServeModel
{
    std::string file, modelType;
    int64_t hidden = 0, layers = 0, heads = 0, kvHeads = 0, headDim = 0, vocab = 0, intermediate = 0;
    int64_t maxPositions = 0; // max_position_embeddings: vLLM's derived max_model_len (0: absent)
    bool tied = false, qkvBias = false;
    int dtypeBytes = 2; // torch_dtype; float32 checkpoints are served in 16 bit (vLLM's dtype "auto")
    std::string dtypeName = "bfloat16";
    // Mixture of experts (0 experts: dense)
    int64_t experts = 0, topK = 0, moeIntermediate = 0, sharedIntermediate = 0, firstDense = 0;
    // Multi-head latent attention (DeepSeek-V2/V3, Kimi): kvLoraRank > 0
    int64_t kvLoraRank = 0, qLoraRank = 0, qkNopeDim = 0, qkRopeDim = 0, vHeadDim = 0;
    int64_t slidingWindow = 0;
    std::vector<LayerAttention> layerKinds; // one per decoder layer
    int64_t visionParams = 0;               // vision tower + projector (VLMs), kept in the model dtype
    // quantization_config
    WeightFormat format = WeightFormat::Auto;
    int64_t groupSize = 128; // w4a16: weights per scale
    bool lmHeadQuantized = false;
    // Fields the plan needs that the config lacks: each makes a figure "cannot tell".
    std::vector<std::string> missing;
};

// Parses config.json text; throws Error("<file>: ...") for text that is not a JSON object.
ServeModel parseServeModel(std::string_view json, const std::string& file);
// From a config.json or a folder holding one.
ServeModel loadServeModel(const std::string& path);

std::string_view toString(WeightFormat f) noexcept;
std::optional<WeightFormat> parseWeightFormat(std::string_view s) noexcept;

// Parameters as the checkpoint holds them (no padding, no split): checks the parse against published totals.
int64_t servingParameterCount(const ServeModel& m);

} // namespace headroom
