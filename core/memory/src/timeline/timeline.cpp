// The simulated steady-state iteration (docs/DESIGN.md "Timeline and peak"): forward with liveness, the loss,
// backward in reverse with gradient allocation and saved-tensor release, checkpoint recomputation, the
// optimizer step. Buffers are reference counted the way PyTorch's storages are: a storage lives while a
// later forward consumer, a saving backward node, a checkpoint or a gradient slot still holds it.
//
// This file walks the iteration's structure once per plan and switch setting and records it as a flat
// program (timeline_program.h); no byte count is read here except through a recorded guard.
#include "timeline/timeline_program.h"

#include <algorithm>
#include <unordered_set>

namespace headroom {

namespace {

struct RecBuffer
{
    int refs = 0;
    bool live = false;
    bool saved = false; // holds a saved-for-backward reference
};

// Reference counting without sizes: every allocation, free and saved mark becomes an op.
class Recorder
{
public:
    Recorder(const SimContext& c, SimProgram& program) : m_c(c), m_p(program) {}

    int alloc(SizeRef size, Category cat, int tensor, int refs)
    {
        m_p.buffers.push_back({size, cat, tensor});
        m_bufs.push_back({refs, true, false});
        const int id = static_cast<int>(m_bufs.size()) - 1;
        m_p.ops.push_back({SimOp::Kind::Alloc, Phase::Forward, false, id});
        ++m_p.events;
        return id;
    }
    void release(int id)
    {
        RecBuffer& b = m_bufs[static_cast<size_t>(id)];
        if (!b.live)
            return;
        b.live = false;
        m_p.ops.push_back({SimOp::Kind::Free, Phase::Forward, b.saved, id});
        b.saved = false;
        ++m_p.events;
    }
    void decref(int id, int n = 1)
    {
        if (id < 0)
            return;
        RecBuffer& b = m_bufs[static_cast<size_t>(id)];
        b.refs -= n;
        if (b.refs <= 0)
            release(id);
    }
    void incref(int id)
    {
        if (id >= 0)
            ++m_bufs[static_cast<size_t>(id)].refs;
    }
    int refs(int id) const { return m_bufs[static_cast<size_t>(id)].refs; }
    void markSaved(int id)
    {
        RecBuffer& b = m_bufs[static_cast<size_t>(id)];
        if (!b.saved && b.live) {
            b.saved = true;
            m_p.ops.push_back({SimOp::Kind::MarkSaved, Phase::Forward, false, id});
        }
    }
    void begin(int node, Phase phase) { m_p.ops.push_back({SimOp::Kind::Begin, phase, false, node}); }
    void end()
    {
        m_p.ops.push_back({SimOp::Kind::End, Phase::Forward, false, -1});
        ++m_p.steps;
    }
    void finish()
    {
        for (size_t i = 0; i < m_bufs.size(); ++i)
            if (m_bufs[i].live)
                m_p.liveAtEnd.push_back(static_cast<int>(i));
        if (!m_p.key.events)
            return;
        m_p.allocOps.reserve(m_p.events + m_p.liveAtEnd.size());
        for (const SimOp& op : m_p.ops)
            if (op.kind == SimOp::Kind::Alloc)
                m_p.allocOps.push_back(op.arg);
            else if (op.kind == SimOp::Kind::Free)
                m_p.allocOps.push_back(~op.arg);
        for (int id : m_p.liveAtEnd)
            m_p.allocOps.push_back(~id);
    }

