// The plan's units: an exported graph writes out ops that PyTorch runs as one kernel (layer norm, GELU, SiLU,
// group norm, scaled-dot-product attention), and what autograd saves is the fused op's, not the pieces'.
// Each decomposition is a pattern matched from its anchor op (op_classes.cpp, fusionAnchor); the nodes left
// over become one unit each.
#include "rules/fused_units.h"

#include "rules/op_classes.h"

#include <algorithm>

namespace headroom {

namespace {

// The graph as the patterns read it, and the nodes already taken by a fused unit.
struct FusionGraph
{
    const Model& m;
    PlanData& p;
    const PlanOptions& opts;
    std::vector<uint8_t> claimed; // node already in a fused unit

    int producer(int t) const { return t < 0 ? -1 : m.tensors[static_cast<size_t>(t)].producer; }
    const Node& node(int n) const { return m.nodes[static_cast<size_t>(n)]; }
    const std::vector<int>& consumers(int t) const { return m.tensors[static_cast<size_t>(t)].consumers; }
    bool isStatic(int t) const { return t >= 0 && !p.dynamic[static_cast<size_t>(t)]; }
    bool isClaimed(int n) const { return claimed[static_cast<size_t>(n)] != 0; }
    bool reqGrad(int t) const { return t >= 0 && p.reqGrad[static_cast<size_t>(t)]; }
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

    // One unit for `nodes`, saving the storage of `x` (its root is resolved later); returns it.
    Unit& addFused(UnitKind kind, std::vector<int> nodes, int x)
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
        u.saved.push_back({SavedItem::Kind::Storage, x});
        p.units.push_back(std::move(u));
        return p.units.back();
    }

