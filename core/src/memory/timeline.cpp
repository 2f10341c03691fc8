// The simulated steady-state iteration (DESIGN.md "Timeline and peak"): forward with liveness, the loss,
// backward in reverse with gradient allocation and saved-tensor release, checkpoint recomputation, the
// optimizer step. Buffers are reference counted the way PyTorch's storages are: a storage lives while a
// later forward consumer, a saving backward node, a checkpoint or a gradient slot still holds it.
#include "memory/engine_internal.h"

#include <algorithm>
#include <array>

namespace headroom {

namespace {

constexpr size_t kCats = static_cast<size_t>(Category::Count);

struct Buffer {
    int64_t bytes = 0;
    int refs = 0;
    Category cat = Category::Activations;
    int tensor = -1;
    bool live = false;
    bool saved = false; // holds a saved-for-backward reference
};

struct Sim {
    const PlanData& plan;
    const Config& config;
    const ShapeTable& shapes;
    const Sizes& sizes;
    const SimOptions& opt;
    SimResult r;

    std::vector<Buffer> bufs;
    int64_t cur = 0, stepHigh = 0;
    std::array<int64_t, kCats> cats{};
    int64_t curSaved = 0;
    int step = 0;
    int stepNode = -1;
    Phase stepPhase = Phase::Forward;
    size_t peakEvent = 0;

