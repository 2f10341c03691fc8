#pragma once
// The graph as the shape stage reads it: built by import (onnx_graph.cpp), fitted by shapes (shape_fit.cpp),
// kept by the model's ShapeOracle after load.
#include "headroom/import/model.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace onnx {
class NodeProto;
}

namespace headroom::detail {

// What the shape evaluator needs about the graph, kept by the oracle after load (independent of Model).
struct InputDim
{
    int symbol = -1;   // >= 0: the dim is this symbol
    int64_t value = 0; // otherwise fixed
};

struct ShapeGraph
{
    int opset = 13;           // ai.onnx version
    std::vector<Node> nodes;  // topological, like Model::nodes
    std::vector<DType> dtype; // per tensor (Undefined: computed by evaluation)
    std::vector<char> isInput, isStored, inputHasShape;
    std::vector<std::vector<InputDim>> inputDims;                  // graph inputs
    std::vector<std::vector<int64_t>> storedDims;                  // stored tensors (initializers, Constant outputs)
    std::vector<std::optional<std::vector<int64_t>>> storedValue;  // small integer stored tensors
    std::vector<std::optional<std::vector<int64_t>>> declaredDims; // fully static value_info, a last resort
    // value_info whose dims are expressions of the symbols ("batch*seq", "seq + 1"): fills what inference
    // cannot, and is checked against it (a disagreement is a warning; inference wins).
    std::vector<std::optional<std::vector<DimFormula>>> declaredFormula;
    std::vector<std::shared_ptr<const onnx::NodeProto>> fallback; // per node: proto for ONNX's inference
    std::vector<std::pair<std::string, int64_t>> opsets;
};

} // namespace headroom::detail
