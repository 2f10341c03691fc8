// The backward pass, units in reverse: each unit's input gradients and parameter gradients, then the saved
// references its backward drops (timeline_program.h, "how the timeline works").
#include "timeline/iteration.h"

namespace headroom::timeline {

namespace {

void contributeParam(Iteration& w, int p)
{
    const size_t pi = static_cast<size_t>(p);
    if (w.paramGrad[pi] < 0) {
        w.paramGrad[pi] = w.rec.alloc(of(SizeRef::Kind::Gradient, p), Category::Gradients, p, 1);
    } else if (w.gradPre[pi]) {
        const int tmp = w.rec.alloc(of(SizeRef::Kind::Gradient, p), Category::Gradients, p, 1); // grad += new
        w.rec.decref(tmp);
    } else {
        // a parameter used twice (tied weights): autograd sums the two contributions out of place
        const int tmp = w.rec.alloc(of(SizeRef::Kind::Gradient, p), Category::Gradients, p, 1);
        const int sum = w.rec.alloc(of(SizeRef::Kind::Gradient, p), Category::Gradients, p, 1);
        w.rec.decref(tmp);
        w.rec.decref(w.paramGrad[pi]);
        w.paramGrad[pi] = sum;
    }
}

// Each input's gradient: the output gradient handed on as is (views, pass-through ops of the same
// size), or a new buffer; a second contribution accumulates in place into a buffer only this input
// holds, else out of place. Static inputs hand theirs to the parameters they derive from.
void inputGradients(Iteration& w, const Unit& unit)
{
    const int out0 = unit.outputs.empty() ? -1 : unit.outputs[0];
    const int og = out0 >= 0 ? w.gradBuf[static_cast<size_t>(out0)] : -1;
    for (int t : unit.inputs) {
        const size_t ti = static_cast<size_t>(t);
        if (!w.plan.dynamic[ti]) {
            for (int p : w.plan.paramSources[ti])
                contributeParam(w, p);
            continue;
        }
        if (!w.plan.getsGrad[ti])
            continue;
        int contrib;
        if ((unit.passGrad || unit.isView) && og >= 0 && w.rec.sameNumel(t, out0)) {
            contrib = og;
            w.rec.incref(og);
        } else {
            contrib = w.rec.alloc(act(t), Category::Activations, t, 1);
        }
        int& g = w.gradBuf[ti];
        if (g < 0) {
            g = contrib;
        } else if (w.rec.refs(g) == 1 && contrib != g) {
            w.rec.decref(contrib); // in-place accumulation into a buffer only we hold
        } else {
            const int sum = w.rec.alloc(act(t), Category::Activations, t, 1);
            w.rec.decref(contrib);
            w.rec.decref(g);
            g = sum;
        }
    }
}

void backwardUnit(Iteration& w, size_t ui)
{
    const Unit& unit = w.plan.units[ui];
    bool anyOut = false;
    for (int t : unit.outputs)
        anyOut = anyOut || w.gradBuf[static_cast<size_t>(t)] >= 0;
    const bool runs = unit.differentiable && anyOut;
    if (!runs && w.releaseAt[ui].empty() && w.unitExtras[ui].empty() && (!w.ckpt || w.releaseAtCk[ui].empty()))
        return;
    w.rec.begin(unit.head, Phase::Backward);
    std::vector<int> castGrads;
    if (runs) {
        for (const SavedItem& it : unit.backwardScratch)
            w.rec.decref(w.rec.alloc(item(it), Category::Activations, it.tensor, 1));
        // gradients that exist together with the input gradients they become (autocast's 16-bit gradient
        // of a cast copy, before ToCopyBackward lifts it to the fp32 input's gradient)
        for (const SavedItem& it : unit.castGrads)
            castGrads.push_back(w.rec.alloc(item(it), Category::Activations, it.tensor, 1));
        inputGradients(w, unit);
        for (int t : unit.outputs) {
            w.rec.decref(w.gradBuf[static_cast<size_t>(t)]);
            w.gradBuf[static_cast<size_t>(t)] = -1;
        }
    }
    for (int id : castGrads)
        w.rec.decref(id);
    for (int id : w.unitExtras[ui])
        w.rec.decref(id);
    w.unitExtras[ui].clear();
    for (int rt : w.releaseAt[ui])
        w.rec.decref(w.buf[static_cast<size_t>(rt)]);
    if (w.ckpt)
        for (int rt : w.releaseAtCk[ui])
            w.rec.decref(w.buf[static_cast<size_t>(rt)]);
    w.rec.end();
}

} // namespace

void backward(Iteration& w)
{
    w.recomputed.assign(w.ckpt ? static_cast<size_t>(w.opt.segments) : 0, 0);
    for (size_t ui = w.nU; w.lossHasGrad && ui-- > 0;) {
        const bool recomputes = w.ckpt && w.checkpointed(ui) &&
                                !w.recomputed[static_cast<size_t>(w.opt.segmentOfUnit[ui])];
        if (recomputes)
            recomputeSegment(w, ui);
        fusedLinearLossBackward(w, ui);
        backwardUnit(w, ui);
        if (recomputes)
            afterFirstUnpackingUnit(w); // activation offloading: the unpacking node's post-hook (offload.cpp)
    }
}

// Whatever no backward step released (units off the loss path, unused holds).
void releaseLeftovers(Iteration& w)
{
    w.rec.begin(-1, Phase::Backward);
    releaseOffloadLeftovers(w);
    for (size_t ui = 0; ui < w.nU; ++ui) {
        for (int id : w.unitExtras[ui])
            w.rec.decref(id);
        if (!w.lossHasGrad)
            for (int rt : w.releaseAt[ui])
                w.rec.decref(w.buf[static_cast<size_t>(rt)]);
    }
    for (size_t t = 0; t < w.nT; ++t)
        if (w.gradBuf[t] >= 0)
            w.rec.decref(w.gradBuf[t]);
    for (int id : w.keptOutputs)
        w.rec.decref(id);
    w.keptOutputs.clear();
    if (w.ckpt)
        for (size_t seg = 0; seg < w.holds.size(); ++seg)
            if (!w.recomputed[seg])
                for (size_t k = 0; k < w.holds[seg].size(); ++k)
                    if (!holdOffloaded(w, seg, k)) // its reference went in forward (offload.cpp)
                        w.rec.decref(w.buf[static_cast<size_t>(w.holds[seg][k])]);
    w.rec.end();
}

} // namespace headroom::timeline
