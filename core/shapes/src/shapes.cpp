// Sizes of every tensor at one binding, from the fitted dims: the slider's fast path.
#include "headroom/shapes/shapes.h"

#include <optional>
#include <unordered_map>

namespace headroom {

namespace {

std::optional<int64_t> exactNumel(const std::vector<DimExpr>& dims, const Bindings& values)
{
    std::optional<int64_t> numel = 1;
    for (const DimExpr& d : dims) {
        const auto v = d.eval(values);
        if (!v || *v < 0)
            return std::nullopt;
        numel = checkedMul(*numel, *v);
        if (!numel)
            return std::nullopt;
    }
    return numel;
}

// Appends tensor `ten`'s entry (the table is filled in tensor order: no pass to pre-fill it with -1).
void pushSize(ShapeTable& st, const Tensor& ten, std::optional<int64_t> numel)
{
    int64_t n = -1, bytes = -1;
    if (numel) {
        n = *numel;
        if (const int64_t eb = bytesOf(ten.dtype); eb > 0)
            bytes = checkedMul(n, eb).value_or(-1);
    }
    st.numel.push_back(n);
    st.bytes.push_back(bytes);
    if (ten.role == TensorRole::Activation && ten.aliasOf < 0 && (n < 0 || bytes < 0))
        st.unknown++;
}

struct DimsHash
{
    size_t operator()(const std::vector<DimExpr>* dims) const noexcept
    {
        uint64_t h = 1469598103934665603ull ^ dims->size();
        for (const DimExpr& d : *dims) {
            h = (h ^ 0x9e3779b97f4a7c15ull) * 1099511628211ull;
            for (const DimTerm& t : d.terms())
                h = (h ^ (uint64_t(t.mask) * 0x100000001b3ull + uint64_t(t.coeff))) * 1099511628211ull;
        }
        return size_t(h);
    }
};
struct DimsEqual
{
    bool operator()(const std::vector<DimExpr>* a, const std::vector<DimExpr>* b) const noexcept { return *a == *b; }
};

} // namespace

ShapeClasses classifyShapes(const Model& model)
{
    ShapeClasses c;
    c.classOf.assign(model.tensors.size(), -1);
    std::unordered_map<const std::vector<DimExpr>*, int, DimsHash, DimsEqual> ids;
    for (size_t t = 0; t < model.tensors.size(); ++t) {
        const TensorShape& sh = model.tensors[t].shape;
        if (sh.state != TensorShape::State::Exact)
            continue;
        const auto [it, added] = ids.try_emplace(&sh.dims, static_cast<int>(c.shapes.size()));
        if (added)
            c.shapes.push_back(&sh.dims);
        c.classOf[t] = it->second;
    }
    return c;
}

namespace {

// The one loop behind both entry points: an exact shape from its class when there are classes.
ShapeTable evaluate(const Model& model, const ShapeClasses* classes, const Bindings& values)
{
    std::vector<std::optional<int64_t>> classNumel(classes ? classes->shapes.size() : 0);
    for (size_t k = 0; k < classNumel.size(); ++k)
        classNumel[k] = exactNumel(*classes->shapes[k], values);
    ShapeTable st;
    st.values = values;
    const size_t n = model.tensors.size();
    st.numel.reserve(n);
    st.bytes.reserve(n);
    std::vector<std::vector<int64_t>> reinferred;
    bool askedOracle = false;
    for (size_t t = 0; t < n; ++t) {
        const Tensor& ten = model.tensors[t];
        std::optional<int64_t> numel;
        if (ten.shape.state == TensorShape::State::Exact) {
            numel = classes ? classNumel[static_cast<size_t>(classes->classOf[t])] : exactNumel(ten.shape.dims, values);
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
        pushSize(st, ten, numel);
    }
    return st;
}

} // namespace

ShapeTable evaluateShapes(const Model& model, const Bindings& values) { return evaluate(model, nullptr, values); }

ShapeTable evaluateShapes(const Model& model, const ShapeClasses& classes, const Bindings& values)
{
    // Classes of another model (or of this one before a change) would index the wrong shapes.
    if (classes.classOf.size() != model.tensors.size())
        return evaluate(model, nullptr, values);
    return evaluate(model, &classes, values);
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