    // Guards: each binding-dependent decision, answered now and recorded.
    bool itemActive(const SavedItem& item)
    {
        if (item.condView < 0)
            return true;
        const bool active = savedItemActive(m_c.plan, m_c.shapes, item);
        if (m_guardedItems.insert(&item).second) {
            m_p.activeItems.push_back(&item);
            m_p.activeAnswers.push_back(active ? 1 : 0);
        }
        return active;
    }
    bool sameNumel(int a, int b)
    {
        const bool same = m_c.sizes.numel[static_cast<size_t>(a)] == m_c.sizes.numel[static_cast<size_t>(b)];
        m_p.sameNumel.emplace_back(a, b);
        m_p.sameNumelAnswers.push_back(same ? 1 : 0);
        return same;
    }
    bool positive(SizeRef ref)
    {
        const bool pos = sizeOf(m_c, ref) > 0;
        m_p.positive.push_back(ref);
        m_p.positiveAnswers.push_back(pos ? 1 : 0);
        return pos;
    }
    void recomputes(int unit) { m_p.recomputed.push_back(unit); }

private:
    const SimContext& m_c;
    SimProgram& m_p;
    std::vector<RecBuffer> m_bufs;
    std::unordered_set<const SavedItem*> m_guardedItems;
};

SizeRef act(int t) { return {SizeRef::Kind::Activation, t, nullptr}; }
SizeRef item(const SavedItem& it) { return {SizeRef::Kind::Item, -1, &it}; }
SizeRef of(SizeRef::Kind k, int index = -1) { return {k, index, nullptr}; }

// One walk: the phases of the iteration as PyTorch runs them, in order.
class Iteration
{
public:
    Iteration(const SimContext& c, const SimOptions& opt, SimProgram& program)
        : m_c(c), m_plan(c.plan), m_m(*c.plan.model), m_opt(opt), m_s(c, program),
          m_train(!policyIsInference(c.config)), m_nT(m_m.tensors.size()), m_nU(c.plan.units.size()),
          m_ckpt(m_train && opt.segments > 1 && opt.segmentOfUnit.size() == m_nU)
    {
    }

    void run()
    {
        resolveRuntimeStorage();
        countForwardReferences();
        if (m_train)
            assignSavedReleases();
        if (m_ckpt)
            holdCheckpointInputs();
        setup();
        forward();
        if (!m_train) {
            handOutOutputs();
        } else {
            loss();
            backward();
            releaseLeftovers();
            optimizerStep();
        }
        m_s.finish();
    }

private:
    const SimContext& m_c;
    const PlanData& m_plan;
    const Model& m_m;
    const SimOptions& m_opt;
    Recorder m_s;
    const bool m_train;
    const size_t m_nT, m_nU;
    const bool m_ckpt;

    std::vector<int> m_rootRT;                   // runtime storage root per tensor
    std::vector<uint8_t> m_aliasUnit;            // unit writes into its input's storage
    std::vector<int> m_refs;                     // forward references per runtime storage
    std::vector<int> m_firstSaver;               // earliest unit saving a storage (-1: none)
    std::vector<std::vector<int>> m_releaseAt;   // storages whose saved reference a unit's backward drops
    std::vector<std::vector<int>> m_holds;       // per checkpoint segment: the inputs it holds
    std::vector<std::vector<int>> m_unitsOfSeg;  // per checkpoint segment: its units, ascending
    std::vector<int> m_buf;                      // runtime buffer of each root
    std::vector<int> m_paramGrad;                // gradient buffer per parameter
    std::vector<uint8_t> m_gradPre;              // gradient exists before backward (accumulation)
    std::vector<std::vector<int>> m_unitExtras;  // per unit: its saved extras (statistics, masks)
    std::vector<int> m_segRefs;                  // recomputation: references inside the segment
    std::vector<uint8_t> m_ckSaved;              // recomputation: storage saved by the segment
    std::vector<std::vector<int>> m_releaseAtCk; // recomputation: saved references a unit's backward drops
    std::vector<int> m_gradBuf;                  // gradient buffer per tensor
    std::vector<uint8_t> m_recomputed;           // per segment
    bool m_backward = false;                     // the loss output gets a gradient

    bool checkpointed(size_t u) const { return m_ckpt && m_opt.segmentOfUnit[u] < m_opt.segments - 1; }
    int producerUnit(int t) const
    {
        const int pr = m_m.tensors[static_cast<size_t>(t)].producer;
        return pr >= 0 ? m_plan.unitOfNode[static_cast<size_t>(pr)] : -1;
    }
    bool inSeg(int unitIndex, int seg) const
    {
        return unitIndex >= 0 && m_opt.segmentOfUnit[static_cast<size_t>(unitIndex)] == seg;
    }
    bool dynamic(int t) const { return m_plan.dynamic[static_cast<size_t>(t)] != 0; }
    int root(int t) const { return m_rootRT[static_cast<size_t>(t)]; }
    int& bufOfRoot(int t) { return m_buf[static_cast<size_t>(root(t))]; }

