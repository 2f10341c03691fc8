// The per-model plan: everything evaluate() needs that does not change with the symbol values, the
// dtype policy or the optimizer. Built once per model (and per set of freeze patterns).
#include "engine_internal.h"

#include <algorithm>
#include <map>
#include <unordered_set>

namespace headroom {

namespace {

bool floatish(const Tensor& t) noexcept { return t.dtype == DType::Undefined || isFloating(t.dtype); }

// Autocast's op classes (torch/csrc/autograd/autocast_mode.cpp): lower_precision_fp ops produce 16-bit
// outputs, fp32 ops produce fp32, everything else follows its inputs.
bool ampLowOp(const std::string& op)
{
    return op == "Conv" || op == "ConvTranspose" || op == "MatMul" || op == "Gemm" || op == "Einsum" || op == "LSTM" ||
           op == "GRU" || op == "RNN";
}
bool ampFp32Op(const std::string& op)
{
    // CUDA's fp32 list: softmax, log_softmax, layer_norm, group_norm, exp, log, pow, rsqrt, reciprocal,
    // softplus, cumsum, sum, prod, norms, the trig family; mean and sqrt are on no list (they follow their input)
    return op == "Softmax" || op == "LogSoftmax" || op == "LayerNormalization" || op == "GroupNormalization" ||
           op == "InstanceNormalization" || op == "ReduceSum" || op == "ReduceProd" || op == "ReduceLogSumExp" ||
           op == "ReduceL1" || op == "ReduceL2" || op == "ReduceSumSquare" || op == "Exp" || op == "Log" ||
           op == "Pow" || op == "Reciprocal" || op == "Softplus" || op == "CumSum" || op == "LpNormalization" ||
           op == "Cosh" || op == "Sinh" || op == "Tan" || op == "Acos" || op == "Asin";
}
// Elementwise arithmetic follows type promotion: a bf16 activation times an fp32 parameter tensor (RMSNorm's
// weight * x) is fp32; only 0-dim tensors and Python scalars leave the activation's dtype alone. Add and Sub
// are left out: exporters split linear(x, W, b) into MatMul + Add(b), which PyTorch runs as one bf16 addmm.
bool promotesWithParams(const std::string& op) { return op == "Mul" || op == "Div" || op == "Max" || op == "Min"; }

struct Builder
{
    const Model& m;
    PlanData& p;
    const PlanOptions& opts;
    std::vector<std::vector<int>> tensorConsumers; // node consumers (from the model)
    std::vector<uint8_t> claimed;                  // node already in a fused unit

    int producer(int t) const { return t < 0 ? -1 : m.tensors[static_cast<size_t>(t)].producer; }
    const Node& node(int n) const { return m.nodes[static_cast<size_t>(n)]; }
    const std::vector<int>& consumers(int t) const { return m.tensors[static_cast<size_t>(t)].consumers; }
    bool isStatic(int t) const { return t >= 0 && !p.dynamic[static_cast<size_t>(t)]; }
    // the single consumer of t, or -1
    int only(int t) const
    {
        if (t < 0)
            return -1;
        const auto& c = consumers(t);
        return c.size() == 1 && !m.tensors[static_cast<size_t>(t)].isGraphOutput ? c[0] : -1;
    }
    bool usable(int n, const char* op) const
    {
        return n >= 0 && !claimed[static_cast<size_t>(n)] && node(n).op == op &&
               p.unitOfNode[static_cast<size_t>(n)] != -2;
    }
    int other(int n, int t) const
    {
        const Node& nd = node(n);
        if (nd.inputs.size() != 2)
            return -1;
        return nd.inputs[0] == t ? nd.inputs[1] : nd.inputs[1] == t ? nd.inputs[0] : -1;
    }
    int out(int n) const { return node(n).outputs.empty() ? -1 : node(n).outputs[0]; }

    void addFused(UnitKind kind, std::vector<int> nodes, int x)
    {
        std::sort(nodes.begin(), nodes.end());
        Unit u;
        u.kind = kind;
        u.nodes = nodes;
        u.head = nodes.back();
        for (int n : nodes)
            claimed[static_cast<size_t>(n)] = 1;
        for (int n : nodes) {
            for (int t : node(n).inputs) {
                if (t < 0 || std::find(u.inputs.begin(), u.inputs.end(), t) != u.inputs.end())
                    continue;
                const int pr = producer(t);
                if (pr >= 0 && std::binary_search(nodes.begin(), nodes.end(), pr))
                    continue;
                u.inputs.push_back(t);
            }
            if (n != u.head)
                for (int t : node(n).outputs)
                    if (t >= 0)
                        p.virtualOut[static_cast<size_t>(t)] = 1;
        }
        for (int t : node(u.head).outputs)
            if (t >= 0)
                u.outputs.push_back(t);
        u.saved.push_back({SavedItem::Kind::Storage, x}); // root resolved later
        p.units.push_back(std::move(u));
    }

