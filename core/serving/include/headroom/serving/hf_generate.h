#pragma once
#include "headroom/base/config.h"
#include "headroom/serving/serve_model.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace headroom {

// Hugging Face transformers' generate() on one GPU (docs/SERVING.md "Hugging Face generate()"). The rules follow
// transformers 4.56 on PyTorch >= 2.5: the prefill computes the logits of the last position only
// (`logits_to_keep=1`, set by generate() since 4.45 as `num_logits_to_keep`), sdpa attention, prompts of equal
// length (no padding), greedy decoding. The figure is torch.cuda.max_memory_allocated().
inline constexpr std::string_view kTransformersVersion = "4.56";

// DynamicCache grows by torch.cat each step; StaticCache (cache_implementation="static") is preallocated to
// prompt + max_new_tokens.
enum class HfCacheKind { Dynamic, Static };
std::string_view toString(HfCacheKind c) noexcept;
std::optional<HfCacheKind> parseHfCacheKind(std::string_view s) noexcept;

struct HfGenerateSettings
{
    int64_t promptLen = 512, newTokens = 256, batch = 1;
    HfCacheKind cache = HfCacheKind::Dynamic;
    // from_pretrained(torch_dtype=): bf16, fp16 or fp32; Auto: the config's 16-bit type (a quantized config keeps
    // its format for the linear layers)
    WeightFormat dtype = WeightFormat::Auto;
};

// The prefill forward's largest transients over weights + KV cache, bytes (the last decoder layer's, where the
// cache is longest).
struct HfPrefill
{
    int64_t attention = 0;  // rotary, sdpa and its output (static cache: the mask and the repeated K/V too)
    int64_t mlp = 0;        // gate, act(gate), up and their product alive at once
    int64_t norm = 0;       // RMSNorm's float32 upcast
    int64_t logits = 0;     // lm_head on the last position, then generate()'s float32 copy
    int64_t activation = 0; // the largest of the four
};

struct HfGeneratePlan
{
    std::string model, gpu;
    HfGenerateSettings settings;
    std::vector<std::string> cannotTell; // config.json fields the plan needs and lacks
    WeightFormat format = WeightFormat::Bf16;
    int activationBytes = 2;
    int64_t capacity = 0, outside = 0; // device total; CUDA context + cuBLAS workspaces
    int64_t weights = 0;
    int64_t kvBytesPerToken = 0;      // one sequence, every layer
    int64_t kvPrefill = 0, kvEnd = 0; // the cache after the prefill and at the last step
    HfPrefill prefill;
    int64_t decodeTransient = 0; // the last step's: the cat's old K (dynamic) or the repeated K/V (static), logits
    int64_t prefillPeak = 0, decodePeak = 0, peak = 0;
    std::optional<bool> fits;  // peak + outside <= capacity; empty: cannot tell
    int64_t maxBatch = 0;      // the largest batch that fits (0: none)
    int64_t longestPrompt = 0; // the longest prompt that fits at this batch and new tokens (0: none)
};

HfGeneratePlan planHfGenerate(const ServeModel& model, const HfGenerateSettings& settings, const GpuSpec& gpu);
std::string hfGenerateSummary(const HfGeneratePlan& plan);

} // namespace headroom