    // Runtime storage roots: the plan's views, plus Dropout at inference and inplace activations.
    void resolveRuntimeStorage()
    {
        m_rootRT = m_plan.root;
        m_aliasUnit.assign(m_nU, 0);
        std::vector<int> savedByCount(m_nT, 0);
        if (m_train)
            for (size_t u = 0; u < m_nU; ++u)
                for (const SavedItem& it : m_plan.units[u].saved)
                    if (it.kind == SavedItem::Kind::Storage)
                        ++savedByCount[static_cast<size_t>(it.tensor)];
        for (size_t u = 0; u < m_nU; ++u) {
            const Unit& unit = m_plan.units[u];
            const Node& nd = m_m.nodes[static_cast<size_t>(unit.head)];
            const int x = nd.inputs.empty() ? -1 : nd.inputs[0];
            bool alias = unit.isView || (!m_train && unit.viewInInference);
            if (!alias && m_opt.inplace && unit.inplaceable && x >= 0 && dynamic(x)) {
                const Tensor& xt = m_m.tensors[static_cast<size_t>(x)];
                const int xr = m_plan.root[static_cast<size_t>(x)];
                const bool selfSavedElsewhere = savedByCount[static_cast<size_t>(xr)] >
                                                (unit.inplaceSavesResult ? 1 : 0);
                alias = xt.role != TensorRole::Input && !xt.isGraphOutput && xr == x &&
                        m_plan.consumerUnits[static_cast<size_t>(x)].size() == 1 && !selfSavedElsewhere;
            }
            if (alias && x >= 0 && dynamic(x)) {
                m_aliasUnit[u] = 1;
                for (int t : unit.outputs)
                    m_rootRT[static_cast<size_t>(t)] = root(x);
            }
        }
        // rootRT must be transitive: views of views resolved in order already (plan.root is), inplace aliases
        // of views resolved because units are in order.
        for (size_t u = 0; u < m_nU; ++u)
            for (int t : m_plan.units[u].outputs)
                m_rootRT[static_cast<size_t>(t)] = root(root(t));
    }

    void countForwardReferences()
    {
        m_refs.assign(m_nT, 0);
        for (size_t t = 0; t < m_nT; ++t)
            if (m_plan.dynamic[t])
                m_refs[static_cast<size_t>(m_rootRT[t])] += static_cast<int>(m_plan.consumerUnits[t].size());
        for (int t : m_m.outputs)
            if (t >= 0 && dynamic(t))
                ++m_refs[static_cast<size_t>(root(t))];
        m_firstSaver.assign(m_nT, -1);
        m_releaseAt.assign(m_nU, {});
    }

    // Saved storages: one reference each, released at the backward of the earliest saver.
    void assignSavedReleases()
    {
        for (size_t u = 0; u < m_nU; ++u) {
            if (checkpointed(u))
                continue;
            for (const SavedItem& it : m_plan.units[u].saved) {
                if (it.kind != SavedItem::Kind::Storage || !m_s.itemActive(it))
                    continue;
                const size_t rt = static_cast<size_t>(root(it.tensor));
                if (m_firstSaver[rt] < 0) {
                    m_firstSaver[rt] = static_cast<int>(u);
                    ++m_refs[rt];
                }
            }
        }
        for (size_t t = 0; t < m_nT; ++t)
            if (m_firstSaver[t] >= 0)
                m_releaseAt[static_cast<size_t>(m_firstSaver[t])].push_back(static_cast<int>(t));
    }

