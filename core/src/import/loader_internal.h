#pragma once
// Shared between the loader's source files; not a public contract.
#include "headroom/import/model.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace onnx {
class NodeProto;
}

namespace headroom::detail {

std::string sha256Hex(std::string_view bytes);

// What the shape evaluator needs about the graph, kept by the oracle after load (independent of Model).
struct InputDim {
    int symbol = -1;   // >= 0: the dim is this symbol
    int64_t value = 0; // otherwise fixed
};

struct ShapeGraph {
    int opset = 13;                                   // ai.onnx version
    std::vector<Node> nodes;                          // topological, like Model::nodes
    std::vector<DType> dtype;                         // per tensor (Undefined: computed by evaluation)
    std::vector<char> isInput, isStored, inputHasShape;
    std::vector<std::vector<InputDim>> inputDims;     // graph inputs
    std::vector<std::vector<int64_t>> storedDims;     // stored tensors (initializers, Constant outputs)
    std::vector<std::optional<std::vector<int64_t>>> storedValue; // small integer stored tensors
    std::vector<std::optional<std::vector<int64_t>>> declaredDims; // fully static value_info, a last resort
    // value_info whose dims are expressions of the symbols ("batch*seq", "seq + 1"): fills what inference
    // cannot, and is checked against it (a disagreement is a warning; inference wins).
    std::vector<std::optional<std::vector<DimFormula>>> declaredFormula;
    std::vector<std::shared_ptr<const onnx::NodeProto>> fallback; // per node: proto for ONNX's inference
    std::vector<std::pair<std::string, int64_t>> opsets;
};

// One evaluation of every tensor's dims at concrete symbol values.
struct EvalResult {
    std::vector<std::vector<int64_t>> dims; // -1 entries: unknown dim
    std::vector<char> known;                // rank and every dim known
    std::vector<int> cause;                 // node that made the tensor unknown
    std::vector<std::string> reason;        // per node: why its outputs are unknown ("" if fine)
    std::vector<DType> dtype;
    std::vector<int> disagree;              // tensors whose inferred dims differ from the file's value_info
    std::vector<int> declaredUsed;          // tensors sized from the file's value_info alone
};

EvalResult evaluateGraph(const ShapeGraph& g, const Bindings& values);
bool hasShapeRule(std::string_view op, std::string_view domain);

// Fits every tensor's dims as DimExprs, sets Model::tensors[i].shape, Model::oracle, warnings.
void fitShapes(Model& model, std::shared_ptr<ShapeGraph> graph);

void classifyTensors(Model& model);
// Node::module for nodes the metadata did not name, from the parameters they consume (after classify).
void assignModules(Model& model);
// "model.layers.3.self_attn" -> {"model", "layers.3", "self_attn"}: the layer tree's levels.
std::vector<std::string> modulePathParts(const std::string& dotted);
void buildLayerTree(Model& model);

} // namespace headroom::detail
