#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace headroom {

// A Hugging Face `config.json` read as the architecture it describes (no weights, no network).
struct HfArch
{
    std::string modelType; // "llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "phi3", "gpt2"
    int64_t hidden = 0, intermediate = 0, layers = 0, heads = 0, kvHeads = 0, headDim = 0, vocab = 0;
    int64_t positions = 0; // gpt2: n_positions (its learned position table)
    bool tied = false;     // tie_word_embeddings: lm_head shares embed_tokens' storage
    bool qkvBias = false;  // qwen2 (or attention_bias): q/k/v projections carry biases
    bool oBias = false;    // attention_bias: o_proj carries one too
    double normEps = 1e-6, ropeTheta = 10000.0;
    double dropout = 0;                       // gpt2: resid/embd/attn dropout in training mode
    bool qkNorm = false;                      // qwen3: RMSNorm on q and k per head
    bool gemmaNorms = false;                  // gemma2: post-attention and pre/post-feed-forward norms
    double attnSoftcap = 0, finalSoftcap = 0; // gemma2: tanh soft-capping (0: off)
};

// The producer_name buildHfModel writes, by which the loader knows a model came from a config.json.
inline constexpr std::string_view kHfConfigProducer = "headroom-hfconfig";

// True when `path` is a .json file or a folder holding config.json.
bool isHfConfigPath(const std::string& path);
// Parses config.json text; throws Error("<file>: ...") naming the file and the problem (an unsupported
// model_type gives "not supported yet: <model_type>").
HfArch parseHfConfig(std::string_view json, const std::string& file);
// Serialized ONNX ModelProto of the architecture: module-path node names like a PyTorch export
// (`/model/layers.3/self_attn/q_proj/MatMul`), initializers with dims only, input `input_ids [batch, seq]`.
std::string buildHfModel(const HfArch& arch, const std::string& file);
// Both, from a path (a config.json or a folder holding one).
std::string buildHfModelFromPath(const std::string& path);

// PEFT's default LoRA targets for a model_type (peft/utils/constants.py
// TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING); empty when PEFT has none.
std::vector<std::string> peftDefaultTargets(std::string_view modelType);

} // namespace headroom
