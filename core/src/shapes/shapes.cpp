// Sizes of every tensor at one binding, from the fitted dims: the slider's fast path.
#include "headroom/shapes/shapes.h"

namespace headroom {

ShapeTable evaluateShapes(const Model& model, const Bindings& values)
{
    ShapeTable st;
    st.values = values;
    const size_t n = model.tensors.size();
    st.numel.assign(n, -1);
    st.bytes.assign(n, -1);
    std::vector<std::vector<int64_t>> reinferred;
    bool askedOracle = false;
    for (size_t t = 0; t < n; ++t) {
        const Tensor& ten = model.tensors[t];
        std::optional<int64_t> numel;
        if (ten.shape.state == TensorShape::State::Exact) {
            numel = 1;
            for (const DimExpr& d : ten.shape.dims) {
                const auto v = d.eval(values);
                if (!v || *v < 0) {
                    numel.reset();
                    break;
                }
                numel = checkedMul(*numel, *v);
                if (!numel)
                    break;
            }
        } else if (ten.shape.state == TensorShape::State::Reinfer && model.oracle) {
            if (!askedOracle) {
                reinferred = model.oracle->inferAt(values);
                askedOracle = true;
            }
            if (t < reinferred.size() && !reinferred[t].empty()) {
                numel = 1;
                for (int64_t d : reinferred[t]) {
                    numel = d >= 0 ? checkedMul(*numel, d) : std::nullopt;
                    if (!numel)
                        break;
                }
            }
        }
        if (numel) {
            st.numel[t] = *numel;
            const int64_t eb = bytesOf(ten.dtype);
            if (eb > 0) {
                const auto b = checkedMul(*numel, eb);
                st.bytes[t] = b ? *b : -1;
            }
        }
        if (ten.role == TensorRole::Activation && ten.aliasOf < 0 && (st.numel[t] < 0 || st.bytes[t] < 0))
            st.unknown++;
    }
    return st;
}

std::vector<int64_t> concreteDims(const Model& model, int tensor, const Bindings& values)
{
    if (tensor < 0 || size_t(tensor) >= model.tensors.size())
        return {};
    const TensorShape& sh = model.tensors[size_t(tensor)].shape;
    std::vector<int64_t> out;
    if (sh.state == TensorShape::State::Exact) {
        for (const DimExpr& d : sh.dims) {
            const auto v = d.eval(values);
            if (!v)
                return {};
            out.push_back(*v);
        }
        return out;
    }
    if (sh.state == TensorShape::State::Reinfer && model.oracle) {
        auto all = model.oracle->inferAt(values);
        if (size_t(tensor) < all.size())
            return all[size_t(tensor)];
    }
    return {};
}

std::string shapeString(const Model& model, int tensor, const Bindings* values)
{
    if (tensor < 0 || size_t(tensor) >= model.tensors.size())
        return "?";
    const TensorShape& sh = model.tensors[size_t(tensor)].shape;
    if (sh.state == TensorShape::State::Unknown)
        return "?";
    std::string s = "[";
    if (values) {
        const auto dims = concreteDims(model, tensor, *values);
        if (dims.empty() && !sh.dims.empty())
            return "?";
        for (size_t i = 0; i < dims.size(); ++i)
            s += (i ? ", " : "") + std::to_string(dims[i]);
        return s + "]";
    }
    if (sh.state == TensorShape::State::Reinfer)
        return "[?]";
    const auto names = model.symbolNames();
    for (size_t i = 0; i < sh.dims.size(); ++i)
        s += (i ? ", " : "") + sh.dims[i].toString(names);
    return s + "]";
}

} // namespace headroom