    // The single consumer of `last`'s output when it is an unclaimed `op` whose other operand is static (an
    // affine weight or bias, a constant): appended to nodes and made the new last.
    void extendByConstant(int& last, const char* op, std::vector<int>& nodes) const
    {
        const int nx = only(out(last));
        if (!usable(nx, op) || !isStatic(other(nx, out(last))))
            return;
        nodes.push_back(nx);
        last = nx;
    }
};

// Statistics kept in fp32 per row (or per group): num values of the tensor's dims [dimBegin, dimEnd).
SavedItem fp32Stats(int tensor, int64_t num, int dimBegin = -1, int dimEnd = -1)
{
    SavedItem s{SavedItem::Kind::Extra, tensor};
    s.num = num;
    s.elemBytes = 4;
    s.fp32Stat = true;
    s.dimBegin = dimBegin;
    s.dimEnd = dimEnd;
    return s;
}

// x - mean, ^2, mean, + eps, sqrt, divide, (* weight), (+ bias): PyTorch's native_layer_norm, which
// keeps its input plus a mean and rstd per row.
void tryLayerNorm(FusionGraph& g, int r1)
{
    const Node& n1 = g.node(r1);
    if (n1.inputs.empty())
        return;
    const int x = n1.inputs[0];
    const int mean = g.out(r1);
    const int sub = g.only(mean);
    if (!g.usable(sub, "Sub") || g.node(sub).inputs.size() != 2 || g.node(sub).inputs[0] != x)
        return;
    const int d = g.out(sub);
    int pw = -1, dv = -1;
    for (int c : g.consumers(d)) {
        if (g.node(c).op == "Pow")
            pw = c;
        else if (g.node(c).op == "Div")
            dv = c;
    }
    if (g.consumers(d).size() != 2 || !g.usable(pw, "Pow") || !g.usable(dv, "Div"))
        return;
    const int r2 = g.only(g.out(pw));
    if (!g.usable(r2, "ReduceMean"))
        return;
    int cur = g.only(g.out(r2));
    std::vector<int> nodes{r1, sub, pw, r2};
    if (g.usable(cur, "Add") && g.isStatic(g.other(cur, g.out(r2)))) {
        nodes.push_back(cur);
        cur = g.only(g.out(cur));
    }
    if (!g.usable(cur, "Sqrt"))
        return;
    nodes.push_back(cur);
    if (g.only(g.out(cur)) != dv || g.node(dv).inputs[0] != d)
        return;
    nodes.push_back(dv);
    int last = dv;
    g.extendByConstant(last, "Mul", nodes);
    g.extendByConstant(last, "Add", nodes);
    g.addFused(UnitKind::LayerNorm, nodes, x).saved.push_back(fp32Stats(mean, 2));
}

// x / sqrt(2) (or * 1/sqrt(2)), erf, + 1, * x, * 0.5 in either order: PyTorch's gelu keeps x only.
void tryGelu(FusionGraph& g, int e)
{
    const Node& en = g.node(e);
    if (en.inputs.empty())
        return;
    const int scaled = en.inputs[0];
    const int v = g.producer(scaled);
    if (v < 0 || g.isClaimed(v) || g.only(scaled) != e)
        return;
    if (!scalesByConstant(g.node(v).op) || g.node(v).inputs.size() != 2 || !g.isStatic(g.node(v).inputs[1]))
        return;
    const int x = g.node(v).inputs[0];
    const int a = g.only(g.out(e));
    if (!g.usable(a, "Add") || !g.isStatic(g.other(a, g.out(e))))
        return;
    const int m1 = g.only(g.out(a));
    if (!g.usable(m1, "Mul"))
        return;
    std::vector<int> nodes{v, e, a, m1};
    const int t = g.other(m1, g.out(a));
    if (t >= 0 && g.isStatic(t)) {
        // 0.5 * (1 + erf) first, then * x (the dynamo exporter's decomposition of aten.gelu)
        const int m2 = g.only(g.out(m1));
        if (!g.usable(m2, "Mul") || g.other(m2, g.out(m1)) != x)
            return;
        nodes.push_back(m2);
    } else if (t != x) {
        const int h = g.producer(t);
        if (h < 0 || g.isClaimed(h) || g.node(h).op != "Mul" || g.only(t) != m1 || g.other(h, x) < 0 ||
            !g.isStatic(g.other(h, x)))
            return;
        nodes.push_back(h);
    } else {
        int last = m1;
        g.extendByConstant(last, "Mul", nodes); // the trailing * 0.5
    }
    g.addFused(UnitKind::Gelu, nodes, x);
}

// Reshape to [N, G, -1], InstanceNormalization (exporter's ones/zeros scale and bias), Reshape back,
// then the affine * weight + bias: torch.onnx's GroupNorm. PyTorch runs native_group_norm, which keeps
// its input plus a mean and rstd per (N, G); the normalised tensor and the affine's product are
// never saved.
void tryGroupNorm(FusionGraph& g, int in)
{
    const Node& nn = g.node(in);
    if (nn.inputs.size() < 3 || !g.isStatic(nn.inputs[1]) || !g.isStatic(nn.inputs[2]))
        return;
    const int r1 = g.producer(nn.inputs[0]);
    if (!g.usable(r1, "Reshape") || g.only(nn.inputs[0]) != in || g.node(r1).inputs.empty())
        return;
    const int x = g.node(r1).inputs[0];
    const int r2 = g.only(g.out(in));
    if (!g.usable(r2, "Reshape"))
        return;
    std::vector<int> nodes{r1, in, r2};
    int last = r2;
    g.extendByConstant(last, "Mul", nodes);
    g.extendByConstant(last, "Add", nodes);
    // [N, G, ...]: dims 0..2
    g.addFused(UnitKind::GroupNorm, nodes, x).saved.push_back(fp32Stats(nn.inputs[0], 2, 0, 2));
}

// x * sigmoid(x): nn.SiLU keeps x only.
void trySilu(FusionGraph& g, int s)
{
    const Node& sn = g.node(s);
    if (sn.inputs.empty())
        return;
    const int x = sn.inputs[0];
    const int mul = g.only(g.out(s));
    if (!g.usable(mul, "Mul") || g.other(mul, g.out(s)) != x)
        return;
    g.addFused(UnitKind::Silu, {s, mul}, x);
}

// The operand of Hugging Face's repeat_kv (x[:, :, None].expand(...).reshape(...)) that `t` is read from
// through views and one Expand, i.e. the grouped key or value before repetition; -1 when `t` is no repeated
// grouped-query operand.
int expandSource(const FusionGraph& g, int t)
{
    for (int guard = 0; guard < 6 && t >= 0; ++guard) {
        const int pr = g.producer(t);
        if (pr < 0 || g.node(pr).inputs.empty())
            return -1;
        if (g.node(pr).op == "Expand") {
            int x = g.node(pr).inputs[0]; // the x[:, :, None] view of the grouped tensor
            for (int up = 0; up < 2; ++up) {
                const int xp = g.producer(x);
                if (xp < 0 || !isViewOp(g.node(xp).op) || g.node(xp).inputs.empty())
                    break;
                x = g.node(xp).inputs[0];
            }
            return x;
        }
        if (!isViewOp(g.node(pr).op))
            return -1;
        t = g.node(pr).inputs[0];
    }
    return -1;
}

// Backwards from the scores: the scale and mask ops (appended to nodes) down to the score MatMul q @ k^T,
// which is returned (-1: no attention).
int scoreMatMul(const FusionGraph& g, int scores, std::vector<int>& nodes)
{
    int t = scores;
    for (int guard = 0; guard < 8; ++guard) {
        const int pr = g.producer(t);
        if (pr < 0 || g.isClaimed(pr) || g.only(t) < 0)
            return -1;
        const Node& pn = g.node(pr);
        if (pn.op == "MatMul" && pn.inputs.size() == 2)
            return g.only(g.out(pr)) < 0 ? -1 : pr;
        int next = -1;
        const ScoreStep step = scoreStep(pn.op);
        if ((step == ScoreStep::FirstOperand || step == ScoreStep::EitherOperand) && pn.inputs.size() == 2) {
            // the scores are the operand that requires grad; the mask or scale does not
            const int a = pn.inputs[0], c = pn.inputs[1];
            if (g.reqGrad(a) && !g.reqGrad(c))
                next = a;
            else if (g.reqGrad(c) && !g.reqGrad(a) && step == ScoreStep::EitherOperand)
                next = c;
        } else if (step == ScoreStep::MaskedFill && pn.inputs.size() == 3) {
            const int a = pn.inputs[1], c = pn.inputs[2];
            if (g.reqGrad(a) && !g.reqGrad(c))
                next = a;
            else if (g.reqGrad(c) && !g.reqGrad(a))
                next = c;
        } else if (step == ScoreStep::Cast) {
            next = pn.inputs[0];
        }
        if (next < 0)
            return -1;
        nodes.push_back(pr);
        t = next;
    }
    return -1;
}

// Forwards from the probabilities: an optional cast and dropout (appended to nodes), then the value MatMul
// probabilities @ v, which is returned (-1: no attention).
int valueMatMul(const FusionGraph& g, int probabilities, std::vector<int>& nodes)
{
    int cur = probabilities;
    for (int guard = 0; guard < 4; ++guard) {
        const int c = g.only(cur);
        if (c < 0 || g.isClaimed(c))
            return -1;
        const Node& cn = g.node(c);
        if (cn.op == "MatMul" && cn.inputs.size() == 2 && cn.inputs[0] == cur)
            return c;
        if (!passesProbabilities(cn.op))
            return -1;
        for (size_t o = 1; o < cn.outputs.size(); ++o) // Dropout's mask must be unused
            if (cn.outputs[o] >= 0 && !g.consumers(cn.outputs[o]).empty())
                return -1;
        nodes.push_back(c);
        cur = g.out(c);
    }
    return -1;
}

// Which kernel runs the attention and what its backward keeps (docs/DESIGN.md). Inputs: the operands'
// compute width and whether k and v come from repeat_kv.
struct AttentionKernel
{
    bool fused = false;   // no [B, H, T, T] matrix kept (else: the written-out graph, as eager and math run it)
    bool grouped = false; // k and v are saved as the grouped tensors, before repeat_kv
    int castBytes = 0;    // q, k, v and the output are saved as new tensors of this width (0: as they are)
};

// The head dim of q (0: not a constant).
int64_t headDim(const FusionGraph& g, int q)
{
    const auto& qd = g.m.tensors[static_cast<size_t>(q)].shape.dims;
    return qd.empty() ? 0 : qd.back().constantValue().value_or(0);
}

AttentionKernel attentionKernel(const FusionGraph& g, int q, bool gqa)
{
    switch (g.opts.attention) {
    case Attention::Math: return {};
    case Attention::Flash2:
        // transformers' flash_attention_2 (integrations/flash_attention.py flash_attention_forward and
        // modeling_flash_attention_utils.py _flash_attention_forward): k and v go in with their kv heads
        // (flash_attn handles GQA, no repeat_kv); fp32 q, k, v (kbit preparation's fp32 stream) are cast
        // `.to(target_dtype)`, and flash_attn's FlashAttnFunc saves those casts: q, k, v, out, softmax_lse
        // (flash_attn_interface.py ctx.save_for_backward). flash_attn runs only fp16/bf16, so a 16-bit run.
        return {true, gqa, g.opts.lowPrecision ? 0 : 2};
    case Attention::Flex:
        // torch.nn.attention.flex_attention (flex_attention.py; its autograd function FlexAttentionAutogradOp
        // saves query, key, value, out, logsumexp and the block mask): fp32 allowed, no cast; Hugging Face's
        // integrations/flex_attention.py passes enable_gqa=True, so k and v stay grouped. The BlockMask is built
        // once per forward and shared by every layer: B x ceil(T/128)^2 int32 indices per mask tensor (4 of
        // them: 64 KiB per sequence at T = 8192), not counted per layer.
        return {true, gqa, 0};
    case Attention::Fused: break;
    }
    // SDPA's backend choice (aten/src/ATen/native/transformers/cuda/sdp_utils.cpp select_sdp_backend): flash
    // or cuDNN (fp16/bf16, head dim <= 256, no explicit attn_mask), else memory-efficient (fp32 too, an
    // attn_mask allowed, head dim a multiple of minimum_gemm_alignment: 4 for fp32 on sm80+, 8 for 16 bits),
    // else the math kernel, which is the written-out graph. Flash, cuDNN and memory-efficient all save query,
    // key, value, output and a fp32 logsumexp (derivatives.yaml _scaled_dot_product_flash_attention /
    // _scaled_dot_product_efficient_attention / _scaled_dot_product_cudnn_attention; the memory-efficient
    // logsumexp rounds T up to a multiple of 32, not modelled) plus the philox seed and offset.
    // transformers (integrations/sdpa_attention.py sdpa_attention_forward, 00c238b) passes is_causal=True and
    // no attn_mask when the mask is None (a causal LM without padding), so flash is open to 16-bit runs.
    // Grouped-query attention in fp32 (an fp32 model, or QLoRA's kbit-prepared fp32 stream): Hugging Face
    // passes enable_gqa=True without a mask (use_gqa_in_sdpa: torch >= 2.5 and no mask), which
    // can_use_mem_efficient_attention refused before its supports_gqa (PyTorch main 001f694 allows it); the
    // H100 truth (tests/data/hf/h100-hf-points.jsonl, tst_hfconfig llamaSmallAgainstH100: sdpa fp32 measured
    // as eager to 0.0 %) says the math kernel, so math it is. k and v are kept as the graph has them: the
    // repeat_kv copies (the grouped ones would be what enable_gqa keeps in 16 bits; the export-consistency
    // test tst_hfconfig llamaSmallAgainstExport pins the written-out form).
    const int64_t d = headDim(g, q);
    const int64_t align = g.opts.lowPrecision ? 8 : 4;
    if ((!g.opts.lowPrecision && gqa) || (d > 0 && d % align != 0))
        return {};
    return {true, false, 0};
}

// MatMul(q, k^T) -> [scale] -> [mask: Add / Where / Sub] -> Softmax(last axis) -> [Cast] -> [Dropout]
// -> MatMul(., v): the attention that PyTorch >= 2.0 runs as one kernel when the model calls
// F.scaled_dot_product_attention (nn.MultiheadAttention with need_weights=False, which
// nn.TransformerEncoderLayer uses; Hugging Face's attn_implementation "sdpa", "flash_attention_2",
// "flex_attention"): attentionKernel says which kernel and what it saves; the [B, H, T, T] scores are never
// stored, in training or inference.
void tryAttention(FusionGraph& g, int sm)
{
    const Node& sn = g.node(sm);
    if (sn.inputs.empty() || sn.outputs.empty())
        return;
    const int scores = sn.inputs[0];
    const auto& sd = g.m.tensors[static_cast<size_t>(scores)].shape.dims;
    const int64_t axis = sn.attrInt("axis", -1);
    if (sd.size() < 3 || (axis != -1 && axis != static_cast<int64_t>(sd.size()) - 1))
        return;
    std::vector<int> nodes{sm};
    const int mm1 = scoreMatMul(g, scores, nodes);
    if (mm1 < 0)
        return;
    const int mm2 = valueMatMul(g, g.out(sm), nodes);
    if (mm2 < 0)
        return;
    int q = g.node(mm1).inputs[0];
    const int kT = g.node(mm1).inputs[1];
    const int v = g.node(mm2).inputs[1];
    if (!g.p.dynamic[static_cast<size_t>(q)] || !g.p.dynamic[static_cast<size_t>(kT)] ||
        !g.p.dynamic[static_cast<size_t>(v)])
        return;
    const int kSrc = expandSource(g, kT), vSrc = expandSource(g, v);
    const AttentionKernel kernel = attentionKernel(g, q, kSrc >= 0 && vSrc >= 0);
    if (!kernel.fused)
        return;
    nodes.push_back(mm1);
    nodes.push_back(mm2);
    // q / sqrt(d) written before the matmul (torch 1.x MultiheadAttention) is SDPA's own `scale`
    if (const int qs = g.producer(q); qs >= 0 && !g.isClaimed(qs) && g.only(q) == mm1 &&
                                      scalesByConstant(g.node(qs).op) && g.node(qs).inputs.size() == 2 &&
                                      g.isStatic(g.node(qs).inputs[1]) &&
                                      g.p.dynamic[static_cast<size_t>(g.node(qs).inputs[0])]) {
        nodes.push_back(qs);
        q = g.node(qs).inputs[0];
    }
    Unit& u = g.addFused(UnitKind::Attention, nodes, q);
    const int key = kernel.grouped ? kSrc : kT, value = kernel.grouped ? vSrc : v;
    if (kernel.castBytes > 0) {
        u.saved.clear();
        for (int t : {q, key, value, g.out(mm2)}) {
            SavedItem cast{SavedItem::Kind::Extra, t};
            cast.elemBytes = kernel.castBytes;
            u.saved.push_back(cast);
        }
    } else {
        u.saved.push_back({SavedItem::Kind::Storage, key});
        u.saved.push_back({SavedItem::Kind::Storage, value});
        u.saved.push_back({SavedItem::Kind::Storage, g.out(mm2)});
    }
    // logsumexp: fp32, one per (batch, head, query row)
    u.saved.push_back(fp32Stats(scores, 1, 0, static_cast<int>(sd.size()) - 1));
    // forward MACs of both matmuls: scores * head_dim * 2
    const auto& qd = g.m.tensors[static_cast<size_t>(q)].shape.dims;
    u.macTensor = scores;
    u.macPerElem = 2 * (qd.empty() ? 1 : qd.back().constantValue().value_or(1));
}

bool dynamicOutput(const PlanData& p, const Node& nd)
{
    bool dyn = false;
    for (int t : nd.outputs)
        dyn = dyn || (t >= 0 && p.dynamic[static_cast<size_t>(t)]);
    return dyn;
}

} // namespace

