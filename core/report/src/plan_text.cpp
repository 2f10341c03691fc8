// The plan that makes a configuration fit, in words: the one English sentence every output prints (the CLI
// table, the JSON's plan.text; the GUI's banner, Breakdown and PDF say the same words through tr(), by step
// kind, and tst_onereport holds the two equal).
#include "headroom/report/fitplan.h"

#include "headroom/base/format.h"

#include <regex>

namespace headroom {
namespace {

// 4480 -> "4,480", as the GUI's English locale groups it.
std::string grouped(int64_t v)
{
    std::string digits = std::to_string(v < 0 ? -v : v), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return v < 0 ? "-" + out : out;
}

} // namespace

std::string shortGpuName(const std::string& preset)
{
    static const std::regex kSizeSuffix(R"(\s+\d+\s*GB$)");
    return std::regex_replace(preset, kSizeSuffix, "");
}

std::string shardName(std::string_view strategy)
{
    return strategy == "zero3" ? "ZeRO-3" : strategy == "fsdp" ? "FSDP (full shard)" : std::string(strategy);
}

std::string planStepText(const PlanStep& s, Strategy strategy)
{
    using K = PlanStep::Kind;
    switch (s.kind) {
    case K::PagedOptimizer: return "paged AdamW";
    case K::Accumulate: {
        const int64_t steps = s.value > 0 ? s.value : 1;
        return "micro-batch " + std::to_string(s.microBatch) + " × " + std::to_string(steps) + " accumulation steps";
    }
    case K::LayerCheckpoint: return "per-layer checkpointing";
    case K::Segments: return std::to_string(s.value) + " checkpoint segments";
    case K::Shard: return "shard across the GPUs (" + shardName(s.name) + ")";
    case K::Optimizer8bit: return "8-bit optimizer state (" + s.name + ")";
    case K::Bf16: return "pure bf16";
    case K::Lora:
        return s.name == "lora-all-linear"
                   ? "LoRA adapters (r " + std::to_string(s.value) +
                         ", every linear layer: PEFT has no default targets for the model) instead of full fine-tuning"
                   : "LoRA adapters (r " + std::to_string(s.value) + ", PEFT defaults) instead of full fine-tuning";
    case K::QLora: return "QLoRA: 4-bit NF4 base weights";
    case K::Offload: return "CPU offload";
    case K::ShorterSequence: return "sequence length " + grouped(s.value);
    case K::SmallerBatch: return "batch " + std::to_string(s.value);
    case K::MoreGpus:
        return std::to_string(s.value) + " × " + shortGpuName(s.name) + " (" +
               (strategy == Strategy::ZeRO3 ? "ZeRO-3" : "FSDP") + ")";
    case K::LargerGpu: return "a larger GPU (" + s.name + ")";
    }
    return s.summary;
}

std::string planText(const FitPlan& p, Units units)
{
    if (p.fitsBefore || p.capacity <= 0)
        return {};
    if (p.steps.empty())
        return "No change Headroom knows of makes it fit.";
    std::string chain;
    for (const PlanStep& s : p.steps) {
        if (!chain.empty())
            chain += " + ";
        chain += planStepText(s, p.config.strategy);
        if (s.kind != PlanStep::Kind::LargerGpu) // taken for its capacity, not for a saving
            chain += " (−" + formatBytes(s.saving, units) + ")";
    }
    const std::string need = formatBytes(p.needAfter, units);
    if (!p.fits)
        return "Closest plan, still too big: " + chain + " → needs " + need + ".";
    const std::string spare = formatBytes(p.capacity - p.needAfter, units);
    if (!p.sameGpu)
        return "Nothing on this GPU makes it fit: with " + chain + " → needs " + need + ", " + spare + " to spare.";
    return "To fit: " + chain + " → needs " + need + ", " + spare + " to spare.";
}

} // namespace headroom