    // x - mean, ^2, mean, + eps, sqrt, divide, (* weight), (+ bias): PyTorch's native_layer_norm, which
    // keeps its input plus a mean and rstd per row.
    void tryLayerNorm(int r1)
    {
        const Node& n1 = node(r1);
        if (n1.inputs.empty())
            return;
        const int x = n1.inputs[0];
        const int mean = out(r1);
        const int sub = only(mean);
        if (!usable(sub, "Sub") || node(sub).inputs.size() != 2 || node(sub).inputs[0] != x)
            return;
        const int d = out(sub);
        int pw = -1, dv = -1;
        for (int c : consumers(d)) {
            if (node(c).op == "Pow")
                pw = c;
            else if (node(c).op == "Div")
                dv = c;
        }
        if (consumers(d).size() != 2 || !usable(pw, "Pow") || !usable(dv, "Div"))
            return;
        const int r2 = only(out(pw));
        if (!usable(r2, "ReduceMean"))
            return;
        int cur = only(out(r2));
        std::vector<int> nodes{r1, sub, pw, r2};
        if (usable(cur, "Add") && isStatic(other(cur, out(r2)))) {
            nodes.push_back(cur);
            cur = only(out(cur));
        }
        if (!usable(cur, "Sqrt"))
            return;
        nodes.push_back(cur);
        if (only(out(cur)) != dv || node(dv).inputs[0] != d)
            return;
        nodes.push_back(dv);
        int last = dv;
        int nx = only(out(last));
        if (usable(nx, "Mul") && isStatic(other(nx, out(last)))) {
            nodes.push_back(nx);
            last = nx;
            nx = only(out(last));
        }
        if (usable(nx, "Add") && isStatic(other(nx, out(last)))) {
            nodes.push_back(nx);
            last = nx;
        }
        addFused(UnitKind::LayerNorm, nodes, x);
        Unit& u = p.units.back();
        SavedItem stats{SavedItem::Kind::Extra, mean};
        stats.num = 2;
        stats.elemBytes = 4;
        stats.fp32Stat = true;
        u.saved.push_back(stats);
    }

    // x / sqrt(2) (or * 1/sqrt(2)), erf, + 1, * x, * 0.5 in either order: PyTorch's gelu keeps x only.
    void tryGelu(int e)
    {
        const Node& en = node(e);
        if (en.inputs.empty())
            return;
        const int scaled = en.inputs[0];
        const int v = producer(scaled);
        if (v < 0 || claimed[static_cast<size_t>(v)] || only(scaled) != e)
            return;
        if ((node(v).op != "Div" && node(v).op != "Mul") || node(v).inputs.size() != 2 || !isStatic(node(v).inputs[1]))
            return;
        const int x = node(v).inputs[0];
        const int a = only(out(e));
        if (!usable(a, "Add") || !isStatic(other(a, out(e))))
            return;
        const int m1 = only(out(a));
        if (!usable(m1, "Mul"))
            return;
        std::vector<int> nodes{v, e, a, m1};
        const int t = other(m1, out(a));
        if (t >= 0 && isStatic(t)) {
            // 0.5 * (1 + erf) first, then * x (the dynamo exporter's decomposition of aten.gelu)
            const int m2 = only(out(m1));
            if (!usable(m2, "Mul") || other(m2, out(m1)) != x)
                return;
            nodes.push_back(m2);
        } else if (t != x) {
            const int h = producer(t);
            if (h < 0 || claimed[static_cast<size_t>(h)] || node(h).op != "Mul" || only(t) != m1 || other(h, x) < 0 ||
                !isStatic(other(h, x)))
                return;
            nodes.push_back(h);
        } else {
            const int m2 = only(out(m1));
            if (usable(m2, "Mul") && isStatic(other(m2, out(m1))))
                nodes.push_back(m2);
        }
        addFused(UnitKind::Gelu, nodes, x);
    }

    // Reshape to [N, G, -1], InstanceNormalization (exporter's ones/zeros scale and bias), Reshape back,
    // then the affine * weight + bias: torch.onnx's GroupNorm. PyTorch runs native_group_norm, which keeps
    // its input plus a mean and rstd per (N, G); the normalised tensor and the affine's product are
    // never saved.
    void tryGroupNorm(int in)
    {
        const Node& nn = node(in);
        if (nn.inputs.size() < 3 || !isStatic(nn.inputs[1]) || !isStatic(nn.inputs[2]))
            return;
        const int r1 = producer(nn.inputs[0]);
        if (!usable(r1, "Reshape") || only(nn.inputs[0]) != in || node(r1).inputs.empty())
            return;
        const int x = node(r1).inputs[0];
        const int r2 = only(out(in));
        if (!usable(r2, "Reshape"))
            return;
        std::vector<int> nodes{r1, in, r2};
        int last = r2;
        int nx = only(out(last));
        if (usable(nx, "Mul") && isStatic(other(nx, out(last)))) {
            nodes.push_back(nx);
            last = nx;
            nx = only(out(last));
        }
        if (usable(nx, "Add") && isStatic(other(nx, out(last))))
            nodes.push_back(nx);
        addFused(UnitKind::GroupNorm, nodes, x);
        SavedItem stats{SavedItem::Kind::Extra, nn.inputs[0]}; // [N, G, ...]: dims 0..2
        stats.num = 2;
        stats.elemBytes = 4;
        stats.fp32Stat = true;
        stats.dimBegin = 0;
        stats.dimEnd = 2;
        p.units.back().saved.push_back(stats);
    }

    bool reqGrad(int t) const { return t >= 0 && p.reqGrad[static_cast<size_t>(t)]; }

    // Does `t` come from an Expand through views within a few steps? Hugging Face's repeat_kv
    // (x[:, :, None].expand(...).reshape(...)) marks a grouped-query attention operand.
    bool fromExpand(int t) const
    {
        for (int guard = 0; guard < 6 && t >= 0; ++guard) {
            const int pr = producer(t);
            if (pr < 0 || node(pr).inputs.empty())
                return false;
            if (node(pr).op == "Expand")
                return true;
            if (!isViewOp(node(pr).op))
                return false;
            t = node(pr).inputs[0];
        }
        return false;
    }

