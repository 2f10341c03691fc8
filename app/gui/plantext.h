#pragma once
// The plan that makes a configuration fit (headroom::FitPlan), in the user's language: the verdict banner,
// the Breakdown and the PDF say it in the same words.
#include "guiutil.h"

#include "headroom/report/fitplan.h"

namespace gui {

// One step: "per-layer checkpointing", "sequence length 4,480", "2 × GeForce RTX 4090 (FSDP)"; `strategy` is
// the plan's (the more-GPUs step names it). In English, headroom::planStepText's words.
QString planStepText(const headroom::PlanStep& step, headroom::Strategy strategy);
// "To fit: per-layer checkpointing (−9.28 GiB) → needs 19.9 GiB, 3.70 GiB to spare."; where nothing on this
// GPU fits, says so and names the hardware that does; empty when it fits already or there is no GPU to fit.
// In English, headroom::planText's sentence.
QString planText(const headroom::FitPlan& plan, headroom::Units units);

} // namespace gui
