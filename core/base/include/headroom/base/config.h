#pragma once
#include "headroom/base/finetune.h"
#include "headroom/base/symexpr.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace headroom {

enum class Mode : uint8_t { Train, Infer };
enum class DtypePolicy : uint8_t { FP32, FP16, BF16, AmpFP16, AmpBF16, MixedFP16, MixedBF16, INT8, INT4 };
enum class Optimizer : uint8_t {
    SGD,
    Momentum,
    Adam,
    AdamW,
    Adagrad,
    RMSprop,
    Adadelta,
    Lion,
    LAMB,
    Adam8bit,
    Adafactor,
    Custom,
    PagedAdamW,
    PagedAdamW8bit
}; // bitsandbytes paged optimizers (32-bit / 8-bit state)
// ChunkedCE: torchtune's CEWithChunkedOutputLoss (torchtune/modules/loss/ce_chunked_output_loss.py: the
// output projected and upcast to fp32 in num_output_chunks = 8 sequence chunks, so no fp32 copy of the whole
// logits exists at once). FusedLinearCE: Liger's LigerFusedLinearCrossEntropyLoss
// (liger_kernel/ops/fused_linear_cross_entropy.py): lm_head and loss in one function over token chunks, the
// logits never materialised, the hidden states' gradient computed in forward (timeline/loss.cpp).
// ChunkedCE16: litgpt's chunked_cross_entropy (litgpt/utils.py) on the logits litgpt's GPT.forward makes with
// lm_head_chunk_size=128 (finetune/lora.py): cross_entropy per 128-token chunk on the 16-bit logits as they are,
// no fp32 upcast; every chunk's logits and log-probabilities are kept, so it is cross-entropy without the
// upcast transformers' ForCausalLMLoss does.
enum class Loss : uint8_t { CrossEntropy, MSE, None, ChunkedCE, FusedLinearCE, ChunkedCE16 };
// FSDPNoShard: FSDP with ShardingStrategy.NO_SHARD (flat parameters, nothing sharded; Answer.AI's "ddp").
enum class Strategy : uint8_t { Single, DDP, DP, BalancedDP, ZeRO1, ZeRO2, ZeRO3, FSDP, FSDPNoShard };
enum class AllocatorMode : uint8_t { Exact, Caching, Expandable };
// How attention subgraphs run, as Hugging Face's attn_implementation names them (core/memory/src/rules/fused_units.cpp
// tryAttention): SDPA (F.scaled_dot_product_attention, which picks flash, memory-efficient or math by dtype,
// head dim, mask and enable_gqa; no [B, H, T, T] matrix kept unless math), Eager (written out with matmul +
// softmax: explicit attention, or PyTorch before 2.0), Flash2 (transformers' flash_attention_2: fp32 operands
// cast to 16 bits, never T x T) and Flex (torch.nn.attention.flex_attention). Fused and Math are the names the
// CLI, JSON and settings have always printed for SDPA and Eager, and stay their printed names.
// The default is SDPA: transformers >= 4.36 picks attn_implementation="sdpa" when torch supports it
// (modeling_utils.py PreTrainedModel._autoset_attn_implementation / _check_and_adjust_attn_implementation,
// is_torch_sdpa_available: torch >= 2.1.1), and ONNX exports keep the fused reading they always had; with
// TorchVersion::V1_13 or V1_10 there is no SDPA, so it runs as Eager (engine_plan.cpp planOptions).
enum class Attention : uint8_t { Fused, Math, Flash2, Flex, SDPA = Fused, Eager = Math };
// The training framework whose recipes set the switches (applyFramework): Hugging Face Trainer/PEFT is the
// default and sets nothing; torchtune's single-device LoRA/QLoRA recipes and litgpt's finetune/lora.py are
// presets of the individual switches they are made of (docs/DESIGN.md "Frameworks").
enum class Framework : uint8_t { HF, Torchtune, Litgpt };
// Whose model code runs the network: transformers' modeling files with PEFT's adapters, as the config.json
// importer and the LoRA rewrite write the graph, or lit-gpt's own (lit_gpt/model.py and lit_gpt/lora.py:
// one fused qkv Linear with one LoRAQKVLinear adapter, and finetune/lora.py's training loop), whose
// differences the engine applies to that graph (core/memory/src/finetune/litgpt_model.cpp cites each).
enum class ModelCode : uint8_t { Transformers, Litgpt };
// Where autograd runs: the rules that differ between PyTorch's CUDA and CPU kernels (cuDNN RNN vs the
// native per-step cells). Headroom targets a CUDA GPU; CPU reproduces the CPU truth of the corpus.
enum class Device : uint8_t { CUDA, CPU };
// Which PyTorch's autograd formulas: 2.x (Headroom's standard), 1.13 (the CPU truth of the corpus, whose
// mean.dim backward still kept its input and result) or 1.10 (the 2022 Hugging Face Trainer runs: softmax and
// log_softmax kept their input beside their result). Each difference is a row of saved_rules.cpp kOlderRules.
enum class TorchVersion : uint8_t { V2, V1_13, V1_10 };

