#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace headroom {

// The mixture-of-experts part of a config.json (docs/MOE.md section 1); experts == 0 for a dense model.
struct HfMoe
{
    int64_t experts = 0, topK = 0;
    int64_t expertWidth = 0;      // one routed expert's intermediate width
    int64_t sharedWidth = 0;      // the shared expert MLP's width (0: none)
    bool sharedGate = false;      // qwen2_moe: sigmoid(Linear(H, 1)) scales the shared expert
    int64_t firstDense = 0;       // deepseek first_k_dense_replace: leading dense layers
    int64_t sparseStep = 1;       // qwen decoder_sparse_step / deepseek moe_layer_freq
    std::vector<int64_t> mlpOnly; // qwen mlp_only_layers: dense layers
    bool sigmoidRouter = false;   // deepseek_v3: sigmoid scores + e_score_correction_bias
    bool routerBias = false;      // gpt_oss: the router Linear has a bias
    bool expertBias = false;      // gpt_oss: experts carry biases
    bool normTopK = true;         // norm_topk_prob: the top-k weights renormalised
    bool auxLoss = false;         // output_router_logits: load_balancing_loss_func runs
    bool eager = false;           // experts_implementation "eager": the per-expert loop (index_add_)
    bool mxfp4 = false;           // quantization_config.quant_method mxfp4 (gpt-oss experts)
};

// Multi-head latent attention (deepseek_v2/v3): low-rank q and kv projections.
struct HfMla
{
    int64_t qLoraRank = 0, kvLoraRank = 0, nope = 0, rope = 0, v = 0; // kvLoraRank 0: not MLA
};

// The families hf_families.cpp reads from its table and hf_decoders.cpp / hf_encoders.cpp build; Llama is every
// type hfconfig.cpp builds itself (the Llama-style decoders, gpt2, the MoE families).
enum class HfLayout : uint8_t { Llama, Bert, Roberta, DebertaV2, Phi, StableLm, GptNeox, GptBigCode, Falcon };

// What those families differ in (each type's modeling_<type>.py).
struct HfFamily
{
    HfLayout layout = HfLayout::Llama;
    std::string act;           // hidden_act: "gelu" (erf), "gelu_new", "gelu_pytorch_tanh", "silu"
    double rotaryFraction = 0; // partial_rotary_factor / rotary_pct: the rotated share of head_dim (0: none)
    bool parallel = false;     // attention and MLP both read the layer's input (use_parallel_residual, parallel_attn)
    bool bias = false;         // the Linear layers carry biases
    bool newArch = false;      // falcon new_decoder_architecture: ln_attn and ln_mlp, grouped KV heads
    int64_t typeVocab = 0;     // encoders: type_vocab_size (token type embeddings)
    int64_t labels = 0;        // encoders: the sequence classification head's num_labels
    int64_t relativeSpan = 0;  // deberta-v2: position_buckets (or max_relative_positions): the attention span
    std::string root;          // the decoder's module path when not "model" (gemma3: "model.language_model")
};

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
    bool gemma = false;                       // gemma*: (1 + w) norms, gelu tanh, embeddings times sqrt(hidden)
    bool postNorms = false;                   // olmo2: norms after attention and MLP only, none before
    double attnSoftcap = 0, finalSoftcap = 0; // gemma2: tanh soft-capping (0: off)
    bool qkNormFull = false;                  // olmoe: RMSNorm over the whole q and k projections
    bool sinks = false;                       // gpt_oss: a learned sink logit per head joins the softmax
    HfMoe moe;
    HfMla mla;
    HfFamily family;
};

// Parameters a token passes through (routed experts counted k of E times); 0 for a dense model. Both
// conventions of docs/MOE.md section 3: with the input embedding, and without it (a lookup, not a matmul).
struct HfActiveParams
{
    int64_t withEmbedding = 0, withoutEmbedding = 0;
};
HfActiveParams hfActiveParams(const HfArch& arch, int64_t totalParams);
// For a model loaded from a MoE config.json (Model::hfCausalLm, info.file): "8 experts, 2 active per token" and
// the active counts, read again from the file; empty text for anything else.
struct HfMoeSummary
{
    std::string text;
    HfActiveParams active;
    int64_t experts = 0, topK = 0, hidden = 0, expertWidth = 0, moeLayers = 0;
};
HfMoeSummary hfMoeSummary(const std::string& configPath, int64_t totalParams);

// Routing balance (Config::hotExpertShare): the hottest expert's share of a batch's `tokens` (0 or below k/E:
// balanced, k/E), the tokens it receives, and what it keeps for backward: each routed row holds the gathered
// input, gate/up outputs, activation, product and down output, (2H + 4I) elements (tests/data/moe/README.md), in
// every MoE layer. That is the per-expert loop's largest set of temporaries (transformers 4.x / "eager") and,
// under expert parallelism, the extra load of the rank that hosts the hottest expert.
struct HfHotExpert
{
    double share = 0;
    bool balanced = true;
    int64_t tokens = 0;
    int64_t savedElements = 0; // all MoE layers
};
HfHotExpert hfHotExpert(const HfMoeSummary& moe, double share, int64_t tokens);

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
// Both, from a path (a config.json or a folder holding one); configText, when given, receives the file's text
// (the model's identity: its SHA-256 and size are the config.json's, not the built graph's).
std::string buildHfModelFromPath(const std::string& path, std::string* configText = nullptr);

// PEFT's default LoRA targets for a model_type (peft/utils/constants.py
// TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING); empty when PEFT has none.
std::vector<std::string> peftDefaultTargets(std::string_view modelType);

// PEFT's default IA3 targets and feedforward modules for a model_type (peft/utils/constants.py
// TRANSFORMERS_MODELS_TO_IA3_TARGET_MODULES_MAPPING, ..._FEEDFORWARD_MODULES_MAPPING); empty when PEFT has none.
struct Ia3Defaults
{
    std::vector<std::string> targets, feedforward;
};
Ia3Defaults peftIa3Defaults(std::string_view modelType);

} // namespace headroom
