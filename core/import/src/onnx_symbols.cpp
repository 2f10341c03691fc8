// The shape stage's view of the top-level graph: the ShapeGraph, the symbols of the inputs' dynamic dims,
// and the shapes the file declares (value_info, graph outputs).
#include "onnx_graph_builder.h"

#include <map>

namespace headroom::detail {

void GraphBuilder::fillShapeGraph(const onnx::GraphProto& gp, const InputInfos& inputInfos)
{
    const size_t nt = m.tensors.size();
    g->nodes = m.nodes;
    g->dtype.resize(nt);
    g->isInput.assign(nt, 0);
    g->isStored.assign(nt, 0);
    g->inputHasShape.assign(nt, 0);
    g->inputDims.resize(nt);
    g->storedDims.resize(nt);
    g->storedValue.resize(nt);
    g->declaredDims.resize(nt);
    g->fallback.resize(m.nodes.size());
    for (size_t i = 0; i < nt; ++i)
        g->dtype[i] = m.tensors[i].dtype;
    for (const auto& [idx, s] : stored) {
        g->isStored[size_t(idx)] = 1;
        g->storedDims[size_t(idx)] = s.dims;
        g->storedValue[size_t(idx)] = s.value;
    }
    inputSymbols(inputInfos);
    declaredShapes(gp);
    for (size_t k = 0; k < m.nodes.size(); ++k) {
        const Node& n = m.nodes[k];
        if (n.op != "Constant")
            g->fallback[k] = std::make_shared<const onnx::NodeProto>(*flat[order[k]]);
    }
}

// Graph inputs' dims: fixed values, or symbols (dim_param, else "<input>_dim<k>"), at most 31.
void GraphBuilder::inputSymbols(const InputInfos& inputInfos)
{
    std::map<std::string, int> symByName;
    for (const auto& [idx, vi] : inputInfos) {
        g->isInput[size_t(idx)] = 1;
        if (!vi->type().has_tensor_type() || !vi->type().tensor_type().has_shape()) {
            warn("input '" + vi->name() + "' has no declared shape; tensors that depend on it stay unknown");
            continue;
        }
        g->inputHasShape[size_t(idx)] = 1;
        const auto& dims = vi->type().tensor_type().shape().dim();
        for (int k = 0; k < dims.size(); ++k) {
            const auto& d = dims[k];
            InputDim id;
            if (d.has_dim_value() && d.dim_value() >= 0) {
                id.value = d.dim_value();
            } else {
                const std::string nm = d.has_dim_param() && !d.dim_param().empty()
                                           ? d.dim_param()
                                           : vi->name() + "_dim" + std::to_string(k);
                auto it = symByName.find(nm);
                if (it == symByName.end()) {
                    if (m.symbols.size() >= 31) {
                        warn("more than 31 symbols; '" + nm + "' is fixed at 1");
                        id.value = 1;
                        g->inputDims[size_t(idx)].push_back(id);
                        continue;
                    }
                    Symbol s;
                    s.name = nm;
                    s.origin = vi->name() + "[" + std::to_string(k) + "]";
                    m.symbols.push_back(s);
                    it = symByName.emplace(nm, static_cast<int>(m.symbols.size() - 1)).first;
                    symbolAxis.push_back(k);
                }
                id.symbol = it->second;
            }
            g->inputDims[size_t(idx)].push_back(id);
        }
    }
}

// value_info and graph outputs: static dims, or sympy-style formulas of the symbols.
void GraphBuilder::declaredShapes(const onnx::GraphProto& gp)
{
    const size_t nt = m.tensors.size();
    g->declaredFormula.resize(nt);
    std::vector<std::string> symNames;
    for (const Symbol& s : m.symbols)
        symNames.push_back(s.name);
    auto declare = [&](const onnx::ValueInfoProto& vi) {
        auto it = byName.find(vi.name());
        if (it == byName.end() || !vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape())
            return;
        if (g->dtype[size_t(it->second)] == DType::Undefined)
            g->dtype[size_t(it->second)] = dtypeFromOnnx(vi.type().tensor_type().elem_type());
        std::vector<int64_t> dims;
        std::vector<DimFormula> formula;
        bool isStatic = true;
        for (const auto& d : vi.type().tensor_type().shape().dim()) {
            std::optional<DimFormula> f;
            if (d.has_dim_value() && d.dim_value() >= 0) {
                dims.push_back(d.dim_value());
                f = DimFormula::parse(std::to_string(d.dim_value()), symNames);
            } else {
                isStatic = false;
                if (d.has_dim_param())
                    f = DimFormula::parse(d.dim_param(), symNames);
            }
            if (!f)
                return; // a dim the file leaves open or names with a symbol no input has
            formula.push_back(std::move(*f));
        }
        if (isStatic)
            g->declaredDims[size_t(it->second)] = std::move(dims);
        else
            g->declaredFormula[size_t(it->second)] = std::move(formula);
    };
    for (const auto& vi : gp.value_info())
        declare(vi);
    for (const auto& vi : gp.output())
        declare(vi);
}

} // namespace headroom::detail
