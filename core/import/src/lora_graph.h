#pragma once
// Private to the loader: the LoRA rewrite of a parsed ONNX graph.
#include "headroom/base/finetune.h"

#include <string>
#include <vector>

namespace onnx {
class GraphProto;
class ModelProto;
class TensorProto;
} // namespace onnx

namespace headroom::detail {

// Wraps each targeted Linear (a MatMul with a stored weight, named like a PyTorch module path) the way
// PEFT's lora.Linear does: adapters become children of the Linear's module in the layer tree. Throws
// Error("<file>: ...") when no Linear matches or the targets cannot be resolved.
void applyLora(onnx::ModelProto& model, const LoraSpec& spec, const std::string& file);
// IA3 (peft/tuners/ia3): each targeted Linear's output, or for the feedforward modules its input, times a
// trained vector (ia3_graph.cpp). Throws Error("<file>: ...") as applyLora does.
void applyIa3(onnx::ModelProto& model, const LoraSpec& spec, const std::string& file);

// Shared by the two rewrites.
// "/model/layers.0/self_attn/q_proj/MatMul" -> "model.layers.0.self_attn.q_proj"; "" for unscoped names.
std::string moduleOf(const std::string& nodeName);
// PEFT's check_target_module_exists for a list: the key equals the module name or is its last dotted part(s).
bool matches(const std::string& module, const std::vector<std::string>& targets);
// A new external initializer for an adapter parameter (stored as fp32: precision.cpp sizes it per spec).
onnx::TensorProto* stored(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims);
// The metadata's model_type ("" when absent).
std::string modelTypeOf(const onnx::ModelProto& model);
// A Linear: MatMul(x, W) with W stored as [in, out], or as W^T through a Transpose (tied heads, exports).
struct Linear
{
    int in = 0; // the MatMul's node index
    int64_t inDim = 0, outDim = 0;
    std::string module;
    int dtype = 1; // onnx::TensorProto::FLOAT
};
// The Linears whose module matches `targets` ({"all-linear"}: every one but the output layer), in graph order.
std::vector<Linear> findLinears(const onnx::GraphProto& g, const std::vector<std::string>& targets, bool ossRouter);
} // namespace headroom::detail
