// The simulated steady-state iteration (docs/DESIGN.md "Timeline and peak"), recorded: the phases in the order
// PyTorch runs them, walked once per plan and switch setting into a flat program (timeline_program.h, "how the
// timeline works"); no byte count is read here or in the phase files except through a recorded guard.
#include "timeline/iteration.h"

namespace headroom {

namespace timeline {
namespace {

void run(Iteration& w)
{
    resolveRuntimeStorage(w);
    findFusedLinearLoss(w);
    countForwardReferences(w);
    if (w.train)
        assignSavedReleases(w);
    if (w.ckpt)
        holdCheckpointInputs(w);
    setup(w);
    forward(w);
    if (!w.train) {
        handOutOutputs(w);
    } else {
        loss(w);
        backward(w);
        releaseLeftovers(w);
        optimizerStep(w);
        releaseLoopOutputs(w);
    }
    w.rec.finish();
}

} // namespace
} // namespace timeline

SimKey simKey(const Config& config, const SimOptions& options)
{
    SimKey k;
    k.train = !policyIsInference(config);
    k.inplace = options.inplace;
    k.events = options.events;
    k.persistentGrads = k.train && (config.accumulate > 1 || !zeroGradFreesGradients(config.torch));
    k.amp = config.dtype == DtypePolicy::AmpFP16 || config.dtype == DtypePolicy::AmpBF16;
    k.sixteenBit = config.dtype == DtypePolicy::FP16 || config.dtype == DtypePolicy::BF16 ||
                   config.dtype == DtypePolicy::MixedFP16 || config.dtype == DtypePolicy::MixedBF16 ||
                   config.dtype == DtypePolicy::INT8 || config.dtype == DtypePolicy::INT4;
    k.loss = config.loss;
    k.optimizer = config.optimizer;
    k.segments = options.segments;
    k.segmentOfUnit = options.segmentOfUnit;
    k.offload = options.offload;
    k.foreachOptimizer = foreachOptimizers(config.torch);
    k.fp32Logits = config.hfFp32Logits;
    k.loopKeepsOutput = config.loopKeepsOutput;
    return k;
}

SimProgram recordIteration(const SimContext& c, const SimOptions& options)
{
    SimProgram program;
    program.key = simKey(c.config, options);
    program.ops.reserve(c.plan.units.size() * 8 + 64);
    program.buffers.reserve(c.plan.units.size() * 3 + c.plan.trainable.size() * 2 + 16);
    timeline::Iteration walk(c, options, program);
    timeline::run(walk);
    return program;
}

} // namespace headroom
