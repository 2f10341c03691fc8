// The iteration's last phase (timeline_program.h, "how the timeline works").
#include "timeline/iteration.h"

#include <vector>

namespace headroom::timeline {

// The optimizer step: foreach implementations build one temporary per parameter (a tensor list: each its own
// allocation, so the caching allocator can place them in the blocks backward freed), all freed when the step
// returns; then zero_grad(set_to_none=True). Before PyTorch 2.0 (config.cpp kTorchDefaults foreachOptimizers)
// the step is a loop over the parameters whose temporary is rebound each iteration (denom = ...): a parameter's
// is freed once the next one's exists. (torch's _single_tensor_adam also holds exp_avg_sq.sqrt() for a moment
// before its division: one parameter's size, not modelled.)
void optimizerStep(Iteration& w)
{
    w.rec.begin(-1, Phase::Optimizer);
    if (w.rec.positive(of(SizeRef::Kind::OptimizerTemp))) {
        const bool foreach = foreachOptimizers(w.c.config.torch);
        std::vector<int> temps;
        temps.reserve(w.plan.trainable.size());
        for (int p : w.plan.trainable)
            if (w.plan.reqGrad[static_cast<size_t>(p)]) {
                temps.push_back(w.rec.alloc(of(SizeRef::Kind::OptimizerTemp, p), Category::Optimizer, -1, 1));
                if (!foreach && temps.size() > 1)
                    w.rec.decref(temps[temps.size() - 2]);
            }
        if (!foreach && !temps.empty())
            temps.erase(temps.begin(), temps.end() - 1);
        for (int id : temps)
            w.rec.decref(id);
    }
    for (size_t p = 0; p < w.nT; ++p)
        if (w.paramGrad[p] >= 0)
            w.rec.decref(w.paramGrad[p]);
    w.rec.end();
}

} // namespace headroom::timeline
