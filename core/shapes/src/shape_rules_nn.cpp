// Compute-op rules (onnx/defs/math, nn, reduction, rnn, signal): matrix products, convolutions and pools,
// reductions, recurrent layers, resampling and the signal ops.
#include "shape_rules.h"

#include <algorithm>
#include <unordered_set>

namespace headroom::detail {
namespace {

// Opset 16-20 ops ONNX 1.12's inference may not know at the file's opset (onnx/defs/*/defs.cc).
bool gridSample(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    const Dims& grid = c.in(n, 1);
    if (x.size() < 3 || grid.size() != x.size())
        throw Fail{"GridSample input and grid ranks differ"};
    Dims o{x[0], x[1]};
    o.insert(o.end(), grid.begin() + 1, grid.end() - 1);
    c.out(n, 0, std::move(o));
    return true;
}

bool affineGrid(ShapeContext& c, const Node& n)
{
    const auto& size = c.needVal(n, 1, "size");
    if (size.size() < 3)
        throw Fail{"AffineGrid size needs N, C and spatial dims"};
    Dims o{size[0]};
    o.insert(o.end(), size.begin() + 2, size.end());
    o.push_back(static_cast<int64_t>(size.size() - 2));
    c.out(n, 0, std::move(o));
    return true;
}

// DFT (opset 17; opset 20 moved `axis` to an input): the last dim holds (real, imaginary).
bool dft(ShapeContext& c, const Node& n)
{
    Dims o = c.in(n, 0);
    if (o.size() < 2)
        throw Fail{"DFT needs an input of rank >= 2"};
    int64_t axis = c.opset() >= 20 ? (c.present(n, 2) ? c.needVal(n, 2, "axis").at(0) : -2) : n.attrInt("axis", 1);
    const auto a = static_cast<size_t>(normAxis(axis, o.size()));
    if (c.present(n, 1))
        o[a] = c.needVal(n, 1, "dft_length").at(0);
    if (n.attrInt("onesided", 0) != 0)
        o[a] = o[a] / 2 + 1;
    o.back() = 2;
    c.out(n, 0, std::move(o));
    return true;
}

bool col2Im(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    const auto& image = c.needVal(n, 1, "image_shape");
    const auto& block = c.needVal(n, 2, "block_shape");
    int64_t per = 1;
    for (int64_t b : block)
        per = mul(per, b);
    if (x.size() != 3 || per <= 0 || x[1] % per != 0)
        throw Fail{"Col2Im input does not match its block shape"};
    Dims o{x[0], x[1] / per};
    o.insert(o.end(), image.begin(), image.end());
    c.out(n, 0, std::move(o));
    return true;
}

bool window(ShapeContext& c, const Node& n)
{
    c.out(n, 0, {c.needVal(n, 0, "size").at(0)});
    return true;
}

// numpy matmul: 1-D operands get a dim added and removed, batch dims broadcast.
bool matMul(ShapeContext& c, const Node& n)
{
    Dims a = c.in(n, 0), b = c.in(n, 1);
    if (a.empty() || b.empty())
        throw Fail{"MatMul of a scalar"};
    const bool a1 = a.size() == 1, b1 = b.size() == 1;
    if (a1)
        a.insert(a.begin(), 1);
    if (b1)
        b.push_back(1);
    if (a.back() >= 0 && b[b.size() - 2] >= 0 && a.back() != b[b.size() - 2])
        throw Fail{"MatMul inner dims differ: " + std::to_string(a.back()) + " vs " + std::to_string(b[b.size() - 2])};
    Dims o = broadcast(Dims(a.begin(), a.end() - 2), Dims(b.begin(), b.end() - 2));
    if (!a1)
        o.push_back(a[a.size() - 2]);
    if (!b1)
        o.push_back(b.back());
    c.out(n, 0, std::move(o));
    return true;
}

// Headroom's MoE op (import/src/hf_moe.h): torch._grouped_mm of row groups, x [S, K] by w [E, K, N] -> [S, N].
bool groupedMatMul(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    const Dims& w = c.in(n, 1);
    if (x.size() != 2 || w.size() != 3)
        throw Fail{"GroupedMatMul needs x [S, K] and w [E, K, N]"};
    c.out(n, 0, {x[0], w[2]});
    return true;
}

// Headroom's MoE op: Tensor.index_add_(0, index, source) into input 0, whose shape it keeps.
bool indexAdd(ShapeContext& c, const Node& n)
{
    c.out(n, 0, c.in(n, 0));
    return true;
}

bool gemm(ShapeContext& c, const Node& n)
{
    const Dims& a = c.in(n, 0);
    const Dims& b = c.in(n, 1);
    if (a.size() != 2 || b.size() != 2)
        throw Fail{"Gemm needs 2-D inputs"};
    const int64_t M = n.attrInt("transA", 0) ? a[1] : a[0];
    const int64_t N = n.attrInt("transB", 0) ? b[0] : b[1];
    c.out(n, 0, {M, N});
    return true;
}

bool globalPool(ShapeContext& c, const Node& n)
{
    Dims o = c.in(n, 0);
    for (size_t i = 2; i < o.size(); ++i)
        o[i] = 1;
    c.out(n, 0, std::move(o));
    return true;
}

// Where a Reduce op's axes come from: ArgMax/ArgMin's `axis`; `axes` became an input in opset 13 for ReduceSum
// and in opset 18 for the other Reduce ops (onnx/defs/reduction/defs.cc).
enum class AxesFrom { ArgAxis, InputSince13, InputSince18 };

// The reduced dims dropped, or kept as 1 (keepdims); no axes reduce all of them unless noop_with_empty_axes.
// ReduceProd of a small 1-D value folds it (numel from a Shape).
template <AxesFrom A, bool FoldProduct> bool reduce(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    const bool keep = n.attrInt("keepdims", 1) != 0;
    Dims axes;
    if constexpr (A == AxesFrom::ArgAxis)
        axes = {n.attrInt("axis", 0)};
    else
        axes = c.axesOf(n, 1, A == AxesFrom::InputSince13 ? 13 : 18);
    std::vector<char> red(x.size(), axes.empty() && !n.attrInt("noop_with_empty_axes", 0));
    for (int64_t a : axes)
        red[size_t(normAxis(a, x.size()))] = 1;
    Dims o;
    Values v;
    for (size_t i = 0; i < x.size(); ++i)
        if (!red[i])
            o.push_back(x[i]);
        else if (keep)
            o.push_back(1);
    if (FoldProduct && c.val(n, 0) && x.size() <= 1) {
        int64_t p = 1;
        for (int64_t e : *c.val(n, 0))
            p = mul(p, e);
        v = std::vector<int64_t>{p};
    }
    c.out(n, 0, std::move(o), std::move(v));
    return true;
}

// Resize: `sizes` (input 3) where given, else `scales` (input 2; input 1 before opset 11 and for Upsample).
template <bool Upsample> bool resize(ShapeContext& c, const Node& n)
{
    const Dims& x = c.in(n, 0);
    const size_t sizesIdx = 3;
    const size_t scalesIdx = Upsample || c.opset() < 11 ? 1 : 2;
    Dims o = x;
    if (!Upsample && c.present(n, sizesIdx) && c.in(n, sizesIdx).size() == 1 && c.in(n, sizesIdx)[0] > 0) {
        const auto& s = c.needVal(n, sizesIdx, "sizes");
        Dims axes = n.attrInts("axes");
        if (axes.empty())
            for (size_t i = 0; i < x.size(); ++i)
                axes.push_back(static_cast<int64_t>(i));
        if (s.size() != axes.size())
            throw Fail{"Resize sizes do not match the axes"};
        for (size_t i = 0; i < s.size(); ++i)
            o[size_t(normAxis(axes[i], x.size()))] = s[i];
    } else {
        const auto& sc = c.needVal(n, scalesIdx, "scales");
        if (sc.size() != x.size())
            throw Fail{"Resize scales do not match the rank"};
        for (size_t i = 0; i < x.size(); ++i)
            o[i] = mul(x[i], sc[i]);
    }
    c.out(n, 0, std::move(o));
    return true;
}

// Y is [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs, hidden]); Y_h and Y_c the last state.
bool recurrent(ShapeContext& c, const Node& n)
{
    const std::string& op = n.op;
    const Dims& x = c.in(n, 0);
    if (x.size() != 3)
        throw Fail{op + " needs a 3-D input"};
    const int64_t dirs = n.attrString("direction", "forward") == "bidirectional" ? 2 : 1;
    int64_t hidden = n.attrInt("hidden_size", -1);
    if (hidden < 0 && c.present(n, 2))
        hidden = c.in(n, 2).size() == 3 ? c.in(n, 2)[2] : -1;
    if (hidden < 0)
        throw Fail{op + " without hidden_size"};
    const bool batchFirst = n.attrInt("layout", 0) != 0;
    const int64_t seq = batchFirst ? x[1] : x[0], batch = batchFirst ? x[0] : x[1];
    c.out(n, 0, batchFirst ? Dims{batch, seq, dirs, hidden} : Dims{seq, dirs, batch, hidden});
    const Dims state = batchFirst ? Dims{batch, dirs, hidden} : Dims{dirs, batch, hidden};
    c.out(n, 1, state);
    c.out(n, 2, state);
    return true;
}

// Conv, ConvTranspose and the pools (onnx/defs/nn/defs.cc convPoolShapeInference): N, then the weight's output
// channels (the input's for a pool), then each spatial dim from kernel, stride, dilation, pads or auto_pad.
template <bool Pool, bool Transposed> bool convLike(ShapeContext& c, const Node& n)
{
    const std::string& op = n.op;
    const Dims& x = c.in(n, 0);
    if (x.size() < 3)
        throw Fail{op + " needs an input of rank >= 3, got " + std::to_string(x.size())};
    const size_t sp = x.size() - 2;
    Dims kernel = n.attrInts("kernel_shape");
    int64_t channels = x[1];
    if (!Pool) {
        const Dims& w = c.in(n, 1);
        if (w.size() != x.size())
            throw Fail{op + " weight rank " + std::to_string(w.size()) + " does not match input rank"};
        if (kernel.empty())
            kernel.assign(w.begin() + 2, w.end());
        channels = Transposed ? mul(w[1], n.attrInt("group", 1)) : w[0];
    }
    if (kernel.size() != sp)
        throw Fail{op + " kernel_shape has " + std::to_string(kernel.size()) + " dims for " + std::to_string(sp) +
                   " spatial dims"};
    Dims strides = n.attrInts("strides"), dil = n.attrInts("dilations"), pads = n.attrInts("pads");
    strides.resize(sp, 1);
    dil.resize(sp, 1);
    pads.resize(2 * sp, 0);
    const std::string autoPad = n.attrString("auto_pad", "NOTSET");
    const bool ceilMode = n.attrInt("ceil_mode", 0) != 0;
    Dims o{x[0], channels};
    for (size_t i = 0; i < sp; ++i) {
        const int64_t in_ = x[2 + i], k = kernel[i], s = strides[i], d = dil[i];
        if (s <= 0 || d <= 0 || k <= 0)
            throw Fail{op + " has a non-positive kernel, stride or dilation"};
        const int64_t ek = add(mul(d, k - 1), 1);
        int64_t r = 0;
        if (Transposed) {
            Dims outPad = n.attrInts("output_padding");
            outPad.resize(sp, 0);
            Dims outShape = n.attrInts("output_shape");
            if (outShape.size() == sp)
                r = outShape[i];
            else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")
                r = mul(in_, s);
            else
                r = add(add(mul(s, in_ - 1), outPad[i]), ek - pads[i] - pads[i + sp]);
        } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
            r = floorDiv(in_ + s - 1, s);
        } else if (autoPad == "VALID") {
            r = floorDiv(in_ - ek, s) + 1;
        } else {
            const int64_t span = add(add(in_, pads[i] + pads[i + sp]), -ek);
            r = ceilMode ? floorDiv(span + s - 1, s) + 1 : floorDiv(span, s) + 1;
            if (ceilMode && (r - 1) * s >= in_ + pads[i])
                --r;
        }
        if (r < 0)
            throw Fail{op + " output size " + std::to_string(r) + " is negative (input " + std::to_string(in_) +
                       " too small)"};
        o.push_back(r);
    }
    c.out(n, 0, o);
    if (n.outputs.size() > 1)
        c.out(n, 1, o);
    return true;
}

// Each letter's dim from the inputs; without "->" the output is the letters seen once, sorted (numpy's
// implicit mode), after the broadcast ellipsis dims.
bool einsum(ShapeContext& ctx, const Node& n)
{
    std::string eq = n.attrString("equation");
    eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
    const size_t arrow = eq.find("->");
    const std::string lhs = eq.substr(0, arrow);
    std::vector<std::string> terms;
    for (size_t p = 0;;) {
        const size_t c = lhs.find(',', p);
        terms.push_back(lhs.substr(p, c == std::string::npos ? std::string::npos : c - p));
        if (c == std::string::npos)
            break;
        p = c + 1;
    }
    if (terms.size() + size_t(std::max(0, n.implicitInputs)) != n.inputs.size())
        throw Fail{"Einsum equation does not match its inputs"};
    int64_t letter[128];
    std::fill(std::begin(letter), std::end(letter), -2);
    std::unordered_set<char> seenTwice;
    std::string order;
    Dims ell;
    for (size_t t = 0; t < terms.size(); ++t) {
        const Dims& d = ctx.in(n, t);
        const std::string& s = terms[t];
        const size_t dots = s.find("...");
        const size_t named = s.size() - (dots == std::string::npos ? 0 : 3);
        if (named > d.size())
            throw Fail{"Einsum term '" + s + "' has more letters than its input has dims"};
        const size_t nEll = d.size() - named;
        size_t di = 0;
        for (size_t c = 0; c < s.size(); ++c) {
            if (s[c] == '.') {
                ell = broadcast(ell, Dims(d.begin() + long(di), d.begin() + long(di + nEll)));
                di += nEll;
                c += 2;
                continue;
            }
            const auto ch = static_cast<unsigned char>(s[c]) & 127u;
            if (letter[ch] == -2) {
                order += static_cast<char>(ch);
                letter[ch] = d[di];
            } else {
                seenTwice.insert(static_cast<char>(ch));
                if (letter[ch] == 1)
                    letter[ch] = d[di];
            }
            ++di;
        }
    }
    std::string rhs;
    if (arrow != std::string::npos) {
        rhs = eq.substr(arrow + 2);
    } else {
        std::string once;
        for (char c : order)
            if (!seenTwice.count(c))
                once += c;
        std::sort(once.begin(), once.end());
        rhs = (ell.empty() ? "" : "...") + once;
    }
    Dims o;
    for (size_t c = 0; c < rhs.size(); ++c) {
        if (rhs[c] == '.') {
            o.insert(o.end(), ell.begin(), ell.end());
            c += 2;
            continue;
        }
        const auto ch = static_cast<unsigned char>(rhs[c]) & 127u;
        if (letter[ch] == -2)
            throw Fail{"Einsum output letter not in inputs"};
        o.push_back(letter[ch]);
    }
    ctx.out(n, 0, std::move(o));
    return true;
}

constexpr ShapeRule kRules[] = {
    {"MatMul", matMul},
    {"MatMulInteger", matMul},
    {"GroupedMatMul", groupedMatMul},
    {"IndexAdd", indexAdd},
    {"Gemm", gemm},
    {"Einsum", einsum},
    {"Conv", convLike<false, false>},
    {"ConvInteger", convLike<false, false>},
    {"DeformConv", convLike<false, false>},
    {"ConvTranspose", convLike<false, true>},
    {"MaxPool", convLike<true, false>},
    {"AveragePool", convLike<true, false>},
    {"LpPool", convLike<true, false>},
    {"GlobalAveragePool", globalPool},
    {"GlobalMaxPool", globalPool},
    {"GlobalLpPool", globalPool},
    {"ArgMax", reduce<AxesFrom::ArgAxis, false>},
    {"ArgMin", reduce<AxesFrom::ArgAxis, false>},
    {"ReduceSum", reduce<AxesFrom::InputSince13, false>},
    {"ReduceMean", reduce<AxesFrom::InputSince18, false>},
    {"ReduceMax", reduce<AxesFrom::InputSince18, false>},
    {"ReduceMin", reduce<AxesFrom::InputSince18, false>},
    {"ReduceProd", reduce<AxesFrom::InputSince18, true>},
    {"ReduceL1", reduce<AxesFrom::InputSince18, false>},
    {"ReduceL2", reduce<AxesFrom::InputSince18, false>},
    {"ReduceLogSum", reduce<AxesFrom::InputSince18, false>},
    {"ReduceLogSumExp", reduce<AxesFrom::InputSince18, false>},
    {"ReduceSumSquare", reduce<AxesFrom::InputSince18, false>},
    {"LSTM", recurrent},
    {"GRU", recurrent},
    {"RNN", recurrent},
    {"Resize", resize<false>},
    {"Upsample", resize<true>},
    {"GridSample", gridSample},
    {"AffineGrid", affineGrid},
    {"Col2Im", col2Im},
    {"DFT", dft},
    {"HannWindow", window},
    {"HammingWindow", window},
    {"BlackmanWindow", window},
};

} // namespace

std::span<const ShapeRule> nnShapeRules() { return kRules; }

} // namespace headroom::detail
