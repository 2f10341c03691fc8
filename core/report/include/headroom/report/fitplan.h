#pragma once
#include "headroom/base/format.h"
#include "headroom/import/import.h"
#include "headroom/memory/engine.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace headroom {

// One change of a plan that makes a configuration fit. Kinds are listed in the order the search tries them,
// which is the order of what a user gives up: nothing but a little speed first (paged optimizer, accumulation,
// recomputation, sharding), then numerical quality (8-bit optimizer state, pure bf16, 4-bit base weights),
// then the task itself (a shorter sequence; for inference a smaller batch), then hardware (more GPUs, a larger one).
struct PlanStep
{
    enum class Kind : uint8_t {
        PagedOptimizer,
        Accumulate,
        LayerCheckpoint,
        Segments,
        Shard,
        Optimizer8bit,
        Bf16,
        Lora,
        QLora,
        Offload,
        ShorterSequence,
        SmallerBatch,
        MoreGpus,
        LargerGpu
    };
    Kind kind = Kind::PagedOptimizer;
    std::string summary;    // English, planStepText's ("per-layer checkpointing", "sequence length 4,864"); the GUI
                            // translates by kind
    int64_t value = 0;      // segments, accumulation steps, sequence length, GPU count
    int64_t microBatch = 0; // Accumulate: the batch of one accumulation step
    std::string name;       // the optimizer, strategy or GPU the step switches to
    int64_t needAfter = 0;  // the need with this step and every step before it
    int64_t saving = 0;     // the need before this step minus needAfter (re-evaluated, never a rule of thumb)
};

// The cheapest plan the search finds: greedy in PlanStep::Kind order until the need fits, then every step the
// fit does not need dropped. A step that saves nothing at its turn is not taken.
struct FitPlan
{
    int64_t needBefore = 0;
    int64_t needAfter = 0; // with every step applied
    int64_t capacity = 0;  // usable bytes of the plan's GPU (capacity - margin)
    bool fitsBefore = false;
    bool fits = false;           // false: nothing the search knows fits; steps then hold the closest it came
    bool sameGpu = true;         // false: the last step is more GPUs or a larger GPU
    std::vector<PlanStep> steps; // empty when it fits already
    Config config;               // the configuration with every step applied
};

// Searches a plan for `config` (one GPU or config.gpus under its strategy). `known` is the plan a report
// already holds for `config` (or null). `lora` supplies the model with PEFT's default adapters for the
// "full fine-tuning -> LoRA" step (null or a null model: no such step).
FitPlan planToFit(const Model& model, const Config& config, const EnginePlan* known = nullptr,
                  const LoraVariantSource* lora = nullptr);

// The plan in words, one English sentence every output prints (plan_text.cpp): "To fit: per-layer
// checkpointing (−9.28 GiB) → needs 19.9 GiB, 3.70 GiB to spare."; where only more or larger GPUs fit it says
// so; empty when it fits already or there is no GPU to fit. The GUI says the same words through tr().
std::string planText(const FitPlan& plan, Units units = Units::IEC);
// One step: "per-layer checkpointing", "sequence length 4,480", "2 × GeForce RTX 4090 (FSDP)";
// `strategy` is the plan's (the more-GPUs step names it).
std::string planStepText(const PlanStep& step, Strategy strategy);
// "ZeRO-3", "FSDP (full shard)" for a plan step's strategy name ("zero3", "fsdp").
std::string shardName(std::string_view strategy);
// "GeForce RTX 4090 24 GB" -> "GeForce RTX 4090": the preset without its size, as a plan names it.
std::string shortGpuName(const std::string& preset);

// "layer_checkpoint", "qlora", "shorter_sequence", ...: the kind's name in JSON.
std::string_view toString(PlanStep::Kind kind) noexcept;
// The JSON "plan" object (docs/DESIGN.md "Machine-readable output"): fits_before, fits_after, needed_before,
// needed_after, capacity, same_gpu and the steps, each with its kind, summary, value, name, saving and the
// need after it.
nlohmann::json toJson(const FitPlan& plan);

} // namespace headroom