    // Checkpoint holds: the inputs of each checkpointed segment stay until its recomputation.
    void holdCheckpointInputs()
    {
        const size_t segs = static_cast<size_t>(m_opt.segments);
        m_holds.assign(segs, {});
        m_unitsOfSeg.assign(segs, {});
        std::unordered_set<int64_t> held; // (segment, storage) pairs already held
        for (size_t u = 0; u < m_nU; ++u) {
            const int seg = m_opt.segmentOfUnit[u];
            if (seg >= 0 && static_cast<size_t>(seg) < segs)
                m_unitsOfSeg[static_cast<size_t>(seg)].push_back(static_cast<int>(u));
            if (!checkpointed(u))
                continue;
            for (int t : m_plan.units[u].inputs) {
                if (!dynamic(t) || inSeg(producerUnit(t), seg))
                    continue;
                const int rt = root(t);
                if (held.insert(static_cast<int64_t>(seg) * static_cast<int64_t>(m_nT) + rt).second) {
                    m_holds[static_cast<size_t>(seg)].push_back(rt);
                    ++m_refs[static_cast<size_t>(rt)];
                }
            }
        }
    }

    // What exists when the iteration starts: weights, buffers, states, accumulated gradients, the input.
    void setup()
    {
        m_buf.assign(m_nT, -1);
        m_paramGrad.assign(m_nT, -1);
        m_gradPre.assign(m_nT, 0);
        m_s.begin(-1, Phase::Forward);
        if (m_opt.events) {
            for (int p : m_plan.trainable)
                m_s.alloc(of(SizeRef::Kind::Weight, p), Category::Weights, p, 1);
            // the largest dequantized 4/8-bit weight, held at the peak as persistentWeights counts it
            if (m_s.positive(of(SizeRef::Kind::DequantTransient)) && m_s.positive(of(SizeRef::Kind::Quantized)) &&
                !m_plan.trainable.empty())
                m_s.alloc(of(SizeRef::Kind::DequantTransient), Category::Weights, -1, 1);
            for (int b : m_plan.buffers)
                m_s.alloc(of(SizeRef::Kind::Buffer, b), Category::Buffers, b, 1);
            if (m_s.positive(of(SizeRef::Kind::Autocast)))
                m_s.alloc(of(SizeRef::Kind::Autocast), Category::Weights, -1, 1);
        } else {
            m_s.alloc(of(SizeRef::Kind::PersistentWeights), Category::Weights, -1, 1);
        }
        if (m_s.positive(of(SizeRef::Kind::Master)))
            m_s.alloc(of(SizeRef::Kind::Master), Category::MasterWeights, -1, 1);
        if (m_s.positive(of(SizeRef::Kind::PersistentOptimizer)))
            m_s.alloc(of(SizeRef::Kind::PersistentOptimizer), Category::Optimizer, -1, 1);
        holdAccumulatedGradients();
        for (int t : m_m.inputs) {
            const int rt = root(t);
            const size_t r = static_cast<size_t>(rt);
            m_buf[r] = m_s.alloc(act(t), Category::Input, t, m_refs[r] + 1); // + the data loader's hold
            if (m_firstSaver[r] >= 0)
                m_s.markSaved(m_buf[r]);
        }
        m_s.end();
    }

    // Gradient accumulation: parameter gradients live across micro-batches, from before the first forward.
    void holdAccumulatedGradients()
    {
        if (!m_train || m_c.config.accumulate <= 1)
            return;
        for (int p : m_plan.trainable)
            if (m_plan.reqGrad[static_cast<size_t>(p)]) {
                m_paramGrad[static_cast<size_t>(p)] = m_s.alloc(of(SizeRef::Kind::Gradient, p), Category::Gradients, p,
                                                                1);
                m_gradPre[static_cast<size_t>(p)] = 1;
            }
    }

    void forward()
    {
        m_unitExtras.assign(m_nU, {});
        if (m_ckpt) {
            m_segRefs.assign(m_nT, 0);
            m_ckSaved.assign(m_nT, 0);
            m_releaseAtCk.assign(m_nU, {});
        }
        for (size_t u = 0; u < m_nU; ++u) {
            m_s.begin(m_plan.units[u].head, Phase::Forward);
            forwardUnit(u, false, -1);
            m_s.end();
        }
    }

