#pragma once
// Import's entry points for the loader (load/): ONNX bytes -> Model and the graph the shape stage fits;
// after the shapes, the layer tree.
#include "headroom/base/finetune.h"
#include "headroom/import/model.h"
#include "headroom/import/shape_graph.h"

#include <atomic>
#include <climits>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace headroom {

struct LoadOptions
{
    // Symbol values known before load (CLI --batch/--set); others get defaults. Unknown names: warning.
    std::vector<std::pair<std::string, int64_t>> symbolValues;
    // Progress 0..1 and cancellation for the GUI's loader thread; both optional.
    std::function<void(double fraction, std::string_view stage)> progress;
    const std::atomic<bool>* cancel = nullptr;
    // LoRA adapters inserted into the graph before import (r = 0: none); freeze with loraFreezePatterns().
    LoraSpec lora;
};

// The same model with LoRA adapters inserted (PEFT's defaults for its type), for the fit plan's "full
// fine-tuning -> LoRA" step: the rewrite happens at load, so the caller that knows the file supplies it, on
// demand (the plan asks only when full fine-tuning does not fit). model is null where LoRA does not apply.
struct LoraVariant
{
    std::shared_ptr<const Model> model;
    LoraSpec spec;
};
using LoraVariantSource = std::function<LoraVariant()>;

namespace detail {

constexpr int64_t kMaxOnnxBytes = int64_t(INT_MAX); // protobuf cannot parse one message beyond 2 GiB

inline void reportProgress(const LoadOptions& o, double fraction, std::string_view stage)
{
    if (o.progress)
        o.progress(fraction, stage);
}

struct ImportedModel
{
    Model model;                       // shapes not fitted yet
    std::shared_ptr<ShapeGraph> graph; // what shapes/ fits
};
// Parses `bytes` (an ONNX ModelProto), applies LoRA, imports nodes and tensors, names symbols, classifies
// tensors and assigns module paths. Throws headroom::Error("<file>: ..."). `identity`: the bytes of the file
// the user opened, whose SHA-256 and size the model carries (ModelInfo): a config.json's text, where `bytes`
// is the graph built from it; empty: `bytes` themselves.
ImportedModel importModel(std::string_view bytes, const std::string& file, const std::string& folder,
                          const LoadOptions& options, std::string_view identity = {});

// The layer tree from module paths (after the shapes are fitted: shape computations are found by size).
void buildLayerTree(Model& model);

} // namespace detail
} // namespace headroom
