#pragma once
#include "headroom/base/format.h"
#include "headroom/memory/engine.h"

#include <optional>
#include <string>
#include <vector>

namespace headroom {

// One piece of advice: a changed configuration and its measured saving (by re-evaluation, never asserted).
struct Advice
{
    enum class Kind : uint8_t { Batch, Dtype, Checkpoint, Accumulate, Inplace, Freeze, ZeroStage, Gpu0Batch };
    Kind kind;
    std::string summary; // "bf16", "4 checkpoint segments", "batch 48" (English; the GUI translates by kind)
    Config changed;      // the configuration that realises it
    int64_t needBefore = 0;
    int64_t needAfter = 0;
    int64_t saving() const { return needBefore - needAfter; }
    bool fitsAfter = false;
    // Freeze: the first `count` of `of` numbered blocks, named "layers.0 to layers.15" (the GUI's words need them)
    int64_t count = 0, of = 0;
    std::string names;
};

// One tip as every surface prints it: "bf16 (−285 GiB, still does not fit)", "batch 278 (−2.10 GiB, fits)"
// (the CLI's Try: line; the banner says the same words through tr()).
std::string adviceText(const Advice& advice, Units units = Units::IEC);

// The advice that reduces the need, biggest saving first; only changes that save memory.
std::vector<Advice> advise(const Model& model, const Config& config, int maxItems = 6);

// What a report has already computed for `config`, so that advise() does not compute it again (each is
// used only where it is what advise() would compute itself).
struct AdviceInputs
{
    const EnginePlan* plan = nullptr;                              // makePlan(model, config)
    const std::vector<CheckpointPoint>* checkpointCurve = nullptr; // checkpointCurve(model, config, 16)
    std::optional<int64_t> need;                                   // computeFit(...).needed on one GPU
    std::optional<bool> fits;                                      // computeFit(...).fitsSafely on one GPU
};
std::vector<Advice> advise(const Model& model, const Config& config, const AdviceInputs& known, int maxItems = 6);

} // namespace headroom
