#pragma once
// The walk's shared state: what one recording of the iteration knows (timeline_program.h, "how the timeline
// works"). Each phase is a free function over it, in the file named for that phase; the fields are grouped by
// the file that mainly writes them.
#include "timeline/recorder.h"

#include <vector>

namespace headroom::timeline {

struct Iteration
{
    Iteration(const SimContext& context, const SimOptions& options, SimProgram& program)
        : c(context), plan(context.plan), model(*context.plan.model), opt(options), rec(context, program),
          train(!policyIsInference(context.config)), nT(model.tensors.size()), nU(context.plan.units.size()),
          ckpt(train && options.segments > 1 && options.segmentOfUnit.size() == nU)
    {
    }

    const SimContext& c;
    const PlanData& plan;
    const Model& model;
    const SimOptions& opt;
    Recorder rec;
    const bool train;
    const size_t nT, nU;
    const bool ckpt; // checkpoint segments are on

    // references.cpp: who holds each storage, and until when
    std::vector<int> rootRT;                 // runtime storage root per tensor
    std::vector<uint8_t> aliasUnit;          // unit writes into its input's storage
    std::vector<int> refs;                   // forward references per runtime storage
    std::vector<int> firstSaver;             // earliest unit saving a storage (-1: none)
    std::vector<std::vector<int>> releaseAt; // storages whose saved reference a unit's backward drops
    // recompute.cpp: checkpoint segments
    std::vector<std::vector<int>> holds;       // per checkpoint segment: the inputs it holds
    std::vector<std::vector<int>> unitsOfSeg;  // per checkpoint segment: its units, ascending
    std::vector<int> segRefs;                  // recomputation: references inside the segment
    std::vector<uint8_t> ckSaved;              // recomputation: storage saved by the segment
    std::vector<std::vector<int>> releaseAtCk; // recomputation: saved references a unit's backward drops
    std::vector<uint8_t> recomputed;           // per segment
    // offload.cpp: activation offloading of the holds (per segment, per hold: HoldState)
    enum class HoldState : uint8_t { Kept, Stashed, Offloaded };
    std::vector<std::vector<HoldState>> holdState;
    struct Pack
    {
        int id = 0, seg = 0, hold = 0;
    };
    std::vector<Pack> fwdStash;                    // offloaded holds whose GPU original is still referenced
    int packId = 0;                                // ids handed out so far (pack_tensor's get_tensor_id)
    std::vector<int> bwdStash, prevBwdStash;       // copies brought back, released one unpacking node later
    std::vector<int> releaseAfterUnit;             // copies the segment's recomputation saves (record_stream)
    std::vector<std::pair<int, int>> swappedHolds; // (root, original buffer) while a copy stands in for it
    // forward.cpp: the buffers
    std::vector<int> buf;                     // runtime buffer of each root
    std::vector<int> paramGrad;               // gradient buffer per parameter
    std::vector<uint8_t> gradPre;             // gradient exists before backward (accumulation)
    std::vector<std::vector<int>> unitExtras; // per unit: its saved extras (statistics, masks)
    std::vector<int> previousGraph; // lit-gpt: what the previous iteration's graph holds (PlanData::graphHeld)
    // loss.cpp, backward.cpp: the gradients
    std::vector<int> gradBuf;     // gradient buffer per tensor
    bool lossHasGrad = false;     // the loss output gets a gradient: backward runs
    std::vector<int> keptOutputs; // lit-gpt: the logits its training loop holds until backward ends (loss.cpp)
    std::vector<int> loopOutputs; // Config::loopKeepsOutput: the output the loop holds to the step's end (loss.cpp)
    // Loss::FusedLinearCE (loss.cpp): the units Liger's function replaces (the lm_head MatMul and a final
    // softcap), the lm_head unit, and the hidden states' gradient it computes in forward
    std::vector<uint8_t> fusedLoss;
    int fusedLossHead = -1;
    int fusedGradInput = -1;

    bool checkpointed(size_t u) const { return ckpt && opt.segmentOfUnit[u] < opt.segments - 1; }
    int producerUnit(int t) const
    {
        const int pr = model.tensors[static_cast<size_t>(t)].producer;
        return pr >= 0 ? plan.unitOfNode[static_cast<size_t>(pr)] : -1;
    }
    bool inSeg(int unitIndex, int seg) const
    {
        return unitIndex >= 0 && opt.segmentOfUnit[static_cast<size_t>(unitIndex)] == seg;
    }
    bool dynamic(int t) const { return plan.dynamic[static_cast<size_t>(t)] != 0; }
    int root(int t) const { return rootRT[static_cast<size_t>(t)]; }
    int& bufOfRoot(int t) { return buf[static_cast<size_t>(root(t))]; }
};

// The phases, in the order timeline.cpp runs them.
// references.cpp
void resolveRuntimeStorage(Iteration& w);
void countForwardReferences(Iteration& w);
void assignSavedReleases(Iteration& w);
// recompute.cpp
void holdCheckpointInputs(Iteration& w);
void recomputeSegment(Iteration& w, size_t ui);
// offload.cpp
void packSegmentInputs(Iteration& w, size_t u);
void packUnitSaves(Iteration& w, size_t u);
void bringBackHolds(Iteration& w, int seg);
void keepCopiesAfterRecompute(Iteration& w, int seg);
bool holdOffloaded(const Iteration& w, size_t seg, size_t hold);
void afterFirstUnpackingUnit(Iteration& w);
void releaseOffloadLeftovers(Iteration& w);
// forward.cpp
void setup(Iteration& w);
void forward(Iteration& w);
void forwardUnit(Iteration& w, size_t u, bool recompute, int seg);
void handOutOutputs(Iteration& w);
// loss.cpp
void findFusedLinearLoss(Iteration& w);
bool fusedLinearLossForward(Iteration& w, size_t u);
void fusedLinearLossBackward(Iteration& w, size_t u);
void loss(Iteration& w);
void releaseLoopOutputs(Iteration& w);
// backward.cpp
void backward(Iteration& w);
void releaseLeftovers(Iteration& w);
// optimizer_step.cpp
void optimizerStep(Iteration& w);

} // namespace headroom::timeline