// A target GPU: usable bytes as PyTorch reports them, plus the defaults the engine assumes until the
// probe measures them.
struct GpuSpec
{
    std::string name = "custom";
    int64_t capacity = 0;  // device total as PyTorch sees it (cudaMemGetInfo), less than nvidia-smi shows
    int64_t context = 0;   // outside the caching allocator: CUDA context, kernels, handles
    int64_t workspace = 0; // persistent cuBLAS/cuBLASLt workspaces (inside the caching allocator)
    bool operator==(const GpuSpec&) const = default;
};

// Everything that determines one memory figure. Explicit values only: no globals, no settings lookups.
struct Config
{
    Bindings symbols; // indexed like Model::symbols; batch = global batch
    Mode mode = Mode::Train;
    DtypePolicy dtype = DtypePolicy::FP32;
    Optimizer optimizer = Optimizer::Adam;
    double customOptimizerBytes = 0; // Optimizer::Custom: bytes per trainable parameter
    bool rmspropMomentum = false, rmspropCentered = false;
    Loss loss = Loss::CrossEntropy;
    int checkpointSegments = 0;      // 0 or 1: off
    int accumulate = 1;              // gradient accumulation steps (micro-batch = batch / s)
    bool inplace = false;            // inplace activations (ReLU(inplace=True) & co.)
    std::vector<std::string> freeze; // layer path patterns (glob: * ?) whose params are frozen
    GpuSpec gpu;
    int64_t marginBytes = 0; // safety margin kept free on the GPU
    int gpus = 1;
    Strategy strategy = Strategy::Single;
    int64_t gpu0Batch = -1; // balanced DP: GPU 0's share of the batch (-1: auto)
    bool offload = false;   // ZeRO/FSDP CPU offload of optimizer (and params for stage 3)
    // FSDP1 with use_orig_params=True (Lightning Fabric's FSDPStrategy sets it: fabric/strategies/fsdp.py): each
    // wrapped unit is one FlatParameter mixing frozen and trainable parameters, and its gradient covers the whole
    // unit (the frozen parts' zeros included). False: PEFT's / Answer.AI's wrapping, a FlatParameter all frozen or
    // all trainable (core/hardware/src/fsdp_units.cpp). The CLI's --fsdp-orig-params.
    bool fsdpOrigParams = false;
    // Gradient accumulation under FSDP.no_sync() (Fabric's no_backward_sync, accelerate's accumulate): between
    // optimizer steps _post_backward_hook returns before the reduce-scatter, so every unit's gradient stays
    // unsharded on each GPU. Only with accumulate > 1. The CLI's --fsdp-no-sync.
    bool fsdpNoSync = false;
    // torchtune's enable_activation_offloading (torchtune/training/_activation_offloading.py OffloadActivations):
    // the checkpointed segments' saved inputs go to pinned host memory after their forward and come back at their
    // recomputation (docs/DESIGN.md "Activation offloading"); only with checkpointing, as the recipes require.
    bool offloadActivations = false;
    AllocatorMode allocator = AllocatorMode::Caching;
    Attention attention = Attention::Fused;
    Device device = Device::CUDA;
    TorchVersion torch = TorchVersion::V2;
    Framework framework = Framework::HF; // the preset applied (applyFramework); printed beside the config
    ModelCode modelCode = ModelCode::Transformers;
    // bitsandbytes before 0.43.2: MatMul4Bit.forward keeps its input A on ctx for a backward that reads only the
    // weight (autograd/_functions.py `ctx.tensors = (A, B)`; PR #1270 dropped it in 0.43.2), so every 4-bit
    // Linear's input that requires grad lives until the Linear's backward (core/memory/src/finetune/litgpt_model.cpp
    // rule 4). A property of the bitsandbytes version, whatever the model code: the CLI's --bnb-version.
    bool bnbKeepsMatmulInput = false;
    // transformers before 4.46: LlamaForCausalLM.forward and its peers ran `logits = logits.float()` whenever labels
    // were given and returned that fp32 tensor as `outputs.logits`, then took the loss of
    // `shift_logits = logits[..., :-1, :].contiguous()`, a second fp32 copy of T - 1 positions (4.46 moved the
    // upcast into ForCausalLMLoss, transformers/loss/loss_utils.py, which shifts the labels instead). Only a
    // causal LM built from a config.json trained with cross-entropy on 16-bit logits. The CLI's
    // --transformers-version.
    bool hfFp32Logits = false;
    // The training loop holds the model's output through backward and the optimizer step: `output = model(...);
    // loss = output.loss; loss.backward(); optimizer.step()` with `output` dropped only after (Answer.AI's
    // fsdp_qlora train.py, PEFT's method-comparison run.py), so `outputs.logits` is allocated all that time.
    // Hugging Face's Trainer.compute_loss returns the loss alone and torchtune's recipes `del logits` before
    // backward: false, the default. lit-gpt's fit() is its own rule (ModelCode::Litgpt). The CLI's --loop.
    bool loopKeepsOutput = false;
    FineTune finetune; // LoRA (applied at load: LoadOptions::lora) and QLoRA
    // Mixture of experts: the share of a batch's tokens routed to the hottest expert (each token picks an expert
    // at most once, so k/E <= share <= 1). 0: balanced routing, k/E (docs/MOE.md section 7).
    double hotExpertShare = 0;
    // The symbol (index into `symbols`) whose value changes from step to step up to the value set, as a sequence
    // length does when batches are padded to their longest sample instead of packed (Hugging Face's
    // DataCollatorWithPadding, PEFT's BucketIterator); -1: every step has the values set. The caching allocator
    // keeps the segments each shape made, so the reserved peak of such a run is the highest any of those steps
    // makes, not the longest step's (docs/DESIGN.md "Lengths that vary").
    int varySymbol = -1;
    // Every field, so a comparison of whole configurations cannot miss a new one (the GUI's max-batch reuse,
    // headroom/import/batch.h sameButBatch).
    bool operator==(const Config&) const = default;
};