    void forwardUnit(size_t u, bool recompute, int seg)
    {
        const Unit& unit = m_plan.units[u];
        if (!m_aliasUnit[u])
            allocateOutputs(unit, recompute);
        if (m_train && (!checkpointed(u) || recompute)) {
            for (const SavedItem& it : unit.saved) {
                if (it.kind == SavedItem::Kind::Storage || !m_s.itemActive(it))
                    continue;
                const int id = m_s.alloc(item(it), Category::Activations, it.tensor, 1);
                m_s.markSaved(id);
                m_unitExtras[u].push_back(id);
            }
        }
        for (const SavedItem& it : unit.forwardScratch)
            m_s.decref(m_s.alloc(item(it), Category::Activations, it.tensor, 1));
        for (int t : unit.inputs) {
            if (!dynamic(t))
                continue;
            const int rt = root(t);
            if (!recompute || inSeg(producerUnit(rt), seg))
                m_s.decref(m_buf[static_cast<size_t>(rt)]);
        }
        // outputs nobody holds die at once (after the step's high-water mark)
        if (!m_aliasUnit[u])
            for (int t : unit.outputs) {
                const int id = m_buf[static_cast<size_t>(t)];
                if (root(t) == t && id >= 0 && m_s.refs(id) <= 0)
                    m_s.release(id);
            }
    }

    void allocateOutputs(const Unit& unit, bool recompute)
    {
        for (int t : unit.outputs) {
            const size_t ti = static_cast<size_t>(t);
            if (m_plan.virtualOut[ti] || !m_plan.dynamic[ti] || root(t) != t)
                continue;
            const bool saved = recompute ? m_ckSaved[ti] != 0 : m_firstSaver[ti] >= 0;
            const int rc = recompute ? m_segRefs[ti] + (saved ? 1 : 0) : m_refs[ti];
            const int id = m_s.alloc(act(t), Category::Activations, t, rc);
            m_buf[ti] = id;
            if (saved)
                m_s.markSaved(id);
        }
    }

    // Inference: outputs are handed to the caller; nothing else is kept.
    void handOutOutputs()
    {
        m_s.begin(-1, Phase::Forward);
        for (int t : m_m.outputs)
            if (t >= 0 && dynamic(t))
                m_s.decref(bufOfRoot(t));
        m_s.end();
    }

    void loss()
    {
        const Config& config = m_c.config;
        const int o = m_plan.lossTensor;
        m_backward = o >= 0 && m_plan.getsGrad[static_cast<size_t>(o)];
        const bool amp = config.dtype == DtypePolicy::AmpFP16 || config.dtype == DtypePolicy::AmpBF16;
        const bool hfUpcast = !amp && hfLossUpcasts(o);
        const SizeRef lpBytes = o >= 0 && (amp || hfUpcast) ? of(SizeRef::Kind::LogProb, o) : act(o);
        int lp = -1;
        m_s.begin(-1, Phase::Loss);
        // A 16-bit output is lifted to fp32 first (the loss on logits.float(), or cross_entropy on the autocast
        // fp32 list): that copy lives while log_softmax runs; log_softmax keeps its result.
        const bool lift = ((amp && o >= 0 && m_plan.amp16[static_cast<size_t>(o)]) || hfUpcast) &&
                          config.loss != Loss::None && m_backward;
        const int lifted = lift ? m_s.alloc(lpBytes, Category::Loss, o, 1) : -1;
        if (o >= 0 && config.loss == Loss::CrossEntropy && m_backward)
            lp = m_s.alloc(lpBytes, Category::Loss, o, 1);
        if (lifted >= 0)
            m_s.decref(lifted);
        if (o >= 0 && config.loss == Loss::MSE && m_backward)
            m_s.incref(bufOfRoot(o));
        for (int t : m_m.outputs)
            if (t >= 0 && dynamic(t))
                m_s.decref(bufOfRoot(t));
        m_s.end();

        m_gradBuf.assign(m_nT, -1);
        if (m_backward)
            outputGradient(o, lpBytes, lift, lp);
    }

