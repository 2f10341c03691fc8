#pragma once
#include <string>

namespace headroom {

// Serialized ONNX bytes of a GPT-style decoder built with the ONNX protobuf API, shaped like a PyTorch
// export: symbolic batch/seq inputs, token + position embeddings, per layer LayerNormalization, fused QKV
// MatMul, head Reshapes whose targets are computed at run time with Shape/Gather/Unsqueeze/Concat,
// Softmax attention, an Erf-based Gelu MLP and residual Adds; a tied LM head. Weights are external
// (dims and dtype only). 86 nodes per layer + 12: 116 layers give 9,988 nodes. For benchmarks/tests.
std::string makeSyntheticTransformer(int layers, int hidden, int heads, int vocab);

// Serialized ONNX bytes of a deep residual chain (issue 16): input x [batch, seq, width], then per block
// MatMul (width x width) -> Add (bias) -> Relu -> residual Add, 4 nodes a block, weights external and absent
// (dims and dtype only). 25,000 blocks give 100,000 nodes. For the scale benchmark.
std::string makeSyntheticChain(int blocks, int width);

// The block / layer counts that give about `nodes` nodes (chain: exactly 4 a block; transformer: 86 a layer + 12).
int syntheticChainBlocksFor(int nodes);
int syntheticTransformerLayersFor(int nodes);

} // namespace headroom
