// The iteration's last phase (timeline_program.h, "how the timeline works").
#include "timeline/iteration.h"

namespace headroom::timeline {

// The optimizer step: foreach implementations build one fp32 temporary per parameter; then
// zero_grad(set_to_none=True).
void optimizerStep(Iteration& w)
{
    w.rec.begin(-1, Phase::Optimizer);
    if (w.rec.positive(of(SizeRef::Kind::OptimizerTemp)))
        w.rec.decref(w.rec.alloc(of(SizeRef::Kind::OptimizerTemp), Category::Optimizer, -1, 1));
    for (size_t p = 0; p < w.nT; ++p)
        if (w.paramGrad[p] >= 0)
            w.rec.decref(w.paramGrad[p]);
    w.rec.end();
}

} // namespace headroom::timeline