    // MatMul(q, k^T) -> [scale] -> [mask: Add / Where / Sub] -> Softmax(last axis) -> [Cast] -> [Dropout]
    // -> MatMul(., v): the attention that PyTorch >= 2.0 runs as one fused kernel when the model calls
    // F.scaled_dot_product_attention (nn.MultiheadAttention with need_weights=False, which
    // nn.TransformerEncoderLayer uses; Hugging Face's default attn_implementation="sdpa").
    // derivatives.yaml `_scaled_dot_product_efficient_attention` / `_scaled_dot_product_flash_attention`:
    // backward reads query, key, value, output and logsumexp (fp32, one per query row) plus the RNG
    // state; the [B, H, T, T] scores are never stored, in training or inference. Kernel choice
    // (aten/src/ATen/native/transformers/cuda/sdp_utils.cpp): flash needs fp16/bf16 operands; the
    // memory-efficient kernel takes fp32 but not enable_gqa, so fp32 grouped-query attention (Hugging Face
    // passes enable_gqa=True when there is no mask) runs the math kernel, which is the written-out graph.
    void tryAttention(int sm)
    {
        const Node& sn = node(sm);
        if (sn.inputs.empty() || sn.outputs.empty())
            return;
        const int scores = sn.inputs[0];
        const auto& sd = m.tensors[static_cast<size_t>(scores)].shape.dims;
        const int64_t axis = sn.attrInt("axis", -1);
        if (sd.size() < 3 || (axis != -1 && axis != static_cast<int64_t>(sd.size()) - 1))
            return;
        std::vector<int> nodes{sm};
        // backwards: scale and mask ops down to the score MatMul
        int t = scores, mm1 = -1;
        for (int guard = 0; guard < 8 && mm1 < 0; ++guard) {
            const int pr = producer(t);
            if (pr < 0 || claimed[static_cast<size_t>(pr)] || only(t) < 0)
                return;
            const Node& pn = node(pr);
            int next = -1;
            if (pn.op == "MatMul" && pn.inputs.size() == 2) {
                mm1 = pr;
                break;
            }
            if ((pn.op == "Add" || pn.op == "Mul" || pn.op == "Sub" || pn.op == "Div") && pn.inputs.size() == 2) {
                const int a = pn.inputs[0], c = pn.inputs[1];
                if (reqGrad(a) && !reqGrad(c))
                    next = a;
                else if (reqGrad(c) && !reqGrad(a) && (pn.op == "Add" || pn.op == "Mul"))
                    next = c;
            } else if (pn.op == "Where" && pn.inputs.size() == 3) { // masked_fill
                const int a = pn.inputs[1], c = pn.inputs[2];
                if (reqGrad(a) && !reqGrad(c))
                    next = a;
                else if (reqGrad(c) && !reqGrad(a))
                    next = c;
            } else if (pn.op == "Cast") {
                next = pn.inputs[0];
            }
            if (next < 0)
                return;
            nodes.push_back(pr);
            t = next;
        }
        if (mm1 < 0 || only(out(mm1)) < 0)
            return;
        // forwards: optional Cast / Dropout, then the value MatMul
        int cur = out(sm), mm2 = -1;
        for (int guard = 0; guard < 4 && mm2 < 0; ++guard) {
            const int c = only(cur);
            if (c < 0 || claimed[static_cast<size_t>(c)])
                return;
            const Node& cn = node(c);
            if (cn.op == "MatMul" && cn.inputs.size() == 2 && cn.inputs[0] == cur) {
                mm2 = c;
            } else if (cn.op == "Cast" || cn.op == "Dropout") {
                for (size_t o = 1; o < cn.outputs.size(); ++o) // Dropout's mask must be unused
                    if (cn.outputs[o] >= 0 && !consumers(cn.outputs[o]).empty())
                        return;
                nodes.push_back(c);
                cur = out(c);
            } else {
                return;
            }
        }
        if (mm2 < 0)
            return;
        int q = node(mm1).inputs[0];
        const int kT = node(mm1).inputs[1];
        const int v = node(mm2).inputs[1];
        if (!p.dynamic[static_cast<size_t>(q)] || !p.dynamic[static_cast<size_t>(kT)] ||
            !p.dynamic[static_cast<size_t>(v)])
            return;
        if (!opts.lowPrecision && (fromExpand(kT) || fromExpand(v)))
            return; // fp32 GQA: the math kernel
        nodes.push_back(mm1);
        nodes.push_back(mm2);
        // q / sqrt(d) written before the matmul (torch 1.x MultiheadAttention) is SDPA's own `scale`
        if (const int qs = producer(q); qs >= 0 && !claimed[static_cast<size_t>(qs)] && only(q) == mm1 &&
                                        (node(qs).op == "Mul" || node(qs).op == "Div") && node(qs).inputs.size() == 2 &&
                                        isStatic(node(qs).inputs[1]) &&
                                        p.dynamic[static_cast<size_t>(node(qs).inputs[0])]) {
            nodes.push_back(qs);
            q = node(qs).inputs[0];
        }
        addFused(UnitKind::Attention, nodes, q);
        Unit& u = p.units.back();
        u.saved.push_back({SavedItem::Kind::Storage, kT});
        u.saved.push_back({SavedItem::Kind::Storage, v});
        u.saved.push_back({SavedItem::Kind::Storage, out(mm2)});
        SavedItem lse{SavedItem::Kind::Extra, scores}; // logsumexp: fp32, one per (batch, head, query row)
        lse.elemBytes = 4;
        lse.fp32Stat = true;
        lse.dimBegin = 0;
        lse.dimEnd = static_cast<int>(sd.size()) - 1;
        u.saved.push_back(lse);
        // forward MACs of both matmuls: scores * head_dim * 2
        const auto& qd = m.tensors[static_cast<size_t>(q)].shape.dims;
        u.macTensor = scores;
        u.macPerElem = 2 * (qd.empty() ? 1 : qd.back().constantValue().value_or(1));
    }

