#pragma once
#include <string>

namespace headroom {

// Serialized ONNX bytes of a GPT-style decoder built with the ONNX protobuf API, shaped like a PyTorch
// export: symbolic batch/seq inputs, token + position embeddings, per layer LayerNormalization, fused QKV
// MatMul, head Reshapes whose targets are computed at run time with Shape/Gather/Unsqueeze/Concat,
// Softmax attention, an Erf-based Gelu MLP and residual Adds; a tied LM head. Weights are external
// (dims and dtype only). About 90 nodes per layer: 120 layers give > 10,000 nodes. For benchmarks/tests.
std::string makeSyntheticTransformer(int layers, int hidden, int heads, int vocab);

} // namespace headroom
