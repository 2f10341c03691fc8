// ModelProto -> Model: tensors, nodes in topological order, symbols, stored tensors (never their bytes),
// model-local functions inlined, If/Loop/Scan bodies folded into their parent node. The steps and the files
// that hold them: onnx_graph_builder.h.
#include "onnx_graph_builder.h"
#include "onnx_parse.h"

#include <algorithm>

namespace headroom::detail {

void GraphBuilder::build(const onnx::GraphProto& gp)
{
    for (const onnx::NodeProto& n : gp.node())
        expand(n, 0);
    if (ctx.cancelled())
        fail("cancelled");
    addStoredTensors(gp);
    const InputInfos inputInfos = addGraphInputs(gp);
    std::vector<Node> nodes = nodesWithOutputs();
    wireNodeInputs(nodes);
    warnDangling(nodes);
    sortAndWire(nodes);
    addGraphOutputs(gp);
    aliasStoredIdentities();
    if (g)
        fillShapeGraph(gp, inputInfos);
}

std::string GraphBuilder::displayName(const onnx::NodeProto& np, size_t ni) const
{
    return np.name().empty() ? np.op_type() + "_" + std::to_string(ni) : np.name();
}

void importGraph(const onnx::ModelProto& mp, const std::string& file, ImportContext& ctx, Model& m, ShapeGraph& g)
{
    for (const onnx::FunctionProto& f : mp.functions())
        ctx.functions[{normDomain(f.domain()), f.name()}] = &f;
    GraphBuilder b(file, ctx, m, &g, 0);
    b.build(mp.graph());
    ctx.symbolAxis = b.symbolAxes();
    g.opsets = m.info.opsets;
    for (const auto& [d, v] : m.info.opsets)
        if (d.empty())
            g.opset = static_cast<int>(std::clamp<int64_t>(v, 1, 100));
}

} // namespace headroom::detail
