// The forward pass: what exists when the iteration starts, then each unit's outputs, saved extras and
// scratch, with its inputs' references dropped as it consumes them (timeline_program.h, "how the timeline
// works"). Checkpoint recomputation (recompute.cpp) runs forwardUnit again inside a segment.
#include "timeline/iteration.h"

namespace headroom::timeline {

namespace {

// Gradient accumulation: parameter gradients live across micro-batches, from before the first forward; so do
// they across steps where zero_grad() zeroes them in place (PyTorch before 2.0: config.cpp kTorchDefaults).
void holdAccumulatedGradients(Iteration& w)
{
    if (!w.train || (w.c.config.accumulate <= 1 && zeroGradFreesGradients(w.c.config.torch)))
        return;
    for (int p : w.plan.trainable)
        if (w.plan.reqGrad[static_cast<size_t>(p)]) {
            w.paramGrad[static_cast<size_t>(p)] = w.rec.alloc(of(SizeRef::Kind::Gradient, p), Category::Gradients, p,
                                                              1);
            w.gradPre[static_cast<size_t>(p)] = 1;
        }
}

void allocateOutputs(Iteration& w, const Unit& unit, bool recompute)
{
    for (int t : unit.outputs) {
        const size_t ti = static_cast<size_t>(t);
        if (w.plan.virtualOut[ti] || !w.plan.dynamic[ti] || w.root(t) != t)
            continue;
        const bool saved = recompute ? w.ckSaved[ti] != 0 : w.firstSaver[ti] >= 0;
        const int rc = recompute ? w.segRefs[ti] + (saved ? 1 : 0) : w.refs[ti];
        const int id = w.rec.alloc(act(t), Category::Activations, t, rc);
        w.buf[ti] = id;
        if (saved)
            w.rec.markSaved(id);
    }
}

} // namespace

// What exists when the iteration starts: weights, buffers, states, accumulated gradients, the input.
void setup(Iteration& w)
{
    w.buf.assign(w.nT, -1);
    w.paramGrad.assign(w.nT, -1);
    w.gradPre.assign(w.nT, 0);
    w.rec.begin(-1, Phase::Forward);
    if (w.opt.events) {
        for (int p : w.plan.trainable)
            w.rec.alloc(of(SizeRef::Kind::Weight, p), Category::Weights, p, 1);
        if (w.rec.positive(of(SizeRef::Kind::UntiedHead))) // lit-gpt's lm_head beside a tied embedding
            w.rec.alloc(of(SizeRef::Kind::UntiedHead), Category::Weights, -1, 1);
        // the largest dequantized 4/8-bit weight, held at the peak as persistentWeights counts it
        if (w.rec.positive(of(SizeRef::Kind::DequantTransient)) && w.rec.positive(of(SizeRef::Kind::Quantized)) &&
            !w.plan.trainable.empty())
            w.rec.alloc(of(SizeRef::Kind::DequantTransient), Category::Weights, -1, 1);
        for (int b : w.plan.buffers)
            w.rec.alloc(of(SizeRef::Kind::Buffer, b), Category::Buffers, b, 1);
        if (w.rec.positive(of(SizeRef::Kind::Autocast)))
            w.rec.alloc(of(SizeRef::Kind::Autocast), Category::Weights, -1, 1);
    } else {
        w.rec.alloc(of(SizeRef::Kind::PersistentWeights), Category::Weights, -1, 1);
    }
    if (w.rec.positive(of(SizeRef::Kind::Master)))
        w.rec.alloc(of(SizeRef::Kind::Master), Category::MasterWeights, -1, 1);
    if (w.rec.positive(of(SizeRef::Kind::PersistentOptimizer)))
        w.rec.alloc(of(SizeRef::Kind::PersistentOptimizer), Category::Optimizer, -1, 1);
    holdAccumulatedGradients(w);
    // lit-gpt with bnb before 0.43.2 (litgpt_model.cpp rule 5): the previous step's graph, alive until this
    // step's forward returns, holds its Linear4bit inputs and its logits
    w.previousGraph.clear();
    if (w.train)
        for (const auto& [root, unit] : w.plan.graphHeld)
            if (unit < 0 || !w.checkpointed(static_cast<size_t>(unit)))
                w.previousGraph.push_back(w.rec.alloc(act(root), Category::Activations, root, 1));
    for (int t : w.model.inputs) {
        const int rt = w.root(t);
        const size_t r = static_cast<size_t>(rt);
        w.buf[r] = w.rec.alloc(act(t), Category::Input, t, w.refs[r] + 1); // + the data loader's hold
        if (w.firstSaver[r] >= 0)
            w.rec.markSaved(w.buf[r]);
    }
    w.rec.end();
}

void forward(Iteration& w)
{
    w.unitExtras.assign(w.nU, {});
    if (w.ckpt) {
        w.segRefs.assign(w.nT, 0);
        w.ckSaved.assign(w.nT, 0);
        w.releaseAtCk.assign(w.nU, {});
    }
    for (size_t u = 0; u < w.nU; ++u) {
        w.rec.begin(w.plan.units[u].head, Phase::Forward);
        packSegmentInputs(w, u); // activation offloading (offload.cpp)
        forwardUnit(w, u, false, -1);
        packUnitSaves(w, u);
        if (u + 1 == w.nU) // the model has returned: `logits = model(...)` drops the previous graph
            for (int id : w.previousGraph)
                w.rec.decref(id);
        w.rec.end();
    }
}

void forwardUnit(Iteration& w, size_t u, bool recompute, int seg)
{
    const Unit& unit = w.plan.units[u];
    if (!recompute && fusedLinearLossForward(w, u))
        return;
    const bool saving = w.train && (!w.checkpointed(u) || recompute) && !unit.saved.empty();
    std::vector<int> unsaved;
    if (w.train && !saving)
        for (const SavedItem& it : unit.unsavedScratch)
            unsaved.push_back(w.rec.alloc(item(it), Category::Activations, it.tensor, 1));
    const bool recording = w.train && (!w.checkpointed(u) || recompute);
    const auto allocateExtras = [&] {
        for (const SavedItem& it : unit.saved) {
            if (it.kind == SavedItem::Kind::Storage || !w.rec.itemActive(it))
                continue;
            const int id = w.rec.alloc(item(it), Category::Activations, it.tensor, 1);
            w.rec.markSaved(id);
            w.unitExtras[u].push_back(id);
        }
    };
    if (recording && unit.extrasBeforeOutputs)
        allocateExtras();
    if (!w.aliasUnit[u])
        allocateOutputs(w, unit, recompute);
    for (int id : unsaved)
        w.rec.decref(id);
    if (recording && !unit.extrasBeforeOutputs)
        allocateExtras();
    for (const SavedItem& it : unit.forwardScratch)
        w.rec.decref(w.rec.alloc(item(it), Category::Activations, it.tensor, 1));
    for (int t : unit.inputs) {
        if (!w.dynamic(t))
            continue;
        const int rt = w.root(t);
        if (!recompute || w.inSeg(w.producerUnit(rt), seg))
            w.rec.decref(w.buf[static_cast<size_t>(rt)]);
    }
    // outputs nobody holds die at once (after the step's high-water mark)
    if (!w.aliasUnit[u])
        for (int t : unit.outputs) {
            const int id = w.buf[static_cast<size_t>(t)];
            if (w.root(t) == t && id >= 0 && w.rec.refs(id) <= 0)
                w.rec.release(id);
        }
}

// Inference: outputs are handed to the caller; nothing else is kept.
void handOutOutputs(Iteration& w)
{
    w.rec.begin(-1, Phase::Forward);
    for (int t : w.model.outputs)
        if (t >= 0 && w.dynamic(t))
            w.rec.decref(w.bufOfRoot(t));
    w.rec.end();
}

} // namespace headroom::timeline
