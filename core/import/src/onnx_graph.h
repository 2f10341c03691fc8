#pragma once
// Internal: ModelProto -> Model + ShapeGraph.
#include "headroom/import/shape_graph.h"
#include "import_internal.h"

#include <atomic>
#include <map>
#include <set>

namespace onnx {
class ModelProto;
class FunctionProto;
} // namespace onnx

namespace headroom::detail {

struct ImportContext
{
    std::string folder; // model's folder; empty for bytes in memory
    const std::atomic<bool>* cancel = nullptr;
    std::map<std::pair<std::string, std::string>, const onnx::FunctionProto*> functions;
    std::set<std::string> checkedLocations;
    bool externalMissing = false;
    int64_t storedCount = 0, storedWithData = 0;
    std::vector<int> symbolAxis;
    bool cancelled() const { return cancel && cancel->load(std::memory_order_relaxed); }
};

void importGraph(const onnx::ModelProto& mp, const std::string& file, ImportContext& ctx, Model& m, ShapeGraph& g);

} // namespace headroom::detail