    // x * sigmoid(x): nn.SiLU keeps x only.
    void trySilu(int s)
    {
        const Node& sn = node(s);
        if (sn.inputs.empty())
            return;
        const int x = sn.inputs[0];
        const int mul = only(out(s));
        if (!usable(mul, "Mul") || other(mul, out(s)) != x)
            return;
        addFused(UnitKind::Silu, {s, mul}, x);
    }
};

// The freeze patterns split once per plan: most are plain layer paths (the advisor's "freeze the first k
// blocks" lists one per block), which a hash lookup decides, so a plan costs O(names), not O(names x
// patterns); only patterns with wildcards are matched one by one. A pattern without '*' or '?' matches
// exactly the equal name under globMatch, so the answers are the same.
struct FreezeMatcher
{
    std::unordered_set<std::string_view> keepExact, freezeExact;
    std::vector<std::string_view> keepGlob, freezeGlob;
    explicit FreezeMatcher(const std::vector<std::string>& freeze)
    {
        for (const std::string& pat : freeze) {
            // "!pattern" keeps a parameter trainable that another pattern freezes (LoRA: "*" but the adapters)
            const bool keep = pat.starts_with('!');
            const std::string_view body = keep ? std::string_view(pat).substr(1) : std::string_view(pat);
            const bool glob = body.find_first_of("*?") != std::string_view::npos;
            if (glob)
                (keep ? keepGlob : freezeGlob).push_back(body);
            else
                (keep ? keepExact : freezeExact).insert(body);
        }
    }
    bool empty() const { return keepExact.empty() && freezeExact.empty() && keepGlob.empty() && freezeGlob.empty(); }
    static bool any(const std::vector<std::string>& names, const std::unordered_set<std::string_view>& exact,
                    const std::vector<std::string_view>& globs)
    {
        for (const std::string& nm : names) {
            if (exact.count(nm))
                return true;
            for (std::string_view g : globs)
                if (globMatch(g, nm))
                    return true;
        }
        return false;
    }
};

bool frozenBy(const Model& m, int t, const FreezeMatcher& freeze)
{
    if (freeze.empty())
        return false;
    const Tensor& tensor = m.tensors[static_cast<size_t>(t)];
    std::vector<std::string> names{tensor.name};
    for (int c : tensor.consumers) {
        const Node& n = m.nodes[static_cast<size_t>(c)];
        if (n.layer > 0 && static_cast<size_t>(n.layer) < m.layers.size()) {
            // the layer path and every ancestor, so "layer1" freezes layer1's subtree
            for (int l = n.layer; l > 0; l = m.layers[static_cast<size_t>(l)].parent)
                names.push_back(m.layers[static_cast<size_t>(l)].path);
        }
        names.push_back(m.nodePath(c));
    }
    if (FreezeMatcher::any(names, freeze.keepExact, freeze.keepGlob))
        return false;
    return FreezeMatcher::any(names, freeze.freezeExact, freeze.freezeGlob);
}

} // namespace

PlanOptions planOptions(const Config& config)
{
    PlanOptions o;
    o.freeze = config.freeze;
    o.attention = config.attention;
    o.device = config.device;
    o.torch = config.torch;
    o.autocast = config.dtype == DtypePolicy::AmpFP16 || config.dtype == DtypePolicy::AmpBF16;
    switch (config.dtype) {
    case DtypePolicy::FP16:
    case DtypePolicy::BF16:
    case DtypePolicy::AmpFP16:
    case DtypePolicy::AmpBF16:
    case DtypePolicy::MixedFP16:
    case DtypePolicy::MixedBF16: o.lowPrecision = true; break;
    default: break;
    }
    // finetune/precision.cpp: PEFT's casts and kbit-prep's fp32 parameters, without autocast only
    const FineTune& ft = config.finetune;
    const bool quantPolicy = config.dtype == DtypePolicy::INT8 || config.dtype == DtypePolicy::INT4;
    // prepare_model_for_kbit_training(use_gradient_checkpointing=True) calls enable_input_require_grads()
    o.inputRequiresGrad = ft.quant != Quant::None && ft.kbitPrep;
    if ((ft.lora.r > 0 || ft.quant != Quant::None) && !o.autocast && !quantPolicy) {
        o.streamBytes = o.lowPrecision ? 2 : 4;
        o.adapterBytes = loraAdapterBytes(ft.lora);
        o.quant = ft.quant;
        o.kbitFp32 = o.quant != Quant::None && ft.kbitPrep;
        o.computeBytes = ft.computeBytes;
        // kbit preparation's fp32 stream gives attention fp32 operands: no flash kernel
        if (o.kbitFp32)
            o.lowPrecision = false;
    }
    return o;
}

namespace {

// buildPlan's steps, in order; each reads what the ones before it filled in.

void initPlan(PlanData& p, const Model& m, const PlanOptions& options)
{
    p.model = &m;
    p.freeze = options.freeze;
    p.options = options;
    p.shapeClasses = classifyShapes(m);
    const size_t nT = m.tensors.size(), nN = m.nodes.size();
    p.dynamic.assign(nT, 0);
    p.reqGrad.assign(nT, 0);
    p.getsGrad.assign(nT, 0);
    p.frozen.assign(nT, 0);
    p.virtualOut.assign(nT, 0);
    p.amp16.assign(nT, 0);
    p.nonContig.assign(nT, 0);
    p.root.resize(nT);
    p.paramSources.assign(nT, {});
    p.consumerUnits.assign(nT, {});
    p.unitOfNode.assign(nN, -1);
    p.quantizable = quantizableWeights(m);
    for (size_t t = 0; t < nT; ++t)
        p.root[t] = static_cast<int>(t);
    for (int t : m.inputs)
        p.dynamic[static_cast<size_t>(t)] = 1;
}

void classifyParameters(PlanData& p, const Model& m)
{
    const std::vector<std::string>& freeze = p.freeze;
    const size_t nT = m.tensors.size();
    // Parameters and buffers (aliases resolved: a stored tensor referenced through Identity counts once).
    const FreezeMatcher freezeMatcher(freeze);
    for (size_t t = 0; t < nT; ++t) {
        const Tensor& tensor = m.tensors[t];
        if (tensor.aliasOf >= 0 || tensor.producer >= 0)
            continue;
        if (tensor.role == TensorRole::Parameter) {
            p.trainable.push_back(static_cast<int>(t));
            p.frozen[t] = frozenBy(m, static_cast<int>(t), freezeMatcher) ? 1 : 0;
            if (!p.frozen[t]) {
                p.reqGrad[t] = 1;
                p.paramSources[t] = {static_cast<int>(t)};
            }
        } else if (tensor.role == TensorRole::Buffer) {
            p.buffers.push_back(static_cast<int>(t));
        }
    }
    for (size_t t = 0; t < nT; ++t) {
        const int a = m.tensors[t].aliasOf;
        if (a >= 0 && static_cast<size_t>(a) < nT) {
            p.reqGrad[t] = p.reqGrad[static_cast<size_t>(a)];
            p.paramSources[t] = p.paramSources[static_cast<size_t>(a)];
        }
    }
}

// Optimizer state and quantized sizes read a parameter's dims, and the adapters' dtype its name, on every
// tick: kept here once (issue 16: the name test alone was ~7 % of a 100k-node tick).
void recordParameterDims(PlanData& p, const Model& m)
{
    p.trainableDims.reserve(p.trainable.size());
    p.trainableDimsNumel.reserve(p.trainable.size());
    p.trainableAdapter.reserve(p.trainable.size());
    for (int t : p.trainable) {
        std::vector<int64_t>& dims = p.trainableDims.emplace_back();
        dims.reserve(m.tensors[static_cast<size_t>(t)].shape.dims.size()); // one allocation each, side by side
        for (const DimExpr& d : m.tensors[static_cast<size_t>(t)].shape.dims)
            dims.push_back(d.constantValue().value_or(0));
        p.trainableDimsNumel.push_back(dimsNumel(dims));
        p.trainableAdapter.push_back(isAdapterTensor(m.tensors[static_cast<size_t>(t)]) ? 1 : 0);
    }
}

void propagateDynamic(PlanData& p, const Model& m)
{
    const size_t nN = m.nodes.size();
    // Dynamic-ness, requires-grad and the parameters behind weight-side (static) tensors, in topological order.
    static const std::vector<std::string> noGrad{
        "Shape",   "Size",   "Range",          "ConstantOfShape", "Constant", "Equal",
        "Greater", "Less",   "GreaterOrEqual", "LessOrEqual",     "And",      "Or",
        "Xor",     "Not",    "IsNaN",          "IsInf",           "ArgMax",   "ArgMin",
        "NonZero", "OneHot", "EyeLike",        "Floor",           "Ceil",     "Sign",
        "Round"};
    for (size_t n = 0; n < nN; ++n) {
        const Node& nd = m.nodes[n];
        bool dyn = false, rg = false;
        std::vector<int> sources;
        for (int t : nd.inputs) {
            if (t < 0)
                continue;
            dyn = dyn || p.dynamic[static_cast<size_t>(t)];
            rg = rg || p.reqGrad[static_cast<size_t>(t)];
            for (int s : p.paramSources[static_cast<size_t>(t)])
                if (std::find(sources.begin(), sources.end(), s) == sources.end())
                    sources.push_back(s);
        }
        const bool diff = std::find(noGrad.begin(), noGrad.end(), nd.op) == noGrad.end();
        rg = rg || (dyn && inputEmbeddingRequiresGrad(m, p.options, nd));
        for (int t : nd.outputs) {
            if (t < 0)
                continue;
            p.dynamic[static_cast<size_t>(t)] = dyn;
            const bool f = floatish(m.tensors[static_cast<size_t>(t)]);
            p.reqGrad[static_cast<size_t>(t)] = rg && diff && f;
            if (!dyn && rg && diff && f)
                p.paramSources[static_cast<size_t>(t)] = sources;
        }
        if (!dyn)
            p.unitOfNode[n] = -1;
    }
}

void formUnits(PlanData& p, const Model& m, const PlanOptions& options)
{
    const size_t nN = m.nodes.size();
    // Units: recognised decompositions first, then one unit per remaining dynamic node.
    Builder b{m, p, options, {}, std::vector<uint8_t>(nN, 0)};
    // Attention first: its scale and mask ops must not be taken by the smaller patterns.
    if (options.attention == Attention::Fused)
        for (size_t n = 0; n < nN; ++n)
            if (m.nodes[n].op == "Softmax" && !b.claimed[n] && !m.nodes[n].outputs.empty() &&
                m.nodes[n].outputs[0] >= 0 && p.dynamic[static_cast<size_t>(m.nodes[n].outputs[0])])
                b.tryAttention(static_cast<int>(n));
    for (size_t n = 0; n < nN; ++n) {
        const Node& nd = m.nodes[n];
        bool dyn = false;
        for (int t : nd.outputs)
            dyn = dyn || (t >= 0 && p.dynamic[static_cast<size_t>(t)]);
        if (!dyn || b.claimed[n])
            continue;
        if (nd.op == "ReduceMean")
            b.tryLayerNorm(static_cast<int>(n));
        else if (nd.op == "Erf")
            b.tryGelu(static_cast<int>(n));
        else if (nd.op == "Sigmoid")
            b.trySilu(static_cast<int>(n));
        else if (nd.op == "InstanceNormalization")
            b.tryGroupNorm(static_cast<int>(n));
    }
    for (size_t n = 0; n < nN; ++n) {
        const Node& nd = m.nodes[n];
        bool dyn = false;
        for (int t : nd.outputs)
            dyn = dyn || (t >= 0 && p.dynamic[static_cast<size_t>(t)]);
        if (!dyn || b.claimed[n])
            continue;
        Unit u;
        u.head = static_cast<int>(n);
        u.nodes = {static_cast<int>(n)};
        for (int t : nd.inputs)
            if (t >= 0 && std::find(u.inputs.begin(), u.inputs.end(), t) == u.inputs.end())
                u.inputs.push_back(t);
        for (int t : nd.outputs)
            if (t >= 0)
                u.outputs.push_back(t);
        p.units.push_back(std::move(u));
    }
    std::sort(p.units.begin(), p.units.end(), [](const Unit& a, const Unit& c) { return a.head < c.head; });
    for (size_t u = 0; u < p.units.size(); ++u)
        for (int n : p.units[u].nodes)
            p.unitOfNode[static_cast<size_t>(n)] = static_cast<int>(u);
}

// The tensor a unit's view resolves from: the node's first input, or the matmul/conv result when the unit
// is the bias half of a linear or conv.
int linearBias(PlanData& p, const Model& m, Unit& u, const Node& nd)
{
    int x = nd.inputs.empty() ? -1 : nd.inputs[0];
    // MatMul/Gemm/Conv + Add(1-D bias): exporters split F.linear and conv bias this way, but PyTorch adds
    // the bias inside the same kernel (addmm, or matmul then add_ in at::linear): no second tensor
    if (u.kind == UnitKind::Op && nd.op == "Add" && nd.inputs.size() == 2 && nd.inputs[0] >= 0 && nd.inputs[1] >= 0) {
        const int a = nd.inputs[0], c = nd.inputs[1];
        const int dyn = p.dynamic[static_cast<size_t>(a)] ? a : c, bias = dyn == a ? c : a;
        const Tensor& bt = m.tensors[static_cast<size_t>(bias)];
        const int pr = m.tensors[static_cast<size_t>(dyn)].producer;
        const int pu = pr >= 0 ? p.unitOfNode[static_cast<size_t>(pr)] : -1;
        if (p.dynamic[static_cast<size_t>(dyn)] && !p.dynamic[static_cast<size_t>(bias)] && bt.shape.dims.size() == 1 &&
            floatish(bt) && pu >= 0 && p.units[static_cast<size_t>(pu)].kind == UnitKind::Op &&
            p.units[static_cast<size_t>(pu)].head == pr &&
            (m.nodes[static_cast<size_t>(pr)].op == "MatMul" || m.nodes[static_cast<size_t>(pr)].op == "Gemm" ||
             m.nodes[static_cast<size_t>(pr)].op == "Conv") &&
            m.tensors[static_cast<size_t>(dyn)].consumers.size() == 1 &&
            !m.tensors[static_cast<size_t>(dyn)].isGraphOutput) {
            u.isView = true;
            u.passGrad = true;
            u.saved.clear();
            x = dyn;
        }
    }
    return x;
}

// A view's outputs share the storage root of `x`; the kind of non-contiguity they carry decides whether a
// later reshape copies.
void resolveViewStorage(PlanData& p, Unit& u, const Node& nd, int x)
{
    if (!u.isView || x < 0 || !p.dynamic[static_cast<size_t>(x)])
        return;
    const uint8_t inKind = p.nonContig[static_cast<size_t>(x)];
    uint8_t kind = inKind;
    bool copies = false;
    if (nd.op == "Transpose") {
        const auto perm = nd.attrInts("perm");
        bool identity = !perm.empty();
        for (size_t i = 0; i < perm.size(); ++i)
            identity = identity && perm[i] == static_cast<int64_t>(i);
        if (!identity)
            kind = 2;
    } else if (nd.op == "Split") {
        if (nd.attrInt("axis", 0) != 0)
            kind = std::max<uint8_t>(kind, 1);
    } else if (nd.op == "Slice" || nd.op == "Expand") {
        kind = std::max<uint8_t>(kind, 1);
    } else if (nd.op == "Gather") {
        if (nd.attrInt("axis", 0) != 0)
            kind = std::max<uint8_t>(kind, 1);
    } else if ((nd.op == "Reshape" || nd.op == "Flatten") && inKind == 2) {
        copies = true; // torch.reshape of a permuted view materialises a contiguous copy
    }
    if (copies) {
        u.isView = false;
        u.passGrad = true;
    } else {
        for (int t : u.outputs) {
            p.root[static_cast<size_t>(t)] = p.root[static_cast<size_t>(x)];
            p.nonContig[static_cast<size_t>(t)] = kind;
        }
    }
}

// Saved items point at storage roots, never at static tensors (saving a parameter is free), once each.
void cleanSavedItems(PlanData& p, Unit& u)
{
    for (SavedItem& s : u.saved)
        if (s.kind == SavedItem::Kind::Storage && s.tensor >= 0)
            s.tensor = p.root[static_cast<size_t>(s.tensor)];
    // Inputs that are views of static tensors are not activations.
    if (!u.isView && u.kind == UnitKind::Op) {
        // remove Storage items that point at static tensors (parameters): saving a parameter is free
        u.saved.erase(std::remove_if(u.saved.begin(), u.saved.end(),
                                     [&](const SavedItem& s) {
                                         return s.kind != SavedItem::Kind::Extra &&
                                                (s.tensor < 0 || !p.dynamic[static_cast<size_t>(s.tensor)]);
                                     }),
                      u.saved.end());
    }
    // duplicates inside one unit
    std::vector<SavedItem> uniq;
    for (const SavedItem& s : u.saved) {
        const bool dup = s.kind != SavedItem::Kind::Extra &&
                         std::any_of(uniq.begin(), uniq.end(),
                                     [&](const SavedItem& o) { return o.kind == s.kind && o.tensor == s.tensor; });
        if (!dup)
            uniq.push_back(s);
    }
    u.saved = std::move(uniq);
}

void applySavedRules(PlanData& p, const Model& m)
{
    // Storage roots and contiguity, in order (a unit's inputs are resolved before it).
    // nonContig: 1 strided (Split/Slice/Expand), 2 permuted (Transpose): reshaping a permuted view copies.
    std::map<std::string, int> unknownOps;
    std::map<std::string, std::string> unknownFirst;
    p.actElem = finetuneActivationElems(m, p);
    for (Unit& u : p.units) {
        const Node& nd = m.nodes[static_cast<size_t>(u.head)];
        if (u.kind == UnitKind::Op) {
            applyOpRule(m, p, u);
            adjustFinetuneUnit(m, p, u);
            if (u.conservative) {
                ++unknownOps[nd.op];
                if (!unknownFirst.count(nd.op))
                    unknownFirst[nd.op] = m.nodePath(u.head);
            }
        } else {
            // fused units: keep x only if something upstream requires grad
            bool anyRg = false;
            for (int t : u.inputs)
                anyRg = anyRg || p.reqGrad[static_cast<size_t>(t)];
            if (!anyRg)
                u.saved.clear();
            if (u.kind == UnitKind::Gelu || u.kind == UnitKind::Silu)
                u.inplaceable = false;
        }
        const int x = linearBias(p, m, u, nd);
        resolveViewStorage(p, u, nd, x);
        cleanSavedItems(p, u);
    }
    for (const auto& [op, count] : unknownOps)
        p.warnings.push_back("no saved-for-backward rule for " + op + " (" + std::to_string(count) + " node" +
                             (count > 1 ? "s" : "") + ", first " + unknownFirst[op] +
                             "): assumed it keeps its inputs and outputs");
}

void linkConsumers(PlanData& p)
{
    // Consumers by unit, for liveness.
    for (size_t u = 0; u < p.units.size(); ++u)
        for (int t : p.units[u].inputs)
            if (p.dynamic[static_cast<size_t>(t)])
                p.consumerUnits[static_cast<size_t>(t)].push_back(static_cast<int>(u));
}

void propagateGradients(PlanData& p, const Model& m)
{
    // Gradients flow from the loss (the first graph output) back through differentiable units.
    p.lossTensor = m.outputs.empty() ? -1 : m.outputs[0];
    if (p.lossTensor >= 0 && p.reqGrad[static_cast<size_t>(p.lossTensor)])
        p.getsGrad[static_cast<size_t>(p.lossTensor)] = 1;
    for (size_t ui = p.units.size(); ui-- > 0;) {
        const Unit& u = p.units[ui];
        bool outGrad = false;
        for (int t : u.outputs)
            outGrad = outGrad || p.getsGrad[static_cast<size_t>(t)];
        if (!outGrad || !u.differentiable)
            continue;
        for (int t : u.inputs)
            if (p.dynamic[static_cast<size_t>(t)] && p.reqGrad[static_cast<size_t>(t)])
                p.getsGrad[static_cast<size_t>(t)] = 1;
    }
}

// Autocast classes: which outputs autocast makes 16-bit, and the parameters it caches a 16-bit copy of.
void classifyAutocast(PlanData& p, const Model& m)
{
    std::vector<uint8_t> cachedCopy(m.tensors.size(), 0); // already in amp16Params
    for (const Unit& u : p.units) {
        const Node& nd = m.nodes[static_cast<size_t>(u.head)];
        bool low = false;
        if (u.kind == UnitKind::LayerNorm || u.kind == UnitKind::GroupNorm) {
            low = false;
        } else if (ampLowOp(nd.op)) {
            low = true;
            for (int t : u.inputs)
                if (!p.dynamic[static_cast<size_t>(t)])
                    for (int s : p.paramSources[static_cast<size_t>(t)])
                        if (!cachedCopy[static_cast<size_t>(s)]) {
                            cachedCopy[static_cast<size_t>(s)] = 1;
                            p.amp16Params.push_back(s);
                        }
        } else if (u.kind == UnitKind::Attention) {
            low = true; // scaled_dot_product_attention is on the lower_precision_fp list
        } else if (!ampFp32Op(nd.op)) {
            bool any = false, all = true;
            for (int t : u.inputs) {
                const Tensor& tt = m.tensors[static_cast<size_t>(t)];
                if (!floatish(tt))
                    continue;
                if (!p.dynamic[static_cast<size_t>(t)]) {
                    if (u.kind == UnitKind::Op && promotesWithParams(nd.op) && tt.role != TensorRole::Constant &&
                        tt.role != TensorRole::Activation && !tt.shape.dims.empty()) {
                        int64_t n = 1;
                        for (const DimExpr& d : tt.shape.dims)
                            n *= d.constantValue().value_or(2);
                        all = all && n <= 1;
                    }
                    continue;
                }
                any = true;
                all = all && p.amp16[static_cast<size_t>(t)];
            }
            low = any && all;
        }
        if (low)
            for (int t : u.outputs)
                p.amp16[static_cast<size_t>(t)] = 1;
    }
}

void autocastActivationCopies(PlanData& p, const Model& m)
{
    // Under autocast a lower-precision op casts each fp32 activation operand to 16 bits; autocast caches
    // only casts of leaf tensors that require grad (weights: autocast_mode.h cached_cast), so every consumer
    // makes its own copy of an activation, and backward keeps that copy, not the fp32 tensor.
    for (Unit& u : p.units) {
        const Node& nd = m.nodes[static_cast<size_t>(u.head)];
        if (!(u.kind == UnitKind::Attention || (u.kind == UnitKind::Op && ampLowOp(nd.op))))
            continue;
        for (int t : u.inputs) {
            const size_t ti = static_cast<size_t>(t);
            if (!p.dynamic[ti] || p.amp16[ti] || !floatish(m.tensors[ti]))
                continue;
            bool had = false;
            for (auto it = u.saved.begin(); it != u.saved.end();) {
                const bool match = (it->kind == SavedItem::Kind::Storage && it->tensor == p.root[ti]) ||
                                   (it->kind == SavedItem::Kind::Copy && it->tensor == t);
                if (match) {
                    had = true;
                    it = u.saved.erase(it);
                } else {
                    ++it;
                }
            }
            if (had) {
                SavedItem copy{SavedItem::Kind::Copy, t};
                copy.den = 2; // the 16-bit copy of an fp32 activation
                u.saved.push_back(copy);
            }
            if (p.getsGrad[ti]) {
                SavedItem g{SavedItem::Kind::Copy, t};
                g.den = 2;
                u.castGrads.push_back(g);
            }
        }
    }
}

void flattenForTicks(PlanData& p, const Model& m)
{
    for (size_t n = 0; n < m.nodes.size(); ++n)
        for (int t : m.nodes[n].outputs)
            if (t >= 0) {
                p.nodeOutputs.emplace_back(static_cast<int>(n), t);
                if (m.tensors[static_cast<size_t>(t)].role == TensorRole::Activation)
                    p.classicOutputs.push_back(t);
            }
    for (size_t t = 0; t < m.tensors.size(); ++t) {
        const Tensor& tensor = m.tensors[t];
        if (tensor.role == TensorRole::Parameter && tensor.aliasOf < 0 && tensor.producer < 0)
            p.classicParams.push_back(static_cast<int>(t));
    }
    // parameters reached through aliases: the first consumer of the lowest-numbered alias that has one
    std::vector<int> aliasConsumer(m.tensors.size(), -1);
    for (size_t a = m.tensors.size(); a-- > 0;) {
        const Tensor& at = m.tensors[a];
        if (at.aliasOf >= 0 && !at.consumers.empty())
            aliasConsumer[static_cast<size_t>(at.aliasOf)] = at.consumers.front();
    }
    p.paramNode.reserve(p.trainable.size());
    for (int t : p.trainable) {
        const auto& cons = m.tensors[static_cast<size_t>(t)].consumers;
        p.paramNode.push_back(cons.empty() ? aliasConsumer[static_cast<size_t>(t)] : cons.front());
    }
    std::map<std::tuple<int, int, int>, int> spanIds;
    const auto spanOf = [&](int tensor, int begin, int end) {
        const int shape = p.shapeClasses.classOf[static_cast<size_t>(tensor)];
        if (shape < 0)
            return -1;
        const auto [pos, added] = spanIds.try_emplace({shape, begin, end}, static_cast<int>(p.spans.size()));
        if (added)
            p.spans.push_back({shape, begin, end});
        return pos->second;
    };
    for (Unit& u : p.units) {
        // unitMacs' dims: the RNN's T * B, or the reduction dim when the shape has it
        if (u.macDimTensor >= 0 && u.macDim == -2)
            u.macSpan = spanOf(u.macDimTensor, 0, 2);
        else if (u.macDimTensor >= 0 && u.macDim >= 0 &&
                 static_cast<size_t>(u.macDim) < m.tensors[static_cast<size_t>(u.macDimTensor)].shape.dims.size())
            u.macSpan = spanOf(u.macDimTensor, u.macDim, u.macDim + 1);
        for (SavedItem& it : u.saved) {
            if (it.kind != SavedItem::Kind::Extra || it.dimBegin < 0 || it.tensor < 0)
                continue;
            it.span = spanOf(it.tensor, it.dimBegin, it.dimEnd);
        }
    }
    p.savedBegin.reserve(p.units.size() + 1);
    for (const Unit& u : p.units) {
        p.savedBegin.push_back(static_cast<int>(p.savedFlat.size()));
        p.savedFlat.insert(p.savedFlat.end(), u.saved.begin(), u.saved.end());
    }
    p.savedBegin.push_back(static_cast<int>(p.savedFlat.size()));
}

} // namespace

PlanData buildPlan(const Model& m, const PlanOptions& options)
{
    PlanData p;
    initPlan(p, m, options);
    classifyParameters(p, m);
    recordParameterDims(p, m);
    propagateDynamic(p, m);
    formUnits(p, m, options);
    applySavedRules(p, m);
    linkConsumers(p);
    propagateGradients(p, m);
    classifyAutocast(p, m);
    if (options.autocast)
        autocastActivationCopies(p, m);
    // frozen parameters that are not consumed by anything that needs them are still weights
    flattenForTicks(p, m);
    p.anyInplaceable = std::any_of(p.units.begin(), p.units.end(), [](const Unit& u) { return u.inplaceable; });
    p.simCache = newSimCache();
    return p;
}

EnginePlan makePlan(const Model& model, const std::vector<std::string>& freeze)
{
    Config c;
    c.freeze = freeze;
    return makePlan(model, c);
}

EnginePlan makePlan(const Model& model, const Config& config)
{
    EnginePlan plan;
    plan.model = &model;
    plan.data = std::make_shared<const PlanData>(buildPlan(model, planOptions(config)));
    return plan;
}

bool planMatches(const EnginePlan& plan, const Config& config)
{
    return plan.data && plan.data->options == planOptions(config);
}

} // namespace headroom