    // transformers' ForCausalLMLoss (transformers/loss/loss_utils.py, 4.46 on; up to 4.45 LlamaForCausalLM.forward
    // and its peers did it in forward) runs `logits = logits.float()` before cross_entropy whatever the dtype, so
    // a model trained with `labels=` on 16-bit logits (pure --dtype bf16/fp16, LoRA and QLoRA on a bf16 model)
    // holds an fp32 copy, fp32 log-probabilities and fp32 gradients at the loss, as under autocast. Today's form
    // pads the labels; older ones also made `shift_logits.contiguous()`, a second fp32 copy, not modelled.
    // Known only for a model built from a config.json (an ONNX file does not say it is trained with `labels=`);
    // fp32 logits (prepare_model_for_kbit_training's fp32 lm_head) make `.float()` return the tensor itself.
    // The element size is the plan's and the policy's, never the binding's: SimKey::sixteenBit keeps the
    // recorded programs apart per policy class.
    bool hfLossUpcasts(int o) const
    {
        return o >= 0 && m_m.hfCausalLm && m_c.config.loss == Loss::CrossEntropy &&
               activationBytes(m_c.config, m_plan, o, 1) == 2;
    }

    // The loss's backward: the gradient of the output, from which backward starts.
    void outputGradient(int o, SizeRef lpBytes, bool lift, int lp)
    {
        int& og = m_gradBuf[static_cast<size_t>(o)];
        m_s.begin(-1, Phase::Loss);
        if (m_c.config.loss == Loss::CrossEntropy) {
            const int glp = m_s.alloc(lpBytes, Category::Loss, o, 1);
            if (lift) {
                // log_softmax's backward gives the fp32 copy's gradient; ToCopyBackward then casts it
                // back to the output's 16 bits
                const int gLifted = m_s.alloc(lpBytes, Category::Loss, o, 1);
                m_s.decref(glp);
                m_s.decref(lp);
                og = m_s.alloc(act(o), Category::Loss, o, 1);
                m_s.decref(gLifted);
            } else {
                og = m_s.alloc(act(o), Category::Loss, o, 1);
                m_s.decref(glp);
                m_s.decref(lp);
            }
        } else if (m_c.config.loss == Loss::MSE) {
            og = m_s.alloc(act(o), Category::Loss, o, 1);
            m_s.decref(bufOfRoot(o));
        } else {
            og = m_s.alloc(act(o), Category::Loss, o, 1);
        }
        m_s.end();
    }

    void backward()
    {
        m_recomputed.assign(m_ckpt ? static_cast<size_t>(m_opt.segments) : 0, 0);
        for (size_t ui = m_nU; m_backward && ui-- > 0;) {
            if (m_ckpt && checkpointed(ui) && !m_recomputed[static_cast<size_t>(m_opt.segmentOfUnit[ui])])
                recomputeSegment(ui);
            backwardUnit(ui);
        }
    }

