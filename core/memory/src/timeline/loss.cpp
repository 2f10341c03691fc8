// The loss and its backward: the output's log-probabilities (and the fp32 copy a 16-bit output is lifted to),
// then the output gradient from which backward starts (timeline_program.h, "how the timeline works"). The
// chunked losses (config.h Loss::ChunkedCE, Loss::FusedLinearCE) change what of the logits exists at once.
#include "timeline/iteration.h"

#include <algorithm>

namespace headroom::timeline {

namespace {

// transformers' ForCausalLMLoss (transformers/loss/loss_utils.py, 4.46 on; up to 4.45 LlamaForCausalLM.forward
// and its peers did it in forward) runs `logits = logits.float()` before cross_entropy whatever the dtype, so
// a model trained with `labels=` on 16-bit logits (pure --dtype bf16/fp16, LoRA and QLoRA on a bf16 model)
// holds an fp32 copy, fp32 log-probabilities and fp32 gradients at the loss, as under autocast. Today's form
// pads the labels. Before 4.46 (Config::hfFp32Logits) the fp32 copy was `outputs.logits` itself, and the loss
// ran on `shift_logits = logits[..., :-1, :].contiguous()`, a second fp32 copy of T - 1 positions (lossShifts).
// Known only for a model built from a config.json (an ONNX file does not say it is trained with `labels=`);
// fp32 logits (prepare_model_for_kbit_training's fp32 lm_head) make `.float()` return the tensor itself.
// torchtune's CEWithChunkedOutputLoss.compute_cross_entropy upcasts every chunk (`logits.float()`), whatever
// the model; litgpt's chunked_cross_entropy (Loss::ChunkedCE16) never does. The element size is the plan's and
// the policy's, never the binding's: SimKey::sixteenBit keeps the recorded programs apart per policy class.
bool lossUpcasts(const Iteration& w, int o, Loss kind)
{
    return o >= 0 && activationBytes(w.c.config, w.plan, o, 1) == 2 &&
           ((w.model.hfCausalLm && kind == Loss::CrossEntropy) || kind == Loss::ChunkedCE);
}

// The loss that runs: Liger's fused linear cross-entropy replaces the lm_head and the loss only where the
// logits come from one (findFusedLinearLoss); elsewhere there is nothing to fuse and cross_entropy runs.
Loss lossKind(const Iteration& w)
{
    const Loss l = w.c.config.loss;
    return l == Loss::FusedLinearCE && w.fusedLossHead < 0 ? Loss::CrossEntropy : l;
}

// The loss's backward: the gradient of the output, from which backward starts. `chunk`: the fp32 gradients
// of log_softmax and of the upcast exist one chunk at a time (torchtune), else for the whole output.
// `lsInput`: log_softmax's input where that PyTorch keeps it (1.10: logSoftmaxKeepsInput), freed with its
// result once log_softmax's backward has run.
// `shifted`: transformers < 4.46's shift (loss()): log_softmax's backward gives the shifted copy's gradient,
// SliceBackward scatters it into zeros shaped like the fp32 logits, and ToCopyBackward casts that to 16 bits.
void outputGradient(Iteration& w, int o, SizeRef lpBytes, bool lift, int lp, Loss kind, int lsInput, bool shifted)
{
    int& og = w.gradBuf[static_cast<size_t>(o)];
    w.rec.begin(-1, Phase::Loss);
    if (kind == Loss::ChunkedCE16 && !lift) {
        // litgpt: each 128-token chunk's log_softmax backward frees that chunk's log-probabilities as it makes
        // the chunk's logits gradient (a B x 128 x V transient, not counted)
        w.rec.decref(lp);
        og = w.rec.alloc(act(o), Category::Loss, o, 1);
    } else if (kind == Loss::CrossEntropy || kind == Loss::ChunkedCE || kind == Loss::ChunkedCE16) {
        const SizeRef g32 = kind == Loss::ChunkedCE ? of(SizeRef::Kind::LossChunk, o) : lpBytes;
        const int glp = w.rec.alloc(g32, Category::Loss, o, 1);
        if (shifted) {
            const int gShift = w.rec.alloc(g32, Category::Loss, o, 1);
            w.rec.decref(glp);
            w.rec.decref(lp);
            w.rec.decref(lsInput);
            // SliceBackward: zeros shaped like the fp32 logits with the shifted gradient copied in (the fp32
            // output's own gradient, or the copy's, which ToCopyBackward then casts to 16 bits)
            const int gFull = w.rec.alloc(lift ? of(SizeRef::Kind::LogProb, o) : act(o), Category::Loss, o, 1);
            w.rec.decref(gShift);
            if (lift) {
                og = w.rec.alloc(act(o), Category::Loss, o, 1);
                w.rec.decref(gFull);
            } else {
                og = gFull;
            }
        } else if (lift) {
            // log_softmax's backward gives the fp32 copy's gradient; ToCopyBackward then casts it
            // back to the output's 16 bits
            const int gLifted = w.rec.alloc(g32, Category::Loss, o, 1);
            w.rec.decref(glp);
            w.rec.decref(lp);
            w.rec.decref(lsInput);
            og = w.rec.alloc(act(o), Category::Loss, o, 1);
            w.rec.decref(gLifted);
        } else {
            if (kind == Loss::ChunkedCE) { // the chunks' log-probabilities go as their gradients are made
                w.rec.decref(lp);
                lp = -1;
            }
            og = w.rec.alloc(act(o), Category::Loss, o, 1);
            w.rec.decref(glp);
            w.rec.decref(lp);
            w.rec.decref(lsInput);
        }
    } else if (kind == Loss::MSE) {
        og = w.rec.alloc(act(o), Category::Loss, o, 1);
        w.rec.decref(w.bufOfRoot(o));
    } else {
        og = w.rec.alloc(act(o), Category::Loss, o, 1);
    }
    w.rec.end();
}

bool softcapPiece(const std::string& op) { return op == "Div" || op == "Tanh" || op == "Mul"; }

int64_t ceilDiv(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }

int64_t nextPowerOfTwo(int64_t x)
{
    int64_t p = 1;
    while (p < x && p < (int64_t{1} << 61))
        p <<= 1;
    return p;
}

} // namespace

// Loss::FusedLinearCE: from the loss output back through a final softcap (logits / cap, tanh, * cap: Gemma 2's
// final_logit_softcapping, which Liger applies inside its kernel, `softcap=`) to the lm_head MatMul, whose
// second operand is a weight. Those units are what LigerFusedLinearCrossEntropyLoss replaces; none found
// (no such MatMul, or its logits read elsewhere): nothing to fuse (lossKind).
void findFusedLinearLoss(Iteration& w)
{
    w.fusedLoss.clear();
    w.fusedLossHead = -1;
    w.fusedGradInput = -1;
    const int o = w.plan.lossTensor;
    if (!w.train || w.c.config.loss != Loss::FusedLinearCE || o < 0 || !w.dynamic(o))
        return;
    std::vector<uint8_t> region(w.nU, 0);
    int t = o;
    for (int guard = 0; guard < 4; ++guard) {
        const int u = w.producerUnit(t);
        if (u < 0)
            return;
        const Unit& unit = w.plan.units[static_cast<size_t>(u)];
        const Node& nd = w.model.nodes[static_cast<size_t>(unit.head)];
        // a checkpointed lm_head would be recomputed as a plain MatMul: not fused
        if (unit.nodes.size() != 1 || unit.outputs.size() != 1 || w.checkpointed(static_cast<size_t>(u)))
            return;
        region[static_cast<size_t>(u)] = 1;
        if (nd.op == "MatMul" || nd.op == "Gemm") {
            if (nd.inputs.size() < 2 || nd.inputs[0] < 0 || nd.inputs[1] < 0 || !w.dynamic(nd.inputs[0]) ||
                w.dynamic(nd.inputs[1]))
                return;
            w.fusedLoss = std::move(region);
            w.fusedLossHead = u;
            return;
        }
        if (!softcapPiece(nd.op))
            return;
        int next = -1;
        for (int in : nd.inputs)
            if (in >= 0 && w.dynamic(in)) {
                if (next >= 0)
                    return;
                next = in;
            }
        if (next < 0 || w.plan.consumerUnits[static_cast<size_t>(next)].size() != 1 ||
            w.model.tensors[static_cast<size_t>(next)].isGraphOutput)
            return;
        t = next;
    }
}

// Liger's forward (liger_kernel/ops/fused_linear_cross_entropy.py fused_linear_cross_entropy_forward), in place
// of the units findFusedLinearLoss marked: grad_input = zeros_like(_input) (the hidden states' gradient, made
// now and saved for backward, which only scales it), grad_weight = zeros_like(weight) when the lm_head trains
// (the gradient AccumulateGrad takes), then per token chunk the logits (which the kernel overwrites with their
// gradient) and grad_logits_chunk @ weight. Nothing of the lm_head's inputs is saved (references.cpp).
bool fusedLinearLossForward(Iteration& w, size_t u)
{
    if (w.fusedLoss.empty() || !w.fusedLoss[u])
        return false;
    const Unit& unit = w.plan.units[u];
    if (static_cast<int>(u) == w.fusedLossHead) {
        const Node& nd = w.model.nodes[static_cast<size_t>(unit.head)];
        const int hidden = nd.inputs[0], weight = nd.inputs[1];
        if (w.plan.getsGrad[static_cast<size_t>(hidden)])
            w.fusedGradInput = w.rec.alloc(act(hidden), Category::Loss, hidden, 1);
        for (int p : w.plan.paramSources[static_cast<size_t>(weight)]) {
            if (!w.plan.reqGrad[static_cast<size_t>(p)])
                continue;
            const int g = w.rec.alloc(of(SizeRef::Kind::Gradient, p), Category::Gradients, p, 1);
            if (w.paramGrad[static_cast<size_t>(p)] < 0)
                w.paramGrad[static_cast<size_t>(p)] = g;
            else
                w.unitExtras[u].push_back(g); // accumulation: added into the kept gradient at backward
        }
        const int out = unit.outputs[0];
        w.rec.decref(w.rec.alloc(of(SizeRef::Kind::LinearLossChunk, out), Category::Loss, out, 1));
    }
    for (int t : unit.inputs)
        if (w.dynamic(t))
            w.rec.decref(w.bufOfRoot(t));
    return true;
}

// Liger's backward hands the gradient made in forward to the hidden states (grad_output is 1 for a scalar
// loss: returned as is).
void fusedLinearLossBackward(Iteration& w, size_t u)
{
    if (static_cast<int>(u) != w.fusedLossHead || w.fusedGradInput < 0)
        return;
    const int hidden = w.model.nodes[static_cast<size_t>(w.plan.units[u].head)].inputs[0];
    int& g = w.gradBuf[static_cast<size_t>(hidden)];
    w.rec.begin(w.plan.units[u].head, Phase::Backward);
    if (g < 0) {
        g = w.fusedGradInput;
    } else {
        const int sum = w.rec.alloc(act(hidden), Category::Activations, hidden, 1);
        w.rec.decref(w.fusedGradInput);
        w.rec.decref(g);
        g = sum;
    }
    w.fusedGradInput = -1;
    w.rec.end();
}

void loss(Iteration& w)
{
    const Config& config = w.c.config;
    const int o = w.plan.lossTensor;
    const Loss kind = lossKind(w);
    w.lossHasGrad = o >= 0 && w.plan.getsGrad[static_cast<size_t>(o)];
    if (kind == Loss::FusedLinearCE) { // the loss ran with the lm_head (fusedLinearLossForward)
        w.rec.begin(-1, Phase::Loss);
        for (int t : w.model.outputs)
            if (t >= 0 && w.dynamic(t))
                w.rec.decref(w.bufOfRoot(t));
        if (!w.lossHasGrad)
            w.rec.decref(w.fusedGradInput);
        w.rec.end();
        w.gradBuf.assign(w.nT, -1);
        return;
    }
    const bool ce = kind == Loss::CrossEntropy || kind == Loss::ChunkedCE || kind == Loss::ChunkedCE16;
    const bool amp = config.dtype == DtypePolicy::AmpFP16 || config.dtype == DtypePolicy::AmpBF16;
    const bool upcast = !amp && lossUpcasts(w, o, kind);
    // torchtune's log-probabilities are fp32 whatever the output (compute_cross_entropy's `.float()`)
    const SizeRef lpBytes = o >= 0 && (amp || upcast || kind == Loss::ChunkedCE) ? of(SizeRef::Kind::LogProb, o)
                                                                                 : act(o);
    int lp = -1;
    w.rec.begin(-1, Phase::Loss);
    // A 16-bit output is lifted to fp32 first (the loss on logits.float(), or cross_entropy on the autocast
    // fp32 list): that copy lives while log_softmax runs (one chunk of it at a time for torchtune);
    // log_softmax keeps its result.
    const bool lift = ((amp && o >= 0 && w.plan.amp16[static_cast<size_t>(o)]) || upcast) && kind != Loss::None &&
                      w.lossHasGrad;
    const SizeRef liftBytes = kind == Loss::ChunkedCE ? of(SizeRef::Kind::LossChunk, o) : lpBytes;
    // lit-gpt's finetune/lora.py fit() holds `logits` (the lm_head chunks) as a local through
    // fabric.backward(loss): they go when backward has run (releaseLeftovers), not here (litgpt_model.cpp 3)
    const bool keep = w.plan.options.litgptModel && w.lossHasGrad;
    // transformers < 4.46 (Config::hfFp32Logits): `logits = logits.float()` (a copy of 16-bit logits, which
    // then nothing holds; fp32 logits themselves) is what the model returns, and the loss runs on its shifted
    // contiguous copy: log-probabilities and their gradients of T - 1 positions (SizeRef::Kind::ShiftedLogProb)
    const bool shifted = o >= 0 && w.model.hfCausalLm && kind == Loss::CrossEntropy && config.hfFp32Logits &&
                         w.lossHasGrad;
    const SizeRef lpUsed = shifted ? of(SizeRef::Kind::ShiftedLogProb, o) : lpBytes;
    const int lifted = lift ? w.rec.alloc(liftBytes, Category::Loss, o, 1) : -1;
    if (shifted && lift && !keep)
        for (int t : w.model.outputs)
            if (t >= 0 && w.dynamic(t))
                w.rec.decref(w.bufOfRoot(t));
    const int shiftCopy = shifted ? w.rec.alloc(lpUsed, Category::Loss, o, 1) : -1;
    if (o >= 0 && ce && w.lossHasGrad)
        lp = w.rec.alloc(lpUsed, Category::Loss, o, 1);
    // PyTorch 1.10's log_softmax keeps its input (the lifted or shifted copy, or the output itself) until its
    // backward; cross_entropy's one log_softmax only: the chunked losses (torchtune, litgpt) are of torch 2.x
    const int lsSource = shifted ? shiftCopy : lifted;
    int lsInput = -1;
    if (lp >= 0 && kind == Loss::CrossEntropy && logSoftmaxKeepsInput(w.plan.options.torch)) {
        lsInput = lsSource >= 0 ? lsSource : w.bufOfRoot(o);
        if (lsSource < 0)
            w.rec.incref(lsInput);
    } else if (lsSource >= 0) {
        w.rec.decref(lsSource);
    }
    if (o >= 0 && kind == Loss::MSE && w.lossHasGrad)
        w.rec.incref(w.bufOfRoot(o));
    // The output the training loop holds to the end of the step (Config::loopKeepsOutput): the fp32 logits that
    // transformers < 4.46 returns, else the model's own outputs.
    const bool loopHolds = w.c.config.loopKeepsOutput && w.lossHasGrad && !keep;
    if (shifted && lift) {
        if (loopHolds)
            w.loopOutputs.push_back(lifted);
        else
            w.rec.decref(lifted);
    }
    for (int t : w.model.outputs)
        if (t >= 0 && w.dynamic(t)) {
            if (keep)
                w.keptOutputs.push_back(w.bufOfRoot(t));
            else if (shifted && lift)
                continue; // released at the upcast
            else if (loopHolds)
                w.loopOutputs.push_back(w.bufOfRoot(t));
            else
                w.rec.decref(w.bufOfRoot(t));
        }
    w.rec.end();

    w.gradBuf.assign(w.nT, -1);
    if (w.lossHasGrad)
        outputGradient(w, o, lpUsed, lift, lp, kind, lsInput, shifted);
}

// Config::loopKeepsOutput: the loop drops its output after optimizer.step() (Answer.AI's `output = None`; PEFT's
// run.py rebinds `outputs` at the next forward, modelled as the same point).
void releaseLoopOutputs(Iteration& w)
{
    if (w.loopOutputs.empty())
        return;
    w.rec.begin(-1, Phase::Optimizer);
    for (int id : w.loopOutputs)
        w.rec.decref(id);
    w.loopOutputs.clear();
    w.rec.end();
}

} // namespace headroom::timeline

