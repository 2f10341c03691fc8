#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace headroom {

// Which PEFT tuner wraps the targeted Linears.
//   LoRA (peft/tuners/lora/layer.py Linear.forward): result = base_layer(x) + lora_B(lora_A(lora_dropout(x))) * s
//   IA3 (peft/tuners/ia3/layer.py Linear.forward): a trained vector ia3_l scales the Linear's output, or its input
//   for the feedforward_modules; no rank, no dropout.
enum class PeftMethod : uint8_t { LoRA, IA3 };

// The adapters of a PEFT fine-tune: LoRA's (r > 0), or IA3's (method IA3).
struct LoraSpec
{
    int r = 0; // 0: no adapters
    double alpha = 8;
    double dropout = 0;
    std::vector<std::string> targets; // module-name suffixes; {"all-linear"}; empty: PEFT's default
    // LoraConfig.target_parameters: 3D expert parameters (mlp.experts.gate_up_proj) wrapped by lora.ParamWrapper
    std::vector<std::string> parameters;
    // The adapters' dtype: "fp32" (PEFT >= 0.12, autocast_adapter_dtype=True), or "bf16"/"fp16"
    // (autocast_adapter_dtype=False on a 16-bit model, or the adapters cast after get_peft_model)
    std::string dtype = "fp32";
    // LoraConfig(use_dora=True): DoRA's magnitude vector per adapted Linear and its forward (lora_graph.cpp)
    bool dora = false;
    PeftMethod method = PeftMethod::LoRA;
    // LoraConfig.init_lora_weights, where it changes what trains: "mica" (MiCA, variants.py MiCALinearVariant)
    // freezes lora_B; every other initialization ("true", "gaussian", "pissa", "olora", "eva", ...) trains both
    std::string init = "true";
    // IA3Config.feedforward_modules: the targets whose input is scaled; unset: PEFT's mapping for the model_type
    std::optional<std::vector<std::string>> feedforward;
    // any adapters at all: LoRA's need a rank, IA3's none
    bool active() const noexcept { return r > 0 || method == PeftMethod::IA3; }
    bool operator==(const LoraSpec&) const = default;
};
// Bytes per adapter element: 4 for fp32, 2 for bf16/fp16.
int loraAdapterBytes(const LoraSpec& spec) noexcept;

// bitsandbytes weight quantization of every Linear but the output embedding.
enum class Quant : uint8_t { None, NF4, FP4, Int8 };

struct FineTune
{
    LoraSpec lora;
    Quant quant = Quant::None;
    bool doubleQuant = false; // bnb_4bit_use_double_quant
    int computeBytes = 2;     // bnb_4bit_compute_dtype: 2 (bf16/fp16) or 4 (fp32)
    std::string computeDtype = "bf16";
    bool kbitPrep = true;         // prepare_model_for_kbit_training (with --quant)
    bool layerCheckpoint = false; // HF gradient_checkpointing_enable(): one checkpoint per decoder layer
    bool operator==(const FineTune&) const = default;
};

std::string_view toString(Quant q) noexcept;
std::optional<Quant> parseQuant(std::string_view s) noexcept;
// "r=16,alpha=32,dropout=0.05,targets=q_proj,v_proj" (targets last: its value runs to the end, comma
// separated). Returns the error text on bad input.
std::optional<std::string> parseLoraSpec(std::string_view text, LoraSpec& out);
// Freeze patterns that leave only the adapters trainable (engine: a "!pattern" un-freezes); with DoRA the
// magnitude vectors train too; with frozenB (MiCA) lora_B does not.
std::vector<std::string> loraFreezePatterns(bool dora = false, bool frozenB = false);
// "default" (PEFT's IA3 targets and feedforward modules for the model_type), or
// "dtype=bf16,targets=k_proj,v_proj,down_proj,feedforward=down_proj" (lists last, as parseLoraSpec's; feedforward
// must be among the targets, as IA3Config checks; "feedforward=none" for none). Returns the error text.
std::optional<std::string> parseIa3Spec(std::string_view text, LoraSpec& out);
// The freeze patterns of either method: PEFT trains the adapters only (ia3_l for IA3).
std::vector<std::string> adapterFreezePatterns(const LoraSpec& spec);

// bitsandbytes functional.py quantize_4bit: ceil(n/2) packed bytes + one fp32 absmax per 64-value block;
// with compress_statistics (double quant) the absmax is quantized to 1 byte per block plus one fp32 scale
// per 256 blocks (QuantState.state2; its 256-entry code book is shared and ignored here).
int64_t quant4bitBytes(int64_t numel, bool doubleQuant) noexcept;
// MXFP4 (OCP microscaling, gpt-oss experts): 4-bit e2m1 values, two per byte, and one e8m0 scale byte per
// block of 32, i.e. 17 bytes per 32 weights (4.25 bits). The one rule for inference and serving.
inline constexpr double kMxfp4BytesPerWeight = 17.0 / 32.0;
int64_t mxfp4Bytes(int64_t numel) noexcept;
// Linear8bitLt (LLM.int8): int8 weight + one fp32 scale per output row (SCB).
int64_t quant8bitBytes(int64_t numel, int64_t rows) noexcept;

} // namespace headroom
