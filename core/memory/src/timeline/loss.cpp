// The loss and its backward: the output's log-probabilities (and the fp32 copy a 16-bit output is lifted to),
// then the output gradient from which backward starts (timeline_program.h, "how the timeline works").
#include "timeline/iteration.h"

namespace headroom::timeline {

namespace {

// transformers' ForCausalLMLoss (transformers/loss/loss_utils.py, 4.46 on; up to 4.45 LlamaForCausalLM.forward
// and its peers did it in forward) runs `logits = logits.float()` before cross_entropy whatever the dtype, so
// a model trained with `labels=` on 16-bit logits (pure --dtype bf16/fp16, LoRA and QLoRA on a bf16 model)
// holds an fp32 copy, fp32 log-probabilities and fp32 gradients at the loss, as under autocast. Today's form
// pads the labels; older ones also made `shift_logits.contiguous()`, a second fp32 copy, not modelled.
// Known only for a model built from a config.json (an ONNX file does not say it is trained with `labels=`);
// fp32 logits (prepare_model_for_kbit_training's fp32 lm_head) make `.float()` return the tensor itself.
// The element size is the plan's and the policy's, never the binding's: SimKey::sixteenBit keeps the
// recorded programs apart per policy class.
bool hfLossUpcasts(const Iteration& w, int o)
{
    return o >= 0 && w.model.hfCausalLm && w.c.config.loss == Loss::CrossEntropy &&
           activationBytes(w.c.config, w.plan, o, 1) == 2;
}

// The loss's backward: the gradient of the output, from which backward starts.
void outputGradient(Iteration& w, int o, SizeRef lpBytes, bool lift, int lp)
{
    int& og = w.gradBuf[static_cast<size_t>(o)];
    w.rec.begin(-1, Phase::Loss);
    if (w.c.config.loss == Loss::CrossEntropy) {
        const int glp = w.rec.alloc(lpBytes, Category::Loss, o, 1);
        if (lift) {
            // log_softmax's backward gives the fp32 copy's gradient; ToCopyBackward then casts it
            // back to the output's 16 bits
            const int gLifted = w.rec.alloc(lpBytes, Category::Loss, o, 1);
            w.rec.decref(glp);
            w.rec.decref(lp);
            og = w.rec.alloc(act(o), Category::Loss, o, 1);
            w.rec.decref(gLifted);
        } else {
            og = w.rec.alloc(act(o), Category::Loss, o, 1);
            w.rec.decref(glp);
            w.rec.decref(lp);
        }
    } else if (w.c.config.loss == Loss::MSE) {
        og = w.rec.alloc(act(o), Category::Loss, o, 1);
        w.rec.decref(w.bufOfRoot(o));
    } else {
        og = w.rec.alloc(act(o), Category::Loss, o, 1);
    }
    w.rec.end();
}

} // namespace

void loss(Iteration& w)
{
    const Config& config = w.c.config;
    const int o = w.plan.lossTensor;
    w.lossHasGrad = o >= 0 && w.plan.getsGrad[static_cast<size_t>(o)];
    const bool amp = config.dtype == DtypePolicy::AmpFP16 || config.dtype == DtypePolicy::AmpBF16;
    const bool hfUpcast = !amp && hfLossUpcasts(w, o);
    const SizeRef lpBytes = o >= 0 && (amp || hfUpcast) ? of(SizeRef::Kind::LogProb, o) : act(o);
    int lp = -1;
    w.rec.begin(-1, Phase::Loss);
    // A 16-bit output is lifted to fp32 first (the loss on logits.float(), or cross_entropy on the autocast
    // fp32 list): that copy lives while log_softmax runs; log_softmax keeps its result.
    const bool lift = ((amp && o >= 0 && w.plan.amp16[static_cast<size_t>(o)]) || hfUpcast) &&
                      config.loss != Loss::None && w.lossHasGrad;
    const int lifted = lift ? w.rec.alloc(lpBytes, Category::Loss, o, 1) : -1;
    if (o >= 0 && config.loss == Loss::CrossEntropy && w.lossHasGrad)
        lp = w.rec.alloc(lpBytes, Category::Loss, o, 1);
    if (lifted >= 0)
        w.rec.decref(lifted);
    if (o >= 0 && config.loss == Loss::MSE && w.lossHasGrad)
        w.rec.incref(w.bufOfRoot(o));
    for (int t : w.model.outputs)
        if (t >= 0 && w.dynamic(t))
            w.rec.decref(w.bufOfRoot(t));
    w.rec.end();

    w.gradBuf.assign(w.nT, -1);
    if (w.lossHasGrad)
        outputGradient(w, o, lpBytes, lift, lp);
}

} // namespace headroom::timeline
