// Headroom against GPU memory that others measured and published (tests/data/external/measured.jsonl, the
// sources and their caveats in /work/shared/external/README.md, copied in tests/data/external/README.md).
// Each row is one A/B-rated record Headroom can express: its config.json, the run's settings, and the
// statistic the source printed, compared with the figure Headroom gives for that statistic:
//  - allocated: torch.cuda.max_memory_allocated() vs memory.peak (per GPU: GpuShare::peak);
//  - reserved: torch.cuda.max_memory_reserved() vs memory.reserved_peak (GpuShare::reservedPeak);
//  - oom: the run ran out of memory, so the verdict on the published GPU must not be "fits";
//  - nvml: NVML's used memory after training (HF's perf_train_gpu_one.md print_gpu_utilization) = the CUDA
//    context, which that page measured first (record hf-bert-large-load-only: 1343 MiB), + reserved_peak.
// Acceptance (issue 22): the Hugging Face stack (Answer.AI, HF Trainer, PEFT) within [-5 %, +10 %]; torchtune
// and litgpt, whose own model code differs from transformers', within +-15 %. Records that cannot be
// expressed or are off today are in kExpectedFailures, one reason each: QEXPECT_FAIL, so that a rule landing
// shows up as XPASS and its entry is deleted. HEADROOM_PUBLISHED_TABLE=1 prints docs/ACCURACY.md's table.
#include "headroom/hardware/gpus.h"
#include "headroom/hardware/multigpu.h"
#include "headroom/load/loader.h"
#include "headroom/memory/engine.h"
#include "headroom/memory/finetune_summary.h"

#include <QTest>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace headroom;