    // checkpoint_sequential: the first backward into a checkpointed segment runs its forward again, with
    // the references and saved tensors of a normal forward inside the segment.
    void recomputeSegment(size_t ui)
    {
        const int seg = m_opt.segmentOfUnit[ui];
        const std::vector<int>& units = m_unitsOfSeg[static_cast<size_t>(seg)];
        m_recomputed[static_cast<size_t>(seg)] = 1;
        m_s.begin(m_plan.units[ui].head, Phase::Recompute);
        std::vector<int> touched;
        for (int v : units) {
            for (int t : m_plan.units[static_cast<size_t>(v)].inputs) {
                if (!dynamic(t))
                    continue;
                const int rt = root(t);
                if (inSeg(producerUnit(rt), seg)) {
                    ++m_segRefs[static_cast<size_t>(rt)];
                    touched.push_back(rt);
                }
            }
            for (const SavedItem& it : m_plan.units[static_cast<size_t>(v)].saved) {
                if (it.kind != SavedItem::Kind::Storage || !m_s.itemActive(it))
                    continue;
                const int rt = root(it.tensor);
                if (m_ckSaved[static_cast<size_t>(rt)])
                    continue;
                m_ckSaved[static_cast<size_t>(rt)] = 1;
                m_releaseAtCk[static_cast<size_t>(v)].push_back(rt);
                touched.push_back(rt);
                if (!inSeg(producerUnit(rt), seg)) { // a held input the segment saves
                    m_s.incref(m_buf[static_cast<size_t>(rt)]);
                    m_s.markSaved(m_buf[static_cast<size_t>(rt)]);
                }
            }
        }
        for (int v : units) {
            forwardUnit(static_cast<size_t>(v), true, seg);
            m_s.recomputes(v);
        }
        for (int rt : touched) {
            m_segRefs[static_cast<size_t>(rt)] = 0;
            m_ckSaved[static_cast<size_t>(rt)] = 0;
        }
        for (int rt : m_holds[static_cast<size_t>(seg)])
            m_s.decref(m_buf[static_cast<size_t>(rt)]);
        m_s.end();
    }

    void backwardUnit(size_t ui)
    {
        const Unit& unit = m_plan.units[ui];
        bool anyOut = false;
        for (int t : unit.outputs)
            anyOut = anyOut || m_gradBuf[static_cast<size_t>(t)] >= 0;
        const bool runs = unit.differentiable && anyOut;
        if (!runs && m_releaseAt[ui].empty() && m_unitExtras[ui].empty() && (!m_ckpt || m_releaseAtCk[ui].empty()))
            return;
        m_s.begin(unit.head, Phase::Backward);
        std::vector<int> castGrads;
        if (runs) {
            for (const SavedItem& it : unit.backwardScratch)
                m_s.decref(m_s.alloc(item(it), Category::Activations, it.tensor, 1));
            // gradients that exist together with the input gradients they become (autocast's 16-bit gradient
            // of a cast copy, before ToCopyBackward lifts it to the fp32 input's gradient)
            for (const SavedItem& it : unit.castGrads)
                castGrads.push_back(m_s.alloc(item(it), Category::Activations, it.tensor, 1));
            inputGradients(unit);
            for (int t : unit.outputs) {
                m_s.decref(m_gradBuf[static_cast<size_t>(t)]);
                m_gradBuf[static_cast<size_t>(t)] = -1;
            }
        }
        for (int id : castGrads)
            m_s.decref(id);
        for (int id : m_unitExtras[ui])
            m_s.decref(id);
        m_unitExtras[ui].clear();
        for (int rt : m_releaseAt[ui])
            m_s.decref(m_buf[static_cast<size_t>(rt)]);
        if (m_ckpt)
            for (int rt : m_releaseAtCk[ui])
                m_s.decref(m_buf[static_cast<size_t>(rt)]);
        m_s.end();
    }

    // Each input's gradient: the output gradient handed on as is (views, pass-through ops of the same
    // size), or a new buffer; a second contribution accumulates in place into a buffer only this input
    // holds, else out of place. Static inputs hand theirs to the parameters they derive from.
    void inputGradients(const Unit& unit)
    {
        const int out0 = unit.outputs.empty() ? -1 : unit.outputs[0];
        const int og = out0 >= 0 ? m_gradBuf[static_cast<size_t>(out0)] : -1;
        for (int t : unit.inputs) {
            const size_t ti = static_cast<size_t>(t);
            if (!m_plan.dynamic[ti]) {
                for (int p : m_plan.paramSources[ti])
                    contributeParam(p);
                continue;
            }
            if (!m_plan.getsGrad[ti])
                continue;
            int contrib;
            if ((unit.passGrad || unit.isView) && og >= 0 && m_s.sameNumel(t, out0)) {
                contrib = og;
                m_s.incref(og);
            } else {
                contrib = m_s.alloc(act(t), Category::Activations, t, 1);
            }
            int& g = m_gradBuf[ti];
            if (g < 0) {
                g = contrib;
            } else if (m_s.refs(g) == 1 && contrib != g) {
                m_s.decref(contrib); // in-place accumulation into a buffer only we hold
            } else {
                const int sum = m_s.alloc(act(t), Category::Activations, t, 1);
                m_s.decref(contrib);
                m_s.decref(g);
                g = sum;
            }
        }
    }