namespace headroom {

// The chunk buffers' bytes. LossChunk: torchtune's TransformerDecoder projects `h.chunk(num_output_chunks=8,
// dim=1)` and CEWithChunkedOutputLoss upcasts each chunk alone: B x ceil(T/8) x V fp32 values. LinearLossChunk:
// Liger's chunk_size = min(next_power_of_2(cdiv(BT, cdiv(V, H))), BT) rows of V logits at the input's dtype,
// plus that chunk's [chunk, H] grad_logits_chunk @ weight. A dim that is not a constant: the whole logits.
int64_t lossChunkBytes(const SimContext& c, const SizeRef& ref)
{
    const size_t t = static_cast<size_t>(std::max(ref.index, 0));
    const Model& m = *c.plan.model;
    const TensorShape& shape = m.tensors[t].shape;
    const int64_t numel = std::max<int64_t>(c.sizes.numel[t], 0);
    const int r = static_cast<int>(shape.dims.size());
    const bool exact = shape.state == TensorShape::State::Exact && r >= 2;
    const int64_t vocab = exact ? shape.dims.back().constantValue().value_or(0) : 0;
    if (ref.kind == SizeRef::Kind::ShiftedLogProb) { // logits[..., :-1, :] in fp32: rows x (T - 1) x V
        const int64_t seq = exact && vocab > 0 ? spanElements(shape.dims, r - 2, r - 1, c.shapes.values) : 0;
        if (seq <= 0)
            return checkedMul(numel, 4).value_or(0);
        return checkedMul(checkedMul(numel / (seq * vocab), seq - 1).value_or(0), vocab * 4).value_or(0);
    }
    if (ref.kind == SizeRef::Kind::LossChunk) {
        if (!exact || vocab <= 0 || r < 3)
            return checkedMul(timeline::ceilDiv(numel, 8), 4).value_or(0);
        const int64_t seq = spanElements(shape.dims, r - 2, r - 1, c.shapes.values);
        const int64_t rows = seq > 0 ? numel / (seq * vocab) : 0;
        return checkedMul(checkedMul(rows, timeline::ceilDiv(seq, 8)).value_or(0), vocab * 4).value_or(0);
    }
    const int pr = m.tensors[t].producer;
    const int hiddenT = pr >= 0 && !m.nodes[static_cast<size_t>(pr)].inputs.empty()
                            ? m.nodes[static_cast<size_t>(pr)].inputs[0]
                            : -1;
    const auto& hd = hiddenT >= 0 ? m.tensors[static_cast<size_t>(hiddenT)].shape.dims : shape.dims;
    const int64_t hidden = hiddenT >= 0 && !hd.empty() ? hd.back().constantValue().value_or(0) : 0;
    if (vocab <= 0 || hidden <= 0 || numel <= 0)
        return c.sizes.act[t];
    const int64_t elem = std::max<int64_t>(1, c.sizes.act[t] / numel);
    const int64_t tokens = numel / vocab;
    const int64_t chunk = std::min(
        timeline::nextPowerOfTwo(timeline::ceilDiv(tokens, timeline::ceilDiv(vocab, hidden))), tokens);
    return checkedMul(chunk * (vocab + hidden), elem).value_or(0);
}

} // namespace headroom