void formUnits(PlanData& p, const Model& m, const PlanOptions& options)
{
    const size_t nN = m.nodes.size();
    // Units: recognised decompositions first, then one unit per remaining dynamic node.
    FusionGraph g{m, p, options, std::vector<uint8_t>(nN, 0)};
    // Attention first: its scale and mask ops must not be taken by the smaller patterns.
    if (options.attention != Attention::Math)
        for (size_t n = 0; n < nN; ++n)
            if (fusionAnchor(m.nodes[n].op) == UnitKind::Attention && !g.claimed[n] && !m.nodes[n].outputs.empty() &&
                m.nodes[n].outputs[0] >= 0 && p.dynamic[static_cast<size_t>(m.nodes[n].outputs[0])])
                tryAttention(g, static_cast<int>(n));
    for (size_t n = 0; n < nN; ++n) {
        if (!dynamicOutput(p, m.nodes[n]) || g.claimed[n])
            continue;
        switch (fusionAnchor(m.nodes[n].op)) {
        case UnitKind::LayerNorm: tryLayerNorm(g, static_cast<int>(n)); break;
        case UnitKind::Gelu: tryGelu(g, static_cast<int>(n)); break;
        case UnitKind::Silu: trySilu(g, static_cast<int>(n)); break;
        case UnitKind::GroupNorm: tryGroupNorm(g, static_cast<int>(n)); break;
        case UnitKind::Attention: // tried above
        case UnitKind::Op: break;
        }
    }
    for (size_t n = 0; n < nN; ++n) {
        const Node& nd = m.nodes[n];
        if (!dynamicOutput(p, nd) || g.claimed[n])
            continue;
        Unit u;
        u.head = static_cast<int>(n);
        u.nodes = {static_cast<int>(n)};
        u.inputs.reserve(nd.inputs.size()); // one allocation each, not the growth steps (a plan builds ~3k)
        u.outputs.reserve(nd.outputs.size());
        // CastLike reads its target (input 1) for the dtype only: x.to(input_dtype) holds no reference to
        // the tensor input_dtype came from, and no gradient flows to it
        const size_t read = nd.op == "CastLike" ? std::min<size_t>(nd.inputs.size(), 1) : nd.inputs.size();
        for (size_t i = 0; i < read; ++i)
            if (const int t = nd.inputs[i]; t >= 0 && std::find(u.inputs.begin(), u.inputs.end(), t) == u.inputs.end())
                u.inputs.push_back(t);
        for (int t : nd.outputs)
            if (t >= 0)
                u.outputs.push_back(t);
        p.units.push_back(std::move(u));
    }
    // Topological order by head (heads are distinct: a node is in one unit). The fused units came first, so
    // the vector is a few sorted runs, on which std::sort of the ~200-byte units fell back to heapsort (perf:
    // ~4 % of a plan build); sorting the heads and moving each unit once gives the same order.
    std::vector<std::pair<int, int>> order(p.units.size());
    for (size_t u = 0; u < p.units.size(); ++u)
        order[u] = {p.units[u].head, static_cast<int>(u)};
    std::sort(order.begin(), order.end());
    std::vector<Unit> sorted;
    sorted.reserve(order.size());
    for (const auto& [head, u] : order)
        sorted.push_back(std::move(p.units[static_cast<size_t>(u)]));
    p.units = std::move(sorted);
    for (size_t u = 0; u < p.units.size(); ++u)
        for (int n : p.units[u].nodes)
            p.unitOfNode[static_cast<size_t>(n)] = static_cast<int>(u);
}

} // namespace headroom