    void contributeParam(int p)
    {
        const size_t pi = static_cast<size_t>(p);
        if (m_paramGrad[pi] < 0) {
            m_paramGrad[pi] = m_s.alloc(of(SizeRef::Kind::Gradient, p), Category::Gradients, p, 1);
        } else if (m_gradPre[pi]) {
            const int tmp = m_s.alloc(of(SizeRef::Kind::Gradient, p), Category::Gradients, p, 1); // grad += new
            m_s.decref(tmp);
        } else {
            // a parameter used twice (tied weights): autograd sums the two contributions out of place
            const int tmp = m_s.alloc(of(SizeRef::Kind::Gradient, p), Category::Gradients, p, 1);
            const int sum = m_s.alloc(of(SizeRef::Kind::Gradient, p), Category::Gradients, p, 1);
            m_s.decref(tmp);
            m_s.decref(m_paramGrad[pi]);
            m_paramGrad[pi] = sum;
        }
    }

    // Whatever no backward step released (units off the loss path, unused holds).
    void releaseLeftovers()
    {
        m_s.begin(-1, Phase::Backward);
        for (size_t ui = 0; ui < m_nU; ++ui) {
            for (int id : m_unitExtras[ui])
                m_s.decref(id);
            if (!m_backward)
                for (int rt : m_releaseAt[ui])
                    m_s.decref(m_buf[static_cast<size_t>(rt)]);
        }
        for (size_t t = 0; t < m_nT; ++t)
            if (m_gradBuf[t] >= 0)
                m_s.decref(m_gradBuf[t]);
        if (m_ckpt)
            for (size_t seg = 0; seg < m_holds.size(); ++seg)
                if (!m_recomputed[seg])
                    for (int rt : m_holds[seg])
                        m_s.decref(m_buf[static_cast<size_t>(rt)]);
        m_s.end();
    }

    // The optimizer step: foreach implementations build one fp32 temporary per parameter; then
    // zero_grad(set_to_none=True).
    void optimizerStep()
    {
        m_s.begin(-1, Phase::Optimizer);
        if (m_s.positive(of(SizeRef::Kind::OptimizerTemp)))
            m_s.decref(m_s.alloc(of(SizeRef::Kind::OptimizerTemp), Category::Optimizer, -1, 1));
        for (size_t p = 0; p < m_nT; ++p)
            if (m_paramGrad[p] >= 0)
                m_s.decref(m_paramGrad[p]);
        m_s.end();
    }
};

} // namespace

SimKey simKey(const Config& config, const SimOptions& options)
{
    SimKey k;
    k.train = !policyIsInference(config);
    k.inplace = options.inplace;
    k.events = options.events;
    k.persistentGrads = k.train && config.accumulate > 1;
    k.amp = config.dtype == DtypePolicy::AmpFP16 || config.dtype == DtypePolicy::AmpBF16;
    k.sixteenBit = config.dtype == DtypePolicy::FP16 || config.dtype == DtypePolicy::BF16 ||
                   config.dtype == DtypePolicy::MixedFP16 || config.dtype == DtypePolicy::MixedBF16 ||
                   config.dtype == DtypePolicy::INT8 || config.dtype == DtypePolicy::INT4;
    k.loss = config.loss;
    k.optimizer = config.optimizer;
    k.segments = options.segments;
    k.segmentOfUnit = options.segmentOfUnit;
    return k;
}

SimProgram recordIteration(const SimContext& c, const SimOptions& options)
{
    SimProgram program;
    program.key = simKey(c.config, options);
    program.ops.reserve(c.plan.units.size() * 8 + 64);
    program.buffers.reserve(c.plan.units.size() * 3 + c.plan.trainable.size() * 2 + 16);
    Iteration(c, options, program).run();
    return program;
}

} // namespace headroom
