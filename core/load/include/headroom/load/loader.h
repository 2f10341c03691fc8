#pragma once
// The stages in order: import (parse, classify), shapes (fit every dim), the layer tree.
#include "headroom/import/import.h"

#include <string>
#include <string_view>

namespace headroom {

// Loads any .onnx file. Throws headroom::Error with one line "<file>: <problem>" when the file cannot be
// used; everything recoverable becomes a warning in Model::warnings. Never reads external weight bytes.
Model loadModel(const std::string& path, const LoadOptions& options = {});
// Same, from bytes in memory (fuzzer, tests); `displayName` names the source in messages.
Model loadModelFromBytes(std::string_view bytes, const std::string& displayName, const LoadOptions& options = {});

// `path` loaded again with PEFT's LoraConfig() defaults (r 8, alpha 8, the model type's default targets) the
// first time the source is called, then kept; thread-safe. `options` are the first load's (symbol values);
// a model with no Linear that PEFT targets gives a null model.
LoraVariantSource peftDefaultLoraVariant(const std::string& path, const LoadOptions& options);

} // namespace headroom
