#pragma once
// Internal: one GraphProto -> Model (+ the ShapeGraph for the top level). The steps, in the order build() runs
// them, and the file that holds each:
//   1. flatten the nodes, inlining model-local functions           onnx_functions.cpp
//   2. stored tensors: initializers and sparse ones, external data  onnx_stored.cpp
//   3. graph inputs, node outputs (a Constant's value is stored),   onnx_wiring.cpp
//      node inputs; If/Loop/Scan bodies, built by a nested          onnx_subgraphs.cpp
//      GraphBuilder, are folded into their parent node
//   4. dangling names, topological order, graph outputs            onnx_wiring.cpp
//   5. Identity outputs of stored tensors alias them               onnx_stored.cpp
//   6. symbols and declared shapes: the shape stage's view         onnx_symbols.cpp
// Proto fields are read by the free functions of onnx_parse.h; build() and importGraph are in onnx_graph.cpp.
#include "onnx_graph.h"

#include "headroom/base/error.h"

#include <onnx/onnx_pb.h>

#include <deque>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace headroom::detail {

inline constexpr int kMaxDepth = 16; // nested functions / subgraphs: deeper is hostile input

// What import keeps of a stored tensor (initializer, Constant value): never its bytes.
struct StoredTensor
{
    std::vector<int64_t> dims;
    int64_t numel = 1;
    DType dtype = DType::Undefined;
    bool external = false;
    bool hasData = false;
    std::optional<std::vector<int64_t>> value;
};

class GraphBuilder
{
public:
    GraphBuilder(const std::string& f, ImportContext& c, Model& model, ShapeGraph* sg, int d)
        : file(f), ctx(c), m(model), g(sg), depth(d)
    {
    }
    void build(const onnx::GraphProto& gp);
    const std::vector<int>& symbolAxes() const { return symbolAxis; }

private:
    using InputInfos = std::vector<std::pair<int, const onnx::ValueInfoProto*>>;

    void warn(std::string s) { m.warnings.push_back(file + ": " + std::move(s)); }
    [[noreturn]] void fail(const std::string& s) const { throw Error(file + ": " + s); }
    std::string displayName(const onnx::NodeProto& np, size_t ni) const;
    int newTensor(const std::string& name, TensorRole role)
    {
        Tensor t;
        t.name = name;
        t.role = role;
        m.tensors.push_back(std::move(t));
        const int idx = static_cast<int>(m.tensors.size() - 1);
        byName.emplace(name, idx);
        return idx;
    }

    // onnx_functions.cpp
    void expand(const onnx::NodeProto& node, int level);

    // onnx_stored.cpp
    void addStoredTensors(const onnx::GraphProto& gp);
    StoredTensor storeTensor(const onnx::TensorProto& t, const std::string& what);
    void checkExternal(const std::string& loc, const std::string& tensor);
    void addStored(int idx, const StoredTensor& s, bool initializer = true);
    void constantNode(const onnx::NodeProto& np, Node& n, size_t ni);
    void aliasStoredIdentities();

    // onnx_wiring.cpp
    InputInfos addGraphInputs(const onnx::GraphProto& gp);
    std::vector<Node> nodesWithOutputs();
    void wireNodeInputs(std::vector<Node>& nodes);
    void warnDangling(const std::vector<Node>& nodes);
    void sortAndWire(std::vector<Node>& nodes);
    void addGraphOutputs(const onnx::GraphProto& gp);

    // onnx_subgraphs.cpp
    void subgraphs(const onnx::NodeProto& np, Node& n, size_t ni);

    // onnx_symbols.cpp
    void fillShapeGraph(const onnx::GraphProto& gp, const InputInfos& inputInfos);
    void inputSymbols(const InputInfos& inputInfos);
    void declaredShapes(const onnx::GraphProto& gp);

    const std::string& file;
    ImportContext& ctx;
    Model& m;
    ShapeGraph* g; // null for subgraph bodies
    int depth;
    std::unordered_map<std::string, int> byName;
    std::deque<onnx::NodeProto> owned; // inlined function bodies
    std::vector<const onnx::NodeProto*> flat;
    std::vector<std::vector<int>> implicitInputs; // per flat node: outer-scope tensors its bodies read
    int inlineCounter = 0;
    std::unordered_map<int, StoredTensor> stored;
    std::vector<std::pair<int, size_t>> bodyStored; // tensor, flat node
    std::vector<int> danglingTensors;
    std::vector<size_t> order;   // sorted position -> flat index
    std::vector<int> symbolAxis; // per symbol: the axis where it first appears
};

} // namespace headroom::detail
