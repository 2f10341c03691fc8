#include "headroom/base/config.h"

#include <array>
#include <charconv>
#include <utility>

namespace headroom {
namespace {

template <typename E, size_t N>
std::string_view nameIn(const std::array<std::pair<E, std::string_view>, N>& table, E v) noexcept
{
    for (const auto& [e, n] : table)
        if (e == v)
            return n;
    return "?";
}

template <typename E, size_t N>
std::optional<E> parseIn(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view s) noexcept
{
    for (const auto& [e, n] : table)
        if (n == s)
            return e;
    return std::nullopt;
}

constexpr std::array<std::pair<Mode, std::string_view>, 2> kModes{{{Mode::Train, "train"}, {Mode::Infer, "infer"}}};
constexpr std::array<std::pair<DtypePolicy, std::string_view>, 9> kDtypes{{{DtypePolicy::FP32, "fp32"},
                                                                           {DtypePolicy::FP16, "fp16"},
                                                                           {DtypePolicy::BF16, "bf16"},
                                                                           {DtypePolicy::AmpFP16, "amp-fp16"},
                                                                           {DtypePolicy::AmpBF16, "amp-bf16"},
                                                                           {DtypePolicy::MixedFP16, "mixed-fp16"},
                                                                           {DtypePolicy::MixedBF16, "mixed-bf16"},
                                                                           {DtypePolicy::INT8, "int8"},
                                                                           {DtypePolicy::INT4, "int4"}}};
constexpr std::array<std::pair<Optimizer, std::string_view>, 14> kOptimizers{
    {{Optimizer::SGD, "sgd"},
     {Optimizer::Momentum, "momentum"},
     {Optimizer::Adam, "adam"},
     {Optimizer::AdamW, "adamw"},
     {Optimizer::Adagrad, "adagrad"},
     {Optimizer::RMSprop, "rmsprop"},
     {Optimizer::Adadelta, "adadelta"},
     {Optimizer::Lion, "lion"},
     {Optimizer::LAMB, "lamb"},
     {Optimizer::Adam8bit, "adam8bit"},
     {Optimizer::Adafactor, "adafactor"},
     {Optimizer::Custom, "custom"},
     {Optimizer::PagedAdamW, "paged-adamw"},
     {Optimizer::PagedAdamW8bit, "paged-adamw8bit"}}};
constexpr std::array<std::pair<Loss, std::string_view>, 6> kLosses{{{Loss::CrossEntropy, "ce"},
                                                                    {Loss::MSE, "mse"},
                                                                    {Loss::None, "none"},
                                                                    {Loss::ChunkedCE, "chunked-ce"},
                                                                    {Loss::FusedLinearCE, "fused-linear-ce"},
                                                                    {Loss::ChunkedCE16, "chunked-ce-16"}}};
constexpr std::array<std::pair<Strategy, std::string_view>, 9> kStrategies{{{Strategy::Single, "single"},
                                                                            {Strategy::DDP, "ddp"},
                                                                            {Strategy::DP, "dp"},
                                                                            {Strategy::BalancedDP, "balanced-dp"},
                                                                            {Strategy::ZeRO1, "zero1"},
                                                                            {Strategy::ZeRO2, "zero2"},
                                                                            {Strategy::ZeRO3, "zero3"},
                                                                            {Strategy::FSDP, "fsdp"},
                                                                            {Strategy::FSDPNoShard, "fsdp-no-shard"}}};
constexpr std::array<std::pair<AllocatorMode, std::string_view>, 3> kAllocators{
    {{AllocatorMode::Exact, "exact"}, {AllocatorMode::Caching, "caching"}, {AllocatorMode::Expandable, "expandable"}}};
// The first name of each is the printed one (config.h: "fused" and "math" stay the printed names of SDPA and
// eager); the later rows are the spellings Hugging Face's attn_implementation uses, accepted as input.
constexpr std::array<std::pair<Attention, std::string_view>, 6> kAttention{{{Attention::Fused, "fused"},
                                                                            {Attention::Math, "math"},
                                                                            {Attention::Flash2, "flash2"},
                                                                            {Attention::Flex, "flex"},
                                                                            {Attention::SDPA, "sdpa"},
                                                                            {Attention::Eager, "eager"}}};
constexpr std::array<std::pair<Device, std::string_view>, 2> kDevices{{{Device::CUDA, "cuda"}, {Device::CPU, "cpu"}}};
constexpr std::array<std::pair<TorchVersion, std::string_view>, 3> kTorch{
    {{TorchVersion::V2, "2"}, {TorchVersion::V1_13, "1.13"}, {TorchVersion::V1_10, "1.10"}}};
// Each PyTorch release's defaults beside its autograd formulas (core/memory/src/rules/saved_rules.cpp kOlderRules), a
// row per TorchVersion in enum order:
//  - sdpa: F.scaled_dot_product_attention came with 2.0 (and transformers uses it from torch 2.1.1: config.h);
//  - zeroGradToNone: torch.nn.Module.zero_grad and torch.optim.Optimizer.zero_grad default to set_to_none=True
//    from 2.0 (pytorch/pytorch#92731, "zero_grad() set_to_none default True", BC-breaking); from 1.7 to 1.13 the
//    default was False: the gradients are zeroed in place and stay allocated, so the Hugging Face Trainer's
//    `model.zero_grad()` after each optimizer step (trainer.py _inner_training_loop) leaves every gradient
//    allocated through the next forward on 1.x. V1_13 stands for the corpus CPU truth, whose script frees them
//    itself (make_corpus.py: model.zero_grad(set_to_none=True)), so its step is 2.x's;
//  - foreachOptimizers: torch.optim's Adam, AdamW & co. default to their foreach (_multi_tensor_*) kernels on CUDA
//    from 2.0 (torch/optim/optimizer.py _default_to_fused_or_foreach), one temporary per parameter all at once;
//    before, `foreach=None` meant False (1.13's torch/optim/adamw.py: "Placeholder for more complex foreach
//    logic ... foreach = False") and 1.10's functional adam/adamw looped over the parameters, as the 2022
//    Trainer's default adamw_hf (transformers optimization.py AdamW.step: denom = exp_avg_sq.sqrt().add_(eps)
//    per parameter) did.
struct TorchDefaults
{
    TorchVersion torch;
    bool sdpa;
    bool zeroGradToNone;
    bool foreachOptimizers;
};
constexpr std::array<TorchDefaults, 3> kTorchDefaults{{
    {TorchVersion::V2, true, true, true},
    {TorchVersion::V1_13, false, true, false},
    {TorchVersion::V1_10, false, false, false},
}};
static_assert([] {
    for (size_t i = 0; i < kTorchDefaults.size(); ++i)
        if (static_cast<size_t>(kTorchDefaults[i].torch) != i)
            return false;
    return true;
}());
constexpr std::array<std::pair<Framework, std::string_view>, 3> kFrameworks{
    {{Framework::HF, "hf"}, {Framework::Torchtune, "torchtune"}, {Framework::Litgpt, "litgpt"}}};

// What each framework's recipe sets, one row per framework (Framework::HF: nothing, today's defaults).
struct FrameworkPreset
{
    Framework framework;
    DtypePolicy dtype;
    Optimizer optimizer;      // LoRA / full fine-tuning
    Optimizer quantOptimizer; // with quantized base weights (QLoRA)
    Loss loss;
    bool layerCheckpoint;
    bool doubleQuant; // the 4-bit format's scales are themselves quantized
    ModelCode modelCode;
    bool bnbKeepsMatmulInput;        // Config::bnbKeepsMatmulInput: the recipe's bitsandbytes is older than 0.43.2
    bool fsdpOrigParams, fsdpNoSync; // what the recipe's FSDP does on several GPUs (Config::fsdpOrigParams)
};
// torchtune (recipes/lora_finetune_single_device.py with recipes/configs/llama2/7B_lora_single_device.yaml and
// 7B_qlora_single_device.yaml, the same in the llama3/3.1/mistral/qwen2 single-device configs):
//  - `dtype: bf16`: the model, adapters included, is built under training.set_default_dtype(bf16) (_setup_model),
//    weights in bf16 without autocast: DtypePolicy::BF16 and 16-bit adapters;
//  - `optimizer: torch.optim.AdamW` (fused) for LoRA and QLoRA alike;
//  - `loss: torchtune.modules.loss.CEWithChunkedOutputLoss` (8 chunks): Loss::ChunkedCE;
//  - `enable_activation_checkpointing: True`: training.set_activation_checkpointing(model,
//    auto_wrap_policy={TransformerSelfAttentionLayer}), one checkpoint per decoder layer;
//  - no prepare_model_for_kbit_training (a PEFT function); QLoRA is qlora_llama2_7b = lora_llama2_7b with
//    quantize_base=True: LoRALinear's base weight becomes torchao's to_nf4(weight) (block_size 64,
//    scaler_block_size 256: int8 scalers with one fp32 factor per 256 blocks, bnb's double quantization).
//    Since pytorch/torchtune#1119 (2024-07-29) the Linears without adapters are FrozenNF4Linear too
//    (models/llama2/_component_builders.py), so every Linear but the output projection is NF4: bnb's scope
//    (quant_weights.cpp). Before it only the LoRA-wrapped ones were, not modelled.
// litgpt (litgpt/finetune/lora.py; config_hub/finetune/<model>/lora.yaml and qlora.yaml: precision bf16-true):
//  - bf16-true: weights and adapters in bf16 without autocast: DtypePolicy::BF16;
//  - torch.optim.AdamW, and bnb.optim.PagedAdamW when the model is quantized (BitsandbytesPrecision);
//  - no activation checkpointing on one device (only FSDPStrategy's activation_checkpointing_policy={Block});
//  - `model(input_ids, lm_head_chunk_size=128)` and `chunked_cross_entropy(logits, targets)` (chunk 128, no fp32
//    upcast: litgpt/utils.py): Loss::ChunkedCE16;
//  - --quantize bnb.nf4 without -dq: no double quantization;
//  - lit-gpt's own GPT (lit_gpt/lora.py GPT, CausalSelfAttention, LoRAQKVLinear) and fit()'s `logits` local:
//    ModelCode::Litgpt (torchtune's TransformerDecoder is not modelled apart from transformers');
//  - bitsandbytes ==0.41.0 then ==0.42.0 in litgpt's pyproject.toml until December 2024 (lit-gpt 8641822 ran
//    0.41.1): MatMul4Bit keeps its input (bnbKeepsMatmulInput). torchtune quantizes with torchao's NF4, not
//    bitsandbytes; Hugging Face's default is today's bitsandbytes, which keeps nothing;
//  - on several devices FSDPStrategy(auto_wrap_policy={Block}, activation_checkpointing_policy={Block}), whose
//    Fabric strategy sets use_orig_params=True (lightning/fabric/strategies/fsdp.py), and gradient accumulation in
//    fabric.no_backward_sync (finetune/lora.py and full.py: FSDP.no_sync): fsdpOrigParams and fsdpNoSync. The
//    checkpointing that FSDPStrategy adds is the user's --grad-checkpoint layers (one device has none).
constexpr std::array<FrameworkPreset, 3> kPresets{{
    {Framework::HF, DtypePolicy::FP32, Optimizer::Adam, Optimizer::Adam, Loss::CrossEntropy, false, false,
     ModelCode::Transformers, false, false, false},
    {Framework::Torchtune, DtypePolicy::BF16, Optimizer::AdamW, Optimizer::AdamW, Loss::ChunkedCE, true, true,
     ModelCode::Transformers, false, false, false},
    {Framework::Litgpt, DtypePolicy::BF16, Optimizer::AdamW, Optimizer::PagedAdamW, Loss::ChunkedCE16, false, false,
     ModelCode::Litgpt, true, true, true},
}};

} // namespace

std::string_view toString(Mode v) noexcept { return nameIn(kModes, v); }
std::string_view toString(DtypePolicy v) noexcept { return nameIn(kDtypes, v); }
std::string_view toString(Optimizer v) noexcept { return nameIn(kOptimizers, v); }
std::string_view toString(Loss v) noexcept { return nameIn(kLosses, v); }
std::string_view toString(Strategy v) noexcept { return nameIn(kStrategies, v); }
std::string_view toString(AllocatorMode v) noexcept { return nameIn(kAllocators, v); }
std::optional<Mode> parseMode(std::string_view s) noexcept { return parseIn(kModes, s); }
std::optional<DtypePolicy> parseDtype(std::string_view s) noexcept { return parseIn(kDtypes, s); }
std::optional<Optimizer> parseOptimizer(std::string_view s) noexcept { return parseIn(kOptimizers, s); }
std::optional<Loss> parseLoss(std::string_view s) noexcept { return parseIn(kLosses, s); }
std::optional<Strategy> parseStrategy(std::string_view s) noexcept { return parseIn(kStrategies, s); }
std::optional<AllocatorMode> parseAllocator(std::string_view s) noexcept { return parseIn(kAllocators, s); }
std::string_view toString(Attention v) noexcept { return nameIn(kAttention, v); }
std::string_view toString(Device v) noexcept { return nameIn(kDevices, v); }
std::optional<Attention> parseAttention(std::string_view s) noexcept { return parseIn(kAttention, s); }
std::optional<Device> parseDevice(std::string_view s) noexcept { return parseIn(kDevices, s); }
std::string_view toString(TorchVersion v) noexcept { return nameIn(kTorch, v); }
std::optional<TorchVersion> parseTorchVersion(std::string_view s) noexcept { return parseIn(kTorch, s); }
bool torchHasSdpa(TorchVersion v) noexcept { return kTorchDefaults[static_cast<size_t>(v)].sdpa; }
bool zeroGradFreesGradients(TorchVersion v) noexcept { return kTorchDefaults[static_cast<size_t>(v)].zeroGradToNone; }
bool foreachOptimizers(TorchVersion v) noexcept { return kTorchDefaults[static_cast<size_t>(v)].foreachOptimizers; }
std::string_view toString(Framework v) noexcept { return nameIn(kFrameworks, v); }
std::optional<Framework> parseFramework(std::string_view s) noexcept { return parseIn(kFrameworks, s); }

ModelCode presetModelCode(Framework f) noexcept { return kPresets[static_cast<size_t>(f)].modelCode; }
bool presetBnbKeepsMatmulInput(Framework f) noexcept { return kPresets[static_cast<size_t>(f)].bnbKeepsMatmulInput; }
bool presetFsdpOrigParams(Framework f) noexcept { return kPresets[static_cast<size_t>(f)].fsdpOrigParams; }
bool presetFsdpNoSync(Framework f) noexcept { return kPresets[static_cast<size_t>(f)].fsdpNoSync; }

namespace {
// "X.Y" or "X.Y.Z", each part a non-negative integer (a missing patch reads 0).
std::optional<std::array<int, 3>> parseVersion(std::string_view version) noexcept
{
    std::array<int, 3> parts{0, 0, 0};
    size_t n = 0;
    while (!version.empty()) {
        int v = 0;
        const auto [end, ec] = std::from_chars(version.data(), version.data() + version.size(), v);
        if (ec != std::errc() || n == parts.size() || v < 0)
            return std::nullopt;
        parts[n++] = v;
        version.remove_prefix(static_cast<size_t>(end - version.data()));
        if (!version.empty()) {
            if (version.front() != '.' || version.size() == 1)
                return std::nullopt;
            version.remove_prefix(1);
        }
    }
    if (n < 2)
        return std::nullopt;
    return parts;
}
} // namespace

std::optional<bool> bnbVersionKeepsMatmulInput(std::string_view version) noexcept
{
    const auto v = parseVersion(version);
    if (!v)
        return std::nullopt;
    return *v < std::array<int, 3>{0, 43, 2}; // PR #1270 shipped in 0.43.2
}

std::optional<bool> transformersVersionFp32Logits(std::string_view version) noexcept
{
    const auto v = parseVersion(version);
    if (!v)
        return std::nullopt;
    return *v < std::array<int, 3>{4, 46, 0}; // 4.46 moved the upcast into ForCausalLMLoss
}

void applyFramework(Framework f, Config& c, uint32_t userSet)
{
    c.framework = f;
    const FrameworkPreset& p = kPresets[static_cast<size_t>(f)];
    // the model code has no flag of its own: every preset sets it, so that going back to hf undoes litgpt's
    if ((userSet & kPresetModelCode) == 0)
        c.modelCode = p.modelCode;
    if ((userSet & kPresetBnbVersion) == 0)
        c.bnbKeepsMatmulInput = p.bnbKeepsMatmulInput;
    if ((userSet & kPresetFsdp) == 0) { // every preset, as the model code: back to hf undoes litgpt's
        c.fsdpOrigParams = p.fsdpOrigParams;
        c.fsdpNoSync = p.fsdpNoSync;
    }
    if (f == Framework::HF)
        return; // Hugging Face Trainer/PEFT: Headroom's own defaults, nothing else to set
    const bool quantized = c.finetune.quant != Quant::None;
    const auto set = [userSet](uint32_t bit) { return (userSet & bit) == 0; };
    if (set(kPresetDtype))
        c.dtype = p.dtype;
    if (set(kPresetOptimizer))
        c.optimizer = quantized ? p.quantOptimizer : p.optimizer;
    if (set(kPresetLoss))
        c.loss = p.loss;
    if (set(kPresetLayerCheckpoint))
        c.finetune.layerCheckpoint = p.layerCheckpoint;
    if (set(kPresetKbitPrep))
        c.finetune.kbitPrep = false; // prepare_model_for_kbit_training is PEFT's; neither framework calls it
    if (set(kPresetAdapterDtype))
        c.finetune.lora.dtype = "bf16"; // the adapters are built in the model's bf16 (see kPresets)
    if (set(kPresetDoubleQuant) && quantized)
        c.finetune.doubleQuant = p.doubleQuant;
    // torchtune's *_lora_single_device.yaml / *_qlora_single_device.yaml all say `enable_activation_offloading:
    // False  # True reduces memory` (only some *_full_low_memory.yaml turn it on); litgpt has no such switch
    if (set(kPresetOffloadActivations))
        c.offloadActivations = false;
}

} // namespace headroom
