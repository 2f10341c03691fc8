#pragma once
#include "headroom/finetune/finetune.h"
#include "headroom/import/model.h"

#include <atomic>
#include <functional>
#include <string>

namespace headroom {

struct LoadOptions {
    // Symbol values known before load (CLI --batch/--set); others get defaults. Unknown names: warning.
    std::vector<std::pair<std::string, int64_t>> symbolValues;
    // Progress 0..1 and cancellation for the GUI's loader thread; both optional.
    std::function<void(double fraction, std::string_view stage)> progress;
    const std::atomic<bool>* cancel = nullptr;
    // LoRA adapters inserted into the graph before import (r = 0: none); freeze with loraFreezePatterns().
    LoraSpec lora;
};

// Loads any .onnx file. Throws headroom::Error with one line "<file>: <problem>" when the file cannot be
// used; everything recoverable becomes a warning in Model::warnings. Never reads external weight bytes.
Model loadModel(const std::string& path, const LoadOptions& options = {});
// Same, from bytes in memory (fuzzer, tests); `displayName` names the source in messages.
Model loadModelFromBytes(std::string_view bytes, const std::string& displayName, const LoadOptions& options = {});

} // namespace headroom
