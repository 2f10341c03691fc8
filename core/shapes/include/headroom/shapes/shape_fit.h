#pragma once
// The shape stage's entry points for the loader: evaluate the imported graph at concrete symbol values, and
// fit every tensor's dims as polynomials of the symbols.
#include "headroom/import/shape_graph.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace headroom::detail {

// One evaluation of every tensor's dims at concrete symbol values.
struct EvalResult
{
    std::vector<std::vector<int64_t>> dims; // -1 entries: unknown dim
    std::vector<char> known;                // rank and every dim known
    std::vector<int> cause;                 // node that made the tensor unknown
    std::vector<std::string> reason;        // per node: why its outputs are unknown ("" if fine)
    std::vector<DType> dtype;
    std::vector<int> disagree;     // tensors whose inferred dims differ from the file's value_info
    std::vector<int> declaredUsed; // tensors sized from the file's value_info alone
};

EvalResult evaluateGraph(const ShapeGraph& g, const Bindings& values);
bool hasShapeRule(std::string_view op, std::string_view domain);

// Fits every tensor's dims as DimExprs, sets Model::tensors[i].shape, Model::oracle, warnings.
void fitShapes(Model& model, std::shared_ptr<ShapeGraph> graph);

} // namespace headroom::detail