namespace {

// Active: torch.cuda.memory_stats()['active_bytes.all.peak'] (torchtune's "peak memory active"): the blocks
// allocated plus those freed but still in use by another stream (record_stream); a one-stream step's is its
// allocated peak.
enum class Stat { Allocated, Reserved, Oom, Nvml, Active };
enum class Stack { HF, Litgpt, Torchtune };

// One published run as Headroom's settings. Batch is per GPU, as every source gives it.
struct Point
{
    const char* id;
    const char* config; // tests/data/external/<config>.json
    int64_t batch;
    int64_t seq;
    LoraSpec lora;
    Quant quant;
    bool doubleQuant;
    Optimizer optimizer;
    bool checkpoint; // one checkpoint per decoder layer
    int gpus;
    Strategy strategy;
    bool offload;
    const char* gpu;
    Stat stat;
    Stack stack;
    DtypePolicy dtype = DtypePolicy::BF16;
    Attention attention = Attention::Fused;
    Loss loss = Loss::CrossEntropy;        // torchtune's recipes: CEWithChunkedOutputLoss (Loss::ChunkedCE)
    TorchVersion torch = TorchVersion::V2; // whose autograd formulas the run's PyTorch had
    int accumulate = 1;                    // gradient-accumulation steps per optimizer step (Config::accumulate)
    std::vector<std::string> freeze = {};  // the freeze patterns, where they are not PEFT's LoRA ones
    // Mode::Infer: a generate() run. Its peak is the weights and one forward; the forward over the prompt and the new
    // tokens together bounds the prefill's activations from above, and the KV cache of these few positions (under
    // 50 MB on every row) is left out.
    Mode mode = Mode::Train;
    const char* computeDtype = "bf16"; // bnb_4bit_compute_dtype
};

// Answer.AI fsdp_qlora train.py defaults at 4cd6923: r 64, alpha 16, dropout 0.1 on q,k,v,gate,up,down
// (no o_proj), adapters in bf16 (the whole model is cast to bf16), no prepare_model_for_kbit_training.
const LoraSpec kAnswerAi{64, 16, 0.1, {"q_proj", "k_proj", "v_proj", "up_proj", "down_proj", "gate_proj"}, {}, "bf16"};
// lit-gpt 8641822 finetune/lora.py: r 8, alpha 16, dropout 0.05 on query and value, bf16-true.
const LoraSpec kLitgptRt{8, 16, 0.05, {"q_proj", "v_proj"}, {}, "bf16"};
// litgpt config_hub/finetune/<model>/lora.yaml (2024): r 32, alpha 16, query and value.
// The same on lit-gpt's GPT-NeoX models (StableLM Alpha): their fused query_key_value is HF's one module, so
// PEFT-style LoRA wraps it whole; r x (H + 3H) per layer equals lit-gpt's q and v adapters, r x 2 x (H + H).
// With lit-gpt's model code that whole-module adapter reads as all of q, k, v adapted, so zero_pad's kept
// index_copy source (B x T x 2H per layer for q and v) is not counted: the StableLM rows read low by about it.
const LoraSpec kLitgptRtNeox{8, 16, 0.05, {"query_key_value"}, {}, "bf16"};
// HF Trainer's bert-large runs: full fine-tuning of google-bert/bert-large-uncased on a Tesla V100 16 GB.
const LoraSpec kFullFt{};
constexpr const char* kBertLarge = "google-bert--bert-large-uncased";
constexpr const char* kV100 = "Tesla V100 16 GB";
// litgpt's finetune/lora.py loss: chunked_cross_entropy on lm_head_chunk_size=128 logits, no fp32 upcast.
constexpr Loss kLitgptLoss = Loss::ChunkedCE16;
const LoraSpec kLitgptHub{32, 16, 0.05, {"q_proj", "v_proj"}, {}, "bf16"};
// The same on models whose q, k and v are one fused Linear in transformers (GPT-NeoX's and Falcon's
// query_key_value): PEFT-style LoRA wraps that module whole (kLitgptRtNeox's note).
const LoraSpec kLitgptHubNeox{32, 16, 0.05, {"query_key_value"}, {}, "bf16"};
const LoraSpec kLitgptHubFused = kLitgptHubNeox;
const LoraSpec kLitgptHubAll32{
    32, 16, 0.05, {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head"}, {}, "bf16"};
// transformers' Phi names: q_proj, k_proj, v_proj, dense (projection), fc1 and fc2 (MLP)
const LoraSpec kLitgptHubPhi{8, 16, 0.05, {"q_proj", "k_proj", "v_proj", "dense", "fc1", "fc2", "lm_head"}, {}, "bf16"};
const LoraSpec kLitgptHubGemma7{
    16, 16, 0.1, {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head"}, {}, "bf16"};
// gemma2-2b/lora.yaml (00af8b0): r 8, alpha 16, dropout 0.1 on every Linear and the head (its qlora.yaml and the
// 9B's: r 16, kLitgptHubGemma7's settings)
const LoraSpec kLitgptHubGemma2{
    8, 16, 0.1, {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head"}, {}, "bf16"};
// phi-3/lora.yaml and qlora.yaml (00af8b0): r 8, alpha 16, dropout 0.05 on query, key, value, projection, MLP and
// head. transformers' Phi-3 fuses q, k, v into qkv_proj and gate and up into gate_up_proj, which PEFT-style LoRA
// wraps whole; lit-gpt splits the checkpoint into its own fused attn (LoRAQKVLinear, one A per part) and
// fc_1 / fc_2, so its adapters hold 15.2 M parameters to the whole-module 12.9 M: 9 MB of bf16 weights, with their
// gradients and AdamW states under 0.1 GB, 0.2 % of the figure (kLitgptRtNeox's note on the same approximation).
const LoraSpec kLitgptHubPhi3{8, 16, 0.05, {"qkv_proj", "o_proj", "gate_up_proj", "down_proj", "lm_head"}, {}, "bf16"};
const LoraSpec kLitgptHubAll{
    8, 16, 0.05, {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head"}, {}, "bf16"};
// torchtune's LoRA tutorial (Apr 2024): r 8, alpha 16 on q,v; "all layers" r 64, alpha 128 incl. output.
const LoraSpec kTorchtuneQv{8, 16, 0, {"q_proj", "v_proj"}, {}, "bf16"};
// Full fine-tuning: no adapters.
const LoraSpec kFull{};
// PEFT's method comparison (MetaMathQA): LoRA on q_proj and v_proj, dropout 0, fp32 adapters (autocast_adapter_dtype)
const LoraSpec kPeftMcR32{32, 64, 0, {"q_proj", "v_proj"}, {}, "fp32"};
const LoraSpec kPeftMcR64{64, 128, 0, {"q_proj", "v_proj"}, {}, "fp32"};
const LoraSpec kPeftMcR64Rs{64, 64, 0, {"v_proj", "q_proj"}, {}, "fp32"};
const LoraSpec kPeftMcR10Mlp{10, 20, 0, {"down_proj", "up_proj", "gate_proj"}, {}, "fp32"};
const LoraSpec kPeftMcR32Dora{32, 64, 0, {"q_proj", "v_proj"}, {}, "fp32", true}; // use_dora
// init_lora_weights="mica": lora_B frozen (variants.py MiCALinearVariant), the forward plain LoRA's
const LoraSpec kPeftMcR32Mica{32, 64, 0, {"v_proj", "q_proj"}, {}, "fp32", false, PeftMethod::LoRA, "mica"};
// IA3 (peft/tuners/ia3), fp32 vectors: PEFT's llama defaults (k, v, down_proj; down_proj scales its input), and
// every Linear with the MLP's three as feedforward modules
const LoraSpec kPeftMcIa3{0,      8,
                          0,      {"k_proj", "v_proj", "down_proj"},
                          {},     "fp32",
                          false,  PeftMethod::IA3,
                          "true", std::vector<std::string>{"down_proj"}};
const LoraSpec kPeftMcIa3All{0,      8,
                             0,      {"gate_proj", "o_proj", "q_proj", "k_proj", "v_proj", "down_proj", "up_proj"},
                             {},     "fp32",
                             false,  PeftMethod::IA3,
                             "true", std::vector<std::string>{"up_proj", "gate_proj", "down_proj"}};
const LoraSpec kTorchtuneAll{
    64, 128, 0, {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head"}, {}, "bf16"};
const LoraSpec kTorchtuneAll8{
    8, 16, 0, {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head"}, {}, "bf16"};
const LoraSpec kTorchtuneQv64{64, 128, 0, {"q_proj", "v_proj"}, {}, "bf16"};

const std::vector<Point>& points()
{
    static const std::vector<Point> p = {
        {"aa-l2-7b-qlora-bs4-2048", "meta-llama--Llama-2-7b-hf", 4, 2048, kAnswerAi, Quant::NF4, true, Optimizer::AdamW,
         true, 2, Strategy::FSDP, false, "RTX 3090", Stat::Reserved, Stack::HF},
        {"aa-l2-7b-qlora-bs10-2048", "meta-llama--Llama-2-7b-hf", 10, 2048, kAnswerAi, Quant::NF4, true,
         Optimizer::AdamW, true, 2, Strategy::FSDP, false, "RTX 3090", Stat::Reserved, Stack::HF},
        {"aa-l2-7b-lora-bs6-2048", "meta-llama--Llama-2-7b-hf", 6, 2048, kAnswerAi, Quant::None, false,
         Optimizer::AdamW, true, 2, Strategy::FSDP, false, "RTX 3090", Stat::Reserved, Stack::HF},
        // FSDP NO_SHARD ("ddp" in train.py): every rank holds the whole model as flat parameters.
        {"aa-l2-7b-qlora-ddp-bs8-2048", "meta-llama--Llama-2-7b-hf", 8, 2048, kAnswerAi, Quant::NF4, true,
         Optimizer::AdamW, true, 2, Strategy::FSDPNoShard, false, "RTX 3090", Stat::Reserved, Stack::HF},
        {"aa-l2-7b-lora-ddp-bs4-2048", "meta-llama--Llama-2-7b-hf", 4, 2048, kAnswerAi, Quant::None, false,
         Optimizer::AdamW, true, 2, Strategy::FSDPNoShard, false, "RTX 3090", Stat::Reserved, Stack::HF},
        {"aa-l2-70b-qlora-offload-bs2-2048", "meta-llama--Llama-2-70b-hf", 2, 2048, kAnswerAi, Quant::NF4, true,
         Optimizer::AdamW, true, 2, Strategy::FSDP, true, "RTX 3090", Stat::Reserved, Stack::HF},
        {"aa-mistral-7b-v02-qlora-offload-bs1-24576", "mistral-community--Mistral-7B-v0.2", 1, 24576, kAnswerAi,
         Quant::NF4, true, Optimizer::AdamW, true, 2, Strategy::FSDP, true, "RTX 4090", Stat::Reserved, Stack::HF},
        // The same document's other 7B rows (the 3090 case study's batch-1 tables and LoRA batch 4, the 4090 table's
        // offload rows, Mistral's 12 x 2,048) and the allocated figures it gives for LoRA batch 1.
        {"aa-l2-7b-qlora-bs1-512", "meta-llama--Llama-2-7b-hf", 1, 512, kAnswerAi, Quant::NF4, true, Optimizer::AdamW,
         true, 2, Strategy::FSDP, false, "RTX 3090", Stat::Reserved, Stack::HF},
        {"aa-l2-7b-qlora-bs1-2048", "meta-llama--Llama-2-7b-hf", 1, 2048, kAnswerAi, Quant::NF4, true, Optimizer::AdamW,
         true, 2, Strategy::FSDP, false, "RTX 3090", Stat::Reserved, Stack::HF},
        {"aa-l2-7b-lora-bs1-512", "meta-llama--Llama-2-7b-hf", 1, 512, kAnswerAi, Quant::None, false, Optimizer::AdamW,
         true, 2, Strategy::FSDP, false, "RTX 3090", Stat::Reserved, Stack::HF},
        {"aa-l2-7b-lora-bs1-2048", "meta-llama--Llama-2-7b-hf", 1, 2048, kAnswerAi, Quant::None, false,
         Optimizer::AdamW, true, 2, Strategy::FSDP, false, "RTX 3090", Stat::Reserved, Stack::HF},
        {"aa-l2-7b-lora-bs1-512-allocated", "meta-llama--Llama-2-7b-hf", 1, 512, kAnswerAi, Quant::None, false,
         Optimizer::AdamW, true, 2, Strategy::FSDP, false, "RTX 3090", Stat::Allocated, Stack::HF},
        {"aa-l2-7b-lora-bs1-2048-allocated", "meta-llama--Llama-2-7b-hf", 1, 2048, kAnswerAi, Quant::None, false,
         Optimizer::AdamW, true, 2, Strategy::FSDP, false, "RTX 3090", Stat::Allocated, Stack::HF},
        {"aa-l2-7b-lora-bs4-2048", "meta-llama--Llama-2-7b-hf", 4, 2048, kAnswerAi, Quant::None, false,
         Optimizer::AdamW, true, 2, Strategy::FSDP, false, "RTX 3090", Stat::Reserved, Stack::HF},
        {"aa-l2-7b-lora-offload-bs10-2048", "meta-llama--Llama-2-7b-hf", 10, 2048, kAnswerAi, Quant::None, false,
         Optimizer::AdamW, true, 2, Strategy::FSDP, true, "RTX 4090", Stat::Reserved, Stack::HF},
        {"aa-l2-7b-qlora-offload-bs12-2048", "meta-llama--Llama-2-7b-hf", 12, 2048, kAnswerAi, Quant::NF4, true,
         Optimizer::AdamW, true, 2, Strategy::FSDP, true, "RTX 4090", Stat::Reserved, Stack::HF},
        {"aa-mistral-7b-v02-qlora-offload-bs12-2048", "mistral-community--Mistral-7B-v0.2", 12, 2048, kAnswerAi,
         Quant::NF4, true, Optimizer::AdamW, true, 2, Strategy::FSDP, true, "RTX 4090", Stat::Reserved, Stack::HF},
        // The document's Yi 34B rows (both case studies: the same figures on the 3090s and the 4090s) and the 4090
        // table's Llama-2 70B row.
        {"aa-yi-34b-qlora-bs2-2048", "01-ai--Yi-34B", 2, 2048, kAnswerAi, Quant::NF4, true, Optimizer::AdamW, true, 2,
         Strategy::FSDP, false, "RTX 3090", Stat::Reserved, Stack::HF},
        {"aa-yi-34b-qlora-offload-bs4-2048", "01-ai--Yi-34B", 4, 2048, kAnswerAi, Quant::NF4, true, Optimizer::AdamW,
         true, 2, Strategy::FSDP, true, "RTX 3090", Stat::Reserved, Stack::HF},
        {"aa-yi-34b-qlora-bs2-2048-4090", "01-ai--Yi-34B", 2, 2048, kAnswerAi, Quant::NF4, true, Optimizer::AdamW, true,
         2, Strategy::FSDP, false, "RTX 4090", Stat::Reserved, Stack::HF},
        {"aa-yi-34b-qlora-offload-bs4-2048-4090", "01-ai--Yi-34B", 4, 2048, kAnswerAi, Quant::NF4, true,
         Optimizer::AdamW, true, 2, Strategy::FSDP, true, "RTX 4090", Stat::Reserved, Stack::HF},
        {"aa-l2-70b-qlora-offload-bs2-2048-4090", "meta-llama--Llama-2-70b-hf", 2, 2048, kAnswerAi, Quant::NF4, true,
         Optimizer::AdamW, true, 2, Strategy::FSDP, true, "RTX 4090", Stat::Reserved, Stack::HF},
        // The resource table's runs peak in iteration 0, where finetune/lora.py forces the longest sample: no
        // previous step's graph holds its Linear4bit inputs there (litgpt_model.cpp rule 5), so the bnb rows read
        // over (+8 to +13 %) by about those inputs; Headroom gives a steady step, where they are held.
        {"lg-rt-l2-7b-nf4-mb1", "meta-llama--Llama-2-7b-hf", 1, 1304, kLitgptRt, Quant::NF4, false,
         Optimizer::PagedAdamW, false, 1, Strategy::Single, false, "a100-40", Stat::Allocated, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        {"lg-rt-l2-7b-nf4dq-mb1", "meta-llama--Llama-2-7b-hf", 1, 1304, kLitgptRt, Quant::NF4, true,
         Optimizer::PagedAdamW, false, 1, Strategy::Single, false, "a100-40", Stat::Allocated, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        {"lg-rt-l2-7b-lora-mb2", "meta-llama--Llama-2-7b-hf", 2, 1304, kLitgptRt, Quant::None, false, Optimizer::AdamW,
         false, 1, Strategy::Single, false, "a100-40", Stat::Allocated, Stack::Litgpt, DtypePolicy::BF16,
         Attention::Fused, kLitgptLoss},
        {"lg-rt-l2-7b-lora-mb4-oom", "meta-llama--Llama-2-7b-hf", 4, 1304, kLitgptRt, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "a100-40", Stat::Oom, Stack::Litgpt, DtypePolicy::BF16,
         Attention::Fused, kLitgptLoss},
        {"lg-rt-l2-13b-lora-mb1", "meta-llama--Llama-2-13b-hf", 1, 1304, kLitgptRt, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "a100-40", Stat::Allocated, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        // The resource table's other single-GPU LoRA rows (2026-12-02)
        {"lg-rt-l2-7b-lora-mb1", "meta-llama--Llama-2-7b-hf", 1, 1304, kLitgptRt, Quant::None, false, Optimizer::AdamW,
         false, 1, Strategy::Single, false, "a100-40", Stat::Allocated, Stack::Litgpt, DtypePolicy::BF16,
         Attention::Fused, kLitgptLoss},
        {"lg-rt-l2-13b-nf4-mb1", "meta-llama--Llama-2-13b-hf", 1, 1304, kLitgptRt, Quant::NF4, false,
         Optimizer::PagedAdamW, false, 1, Strategy::Single, false, "a100-40", Stat::Allocated, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        {"lg-rt-l2-13b-nf4dq-mb1", "meta-llama--Llama-2-13b-hf", 1, 1304, kLitgptRt, Quant::NF4, true,
         Optimizer::PagedAdamW, false, 1, Strategy::Single, false, "a100-40", Stat::Allocated, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        {"lg-rt-l2-13b-lora-mb2-oom", "meta-llama--Llama-2-13b-hf", 2, 1304, kLitgptRt, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "a100-40", Stat::Oom, Stack::Litgpt, DtypePolicy::BF16,
         Attention::Fused, kLitgptLoss},
        {"lg-rt-l2-13b-lora-mb4-oom", "meta-llama--Llama-2-13b-hf", 4, 1304, kLitgptRt, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "a100-40", Stat::Oom, Stack::Litgpt, DtypePolicy::BF16,
         Attention::Fused, kLitgptLoss},
        // Falcon 40B: out of memory on the A100-40 with or without 4-bit weights (transformers' Falcon has one fused
        // query_key_value, adapted whole as kLitgptRtNeox does)
        {"lg-rt-falcon40b-lora-mb1-oom", "tiiuae--falcon-40b", 1, 1079, kLitgptRtNeox, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "a100-40", Stat::Oom, Stack::Litgpt, DtypePolicy::BF16,
         Attention::Fused, kLitgptLoss},
        {"lg-rt-falcon40b-nf4-mb1-oom", "tiiuae--falcon-40b", 1, 1079, kLitgptRtNeox, Quant::NF4, false,
         Optimizer::PagedAdamW, false, 1, Strategy::Single, false, "a100-40", Stat::Oom, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        {"lg-rt-falcon40b-nf4dq-mb1-oom", "tiiuae--falcon-40b", 1, 1079, kLitgptRtNeox, Quant::NF4, true,
         Optimizer::PagedAdamW, false, 1, Strategy::Single, false, "a100-40", Stat::Oom, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        {"lg-rt-phi15-lora-mb1", "microsoft--phi-1_5.litgpt", 1, 1044, kLitgptRt, Quant::None, false, Optimizer::AdamW,
         false, 1, Strategy::Single, false, "a100-40", Stat::Allocated, Stack::Litgpt, DtypePolicy::BF16,
         Attention::Fused, kLitgptLoss},
        {"lg-rt-phi15-lora-mb2", "microsoft--phi-1_5.litgpt", 2, 1044, kLitgptRt, Quant::None, false, Optimizer::AdamW,
         false, 1, Strategy::Single, false, "a100-40", Stat::Allocated, Stack::Litgpt, DtypePolicy::BF16,
         Attention::Fused, kLitgptLoss},
        {"lg-rt-phi15-nf4dq-mb1", "microsoft--phi-1_5.litgpt", 1, 1044, kLitgptRt, Quant::NF4, true,
         Optimizer::PagedAdamW, false, 1, Strategy::Single, false, "a100-40", Stat::Allocated, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        {"lg-rt-stablelm3b-lora-mb2", "stabilityai--stablelm-base-alpha-3b", 2, 1034, kLitgptRtNeox, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "a100-40", Stat::Allocated, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        {"lg-rt-stablelm3b-nf4-mb1", "stabilityai--stablelm-base-alpha-3b", 1, 1034, kLitgptRtNeox, Quant::NF4, false,
         Optimizer::PagedAdamW, false, 1, Strategy::Single, false, "a100-40", Stat::Allocated, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        {"lg-rt-stablelm3b-nf4dq-mb1", "stabilityai--stablelm-base-alpha-3b", 1, 1034, kLitgptRtNeox, Quant::NF4, true,
         Optimizer::PagedAdamW, false, 1, Strategy::Single, false, "a100-40", Stat::Allocated, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        {"lg-ch-l2-7b-lora", "meta-llama--Llama-2-7b-hf", 2, 512, kLitgptHub, Quant::None, false, Optimizer::AdamW,
         false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt, DtypePolicy::BF16, Attention::Fused,
         kLitgptLoss},
        {"lg-ch-l2-7b-qlora", "meta-llama--Llama-2-7b-hf", 2, 512, kLitgptHub, Quant::NF4, false, Optimizer::PagedAdamW,
         false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt, DtypePolicy::BF16, Attention::Fused,
         kLitgptLoss},
        {"lg-ch-mistral-7b-lora", "mistralai--Mistral-7B-v0.1", 2, 512, kLitgptHub, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt, DtypePolicy::BF16,
         Attention::Fused, kLitgptLoss},
        {"lg-ch-mistral-7b-qlora", "mistralai--Mistral-7B-v0.1", 2, 512, kLitgptHub, Quant::NF4, false,
         Optimizer::PagedAdamW, false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        // gemma-2b/lora.yaml: r 8 on query, key, value, projection, MLP and head; Gemma's tied head is lit-gpt's own
        // Linear (litgpt_model.cpp rule 6), adapted like the others
        {"lg-ch-gemma-2b-lora", "google--gemma-2b", 2, 512, kLitgptHubAll, Quant::None, false, Optimizer::AdamW, false,
         1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt, DtypePolicy::BF16, Attention::Fused,
         kLitgptLoss},
        // tiny-llama and phi-2 lora.yaml / qlora.yaml: every Linear and the head adapted (r 32 and r 8)
        {"lg-ch-tinyllama-lora", "TinyLlama--TinyLlama-1.1B-intermediate-step-1431k-3T", 8, 512, kLitgptHubAll32,
         Quant::None, false, Optimizer::AdamW, false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        {"lg-ch-tinyllama-qlora", "TinyLlama--TinyLlama-1.1B-intermediate-step-1431k-3T", 8, 512, kLitgptHubAll32,
         Quant::NF4, false, Optimizer::PagedAdamW, false, 1, Strategy::Single, false, "a10", Stat::Allocated,
         Stack::Litgpt, DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        {"lg-ch-phi2-lora", "microsoft--phi-2.litgpt", 4, 512, kLitgptHubPhi, Quant::None, false, Optimizer::AdamW,
         false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt, DtypePolicy::BF16, Attention::Fused,
         kLitgptLoss},
        {"lg-ch-phi2-qlora", "microsoft--phi-2.litgpt", 4, 512, kLitgptHubPhi, Quant::NF4, false, Optimizer::PagedAdamW,
         false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt, DtypePolicy::BF16, Attention::Fused,
         kLitgptLoss},
        // Llama 3 / 3.1 8B (the same sizes: Meta-Llama-3-8B's config) and Mistral 7B v0.2, r 32 on query and value
        {"lg-ch-l3-8b-lora", "meta-llama--Meta-Llama-3-8B", 1, 512, kLitgptHub, Quant::None, false, Optimizer::AdamW,
         false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt, DtypePolicy::BF16, Attention::Fused,
         kLitgptLoss},
        {"lg-ch-l3-8b-qlora", "meta-llama--Meta-Llama-3-8B", 2, 512, kLitgptHub, Quant::NF4, false,
         Optimizer::PagedAdamW, false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        {"lg-ch-l31-8b-lora", "meta-llama--Llama-3.1-8B-Instruct", 1, 512, kLitgptHub, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt, DtypePolicy::BF16,
         Attention::Fused, kLitgptLoss},
        {"lg-ch-l31-8b-qlora", "meta-llama--Llama-3.1-8B-Instruct", 2, 512, kLitgptHub, Quant::NF4, false,
         Optimizer::PagedAdamW, false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        {"lg-ch-mistral-7b-v02-lora", "mistral-community--Mistral-7B-v0.2", 2, 512, kLitgptHub, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt, DtypePolicy::BF16,
         Attention::Fused, kLitgptLoss},
        {"lg-ch-mistral-7b-v02-qlora", "mistral-community--Mistral-7B-v0.2", 2, 512, kLitgptHub, Quant::NF4, false,
         Optimizer::PagedAdamW, false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        // gemma-7b: r 16 on every Linear and the head; out of memory on the A10G in bf16 (needs 23.5 GiB of 22.2;
        // without lit-gpt's own head, litgpt_model.cpp rule 6, 1.46 GiB less: at the card's edge), in with 4-bit
        // weights
        {"lg-ch-gemma-7b-lora-oom", "google--gemma-7b", 1, 512, kLitgptHubGemma7, Quant::None, false, Optimizer::AdamW,
         false, 1, Strategy::Single, false, "a10", Stat::Oom, Stack::Litgpt, DtypePolicy::BF16, Attention::Fused,
         kLitgptLoss},
        {"lg-ch-gemma-7b-qlora", "google--gemma-7b", 1, 512, kLitgptHubGemma7, Quant::NF4, false, Optimizer::PagedAdamW,
         false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt, DtypePolicy::BF16, Attention::Fused,
         kLitgptLoss},
        {"lg-ch-falcon-7b-lora", "tiiuae--falcon-7b", 1, 512, kLitgptHubFused, Quant::None, false, Optimizer::AdamW,
         false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt, DtypePolicy::BF16, Attention::Fused,
         kLitgptLoss},
        {"lg-ch-falcon-7b-qlora", "tiiuae--falcon-7b", 1, 512, kLitgptHubFused, Quant::NF4, false,
         Optimizer::PagedAdamW, false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        {"lg-ch-stablelm3b-lora", "stabilityai--stablelm-base-alpha-3b", 1, 512, kLitgptHubNeox, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt, DtypePolicy::BF16,
         Attention::Fused, kLitgptLoss},
        {"lg-ch-stablelm3b-qlora", "stabilityai--stablelm-base-alpha-3b", 1, 512, kLitgptHubNeox, Quant::NF4, false,
         Optimizer::PagedAdamW, false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        // The config hub's later rows (00af8b0, Sep 2024: Gemma 2, Llama 3.2, Phi-3), the same benchmark setup.
        // Llama 3.2 ties its head: lit-gpt keeps its own lm_head (litgpt_model.cpp rule 6).
        {"lg-ch-l32-1b-lora", "meta-llama--Llama-3.2-1B", 1, 512, kLitgptHub, Quant::None, false, Optimizer::AdamW,
         false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt, DtypePolicy::BF16, Attention::Fused,
         kLitgptLoss},
        {"lg-ch-l32-1b-qlora", "meta-llama--Llama-3.2-1B", 2, 512, kLitgptHub, Quant::NF4, false, Optimizer::PagedAdamW,
         false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt, DtypePolicy::BF16, Attention::Fused,
         kLitgptLoss},
        {"lg-ch-l32-3b-lora", "meta-llama--Llama-3.2-3B", 1, 512, kLitgptHub, Quant::None, false, Optimizer::AdamW,
         false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt, DtypePolicy::BF16, Attention::Fused,
         kLitgptLoss},
        {"lg-ch-l32-3b-qlora", "meta-llama--Llama-3.2-3B", 2, 512, kLitgptHub, Quant::NF4, false, Optimizer::PagedAdamW,
         false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt, DtypePolicy::BF16, Attention::Fused,
         kLitgptLoss},
        {"lg-ch-gemma2-2b-lora", "google--gemma-2-2b-it", 2, 512, kLitgptHubGemma2, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt, DtypePolicy::BF16,
         Attention::Fused, kLitgptLoss},
        {"lg-ch-gemma2-2b-qlora", "google--gemma-2-2b-it", 2, 512, kLitgptHubGemma7, Quant::NF4, false,
         Optimizer::PagedAdamW, false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        {"lg-ch-gemma2-9b-lora-oom", "google--gemma-2-9b", 1, 512, kLitgptHubGemma7, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "a10", Stat::Oom, Stack::Litgpt, DtypePolicy::BF16,
         Attention::Fused, kLitgptLoss},
        {"lg-ch-gemma2-9b-qlora", "google--gemma-2-9b", 1, 512, kLitgptHubGemma7, Quant::NF4, false,
         Optimizer::PagedAdamW, false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        {"lg-ch-phi3-mini-lora", "microsoft--Phi-3-mini-4k-instruct", 4, 512, kLitgptHubPhi3, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt, DtypePolicy::BF16,
         Attention::Fused, kLitgptLoss},
        {"lg-ch-phi3-mini-qlora", "microsoft--Phi-3-mini-4k-instruct", 4, 512, kLitgptHubPhi3, Quant::NF4, false,
         Optimizer::PagedAdamW, false, 1, Strategy::Single, false, "a10", Stat::Allocated, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        // tiny-llama/full.yaml: finetune/full.py, micro-batch 4 of a global 32 on one GPU, so 8 accumulation steps
        // keep the bf16 gradients between micro-batches; torch AdamW. full.py takes chunked_cross_entropy on the
        // whole bf16 logits (model(input_ids), no lm_head chunks): the same bytes as kLitgptLoss's chunks, plus the
        // reshape's copy of the shifted logits (131 MB here), which is not modelled
        {"lg-ch-tinyllama-full",
         "TinyLlama--TinyLlama-1.1B-intermediate-step-1431k-3T",
         4,
         512,
         kFull,
         Quant::None,
         false,
         Optimizer::AdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a10",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         8},
        // torchtune's optimization-flags table (README 1814feb, Nov 2024): Llama 3.2 3B full fine-tuning, batch 2 of
        // packed 4,096-token samples, bf16, A100, before compile and the rest: plain cross-entropy, no activation
        // checkpointing, torch AdamW (kPresetDeviations).
        {"tt-readme-l32-3b-full-packed", "meta-llama--Llama-3.2-3B", 2, 4096, kFull, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "a100-80", Stat::Active, Stack::Torchtune,
         DtypePolicy::BF16, Attention::Fused, Loss::CrossEntropy},
        // Generation, torch.cuda.max_memory_allocated() (Point::mode). lit-gpt generate/base.py at 8641822 (resource
        // table): prompt "Hello, my name is" and 50 new tokens, one sample, bf16-true, every Linear and lm_head
        // quantized by Lightning's BitsandbytesPrecision; the tied Falcon-40B keeps lit-gpt's own lm_head (rule 6).
        {"lg-rt-inf-l2-7b-nf4",
         "meta-llama--Llama-2-7b-hf",
         1,
         56,
         kFull,
         Quant::NF4,
         false,
         Optimizer::PagedAdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        {"lg-rt-inf-l2-7b-nf4dq",
         "meta-llama--Llama-2-7b-hf",
         1,
         56,
         kFull,
         Quant::NF4,
         true,
         Optimizer::PagedAdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        {"lg-rt-inf-l2-13b-bf16",
         "meta-llama--Llama-2-13b-hf",
         1,
         56,
         kFull,
         Quant::None,
         false,
         Optimizer::AdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        {"lg-rt-inf-l2-70b-nf4dq",
         "meta-llama--Llama-2-70b-hf",
         1,
         56,
         kFull,
         Quant::NF4,
         true,
         Optimizer::PagedAdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        {"lg-rt-inf-codellama34b-nf4",
         "codellama--CodeLlama-34b-hf",
         1,
         56,
         kFull,
         Quant::NF4,
         false,
         Optimizer::PagedAdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        {"lg-rt-inf-falcon40b-nf4",
         "tiiuae--falcon-40b",
         1,
         56,
         kFull,
         Quant::NF4,
         false,
         Optimizer::PagedAdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        {"lg-rt-inf-phi15-bf16",
         "microsoft--phi-1_5.litgpt",
         1,
         56,
         kFull,
         Quant::None,
         false,
         Optimizer::AdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        // the same table's other generate rows (the gptq.int4 ones are not bitsandbytes, not modelled)
        {"lg-rt-inf-phi15-nf4",
         "microsoft--phi-1_5.litgpt",
         1,
         56,
         kFull,
         Quant::NF4,
         false,
         Optimizer::PagedAdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        {"lg-rt-inf-phi15-nf4dq",
         "microsoft--phi-1_5.litgpt",
         1,
         56,
         kFull,
         Quant::NF4,
         true,
         Optimizer::PagedAdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        {"lg-rt-inf-stablelm3b-bf16",
         "stabilityai--stablelm-base-alpha-3b",
         1,
         56,
         kFull,
         Quant::None,
         false,
         Optimizer::AdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        {"lg-rt-inf-stablelm3b-nf4",
         "stabilityai--stablelm-base-alpha-3b",
         1,
         56,
         kFull,
         Quant::NF4,
         false,
         Optimizer::PagedAdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        {"lg-rt-inf-stablelm3b-nf4dq",
         "stabilityai--stablelm-base-alpha-3b",
         1,
         56,
         kFull,
         Quant::NF4,
         true,
         Optimizer::PagedAdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        {"lg-rt-inf-l2-7b-bf16",
         "meta-llama--Llama-2-7b-hf",
         1,
         56,
         kFull,
         Quant::None,
         false,
         Optimizer::AdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        {"lg-rt-inf-l2-13b-nf4",
         "meta-llama--Llama-2-13b-hf",
         1,
         56,
         kFull,
         Quant::NF4,
         false,
         Optimizer::PagedAdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        {"lg-rt-inf-l2-13b-nf4dq",
         "meta-llama--Llama-2-13b-hf",
         1,
         56,
         kFull,
         Quant::NF4,
         true,
         Optimizer::PagedAdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        {"lg-rt-inf-codellama34b-bf16-oom",
         "codellama--CodeLlama-34b-hf",
         1,
         56,
         kFull,
         Quant::None,
         false,
         Optimizer::AdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Oom,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        {"lg-rt-inf-codellama34b-nf4dq",
         "codellama--CodeLlama-34b-hf",
         1,
         56,
         kFull,
         Quant::NF4,
         true,
         Optimizer::PagedAdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        {"lg-rt-inf-falcon40b-bf16-oom",
         "tiiuae--falcon-40b",
         1,
         56,
         kFull,
         Quant::None,
         false,
         Optimizer::AdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Oom,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        {"lg-rt-inf-falcon40b-nf4dq",
         "tiiuae--falcon-40b",
         1,
         56,
         kFull,
         Quant::NF4,
         true,
         Optimizer::PagedAdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        {"lg-rt-inf-l2-70b-bf16-oom",
         "meta-llama--Llama-2-70b-hf",
         1,
         56,
         kFull,
         Quant::None,
         false,
         Optimizer::AdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Oom,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        // litgpt's quantize tutorial: `litgpt generate tiiuae/falcon-7b --max_new_tokens 256` with its short default
        // prompt, in 32-true, bf16-true and bnb.nf4-dq; Falcon-7B ties its head, lit-gpt keeps its own (rule 6)
        {"lg-q-falcon7b-fp32",
         "tiiuae--falcon-7b",
         1,
         262,
         kFull,
         Quant::None,
         false,
         Optimizer::AdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::FP32,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        {"lg-q-falcon7b-bf16",
         "tiiuae--falcon-7b",
         1,
         262,
         kFull,
         Quant::None,
         false,
         Optimizer::AdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        {"lg-q-falcon7b-nf4dq",
         "tiiuae--falcon-7b",
         1,
         262,
         kFull,
         Quant::NF4,
         true,
         Optimizer::PagedAdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        // Hugging Face's optimize-llm blog: pipeline("text-generation") on bigcode/octocoder, a ~20-token prompt and
        // max_new_tokens 60. bf16; load_in_8bit (LLM.int8, fp16 elsewhere: transformers' bnb quantizer sets
        // torch_dtype float16); load_in_4bit with BitsAndBytesConfig's defaults then: fp4, fp32 compute, fp16 weights
        {"ol-octocoder-bf16",
         "bigcode--octocoder",
         1,
         80,
         kFull,
         Quant::None,
         false,
         Optimizer::AdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::HF,
         DtypePolicy::BF16,
         Attention::Fused,
         Loss::CrossEntropy,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        {"ol-octocoder-int8",
         "bigcode--octocoder",
         1,
         80,
         kFull,
         Quant::Int8,
         false,
         Optimizer::AdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::HF,
         DtypePolicy::FP16,
         Attention::Fused,
         Loss::CrossEntropy,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer},
        {"ol-octocoder-4bit",
         "bigcode--octocoder",
         1,
         80,
         kFull,
         Quant::FP4,
         false,
         Optimizer::AdamW,
         false,
         1,
         Strategy::Single,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::HF,
         DtypePolicy::FP16,
         Attention::Fused,
         Loss::CrossEntropy,
         TorchVersion::V2,
         1,
         {},
         Mode::Infer,
         "fp32"},
        // The resource table's multi-GPU LoRA rows (lit-gpt 8641822 finetune/lora.py with devices > 1):
        // FSDPStrategy(auto_wrap_policy={Block}, activation_checkpointing_policy={Block}), use_orig_params=True as
        // Fabric sets it, and micro-batches of a 128-sample batch accumulated under fabric.no_backward_sync:
        // every Block's whole gradient, frozen weights included, stays unsharded (Config::fsdpOrigParams,
        // fsdpNoSync; the litgpt preset). So two GPUs hold more than one: 22.18 against 21.30 GB for 7B.
        {"lg-rt-l2-7b-lora-2xa100-mb1",
         "meta-llama--Llama-2-7b-hf",
         1,
         1304,
         kLitgptRt,
         Quant::None,
         false,
         Optimizer::AdamW,
         true,
         2,
         Strategy::FSDP,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         128},
        {"lg-rt-l2-7b-lora-2xa100-mb2",
         "meta-llama--Llama-2-7b-hf",
         2,
         1304,
         kLitgptRt,
         Quant::None,
         false,
         Optimizer::AdamW,
         true,
         2,
         Strategy::FSDP,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         64},
        {"lg-rt-l2-7b-lora-2xa100-mb4",
         "meta-llama--Llama-2-7b-hf",
         4,
         1304,
         kLitgptRt,
         Quant::None,
         false,
         Optimizer::AdamW,
         true,
         2,
         Strategy::FSDP,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         32},
        {"lg-rt-phi15-lora-2xa100-mb1",
         "microsoft--phi-1_5.litgpt",
         1,
         1044,
         kLitgptRt,
         Quant::None,
         false,
         Optimizer::AdamW,
         true,
         2,
         Strategy::FSDP,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         128},
        {"lg-rt-phi15-lora-2xa100-mb2",
         "microsoft--phi-1_5.litgpt",
         2,
         1044,
         kLitgptRt,
         Quant::None,
         false,
         Optimizer::AdamW,
         true,
         2,
         Strategy::FSDP,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         64},
        {"lg-rt-phi15-lora-2xa100-mb4",
         "microsoft--phi-1_5.litgpt",
         4,
         1044,
         kLitgptRt,
         Quant::None,
         false,
         Optimizer::AdamW,
         true,
         2,
         Strategy::FSDP,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         32},
        {"lg-rt-stablelm3b-lora-2xa100-mb1",
         "stabilityai--stablelm-base-alpha-3b",
         1,
         1034,
         kLitgptRtNeox,
         Quant::None,
         false,
         Optimizer::AdamW,
         true,
         2,
         Strategy::FSDP,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         128},
        {"lg-rt-stablelm3b-lora-2xa100-mb2",
         "stabilityai--stablelm-base-alpha-3b",
         2,
         1034,
         kLitgptRtNeox,
         Quant::None,
         false,
         Optimizer::AdamW,
         true,
         2,
         Strategy::FSDP,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         64},
        {"lg-rt-stablelm3b-lora-2xa100-mb4",
         "stabilityai--stablelm-base-alpha-3b",
         4,
         1034,
         kLitgptRtNeox,
         Quant::None,
         false,
         Optimizer::AdamW,
         true,
         2,
         Strategy::FSDP,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         32},
        {"lg-rt-l2-13b-lora-2xa100-mb1-oom",
         "meta-llama--Llama-2-13b-hf",
         1,
         1304,
         kLitgptRt,
         Quant::None,
         false,
         Optimizer::AdamW,
         true,
         2,
         Strategy::FSDP,
         false,
         "a100-40",
         Stat::Oom,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         128},
        {"lg-rt-l2-13b-lora-4xa100-mb1",
         "meta-llama--Llama-2-13b-hf",
         1,
         1304,
         kLitgptRt,
         Quant::None,
         false,
         Optimizer::AdamW,
         true,
         4,
         Strategy::FSDP,
         false,
         "a100-40",
         Stat::Allocated,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         128},
        {"lg-rt-falcon40b-lora-4xa100-mb1-oom",
         "tiiuae--falcon-40b",
         1,
         1079,
         kLitgptRtNeox,
         Quant::None,
         false,
         Optimizer::AdamW,
         true,
         4,
         Strategy::FSDP,
         false,
         "a100-40",
         Stat::Oom,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         128},
        // The config hub's full fine-tuning on 4 A10Gs (full.yaml: devices 4, micro-batch 4 of a global 64, so 4
        // accumulation steps under no_backward_sync): every gradient whole on each GPU beside the sharded weights
        // and AdamW states, out of memory as the runs were (sharded gradients alone would fit)
        {"lg-ch-l2-7b-full-4xa10g-oom",
         "meta-llama--Llama-2-7b-hf",
         4,
         512,
         kFull,
         Quant::None,
         false,
         Optimizer::AdamW,
         true,
         4,
         Strategy::FSDP,
         false,
         "a10",
         Stat::Oom,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         4},
        {"lg-ch-l3-8b-full-4xa10g-oom",
         "meta-llama--Meta-Llama-3-8B",
         4,
         512,
         kFull,
         Quant::None,
         false,
         Optimizer::AdamW,
         true,
         4,
         Strategy::FSDP,
         false,
         "a10",
         Stat::Oom,
         Stack::Litgpt,
         DtypePolicy::BF16,
         Attention::Fused,
         kLitgptLoss,
         TorchVersion::V2,
         4},
        // HF Trainer, AutoModelForSequenceClassification (BertForSequenceClassification, 2 labels, dropout 0.1),
        // seq 512, Tesla V100 16 GB; gradient accumulation does not change the peak. 2022 (transformers 4.21):
        // BertSelfAttention wrote attention out (matmul, softmax, dropout); BERT's SDPA path came later
        // (BertSdpaSelfAttention), so Attention::Math. The runs are of Jan 2022 (CUDA 11.2, driver 460): PyTorch
        // 1.10 (1.11 came out in Mar 2022), TorchVersion::V1_10: softmax kept its input for backward
        // (saved_rules.cpp kOlderRules), the Trainer's model.zero_grad() left the gradients allocated through the
        // next forward, and AdamW (adamw_hf) looped over the parameters (config.cpp kTorchDefaults). Before them
        // the batch-4 rows read -16.4 / -21.8 / -19.4 % and the AdamW checkpointed one +15.0 %.
        {"hf-bert-large-fp32-bs4", kBertLarge, 4, 512, kFullFt, Quant::None, false, Optimizer::AdamW, false, 1,
         Strategy::Single, false, kV100, Stat::Nvml, Stack::HF, DtypePolicy::FP32, Attention::Math, Loss::CrossEntropy,
         TorchVersion::V1_10},
        {"hf-bert-large-fp16-bs4", kBertLarge, 4, 512, kFullFt, Quant::None, false, Optimizer::AdamW, false, 1,
         Strategy::Single, false, kV100, Stat::Nvml, Stack::HF, DtypePolicy::AmpFP16, Attention::Math,
         Loss::CrossEntropy, TorchVersion::V1_10},
        {"hf-bert-large-fp16-bs1-ga4-gc", kBertLarge, 1, 512, kFullFt, Quant::None, false, Optimizer::AdamW, true, 1,
         Strategy::Single, false, kV100, Stat::Nvml, Stack::HF, DtypePolicy::AmpFP16, Attention::Math,
         Loss::CrossEntropy, TorchVersion::V1_10},
        {"hf-bert-large-adafactor-bs4", kBertLarge, 4, 512, kFullFt, Quant::None, false, Optimizer::Adafactor, false, 1,
         Strategy::Single, false, kV100, Stat::Nvml, Stack::HF, DtypePolicy::FP32, Attention::Math, Loss::CrossEntropy,
         TorchVersion::V1_10},
        {"hf-bert-large-adafactor-fp16-bs1-ga4-gc", kBertLarge, 1, 512, kFullFt, Quant::None, false,
         Optimizer::Adafactor, true, 1, Strategy::Single, false, kV100, Stat::Nvml, Stack::HF, DtypePolicy::AmpFP16,
         Attention::Math, Loss::CrossEntropy, TorchVersion::V1_10},
        {"hf-bert-large-adam8bit-fp16-bs1-ga4-gc", kBertLarge, 1, 512, kFullFt, Quant::None, false, Optimizer::Adam8bit,
         true, 1, Strategy::Single, false, kV100, Stat::Nvml, Stack::HF, DtypePolicy::AmpFP16, Attention::Math,
         Loss::CrossEntropy, TorchVersion::V1_10},
        // the same page's fp32 gradient-accumulation and checkpointing runs and 8-bit Adam at batch 4 (2026-12-02)
        {"hf-bert-large-fp32-bs1-ga4", kBertLarge, 1, 512, kFullFt, Quant::None, false, Optimizer::AdamW, false, 1,
         Strategy::Single, false, kV100, Stat::Nvml, Stack::HF, DtypePolicy::FP32, Attention::Math, Loss::CrossEntropy,
         TorchVersion::V1_10},
        {"hf-bert-large-fp32-bs1-ga4-gc", kBertLarge, 1, 512, kFullFt, Quant::None, false, Optimizer::AdamW, true, 1,
         Strategy::Single, false, kV100, Stat::Nvml, Stack::HF, DtypePolicy::FP32, Attention::Math, Loss::CrossEntropy,
         TorchVersion::V1_10},
        {"hf-bert-large-adam8bit-bs4", kBertLarge, 4, 512, kFullFt, Quant::None, false, Optimizer::Adam8bit, false, 1,
         Strategy::Single, false, kV100, Stat::Nvml, Stack::HF, DtypePolicy::FP32, Attention::Math, Loss::CrossEntropy,
         TorchVersion::V1_10},
        // lit-gpt's own phi-1.5 (lit_gpt/config.py: gelu_approximate "tanh"; model.py GptNeoxMLP: one
        // F.gelu(approximate="tanh") call) computes transformers' gelu_new (written out in Python, keeping five
        // [B, T, 8192] tensors per layer) as one op: microsoft--phi-1_5.litgpt.json is the config with
        // hidden_act gelu_pytorch_tanh, which runs exactly that op (tests/data/external/README.md)
        {"lg-rt-phi15-lora-mb4", "microsoft--phi-1_5.litgpt", 4, 1044, kLitgptRt, Quant::None, false, Optimizer::AdamW,
         false, 1, Strategy::Single, false, "a100-40", Stat::Allocated, Stack::Litgpt, DtypePolicy::BF16,
         Attention::Fused, kLitgptLoss},
        {"lg-rt-phi15-nf4-mb1", "microsoft--phi-1_5.litgpt", 1, 1044, kLitgptRt, Quant::NF4, false,
         Optimizer::PagedAdamW, false, 1, Strategy::Single, false, "a100-40", Stat::Allocated, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        {"lg-rt-stablelm3b-lora-mb1", "stabilityai--stablelm-base-alpha-3b", 1, 1034, kLitgptRtNeox, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "a100-40", Stat::Allocated, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        {"lg-rt-stablelm3b-lora-mb4", "stabilityai--stablelm-base-alpha-3b", 4, 1034, kLitgptRtNeox, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "a100-40", Stat::Allocated, Stack::Litgpt,
         DtypePolicy::BF16, Attention::Fused, kLitgptLoss},
        {"tt-lora-tut-l2-7b-qv-r8", "meta-llama--Llama-2-7b-hf", 2, 512, kTorchtuneQv, Quant::None, false,
         Optimizer::AdamW, true, 1, Strategy::Single, false, "a100-80", Stat::Reserved, Stack::Torchtune},
        {"tt-lora-tut-l2-7b-all-r64", "meta-llama--Llama-2-7b-hf", 2, 512, kTorchtuneAll, Quant::None, false,
         Optimizer::AdamW, true, 1, Strategy::Single, false, "a100-80", Stat::Reserved, Stack::Torchtune},
        // the tutorial table's other two rows (2026-12-02)
        {"tt-lora-tut-l2-7b-all-r8", "meta-llama--Llama-2-7b-hf", 2, 512, kTorchtuneAll8, Quant::None, false,
         Optimizer::AdamW, true, 1, Strategy::Single, false, "a100-80", Stat::Reserved, Stack::Torchtune},
        {"tt-lora-tut-l2-7b-qv-r64", "meta-llama--Llama-2-7b-hf", 2, 512, kTorchtuneQv64, Quant::None, false,
         Optimizer::AdamW, true, 1, Strategy::Single, false, "a100-80", Stat::Reserved, Stack::Torchtune},
        // torchtune README (Sep 2024), llama3_1/8B_lora_single_device.yaml at 30b8519: r 8 on q,v, AdamW,
        // per-layer activation checkpointing, CEWithChunkedOutputLoss; which peak statistic is not stated.
        {"tt-readme-l31-8b-lora-4090", "meta-llama--Llama-3.1-8B-Instruct", 2, 2048, kTorchtuneQv, Quant::None, false,
         Optimizer::AdamW, true, 1, Strategy::Single, false, "RTX 4090", Stat::Allocated, Stack::Torchtune,
         DtypePolicy::BF16, Attention::Fused, Loss::ChunkedCE},
        // PEFT's MetaMathQA runs on an L40S (the preset: the verdict is checked to be "fits" too); 768 tokens is the
        // truncation bound, the longest batch the run can have. Its BucketIterator sorts each bucket of 20 batches
        // longest first and tokenizer.pad pads a batch to its longest sample, so the length varies from step to
        // step up to 768 (lengthsVary). The LoRA runs (June and October 2025) adapt q_proj and v_proj, or the
        // MLP, with fp32 adapters.
        {"peft-mc-l32-3b-lora-r32-bs4-768", "meta-llama--Llama-3.2-3B", 4, 768, kPeftMcR32, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "L40S", Stat::Reserved, Stack::HF},
        {"peft-mc-l32-3b-lora-r64-bs4-768", "meta-llama--Llama-3.2-3B", 4, 768, kPeftMcR64, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "L40S", Stat::Reserved, Stack::HF},
        {"peft-mc-l32-3b-lora-r10-mlp-bs4-768", "meta-llama--Llama-3.2-3B", 4, 768, kPeftMcR10Mlp, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "L40S", Stat::Reserved, Stack::HF},
        // The suite's other runs Headroom can express (f650b08, June 2025, the same software): rsLoRA (only the
        // scaling differs), LoRA-FA (create_lorafa_optimizer freezes every lora_A) and LN tuning (a trainable copy
        // of each RMSNorm, everything else frozen; its 175,104 parameters are the norms' own count).
        {"peft-mc-l32-3b-lora-r64-rslora-bs4-768", "meta-llama--Llama-3.2-3B", 4, 768, kPeftMcR64Rs, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "L40S", Stat::Reserved, Stack::HF},
        {"peft-mc-l32-3b-lorafa-r32-bs4-768",
         "meta-llama--Llama-3.2-3B",
         4,
         768,
         kPeftMcR32,
         Quant::None,
         false,
         Optimizer::AdamW,
         false,
         1,
         Strategy::Single,
         false,
         "L40S",
         Stat::Reserved,
         Stack::HF,
         DtypePolicy::BF16,
         Attention::Fused,
         Loss::CrossEntropy,
         TorchVersion::V2,
         1,
         {"*", "!*lora_B*"}},
        {"peft-mc-l32-3b-ln-tuning-bs4-768",
         "meta-llama--Llama-3.2-3B",
         4,
         768,
         kFull,
         Quant::None,
         false,
         Optimizer::AdamW,
         false,
         1,
         Strategy::Single,
         false,
         "L40S",
         Stat::Reserved,
         Stack::HF,
         DtypePolicy::BF16,
         Attention::Fused,
         Loss::CrossEntropy,
         TorchVersion::V2,
         1,
         {"*", "!*norm*"}},
        {"peft-mc-l32-3b-full-bs4-768", "meta-llama--Llama-3.2-3B", 4, 768, kFull, Quant::None, false, Optimizer::AdamW,
         false, 1, Strategy::Single, false, "L40S", Stat::Reserved, Stack::HF},
        // DoRA (use_dora=True) on the LoRA r 32 run's adapters (f650b08, June 2025): the magnitude vectors train
        // with the adapters, and each adapted Linear keeps its base output and lora_B's output for them.
        {"peft-mc-l32-3b-dora-r32-bs4-768", "meta-llama--Llama-3.2-3B", 4, 768, kPeftMcR32Dora, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "L40S", Stat::Reserved, Stack::HF},
        {"peft-mc-l32-3b-mica-r32-bs4-768", "meta-llama--Llama-3.2-3B", 4, 768, kPeftMcR32Mica, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "L40S", Stat::Reserved, Stack::HF},
        // IA3 from the same suite: the frozen model in bf16, fp32 vectors, the feedforward inputs' fp32 copies kept
        {"peft-mc-l32-3b-ia3-bs4-768", "meta-llama--Llama-3.2-3B", 4, 768, kPeftMcIa3, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "L40S", Stat::Reserved, Stack::HF},
        {"peft-mc-l32-3b-ia3-all-bs4-768", "meta-llama--Llama-3.2-3B", 4, 768, kPeftMcIa3All, Quant::None, false,
         Optimizer::AdamW, false, 1, Strategy::Single, false, "L40S", Stat::Reserved, Stack::HF},
    };
    return p;
}

// id -> why the figure is off today (or what Headroom cannot express). A/B records not in points() are
// listed in notExpressed() below.
const std::map<std::string, const char*> kExpectedFailures = {
    {"tt-readme-l31-8b-lora-4090",
     "+18 % (+35 % with plain cross-entropy): the run has compile=True, and torchtune's compile_loss "
     "(torchtune/training/_compile.py) compiles each chunk's upcast + cross-entropy, which inductor fuses, so the "
     "fp32 log-probabilities eager autograd keeps (2 GiB at this 128k vocabulary) need not exist; torch.compile "
     "is not modelled"},
};

// The torchtune and litgpt rows are their framework's --framework preset (config.cpp kPresets): every switch
// the preset sets equals the row's, except those named here (PresetSwitch bits), each with the run's reason.
struct PresetDeviation
{
    uint32_t switches;
    const char* why;
};
const std::map<std::string, PresetDeviation> kPresetDeviations = {
    {"tt-lora-tut-l2-7b-qv-r8",
     {kPresetLoss, "the LoRA tutorial (Apr 2024, torchtune 0.1) trained with nn.CrossEntropyLoss on "
                   "TransformerDecoder's fp32 output; CEWithChunkedOutputLoss, today's recipe loss, came later. "
                   "With it the row reads 14.19 GB (-8.8 %) instead of 14.46 GB (-7.1 %)"}},
    {"tt-lora-tut-l2-7b-all-r64",
     {kPresetLoss, "as tt-lora-tut-l2-7b-qv-r8: 15.66 GB (-8.1 %) instead of 15.93 GB (-6.5 %)"}},
    {"tt-lora-tut-l2-7b-all-r8", {kPresetLoss, "as tt-lora-tut-l2-7b-qv-r8"}},
    {"tt-lora-tut-l2-7b-qv-r64", {kPresetLoss, "as tt-lora-tut-l2-7b-qv-r8"}},
    {"tt-readme-l32-3b-full-packed",
     {kPresetLoss | kPresetLayerCheckpoint,
      "the table's second row adds packing to the baseline alone: chunked cross-entropy and activation "
      "checkpointing come in later rows"}},
    {"lg-rt-l2-7b-lora-2xa100-mb1",
     {kPresetLayerCheckpoint, "FSDPStrategy's activation_checkpointing_policy={Block} on several devices"}},
    {"lg-rt-l2-7b-lora-2xa100-mb2",
     {kPresetLayerCheckpoint, "FSDPStrategy's activation_checkpointing_policy={Block} on several devices"}},
    {"lg-rt-l2-7b-lora-2xa100-mb4",
     {kPresetLayerCheckpoint, "FSDPStrategy's activation_checkpointing_policy={Block} on several devices"}},
    {"lg-rt-phi15-lora-2xa100-mb1",
     {kPresetLayerCheckpoint, "FSDPStrategy's activation_checkpointing_policy={Block} on several devices"}},
    {"lg-rt-phi15-lora-2xa100-mb2",
     {kPresetLayerCheckpoint, "FSDPStrategy's activation_checkpointing_policy={Block} on several devices"}},
    {"lg-rt-phi15-lora-2xa100-mb4",
     {kPresetLayerCheckpoint, "FSDPStrategy's activation_checkpointing_policy={Block} on several devices"}},
    {"lg-rt-stablelm3b-lora-2xa100-mb1",
     {kPresetLayerCheckpoint, "FSDPStrategy's activation_checkpointing_policy={Block} on several devices"}},
    {"lg-rt-stablelm3b-lora-2xa100-mb2",
     {kPresetLayerCheckpoint, "FSDPStrategy's activation_checkpointing_policy={Block} on several devices"}},
    {"lg-rt-stablelm3b-lora-2xa100-mb4",
     {kPresetLayerCheckpoint, "FSDPStrategy's activation_checkpointing_policy={Block} on several devices"}},
    {"lg-rt-l2-13b-lora-2xa100-mb1-oom",
     {kPresetLayerCheckpoint, "FSDPStrategy's activation_checkpointing_policy={Block} on several devices"}},
    {"lg-rt-l2-13b-lora-4xa100-mb1",
     {kPresetLayerCheckpoint, "FSDPStrategy's activation_checkpointing_policy={Block} on several devices"}},
    {"lg-rt-falcon40b-lora-4xa100-mb1-oom",
     {kPresetLayerCheckpoint, "FSDPStrategy's activation_checkpointing_policy={Block} on several devices"}},
    {"lg-ch-l2-7b-full-4xa10g-oom",
     {kPresetLayerCheckpoint, "FSDPStrategy's activation_checkpointing_policy={Block} on several devices"}},
    {"lg-ch-l3-8b-full-4xa10g-oom",
     {kPresetLayerCheckpoint, "FSDPStrategy's activation_checkpointing_policy={Block} on several devices"}},
    {"lg-rt-inf-l2-7b-nf4dq", {kPresetDoubleQuant, "the run is --quantize bnb.nf4-dq"}},
    {"lg-rt-inf-phi15-nf4dq", {kPresetDoubleQuant, "the run is --quantize bnb.nf4-dq"}},
    {"lg-rt-inf-stablelm3b-nf4dq", {kPresetDoubleQuant, "the run is --quantize bnb.nf4-dq"}},
    {"lg-rt-inf-l2-13b-nf4dq", {kPresetDoubleQuant, "the run is --quantize bnb.nf4-dq"}},
    {"lg-rt-inf-codellama34b-nf4dq", {kPresetDoubleQuant, "the run is --quantize bnb.nf4-dq"}},
    {"lg-rt-inf-falcon40b-nf4dq", {kPresetDoubleQuant, "the run is --quantize bnb.nf4-dq"}},
    {"lg-rt-inf-l2-70b-nf4dq", {kPresetDoubleQuant, "the run is --quantize bnb.nf4-dq"}},
    {"lg-q-falcon7b-nf4dq", {kPresetDoubleQuant, "the run is --quantize bnb.nf4-dq"}},
    {"lg-q-falcon7b-fp32", {kPresetDtype, "the run is --precision 32-true"}},
    {"lg-rt-l2-7b-nf4dq-mb1", {kPresetDoubleQuant, "the run is --quantize bnb.nf4-dq"}},
    {"lg-rt-l2-13b-nf4dq-mb1", {kPresetDoubleQuant, "the run is --quantize bnb.nf4-dq"}},
    {"lg-rt-phi15-nf4dq-mb1", {kPresetDoubleQuant, "the run is --quantize bnb.nf4-dq"}},
    {"lg-rt-stablelm3b-nf4dq-mb1", {kPresetDoubleQuant, "the run is --quantize bnb.nf4-dq"}},
    {"lg-rt-falcon40b-nf4dq-mb1-oom", {kPresetDoubleQuant, "the run is --quantize bnb.nf4-dq"}},
};

Framework frameworkOf(Stack s)
{
    return s == Stack::Torchtune ? Framework::Torchtune : s == Stack::Litgpt ? Framework::Litgpt : Framework::HF;
}

// A/B records no row can express today, with the reason; checked to stay in step with the data file.
const std::map<std::string, const char*>& notExpressed()
{
    static const std::map<std::string, const char*> m = {
        {"hf-bert-large-load-only", "the CUDA context calibration the nvml rows add (weights only, no step)"},
        {"qwen-", "Qwen v1 is a trust_remote_code architecture (model_type qwen)"},
        {"lg-inf-", "generation across devices (pipeline / tensor parallel generate) is not modelled"},
        {"tt-readme", "torchtune with torch.compile plus optimizer_in_bwd, unstated settings, or a config not shipped"},
        {"tt-qlora-tut",
         "April 2024 torchtune (ea3d4ea): TransformerDecoder returned output(h).float() and the recipe kept the "
         "shifted fp32 logits through backward, neither in the torchtune preset (today's recipes); the GPU is not "
         "stated. Its NF4 scope (only the LoRA-wrapped Linears, before torchtune#1119) is every Linear but the "
         "output here, as in Headroom"},
        {"peft-", "metric not stated (a monitoring screenshot), FlashAttention-2 and FSDP/ZeRO-3 offload"},
        {"t5-3b", "C record (an OOM message, no configuration to recompute)"},
    };
    return m;
}

std::string dataDir() { return std::string(HEADROOM_TEST_DATA) + "/external/"; }

const std::map<std::string, nlohmann::json>& records()
{
    static const std::map<std::string, nlohmann::json> r = [] {
        std::map<std::string, nlohmann::json> out;
        std::ifstream in(dataDir() + "measured.jsonl");
        for (std::string line; std::getline(in, line);)
            if (!line.empty()) {
                nlohmann::json j = nlohmann::json::parse(line);
                out.emplace(j["id"].get<std::string>(), j);
            }
        return out;
    }();
    return r;
}

// The first figure in bytes: "GB" is 1e9 (litgpt, torchtune before Aug 2024), GiB and MiB are powers of 2.
double measuredBytes(const nlohmann::json& rec)
{
    const nlohmann::json& f = rec["figures"][0];
    const std::string unit = f["unit"].get<std::string>();
    const double v = f["value"].get<double>();
    if (unit == "GB")
        return v * 1e9;
    if (unit == "GiB")
        return v * 1073741824.0;
    if (unit == "MiB")
        return v * 1048576.0;
    if (unit == "B")
        return v;
    return -1;
}

double measuredBytes(const nlohmann::json& rec);

// NVML counts the CUDA context: the same page measured it alone first (hf-bert-large-load-only, first figure).
int64_t cudaContextBytes() { return static_cast<int64_t>(measuredBytes(records().at("hf-bert-large-load-only"))); }

struct Predicted
{
    int64_t bytes = 0;
    int64_t trainable = 0; // what requires grad (PEFT's print_trainable_parameters)
    bool fitsSafely = false;
    bool fits = false; // the verdict before the safety margin, on the row's GPU (false without a preset)
    // At capacity (reserved rows of a cluster): the least max_memory_reserved can read (GpuShare::
    // reservedAtCapacityLow); `bytes` is the most. 0 elsewhere.
    int64_t low = 0;
};

// bitsandbytes before 0.43.2 (Config::bnbKeepsMatmulInput: MatMul4Bit keeps its input): litgpt's pinned
// 0.41/0.42 (its preset), and Answer.AI's fsdp_qlora runs (benchmarks_03_2024.md, March 2024, when bitsandbytes
// 0.43.0 was current and 0.43.1 came in April; both keep it, PR #1270 dropped it in 0.43.2).
bool bnbKeepsInput(const Point& p) { return p.stack == Stack::Litgpt || std::string_view(p.id).starts_with("aa-"); }

// What each source's runs had, by the record's source_group and framework, so that every record of the same
// source gets the same switches (the held-aside ones too), with where each comes from:
//  - transformers before 4.46 (Config::hfFp32Logits): Answer.AI's benchmarks ran in February and March 2024
//    (benchmarks_03_2024.md), when `pip install llama-recipes` brought transformers 4.38 / 4.39, whose
//    LlamaForCausalLM and MistralForCausalLM returned fp32 logits and took the loss on a shifted fp32 copy;
//  - a loop that holds the model's output through backward and the optimizer step (Config::loopKeepsOutput):
//    Answer.AI's fsdp_qlora train.py 4cd6923 (`output = model(...)`, `loss.backward()`, `optimizer.step()`,
//    then `output = None`) and PEFT's method_comparison run.py (`outputs = model(**batch, ...)`,
//    `loss = outputs.loss`, backward and step, `outputs` rebound at the next step). HF Trainer (the bert-large
//    rows) returns the loss alone; torchtune's recipes `del logits` before backward; litgpt's fit() is its own
//    rule.
const std::vector<std::pair<const char*, const char*>> kSourceBefore446 = {
    {"source_group", "Answer.AI FSDP+QLoRA benchmarks"}};
const std::vector<std::pair<const char*, const char*>> kLoopsKeepingOutput = {
    {"framework", "fsdp_qlora train.py"}, {"framework", "method_comparison/MetaMathQA run.py"}};

bool recordSays(const Point& p, const std::vector<std::pair<const char*, const char*>>& table)
{
    const nlohmann::json& rec = records().at(p.id);
    for (const auto& [field, text] : table)
        if (rec.contains(field) && rec[field].is_string() &&
            rec[field].get<std::string>().find(text) != std::string::npos)
            return true;
    return false;
}
bool fp32Logits(const Point& p) { return recordSays(p, kSourceBefore446); }
bool loopKeepsOutput(const Point& p) { return recordSays(p, kLoopsKeepingOutput); }

// Whether the run's batches are padded to their longest sample, as the record's seq_len_kind says ("padded to
// longest in batch", "pads to the batch's longest", litgpt's "micro-batch padded to it" after the longest
// sample), rather than packed or of fixed dummy data: then the length varies from step to step up to `seq`
// (Config::varySymbol, --vary seq), and the reserved figure is the highest of those steps'.
bool lengthsVary(const Point& p)
{
    const nlohmann::json& rec = records().at(p.id);
    return rec.contains("seq_len_kind") && rec["seq_len_kind"].is_string() &&
           rec["seq_len_kind"].get<std::string>().find("longest") != std::string::npos;
}

Predicted predict(const Point& p)
{
    LoadOptions load;
    load.lora = p.lora;
    const Model m = loadModel(dataDir() + p.config + ".json", load);
    Config c;
    c.mode = p.mode;
    c.finetune.computeDtype = p.computeDtype;
    c.finetune.computeBytes = std::string_view(p.computeDtype) == "fp32" ? 4 : 2;
    c.dtype = p.dtype;
    c.attention = p.attention;
    c.optimizer = p.optimizer;
    c.loss = p.loss;
    c.torch = p.torch;
    c.allocator = AllocatorMode::Caching;
    const std::optional<GpuSpec> preset = findGpu(p.gpu);
    c.gpu = preset ? *preset : customGpu(0);
    c.gpus = p.gpus;
    c.strategy = p.strategy;
    c.offload = p.offload;
    c.finetune.lora = p.lora;
    c.finetune.quant = p.quant;
    c.finetune.doubleQuant = p.doubleQuant;
    c.finetune.kbitPrep = false; // none of these stacks calls prepare_model_for_kbit_training
    c.finetune.layerCheckpoint = p.checkpoint;
    c.framework = frameworkOf(p.stack); // the row is that preset (rowsArePresets)
    c.modelCode = p.stack == Stack::Litgpt ? ModelCode::Litgpt : ModelCode::Transformers;
    // Fabric's FSDP (the litgpt preset, rowsArePresets): use_orig_params=True and no_backward_sync accumulation
    c.fsdpOrigParams = c.fsdpNoSync = p.stack == Stack::Litgpt;
    c.bnbKeepsMatmulInput = bnbKeepsInput(p);
    c.hfFp32Logits = fp32Logits(p);
    c.loopKeepsOutput = loopKeepsOutput(p);
    if (!p.freeze.empty())
        c.freeze = p.freeze;
    else if (p.lora.active())
        for (const std::string& f : adapterFreezePatterns(p.lora))
            c.freeze.push_back(f);
    c.symbols = m.defaultBindings();
    c.accumulate = p.accumulate;
    // Config's batch is global: every GPU's micro-batches of one optimizer step
    c.symbols[static_cast<size_t>(m.batchSymbol)] = p.batch * p.gpus * p.accumulate;
    c.symbols[static_cast<size_t>(m.symbolIndex("seq"))] = p.seq;
    if (lengthsVary(p))
        c.varySymbol = m.symbolIndex("seq");
    const EnginePlan plan = makePlan(m, c);
    const Evaluation e = evaluate(plan, c);
    Predicted out;
    out.trainable = countParams(m, c).trainable;
    if (p.gpus > 1) {
        const ClusterEvaluation ce = evaluateCluster(plan, c);
        const GpuShare& g = ce.gpus[size_t(ce.heaviest)];
        // A need above the GPU's capacity: the allocator gave its cache back, so what it reserved is the
        // replay's under capacity (GpuShare::reservedAtCapacity), not the unconstrained figure.
        const int64_t reserved = g.reservedAtCapacity > 0 ? g.reservedAtCapacity : g.reservedPeak;
        out.bytes = p.stat == Stat::Allocated || p.stat == Stat::Active ? g.peak : reserved;
        if (p.stat == Stat::Reserved && g.reservedAtCapacity > 0)
            out.low = g.reservedAtCapacityLow;
        const Fit f = computeClusterFit(plan, c, e, ce, 1);
        out.fitsSafely = f.fitsSafely;
        out.fits = f.fits;
    } else {
        out.bytes = p.stat == Stat::Allocated || p.stat == Stat::Active ? e.memory.peak : e.memory.reservedPeak;
        if (p.stat == Stat::Nvml)
            out.bytes += cudaContextBytes();
        const Fit f = computeFitOnly(plan, c, e);
        out.fitsSafely = f.fitsSafely;
        out.fits = f.fits;
    }
    return out;
}

bool printTable() { return std::getenv("HEADROOM_PUBLISHED_TABLE") != nullptr; }

const char* statName(Stat s)
{
    return s == Stat::Allocated  ? "allocated"
           : s == Stat::Reserved ? "reserved"
           : s == Stat::Nvml     ? "nvml"
           : s == Stat::Active   ? "active"
                                 : "OOM";
}

} // namespace

class TestPublished : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QVERIFY2(records().size() == 184, "tests/data/external/measured.jsonl: 184 records expected");
        if (printTable())
            std::printf("| id | statistic | measured | Headroom | error |\n|---|---|---|---|---|\n");
    }

    // Every A/B training record is a row or has a reason; rows and reasons name records that exist.
    void everyRecordAccountedFor()
    {
        std::map<std::string, bool> rows;
        for (const Point& p : points()) {
            QVERIFY2(records().count(p.id), p.id);
            rows[p.id] = true;
        }
        for (const auto& [id, why] : kExpectedFailures)
            QVERIFY2(rows.count(id), id.c_str());
        for (const auto& [id, rec] : records()) {
            const std::string grade = rec["completeness"].get<std::string>();
            const std::string task = rec["task"].get<std::string>();
            if (grade == "C" || rows.count(id) || task.rfind("vllm", 0) == 0)
                continue; // vLLM startups are tst_serving's
            bool reason = false;
            for (const auto& [prefix, why] : notExpressed())
                reason = reason || id.rfind(prefix, 0) == 0;
            QVERIFY2(reason, qPrintable(QString::fromStdString(id + ": neither a row nor a reason")));
        }
    }

    // Each torchtune and litgpt row is what `--framework torchtune|litgpt` sets, but for the listed deviations.
    void rowsArePresets()
    {
        for (const auto& [id, d] : kPresetDeviations) {
            bool found = false;
            for (const Point& p : points())
                found = found || id == p.id;
            QVERIFY2(found, id.c_str());
        }
        for (const Point& p : points()) {
            if (p.stack == Stack::HF)
                continue;
            const auto dev = kPresetDeviations.find(p.id);
            const uint32_t keep = dev == kPresetDeviations.end() ? 0 : dev->second.switches;
            Config c; // the row's own values where it deviates, the preset's elsewhere
            c.dtype = p.dtype;
            c.optimizer = p.optimizer;
            c.finetune.layerCheckpoint = p.checkpoint;
            c.finetune.lora = p.lora;
            c.finetune.quant = p.quant;
            c.finetune.doubleQuant = p.doubleQuant;
            c.loss = p.loss;
            applyFramework(frameworkOf(p.stack), c, keep);
            const QByteArray row(p.id);
            QVERIFY2(c.dtype == p.dtype, row);
            QVERIFY2(c.optimizer == p.optimizer, row);
            QVERIFY2(c.loss == p.loss, row);
            QVERIFY2(c.finetune.layerCheckpoint == p.checkpoint, row);
            QVERIFY2(!c.finetune.kbitPrep, row); // predict(): no stack here calls prepare_model_for_kbit_training
            QVERIFY2(!p.lora.active() || c.finetune.lora.dtype == p.lora.dtype, row); // full fine-tuning: no adapters
            QVERIFY2(c.finetune.doubleQuant == p.doubleQuant, row);
            QVERIFY2(c.modelCode == (p.stack == Stack::Litgpt ? ModelCode::Litgpt : ModelCode::Transformers), row);
            QVERIFY2(c.bnbKeepsMatmulInput == (p.stack == Stack::Litgpt), row); // Answer.AI's: the row's own
            QVERIFY2(c.fsdpOrigParams == (p.stack == Stack::Litgpt) && c.fsdpNoSync == c.fsdpOrigParams, row);
        }
    }

    // The configs' parameter totals against the published ones (model cards / safetensors index).
    void parameterTotals_data()
    {
        QTest::addColumn<QString>("config");
        QTest::addColumn<qint64>("params");
        QTest::newRow("Llama-2-7b") << "meta-llama--Llama-2-7b-hf" << qint64(6738415616);
        QTest::newRow("Llama-2-13b") << "meta-llama--Llama-2-13b-hf" << qint64(13015864320);
        QTest::newRow("Llama-2-70b") << "meta-llama--Llama-2-70b-hf" << qint64(68976648192);
        QTest::newRow("Yi-34B") << "01-ai--Yi-34B" << qint64(34388917248);
        QTest::newRow("gemma-2b") << "google--gemma-2b" << qint64(2506172416); // tied embeddings counted once
        QTest::newRow("gemma-7b") << "google--gemma-7b" << qint64(8537680896);
        QTest::newRow("TinyLlama-1.1B") << "TinyLlama--TinyLlama-1.1B-intermediate-step-1431k-3T" << qint64(1100048384);
        QTest::newRow("phi-2") << "microsoft--phi-2.litgpt" << qint64(2779683840);
        // the Hub's 41.8 B stores lm_head.weight apart from the tied embedding (65024 x 8192), as falcon-7b's 7.22 B
        QTest::newRow("falcon-40b") << "tiiuae--falcon-40b" << qint64(41303293952);
        QTest::newRow("Mistral-7B-v0.1") << "mistralai--Mistral-7B-v0.1" << qint64(7241732096);
        QTest::newRow("Mistral-7B-v0.2") << "mistral-community--Mistral-7B-v0.2" << qint64(7241732096);
        // PEFT's result file: num_total_params (tied embeddings counted once)
        QTest::newRow("Meta-Llama-3-8B") << "meta-llama--Meta-Llama-3-8B" << qint64(8030261248);
        QTest::newRow("Llama-3.2-3B") << "meta-llama--Llama-3.2-3B" << qint64(3212749824);
        // reconstructed configs (tests/data/external/README.md), against the Hub's totals
        QTest::newRow("Llama-3.2-1B") << "meta-llama--Llama-3.2-1B" << qint64(1235814400);
        QTest::newRow("gemma-2-9b") << "google--gemma-2-9b" << qint64(9241705984);
        QTest::newRow("Phi-3-mini-4k") << "microsoft--Phi-3-mini-4k-instruct" << qint64(3821079552);
    }
    void parameterTotals()
    {
        QFETCH(QString, config);
        QFETCH(qint64, params);
        const Model m = loadModel(dataDir() + config.toStdString() + ".json");
        QCOMPARE(m.params.trainable, int64_t(params));
    }

    void published_data()
    {
        QTest::addColumn<int>("index");
        for (size_t i = 0; i < points().size(); ++i)
            QTest::newRow(points()[i].id) << static_cast<int>(i);
    }
    void published()
    {
        QFETCH(int, index);
        const Point& p = points()[static_cast<size_t>(index)];
        const nlohmann::json& rec = records().at(p.id);
        const Predicted got = predict(p);
        auto gap = kExpectedFailures.find(p.id);
        // the adapters' size, where the source printed it ("2,097,152"): the LoRA spec and the targets agree
        const nlohmann::json& method = rec["method"];
        if ((p.lora.active() || !p.freeze.empty()) && method.is_object() && method.contains("trainable_params") &&
            method["trainable_params"].is_string()) {
            std::string digits;
            for (char ch : method["trainable_params"].get<std::string>())
                if (ch >= '0' && ch <= '9')
                    digits += ch;
            if (!digits.empty())
                QCOMPARE(got.trainable, std::stoll(digits));
        }
        if (p.stat == Stat::Oom) {
            if (printTable())
                std::printf("| %s | OOM on %s | out of memory | %s |  |\n", p.id, p.gpu,
                            got.fitsSafely ? "fits (false)" : "does not fit");
            if (gap != kExpectedFailures.end())
                QEXPECT_FAIL("", gap->second, Continue);
            QVERIFY2(!got.fitsSafely, "the run ran out of memory: the verdict must not be \"fits\"");
            return;
        }
        // The run ran on that GPU: the verdict says it fits (Answer.AI's Mistral at 24,576 tokens reserved the
        // 4090 to its capacity, 22.54 GiB, where the allocator gave its cache back: GpuShare::reservedAtCapacity).
        if (findGpu(p.gpu))
            QVERIFY2(got.fits, qPrintable(QStringLiteral("%1 ran on %2: \"does not fit\"").arg(p.id, p.gpu)));
        const double want = measuredBytes(rec);
        QVERIFY(want > 0);
        const double err = 100.0 * (static_cast<double>(got.bytes) - want) / want;
        const std::string figureUnit = rec["figures"][0]["unit"].get<std::string>();
        const bool gb = figureUnit == "GB" || figureUnit == "B"; // bytes are shown in GB
        const double unit = gb ? 1e9 : 1073741824.0;
        // At capacity the statistic is a range, not one figure: where the first failed cudaMalloc comes decides
        // it (GpuShare::reservedAtCapacityLow). A run inside it is what the allocator's rule allows.
        const bool inRange = got.low > 0 && want >= static_cast<double>(got.low) &&
                             want <= static_cast<double>(got.bytes);
        if (printTable()) {
            const std::string range =
                got.low > 0 ? QStringLiteral("%1-").arg(static_cast<double>(got.low) / unit, 0, 'f', 2).toStdString()
                            : std::string();
            std::printf("| %s | %s | %.2f %s | %s%.2f %s | %+.1f %%%s%s |\n", p.id, statName(p.stat), want / unit,
                        gb ? "GB" : "GiB", range.c_str(), static_cast<double>(got.bytes) / unit, gb ? "GB" : "GiB", err,
                        got.low > 0 ? (inRange ? " of the top, in the range" : " of the top, outside the range") : "",
                        gap != kExpectedFailures.end() ? " (expected failure)" : "");
        }
        const bool hf = p.stack == Stack::HF;
        const bool within = inRange || (hf ? err >= -5.0 && err <= 10.0 : std::fabs(err) <= 15.0);
        if (gap != kExpectedFailures.end())
            QEXPECT_FAIL("", gap->second, Continue);
        QVERIFY2(within, qPrintable(QStringLiteral("%1: %2 %3 off by %4 % (accepted: %5)")
                                        .arg(p.id, statName(p.stat))
                                        .arg(static_cast<double>(got.bytes) / unit, 0, 'f', 2)
                                        .arg(err, 0, 'f', 1)
                                        .arg(hf ? "[-5 %, +10 %]" : "+-15 %")));
    }
};

QTEST_APPLESS_MAIN(TestPublished)
#include "tst_published.moc"