    int alloc(int64_t bytes, Category cat, int tensor, int refs)
    {
        Buffer b;
        b.bytes = std::max<int64_t>(bytes, 0);
        b.refs = refs;
        b.cat = cat;
        b.tensor = tensor;
        b.live = true;
        bufs.push_back(b);
        const int id = static_cast<int>(bufs.size()) - 1;
        cur += b.bytes;
        cats[static_cast<size_t>(cat)] += b.bytes;
        if (opt.events)
            r.events.push_back({AllocEvent::Kind::Alloc, id, b.bytes, cat, step, tensor});
        if (cur > stepHigh)
            stepHigh = cur;
        if (cur > r.peak) {
            r.peak = cur;
            r.peakStep = step;
            peakEvent = r.events.size();
            r.peakActivations = cats[static_cast<size_t>(Category::Activations)];
            r.peakLoss = cats[static_cast<size_t>(Category::Loss)];
            r.peakSaved = curSaved;
        }
        return id;
    }
    void release(int id)
    {
        Buffer& b = bufs[static_cast<size_t>(id)];
        if (!b.live)
            return;
        b.live = false;
        cur -= b.bytes;
        cats[static_cast<size_t>(b.cat)] -= b.bytes;
        if (b.saved) {
            curSaved -= b.bytes;
            b.saved = false;
        }
        if (opt.events)
            r.events.push_back({AllocEvent::Kind::Free, id, b.bytes, b.cat, step, b.tensor});
    }
    void decref(int id, int n = 1)
    {
        if (id < 0)
            return;
        Buffer& b = bufs[static_cast<size_t>(id)];
        b.refs -= n;
        if (b.refs <= 0)
            release(id);
    }
    void incref(int id)
    {
        if (id >= 0)
            ++bufs[static_cast<size_t>(id)].refs;
    }
    void markSaved(int id)
    {
        Buffer& b = bufs[static_cast<size_t>(id)];
        if (!b.saved && b.live) {
            b.saved = true;
            curSaved += b.bytes;
        }
    }
    void unmarkSaved(int id)
    {
        Buffer& b = bufs[static_cast<size_t>(id)];
        if (b.saved && b.live) {
            b.saved = false;
            curSaved -= b.bytes;
        }
    }
    void begin(int node, Phase phase)
    {
        stepNode = node;
        stepPhase = phase;
        stepHigh = cur;
    }
    void end()
    {
        r.timeline.push_back({step, stepNode, stepPhase, cur, std::max(stepHigh, cur)});
        ++step;
    }
};

int64_t itemBytesImpl(const PlanData& plan, const Config& /*config*/, const ShapeTable& shapes, const Sizes& sizes,
                      const SavedItem& s)
{
    if (s.tensor < 0)
        return 0;
    const size_t t = static_cast<size_t>(s.tensor);
    if (s.kind == SavedItem::Kind::Storage)
        return sizes.act[t];
    if (s.kind == SavedItem::Kind::Copy) // num copies (one per RNN direction)
        return checkedMul(sizes.act[t], s.num).value_or(0) / std::max<int64_t>(s.den, 1);
    int64_t elems = 0;
    if (s.dimBegin >= 0) {
        const auto& dims = plan.model->tensors[t].shape.dims;
        elems = 1;
        for (int d = s.dimBegin; d < s.dimEnd && static_cast<size_t>(d) < dims.size(); ++d) {
            auto v = dims[static_cast<size_t>(d)].eval(shapes.values);
            elems = checkedMul(elems, v ? std::max<int64_t>(*v, 0) : 0).value_or(0);
        }
        if (plan.model->tensors[t].shape.state != TensorShape::State::Exact) {
            // dims are not fitted: fall back to the element count (overestimates stats, never underestimates)
            elems = std::max<int64_t>(sizes.numel[t], 0);
        }
    } else {
        elems = std::max<int64_t>(sizes.numel[t], 0);
    }
    elems = checkedMul(elems, s.num).value_or(0) / std::max<int64_t>(s.den, 1);
    int64_t elem = s.elemBytes;
    if (elem == 0) {
        const int64_t n = std::max<int64_t>(sizes.numel[t], 1);
        elem = std::max<int64_t>(1, sizes.act[t] / n);
    } else if (!s.fp32Stat && s.elemBytes == 4) {
        elem = 4;
    }
    return checkedMul(elems, elem).value_or(0);
}

// A permuted view is still contiguous when the permutation only moves dims of extent 1 at this binding
// (x.transpose(0, 1) of a [1, T, C] tensor): PyTorch's is_contiguous() ignores them, so nothing is copied.
bool viewContiguousAt(const PlanData& plan, const ShapeTable& shapes, int t)
{
    if (t < 0 || !plan.nonContig[static_cast<size_t>(t)])
        return true;
    const Model& m = *plan.model;
    const int pr = m.tensors[static_cast<size_t>(t)].producer;
    if (pr < 0)
        return false;
    const Node& nd = m.nodes[static_cast<size_t>(pr)];
    if (nd.op != "Transpose" || nd.inputs.empty() || nd.inputs[0] < 0 ||
        plan.nonContig[static_cast<size_t>(nd.inputs[0])])
        return false;
    const auto perm = nd.attrInts("perm");
    const auto& dims = m.tensors[static_cast<size_t>(nd.inputs[0])].shape.dims;
    if (perm.size() != dims.size())
        return false;
    int64_t last = -1;
    for (int64_t d : perm) {
        if (d < 0 || static_cast<size_t>(d) >= dims.size())
            return false;
        const auto v = dims[static_cast<size_t>(d)].eval(shapes.values);
        if (!v)
            return false;
        if (*v == 1)
            continue;
        if (d < last)
            return false;
        last = d;
    }
    return true;
}

} // namespace

bool savedItemActive(const PlanData& plan, const ShapeTable& shapes, const SavedItem& item)
{
    return item.condView < 0 || viewContiguousAt(plan, shapes, item.condView) == item.condContig;
}

int64_t savedItemBytes(const PlanData& plan, const Config& config, const ShapeTable& shapes, const Sizes& sizes,
                       const SavedItem& item)
{
    return itemBytesImpl(plan, config, shapes, sizes, item);
}

SimResult simulate(const PlanData& plan, const Config& config, const ShapeTable& shapes, const Sizes& sizes,
                   const SimOptions& opt)
{
    Sim s{plan, config, shapes, sizes, opt, {}, {}, 0, 0, {}, 0, 0, -1, Phase::Forward, 0};
    const Model& m = *plan.model;
    const bool train = !policyIsInference(config);
    const size_t nT = m.tensors.size();
    const size_t nU = plan.units.size();
    const bool ckpt = train && opt.segments > 1 && opt.segmentOfUnit.size() == nU;
    auto checkpointed = [&](size_t u) { return ckpt && opt.segmentOfUnit[u] < opt.segments - 1; };
    if (opt.events)
        s.r.events.reserve(nU * 4 + plan.trainable.size() * 4 + 16);
    s.r.timeline.reserve(nU * 2 + 8);
    s.bufs.reserve(nU * 3 + plan.trainable.size() * 3 + 16);

    // Runtime storage roots: the plan's views, plus Dropout at inference and inplace activations.
    std::vector<int> rootRT(plan.root);
    std::vector<uint8_t> aliasUnit(nU, 0);
    std::vector<int> savedByCount(nT, 0);
    if (train)
        for (size_t u = 0; u < nU; ++u)
            for (const SavedItem& it : plan.units[u].saved)
                if (it.kind == SavedItem::Kind::Storage)
                    ++savedByCount[static_cast<size_t>(it.tensor)];
    for (size_t u = 0; u < nU; ++u) {
        const Unit& unit = plan.units[u];
        const Node& nd = m.nodes[static_cast<size_t>(unit.head)];
        const int x = nd.inputs.empty() ? -1 : nd.inputs[0];
        bool alias = unit.isView || (!train && unit.viewInInference);
        if (!alias && opt.inplace && unit.inplaceable && x >= 0 && plan.dynamic[static_cast<size_t>(x)]) {
            const Tensor& xt = m.tensors[static_cast<size_t>(x)];
            const bool selfSavedElsewhere =
                savedByCount[static_cast<size_t>(plan.root[static_cast<size_t>(x)])] >
                (unit.inplaceSavesResult ? 1 : 0);
            alias = xt.role != TensorRole::Input && !xt.isGraphOutput && plan.root[static_cast<size_t>(x)] == x &&
                plan.consumerUnits[static_cast<size_t>(x)].size() == 1 && !selfSavedElsewhere;
        }
        if (alias && x >= 0 && plan.dynamic[static_cast<size_t>(x)]) {
            aliasUnit[u] = 1;
            for (int t : unit.outputs)
                rootRT[static_cast<size_t>(t)] = rootRT[static_cast<size_t>(x)];
        }
    }
    // rootRT must be transitive: views of views resolved in order already (plan.root is), inplace aliases
    // of views resolved because units are in order.
    for (size_t u = 0; u < nU; ++u)
        for (int t : plan.units[u].outputs)
            rootRT[static_cast<size_t>(t)] = rootRT[static_cast<size_t>(rootRT[static_cast<size_t>(t)])];

    // Forward references per runtime storage.
    std::vector<int> refs(nT, 0);
    for (size_t t = 0; t < nT; ++t)
        if (plan.dynamic[t])
            refs[static_cast<size_t>(rootRT[t])] += static_cast<int>(plan.consumerUnits[t].size());
    for (int t : m.outputs)
        if (t >= 0 && plan.dynamic[static_cast<size_t>(t)])
            ++refs[static_cast<size_t>(rootRT[static_cast<size_t>(t)])];
    // Saved storages: one reference each, released at the backward of the earliest saver.
    std::vector<int> firstSaver(nT, -1);
    std::vector<std::vector<int>> releaseAt(nU);
    if (train) {
        for (size_t u = 0; u < nU; ++u) {
            if (checkpointed(u))
                continue;
            for (const SavedItem& it : plan.units[u].saved) {
                if (it.kind != SavedItem::Kind::Storage || !savedItemActive(plan, shapes, it))
                    continue;
                const int rt = rootRT[static_cast<size_t>(it.tensor)];
                if (firstSaver[static_cast<size_t>(rt)] < 0) {
                    firstSaver[static_cast<size_t>(rt)] = static_cast<int>(u);
                    ++refs[static_cast<size_t>(rt)];
                }
            }
        }
        for (size_t t = 0; t < nT; ++t)
            if (firstSaver[t] >= 0)
                releaseAt[static_cast<size_t>(firstSaver[t])].push_back(static_cast<int>(t));
    }
    // Checkpoint holds: the inputs of each checkpointed segment stay until its recomputation.
    std::vector<std::vector<int>> holds(ckpt ? static_cast<size_t>(opt.segments) : 0);
    if (ckpt) {
        for (size_t u = 0; u < nU; ++u) {
            if (!checkpointed(u))
                continue;
            const int seg = opt.segmentOfUnit[u];
            for (int t : plan.units[u].inputs) {
                if (!plan.dynamic[static_cast<size_t>(t)])
                    continue;
                const int pr = m.tensors[static_cast<size_t>(t)].producer;
                const int pu = pr >= 0 ? plan.unitOfNode[static_cast<size_t>(pr)] : -1;
                if (pu >= 0 && opt.segmentOfUnit[static_cast<size_t>(pu)] == seg)
                    continue;
                const int rt = rootRT[static_cast<size_t>(t)];
                auto& h = holds[static_cast<size_t>(seg)];
                if (std::find(h.begin(), h.end(), rt) == h.end()) {
                    h.push_back(rt);
                    ++refs[static_cast<size_t>(rt)];
                }
            }
        }
    }

    std::vector<int> buf(nT, -1); // runtime buffer of each root

    // ---- setup: what exists when the iteration starts
    s.begin(-1, Phase::Forward);
    const bool persistentGrads = train && config.accumulate > 1;
    std::vector<int> paramGrad(nT, -1);
    std::vector<uint8_t> gradPre(nT, 0);
    if (opt.events) {
        for (int p : plan.trainable)
            s.alloc(sizes.weightBytes[static_cast<size_t>(p)], Category::Weights, p, 1);
        // the largest dequantized 4/8-bit weight, held at the peak as persistentWeights counts it
        if (sizes.dequantTransient > 0 && sizes.quantized > 0 && !plan.trainable.empty())
            s.alloc(sizes.dequantTransient, Category::Weights, -1, 1);
        for (int b : plan.buffers) {
            const Tensor& t = m.tensors[static_cast<size_t>(b)];
            s.alloc(bufferBytes(config, t.dtype, std::max<int64_t>(sizes.numel[static_cast<size_t>(b)], 0)),
                    Category::Buffers, b, 1);
        }
        if (sizes.autocast > 0)
            s.alloc(sizes.autocast, Category::Weights, -1, 1);
        if (sizes.master > 0)
            s.alloc(sizes.master, Category::MasterWeights, -1, 1);
        if (sizes.persistentOptimizer > 0)
            s.alloc(sizes.persistentOptimizer, Category::Optimizer, -1, 1);
    } else {
        s.alloc(sizes.persistentWeights, Category::Weights, -1, 1);
        if (sizes.master > 0)
            s.alloc(sizes.master, Category::MasterWeights, -1, 1);
        if (sizes.persistentOptimizer > 0)
            s.alloc(sizes.persistentOptimizer, Category::Optimizer, -1, 1);
    }
    if (persistentGrads)
        for (int p : plan.trainable)
            if (plan.reqGrad[static_cast<size_t>(p)]) {
                paramGrad[static_cast<size_t>(p)] =
                    s.alloc(sizes.gradBytes[static_cast<size_t>(p)], Category::Gradients, p, 1);
                gradPre[static_cast<size_t>(p)] = 1;
            }
    for (int t : m.inputs) {
        const int rt = rootRT[static_cast<size_t>(t)];
        buf[static_cast<size_t>(rt)] = s.alloc(sizes.act[static_cast<size_t>(t)], Category::Input, t,
                                               refs[static_cast<size_t>(rt)] + 1); // + the data loader's hold
        if (firstSaver[static_cast<size_t>(rt)] >= 0)
            s.markSaved(buf[static_cast<size_t>(rt)]);
    }
    s.end();

    // ---- forward
    std::vector<std::vector<int>> unitExtras(nU);
    // Recomputation state (checkpoint segments): references held inside the segment being recomputed.
    std::vector<int> segRefs(ckpt ? nT : 0, 0);
    std::vector<uint8_t> ckSaved(ckpt ? nT : 0, 0);
    std::vector<std::vector<int>> releaseAtCk(ckpt ? nU : 0);
    auto producerUnit = [&](int t) {
        const int pr = m.tensors[static_cast<size_t>(t)].producer;
        return pr >= 0 ? plan.unitOfNode[static_cast<size_t>(pr)] : -1;
    };
    auto inSeg = [&](int unitIndex, int seg) {
        return unitIndex >= 0 && opt.segmentOfUnit[static_cast<size_t>(unitIndex)] == seg;
    };
    auto forwardUnit = [&](size_t u, bool recompute, int seg) {
        const Unit& unit = plan.units[u];
        if (!aliasUnit[u]) {
            for (int t : unit.outputs) {
                if (plan.virtualOut[static_cast<size_t>(t)] || !plan.dynamic[static_cast<size_t>(t)])
                    continue;
                const int rt = rootRT[static_cast<size_t>(t)];
                if (rt != t)
                    continue;
                const bool saved = recompute ? ckSaved[static_cast<size_t>(rt)] != 0
                                             : firstSaver[static_cast<size_t>(rt)] >= 0;
                const int rc = recompute ? segRefs[static_cast<size_t>(rt)] + (saved ? 1 : 0)
                                         : refs[static_cast<size_t>(rt)];
                const int id = s.alloc(sizes.act[static_cast<size_t>(t)], Category::Activations, t, rc);
                buf[static_cast<size_t>(rt)] = id;
                if (saved)
                    s.markSaved(id);
            }
        }
        if (train && (!checkpointed(u) || recompute)) {
            for (const SavedItem& it : unit.saved) {
                if (it.kind == SavedItem::Kind::Storage || !savedItemActive(plan, shapes, it))
                    continue;
                const int id = s.alloc(itemBytesImpl(plan, config, shapes, sizes, it), Category::Activations,
                                       it.tensor, 1);
                s.markSaved(id);
                unitExtras[u].push_back(id);
            }
        }
        for (const SavedItem& it : unit.forwardScratch)
            s.decref(s.alloc(itemBytesImpl(plan, config, shapes, sizes, it), Category::Activations, it.tensor, 1));
        for (int t : unit.inputs) {
            if (!plan.dynamic[static_cast<size_t>(t)])
                continue;
            const int rt = rootRT[static_cast<size_t>(t)];
            if (!recompute || inSeg(producerUnit(rt), seg))
                s.decref(buf[static_cast<size_t>(rt)]);
        }
        // outputs nobody holds die at once (after the step's high-water mark)
        if (!aliasUnit[u])
            for (int t : unit.outputs)
                if (rootRT[static_cast<size_t>(t)] == t && buf[static_cast<size_t>(t)] >= 0 &&
                    s.bufs[static_cast<size_t>(buf[static_cast<size_t>(t)])].refs <= 0)
                    s.release(buf[static_cast<size_t>(t)]);
    };
    for (size_t u = 0; u < nU; ++u) {
        s.begin(plan.units[u].head, Phase::Forward);
        forwardUnit(u, false, -1);
        s.end();
    }

    if (!train) {
        // inference: outputs are handed to the caller; nothing else is kept
        s.begin(-1, Phase::Forward);
        for (int t : m.outputs)
            if (t >= 0 && plan.dynamic[static_cast<size_t>(t)])
                s.decref(buf[static_cast<size_t>(rootRT[static_cast<size_t>(t)])]);
        s.end();
    } else {
        // ---- loss
        const int o = plan.lossTensor;
        const bool backward = o >= 0 && plan.getsGrad[static_cast<size_t>(o)];
        const int64_t outBytes = o >= 0 ? sizes.act[static_cast<size_t>(o)] : 0;
        const bool amp = config.dtype == DtypePolicy::AmpFP16 || config.dtype == DtypePolicy::AmpBF16;
        const int64_t lpBytes = o >= 0 && amp ? checkedMul(std::max<int64_t>(sizes.numel[static_cast<size_t>(o)], 0), 4).value_or(0)
                                              : outBytes;
        int lp = -1;
        s.begin(-1, Phase::Loss);
        // A 16-bit output is lifted to fp32 first (the loss on logits.float(), or cross_entropy on the autocast
        // fp32 list): that copy lives while log_softmax runs; log_softmax keeps its result.
        const bool lift = amp && o >= 0 && plan.amp16[static_cast<size_t>(o)] && config.loss != Loss::None && backward;
        const int lifted = lift ? s.alloc(lpBytes, Category::Loss, o, 1) : -1;
        if (o >= 0 && config.loss == Loss::CrossEntropy && backward)
            lp = s.alloc(lpBytes, Category::Loss, o, 1);
        if (lifted >= 0)
            s.decref(lifted);
        if (o >= 0 && config.loss == Loss::MSE && backward)
            s.incref(buf[static_cast<size_t>(rootRT[static_cast<size_t>(o)])]);
        for (int t : m.outputs)
            if (t >= 0 && plan.dynamic[static_cast<size_t>(t)])
                s.decref(buf[static_cast<size_t>(rootRT[static_cast<size_t>(t)])]);
        s.end();

        std::vector<int> gradBuf(nT, -1);
        if (backward) {
            s.begin(-1, Phase::Loss);
            if (config.loss == Loss::CrossEntropy) {
                const int glp = s.alloc(lpBytes, Category::Loss, o, 1);
                if (lift) {
                    // log_softmax's backward gives the fp32 copy's gradient; ToCopyBackward then casts it
                    // back to the output's 16 bits
                    const int gLifted = s.alloc(lpBytes, Category::Loss, o, 1);
                    s.decref(glp);
                    s.decref(lp);
                    gradBuf[static_cast<size_t>(o)] = s.alloc(outBytes, Category::Loss, o, 1);
                    s.decref(gLifted);
                } else {
                    gradBuf[static_cast<size_t>(o)] = s.alloc(outBytes, Category::Loss, o, 1);
                    s.decref(glp);
                    s.decref(lp);
                }
            } else if (config.loss == Loss::MSE) {
                gradBuf[static_cast<size_t>(o)] = s.alloc(outBytes, Category::Loss, o, 1);
                s.decref(buf[static_cast<size_t>(rootRT[static_cast<size_t>(o)])]);
            } else {
                gradBuf[static_cast<size_t>(o)] = s.alloc(outBytes, Category::Loss, o, 1);
            }
            s.end();
        }

        // ---- backward
        const int gradElem = gradElemBytes(config);
        (void)gradElem;
        std::vector<uint8_t> recomputed(ckpt ? static_cast<size_t>(opt.segments) : 0, 0);
        auto contributeParam = [&](int p) {
            const size_t pi = static_cast<size_t>(p);
            const int64_t bytes = sizes.gradBytes[pi];
            if (paramGrad[pi] < 0) {
                paramGrad[pi] = s.alloc(bytes, Category::Gradients, p, 1);
            } else if (gradPre[pi]) {
                const int tmp = s.alloc(bytes, Category::Gradients, p, 1); // grad += new (in place)
                s.decref(tmp);
            } else {
                // a parameter used twice (tied weights): autograd sums the two contributions out of place
                const int tmp = s.alloc(bytes, Category::Gradients, p, 1);
                const int sum = s.alloc(bytes, Category::Gradients, p, 1);
                s.decref(tmp);
                s.decref(paramGrad[pi]);
                paramGrad[pi] = sum;
            }
        };
        for (size_t ui = nU; backward && ui-- > 0;) {
            const Unit& unit = plan.units[ui];
            if (ckpt && checkpointed(ui) && !recomputed[static_cast<size_t>(opt.segmentOfUnit[ui])]) {
                const int seg = opt.segmentOfUnit[ui];
                recomputed[static_cast<size_t>(seg)] = 1;
                s.begin(unit.head, Phase::Recompute);
                std::vector<int> touched;
                for (size_t v = 0; v < nU; ++v) {
                    if (opt.segmentOfUnit[v] != seg)
                        continue;
                    for (int t : plan.units[v].inputs) {
                        if (!plan.dynamic[static_cast<size_t>(t)])
                            continue;
                        const int rt = rootRT[static_cast<size_t>(t)];
                        if (inSeg(producerUnit(rt), seg)) {
                            ++segRefs[static_cast<size_t>(rt)];
                            touched.push_back(rt);
                        }
                    }
                    for (const SavedItem& it : plan.units[v].saved) {
                        if (it.kind != SavedItem::Kind::Storage || !savedItemActive(plan, shapes, it))
                            continue;
                        const int rt = rootRT[static_cast<size_t>(it.tensor)];
                        if (!ckSaved[static_cast<size_t>(rt)]) {
                            ckSaved[static_cast<size_t>(rt)] = 1;
                            releaseAtCk[v].push_back(rt);
                            touched.push_back(rt);
                            if (!inSeg(producerUnit(rt), seg)) { // a held input the segment saves
                                s.incref(buf[static_cast<size_t>(rt)]);
                                s.markSaved(buf[static_cast<size_t>(rt)]);
                            }
                        }
                    }
                }
                for (size_t v = 0; v < nU; ++v)
                    if (opt.segmentOfUnit[v] == seg) {
                        forwardUnit(v, true, seg);
                        s.r.recomputeMacs += unitMacs(plan, plan.units[v], shapes);
                    }
                for (int rt : touched) {
                    segRefs[static_cast<size_t>(rt)] = 0;
                    ckSaved[static_cast<size_t>(rt)] = 0;
                }
                for (int rt : holds[static_cast<size_t>(seg)])
                    s.decref(buf[static_cast<size_t>(rt)]);
                s.end();
            }
            bool runs = unit.differentiable;
            bool anyOut = false;
            for (int t : unit.outputs)
                anyOut = anyOut || gradBuf[static_cast<size_t>(t)] >= 0;
            runs = runs && anyOut;
            if (!runs && releaseAt[ui].empty() && unitExtras[ui].empty() &&
                (!ckpt || releaseAtCk[ui].empty()))
                continue;
            s.begin(unit.head, Phase::Backward);
            if (runs)
                for (const SavedItem& it : unit.backwardScratch)
                    s.decref(s.alloc(itemBytesImpl(plan, config, shapes, sizes, it), Category::Activations,
                                     it.tensor, 1));
            // gradients that exist together with the input gradients they become (autocast's 16-bit gradient of
            // a cast copy, before ToCopyBackward lifts it to the fp32 input's gradient)
            std::vector<int> castGrads;
            if (runs)
                for (const SavedItem& it : unit.castGrads)
                    castGrads.push_back(s.alloc(itemBytesImpl(plan, config, shapes, sizes, it), Category::Activations,
                                                it.tensor, 1));
            if (runs) {
                const int out0 = unit.outputs.empty() ? -1 : unit.outputs[0];
                const int og = out0 >= 0 ? gradBuf[static_cast<size_t>(out0)] : -1;
                const int64_t outNumel = out0 >= 0 ? sizes.numel[static_cast<size_t>(out0)] : -1;
                for (int t : unit.inputs) {
                    const size_t ti = static_cast<size_t>(t);
                    if (plan.dynamic[ti]) {
                        if (!plan.getsGrad[ti])
                            continue;
                        int contrib;
                        if ((unit.passGrad || unit.isView) && og >= 0 && sizes.numel[ti] == outNumel) {
                            contrib = og;
                            s.incref(og);
                        } else {
                            contrib = s.alloc(sizes.act[ti], Category::Activations, t, 1);
                        }
                        if (gradBuf[ti] < 0) {
                            gradBuf[ti] = contrib;
                        } else {
                            const Buffer& old = s.bufs[static_cast<size_t>(gradBuf[ti])];
                            if (old.refs == 1 && contrib != gradBuf[ti]) {
                                s.decref(contrib); // in-place accumulation into a buffer only we hold
                            } else {
                                const int sum = s.alloc(sizes.act[ti], Category::Activations, t, 1);
                                s.decref(contrib);
                                s.decref(gradBuf[ti]);
                                gradBuf[ti] = sum;
                            }
                        }
                    } else {
                        for (int p : plan.paramSources[ti])
                            contributeParam(p);
                    }
                }
                for (int t : unit.outputs) {
                    s.decref(gradBuf[static_cast<size_t>(t)]);
                    gradBuf[static_cast<size_t>(t)] = -1;
                }
            }
            for (int id : castGrads)
                s.decref(id);
            for (int id : unitExtras[ui])
                s.decref(id);
            unitExtras[ui].clear();
            for (int rt : releaseAt[ui])
                s.decref(buf[static_cast<size_t>(rt)]);
            if (ckpt)
                for (int rt : releaseAtCk[ui])
                    s.decref(buf[static_cast<size_t>(rt)]);
            s.end();
        }
        // whatever no backward step released (units off the loss path, unused holds)
        s.begin(-1, Phase::Backward);
        for (size_t ui = 0; ui < nU; ++ui) {
            for (int id : unitExtras[ui])
                s.decref(id);
            if (!backward)
                for (int rt : releaseAt[ui])
                    s.decref(buf[static_cast<size_t>(rt)]);
        }
        for (size_t t = 0; t < nT; ++t)
            if (gradBuf[t] >= 0)
                s.decref(gradBuf[t]);
        if (ckpt)
            for (size_t seg = 0; seg < holds.size(); ++seg)
                if (!recomputed[seg])
                    for (int rt : holds[seg])
                        s.decref(buf[static_cast<size_t>(rt)]);
        s.end();

        // ---- optimizer step: foreach implementations build one fp32 temporary per parameter
        s.begin(-1, Phase::Optimizer);
        int64_t temp = 0;
        switch (config.optimizer) {
        case Optimizer::Adam: case Optimizer::AdamW: case Optimizer::Adagrad: case Optimizer::RMSprop:
        case Optimizer::Adadelta: case Optimizer::LAMB: case Optimizer::Lion:
            for (int p : plan.trainable)
                if (plan.reqGrad[static_cast<size_t>(p)])
                    temp += checkedMul(std::max<int64_t>(sizes.numel[static_cast<size_t>(p)], 0), 4).value_or(0);
            break;
        default:
            break;
        }
        if (temp > 0)
            s.decref(s.alloc(temp, Category::Optimizer, -1, 1));
        // zero_grad(set_to_none=True)
        for (size_t p = 0; p < nT; ++p)
            if (paramGrad[p] >= 0)
                s.decref(paramGrad[p]);
        s.end();
    }

    // Culprits: replay the events up to the peak.
    if (opt.events) {
        std::vector<uint8_t> live(s.bufs.size(), 0);
        for (size_t i = 0; i < s.peakEvent && i < s.r.events.size(); ++i) {
            const AllocEvent& e = s.r.events[i];
            live[static_cast<size_t>(e.id)] = e.kind == AllocEvent::Kind::Alloc ? 1 : 0;
        }
        // One entry per tensor with the bytes of every buffer attributed to it (its storage, its gradient).
        std::vector<int64_t> held(nT, 0);
        for (size_t i = 0; i < live.size(); ++i)
            if (live[i] && s.bufs[i].tensor >= 0 && s.bufs[i].bytes > 0)
                held[static_cast<size_t>(s.bufs[i].tensor)] += s.bufs[i].bytes;
        std::vector<std::pair<int64_t, int>> culprits;
        for (size_t t = 0; t < nT; ++t)
            if (held[t] > 0)
                culprits.emplace_back(held[t], static_cast<int>(t));
        std::sort(culprits.begin(), culprits.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
        for (const auto& c : culprits) {
            s.r.peakLive.push_back(c.second);
            s.r.peakLiveBytes.push_back(c.first);
        }
        // balance: free what is still allocated (weights, states, the input) at the last step
        const int last = s.step - 1;
        for (size_t i = 0; i < s.bufs.size(); ++i)
            if (s.bufs[i].live) {
                s.bufs[i].live = false;
                s.r.events.push_back({AllocEvent::Kind::Free, static_cast<int64_t>(i), s.bufs[i].bytes,
                                      s.bufs[i].cat, last, s.bufs[i].tensor});
            }
    }
    return s.r;
}

} // namespace headroom
