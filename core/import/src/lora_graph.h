#pragma once
// Private to the loader: the LoRA rewrite of a parsed ONNX graph.
#include "headroom/base/finetune.h"

#include <string>

namespace onnx {
class ModelProto;
}

namespace headroom::detail {

// Wraps each targeted Linear (a MatMul with a stored weight, named like a PyTorch module path) the way
// PEFT's lora.Linear does: adapters become children of the Linear's module in the layer tree. Throws
// Error("<file>: ...") when no Linear matches or the targets cannot be resolved.
void applyLora(onnx::ModelProto& model, const LoraSpec& spec, const std::string& file);

} // namespace headroom::detail