// Names used by the CLI, JSON and settings (docs/DESIGN.md spells them): "fp32", "amp-bf16", "adamw", ...
std::string_view toString(Mode v) noexcept;
std::string_view toString(DtypePolicy v) noexcept;
std::string_view toString(Optimizer v) noexcept;
std::string_view toString(Loss v) noexcept;
std::string_view toString(Strategy v) noexcept;
std::string_view toString(AllocatorMode v) noexcept;
std::string_view toString(Attention v) noexcept;
std::string_view toString(Device v) noexcept;
std::string_view toString(TorchVersion v) noexcept;
std::string_view toString(Framework v) noexcept;
std::optional<Mode> parseMode(std::string_view s) noexcept;
std::optional<DtypePolicy> parseDtype(std::string_view s) noexcept;
std::optional<Optimizer> parseOptimizer(std::string_view s) noexcept;
std::optional<Loss> parseLoss(std::string_view s) noexcept;
std::optional<Strategy> parseStrategy(std::string_view s) noexcept;
std::optional<AllocatorMode> parseAllocator(std::string_view s) noexcept;
std::optional<Attention> parseAttention(std::string_view s) noexcept;
std::optional<Device> parseDevice(std::string_view s) noexcept;
std::optional<TorchVersion> parseTorchVersion(std::string_view s) noexcept;
std::optional<Framework> parseFramework(std::string_view s) noexcept;
// What a PyTorch release does by default beside its autograd formulas (config.cpp kTorchDefaults): whether it
// has F.scaled_dot_product_attention, whether a training loop's zero_grad() frees the gradients (sets them to
// None) or zeroes them in place, so that they stay allocated through the next forward, and whether torch.optim
// runs its foreach kernels (every parameter's temporary at once) or a loop over the parameters.
bool torchHasSdpa(TorchVersion v) noexcept;
bool zeroGradFreesGradients(TorchVersion v) noexcept;
bool foreachOptimizers(TorchVersion v) noexcept;

// The switches a framework preset sets; a caller names the ones the user set explicitly so those stay.
enum PresetSwitch : uint32_t {
    kPresetDtype = 1,
    kPresetOptimizer = 2,
    kPresetLoss = 4,
    kPresetLayerCheckpoint = 8,
    kPresetKbitPrep = 16,
    kPresetAdapterDtype = 32,
    kPresetDoubleQuant = 64,
    kPresetModelCode = 128,
    kPresetOffloadActivations = 256,
    kPresetBnbVersion = 512,
    kPresetFsdp = 1024, // Config::fsdpOrigParams and fsdpNoSync
};
// Sets c.framework and every switch of its preset that `userSet` (PresetSwitch bits) does not name, from the
// framework's own recipe (config.cpp cites each). Call it after the finetune settings are known: a quantized
// run picks its recipe's QLoRA optimizer. Framework::HF sets nothing but the model code (transformers').
void applyFramework(Framework f, Config& c, uint32_t userSet = 0);
// The model code a framework's preset sets (no flag sets it alone: a front end that builds a Config from its
// controls takes it from the framework chosen).
ModelCode presetModelCode(Framework f) noexcept;
// Whether a framework's preset runs a bitsandbytes before 0.43.2 (Config::bnbKeepsMatmulInput; config.cpp
// kPresets): litgpt's pinned versions do. Like the model code, every preset sets it, and the GUI takes it from
// the framework chosen.
bool presetBnbKeepsMatmulInput(Framework f) noexcept;
// The FSDP switches a framework's preset sets (Config::fsdpOrigParams and fsdpNoSync, config.cpp kPresets).
bool presetFsdpOrigParams(Framework f) noexcept;
bool presetFsdpNoSync(Framework f) noexcept;
// bitsandbytes' version "X.Y.Z" (or "X.Y"): whether it keeps MatMul4Bit's input (< 0.43.2); nullopt when the
// text is not such a version.
std::optional<bool> bnbVersionKeepsMatmulInput(std::string_view version) noexcept;
// transformers' version "X.Y[.Z]": whether its causal LMs return fp32 logits and shift them (< 4.46,
// Config::hfFp32Logits); nullopt when the text is not such a version.
std::optional<bool> transformersVersionFp32Logits(std::string_view version) noexcept;

} // namespace headroom
