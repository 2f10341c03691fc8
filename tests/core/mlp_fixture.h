#pragma once
// A hand-built MLP whose parameter count is known exactly, shared by the multi-GPU and advisor tests:
// x[batch, 1024] -> fc0 (1024x1024) -> relu -> fc1 (1024x256) -> relu -> fc2 (256x16) -> out[batch, 16]
#include "headroom/import/model.h"

#include <QtGlobal>

#include <string>
#include <vector>

namespace testfixture {

using namespace headroom;

inline constexpr int64_t kWidths[] = {1024, 1024, 256, 16};
inline constexpr qint64 kFc0 = 1024 * 1024 + 1024, kFc1 = 1024 * 256 + 256, kFc2 = 256 * 16 + 16;
inline constexpr qint64 P = kFc0 + kFc1 + kFc2; // 1,316,112 trainable elements

inline Model mlp()
{
    Model m;
    m.info.file = "mlp.onnx";
    m.symbols.push_back({"batch", 1, true, "x[0]", "batch default"});
    m.batchSymbol = 0;
    auto tensor = [&](std::string name, TensorRole role, std::vector<DimExpr> dims) {
        Tensor t;
        t.name = std::move(name);
        t.dtype = DType::Float32;
        t.role = role;
        t.shape.state = TensorShape::State::Exact;
        t.shape.dims = std::move(dims);
        m.tensors.push_back(std::move(t));
        return int(m.tensors.size() - 1);
    };
    LayerNode root;
    root.name = "";
    root.path = "";
    m.layers.push_back(root);
    auto node = [&](std::string op, std::string layerName, std::vector<int> in, int out) {
        Node n;
        n.op = std::move(op);
        n.name = "/" + layerName + "/" + n.op;
        n.inputs = std::move(in);
        n.outputs = {out};
        const int idx = int(m.nodes.size());
        LayerNode l;
        l.name = layerName;
        l.path = layerName;
        l.parent = 0;
        l.depth = 1;
        l.nodes = {idx};
        l.firstNode = l.lastNode = idx;
        n.layer = int(m.layers.size());
        m.layers[0].children.push_back(n.layer);
        m.layers.push_back(l);
        for (int t : n.inputs)
            m.tensors[size_t(t)].consumers.push_back(idx);
        m.tensors[size_t(out)].producer = idx;
        m.nodes.push_back(std::move(n));
        return idx;
    };
    const DimExpr batch = DimExpr::symbol(0);
    int x = tensor("x", TensorRole::Input, {batch, DimExpr::constant(kWidths[0])});
    m.inputs.push_back(x);
    for (int i = 0; i < 3; ++i) {
        const std::string fc = "fc" + std::to_string(i);
        const int w = tensor(fc + ".weight", TensorRole::Parameter,
                             {DimExpr::constant(kWidths[i]), DimExpr::constant(kWidths[i + 1])});
        const int b = tensor(fc + ".bias", TensorRole::Parameter, {DimExpr::constant(kWidths[i + 1])});
        const int h = tensor(fc + "_out", TensorRole::Activation, {batch, DimExpr::constant(kWidths[i + 1])});
        node("Gemm", fc, {x, w, b}, h);
        m.layers.back().params = kWidths[i] * kWidths[i + 1] + kWidths[i + 1];
        x = h;
        if (i < 2) {
            const int r = tensor("relu" + std::to_string(i) + "_out", TensorRole::Activation,
                                 {batch, DimExpr::constant(kWidths[i + 1])});
            node("Relu", "relu" + std::to_string(i), {x}, r);
            x = r;
        }
    }
    m.tensors[size_t(x)].isGraphOutput = true;
    m.outputs.push_back(x);
    m.layers[0].params = P;
    m.layers[0].firstNode = 0;
    m.layers[0].lastNode = int(m.nodes.size()) - 1;
    m.params.trainable = P;
    m.params.trainableBytes = 4 * P;
    return m;
}

} // namespace testfixture
