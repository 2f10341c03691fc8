// The iteration's last phase (timeline_program.h, "how the timeline works").
#include "timeline/iteration.h"

#include <vector>

namespace headroom::timeline {

// The optimizer step: foreach implementations build one temporary per parameter (a tensor list: each its own
// allocation, so the caching allocator can place them in the blocks backward freed), all freed when the step
// returns; then zero_grad(set_to_none=True).
void optimizerStep(Iteration& w)
{
    w.rec.begin(-1, Phase::Optimizer);
    if (w.rec.positive(of(SizeRef::Kind::OptimizerTemp))) {
        std::vector<int> temps;
        temps.reserve(w.plan.trainable.size());
        for (int p : w.plan.trainable)
            if (w.plan.reqGrad[static_cast<size_t>(p)])
                temps.push_back(w.rec.alloc(of(SizeRef::Kind::OptimizerTemp, p), Category::Optimizer, -1, 1));
        for (int id : temps)
            w.rec.decref(id);
    }
    for (size_t p = 0; p < w.nT; ++p)
        if (w.paramGrad[p] >= 0)
            w.rec.decref(w.paramGrad[p]);
    w.rec.end();
}

} // namespace headroom::timeline

namespace headroom {

// What the caching allocator sees over the run's first two steps (issue 22). PyTorch's optimizers create their
// state at the first step() (optimizerStatePartCount: one tensor per parameter and moment, in the order
// _init_group makes them), when backward has freed the step's activations into the cache: the state takes
// those blocks, and the second step's activations need new segments. The allocator never gives segments back
// by itself (no empty_cache), so the run's max_memory_reserved is the high over both; later steps repeat the
// second. Step 1 is the recorded step without the state buffer, the state's tensors allocated where its
// optimizer phase begins; step 2 is the recorded step again, what lives across steps (weights, buffers,
// master copies, the state) not allocated twice. Everything else the first step leaves (its input: the
// training loop's next batch replaces it) is freed between them. The program's ops, and so the timeline and
// the allocated peak, stay the steady step's. Gradient accumulation: the walk simulates one micro-step; the
// state is created after the last micro-step's backward, where this one's optimizer phase begins, and the
// micro-steps before it replay the same allocations without it (the first step's stream).
void firstStepAllocOps(const SimContext& c, SimProgram& p)
{
    const int parts = optimizerStatePartCount(c.config.optimizer);
    const int firstState = static_cast<int>(p.buffers.size());
    for (size_t pi = 0; pi < c.plan.trainable.size(); ++pi)
        for (int k = 0; k < parts; ++k)
            p.buffers.push_back({{SizeRef::Kind::OptimizerState, static_cast<int>(pi) * kStateParts + k, nullptr},
                                 Category::Optimizer,
                                 c.plan.trainable[pi]});
    const int endState = static_cast<int>(p.buffers.size());
    // What lives across steps: allocated before the first phase ends and never freed, the input aside.
    std::vector<uint8_t> setupAlloc(p.buffers.size(), 0), persistent(p.buffers.size(), 0);
    for (const SimOp& op : p.ops) {
        if (op.kind == SimOp::Kind::End)
            break;
        if (op.kind == SimOp::Kind::Alloc)
            setupAlloc[static_cast<size_t>(op.arg)] = 1;
    }
    for (int id : p.liveAtEnd)
        persistent[static_cast<size_t>(id)] = setupAlloc[static_cast<size_t>(id)] &&
                                              p.buffers[static_cast<size_t>(id)].category != Category::Input;
    std::vector<int32_t>& out = p.allocOps;
    out.reserve(2 * (p.events + p.liveAtEnd.size()) + static_cast<size_t>(endState - firstState) * 2);
    for (const SimOp& op : p.ops) {
        if (op.kind == SimOp::Kind::Begin && op.phase == Phase::Optimizer)
            for (int id = firstState; id < endState; ++id)
                out.push_back(id);
        else if (op.kind == SimOp::Kind::Alloc && op.arg != p.stateBuffer)
            out.push_back(op.arg);
        else if (op.kind == SimOp::Kind::Free)
            out.push_back(~op.arg);
    }
    for (int id : p.liveAtEnd)
        if (!persistent[static_cast<size_t>(id)])
            out.push_back(~id);
    for (const SimOp& op : p.ops)
        if (op.kind == SimOp::Kind::Alloc && !persistent[static_cast<size_t>(op.arg)])
            out.push_back(op.arg);
        else if (op.kind == SimOp::Kind::Free)
            out.push_back(~op.arg);
    for (int id : p.liveAtEnd)
        if (id != p.stateBuffer)
            out.push_back(~id);
    for (int id = firstState; id < endState; ++id)
        out.push_back(~id);
}

} // namespace headroom
