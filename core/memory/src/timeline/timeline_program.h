#pragma once
// Private to the memory engine: the simulated iteration as a flat program (issue 16).
//
// Which buffer is allocated, held, saved and freed at which step depends only on the plan and a few switches
// (mode, inplace, checkpoint segments, loss, accumulation, optimizer), plus a handful of binding-dependent
// decisions: whether a conditionally saved copy applies (a transpose of size-1 dims is still contiguous),
// whether a pass-through gradient has its input's size (broadcasting), whether a persistent total is zero.
// The walk runs the iteration once without any byte count and records that structure, with every such
// decision as a guard; a slider tick only re-sizes the buffers and replays the flat op array. A program is
// reused while its key matches and all its guards still hold, so the figures are those of a full walk at
// every binding.
//
// How the timeline works: recorder -> iteration -> replay, one folder.
//   recorder.h           Recorder: reference counting without sizes. Each alloc, free and saved mark becomes
//                        an op of the SimProgram, each binding-dependent decision a guard.
//   iteration.h          Iteration: the walk's state. timeline.cpp (recordIteration) runs the phases in the
//                        order PyTorch does, one file each, all writing through the recorder:
//     references.cpp       runtime storage roots (views, inplace), forward references, saved-tensor releases
//     recompute.cpp        checkpoint holds before forward; a segment's forward again at its first backward
//     forward.cpp          what exists at the start (weights, states, the input), then each unit's forward
//     loss.cpp             the loss (fp32 log-probabilities) and the output gradient backward starts from
//     backward.cpp         units in reverse: input and parameter gradients, saved references dropped
//     offload.cpp          activation offloading: checkpoint inputs to the host in forward, back at recompute
//     optimizer_step.cpp   the foreach optimizers' temporary, zero_grad
//   timeline_replay.cpp  every tick: the programs cached per plan (programFor), each buffer's bytes at the
//                        binding (bufferBytes), the ops replayed into the timeline, the peak and its culprits;
//                        the allocator model replays allocOps from the same program.
// The phases are free functions over one Iteration rather than a class each: they share nearly all of its
// state (forward's buffers are what backward and the loss release; recomputation runs forwardUnit again
// inside backward), so one struct whose fields are grouped by the phase that fills them shows that data flow,
// where classes per phase would hand each other most of their members.
#include "engine/engine_internal.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace headroom {

// Where a buffer's bytes come from at a binding.
struct SizeRef
{
    enum class Kind : uint8_t {
        Activation, // sizes.act[index]
        Item,       // a saved / scratch item of a unit (savedItemBytes)
        Gradient,   // sizes.gradBytes[index] (a parameter)
        Weight,     // sizes.weightBytes[index] (a parameter as the step stores it)
        Buffer,     // a registered buffer at its dtype
        LogProb,    // the loss's log-probabilities of output `index` (fp32 under autocast)
        PersistentWeights,
        Master,
        PersistentOptimizer,
        Autocast,
        DequantTransient,
        Quantized,
        OptimizerTemp,   // a foreach optimizer's temporary for parameter `index` (-1: all of them)
        LossChunk,       // one of torchtune's output chunks of output `index` in fp32 (loss.cpp)
        LinearLossChunk, // Liger's transient logits chunk of the lm_head output `index` (loss.cpp)
        ShiftedLogProb,  // fp32, the output `index` less its last position: transformers < 4.46's shift (loss.cpp)
        UntiedHead,      // sizes.untiedHead: lit-gpt's lm_head copy of a tied embedding
    };
    Kind kind = Kind::Activation;
    int index = -1;
    const SavedItem* item = nullptr;
};

// What the structure depends on besides the plan and the guards.
struct SimKey
{
    bool train = true, inplace = false, events = true, persistentGrads = false, amp = false;
    bool sixteenBit = false; // a pure 16-bit or quantised policy: Hugging Face's loss lifts 16-bit logits (loss.cpp)
    Loss loss = Loss::CrossEntropy;
    Optimizer optimizer = Optimizer::Adam;
    int segments = 0;
    std::vector<int> segmentOfUnit;
    bool offload = false;         // activation offloading (offload.cpp)
    bool foreachOptimizer = true; // torch.optim's foreach kernels, or a loop over the parameters (optimizer_step.cpp)
    bool fp32Logits = false;      // Config::hfFp32Logits: transformers < 4.46's returned fp32 logits (loss.cpp)
    bool loopKeepsOutput = false; // Config::loopKeepsOutput: the loop holds the output to the step's end (loss.cpp)
    bool operator==(const SimKey&) const = default;
};
SimKey simKey(const Config& config, const SimOptions& options);

struct SimOp
{
    enum class Kind : uint8_t { Begin, End, Alloc, Free, MarkSaved };
    Kind kind = Kind::Begin;
    Phase phase = Phase::Forward; // Begin
    bool saved = false;           // Free: the buffer held a saved-for-backward reference until then
    int arg = -1;                 // Begin: node; Alloc / Free / marks: buffer id
};

struct SimBuffer
{
    SizeRef size;
    Category category = Category::Activations;
    int tensor = -1;
};

struct SimProgram
{
    SimKey key;
    std::vector<SimOp> ops;
    std::vector<SimBuffer> buffers; // by id, in allocation order
    std::vector<int> liveAtEnd;     // buffers nothing frees (weights, states, the input), ascending
    std::vector<int> recomputed;    // units run again by checkpoint recomputation, in order
    int steps = 0;
    size_t events = 0; // Alloc + Free ops
    // What the allocator sees, in order: the Alloc / Free ops then the liveAtEnd frees, id allocating and ~id
    // freeing buffer id (replayOps). Kept when key.events: a full evaluation replays the allocator from it
    // on a second core while the walk below runs (issue 16).
    std::vector<int32_t> allocOps;
    // Guards: the binding-dependent decisions the walk took, and what they answered.
    std::vector<const SavedItem*> activeItems;
    std::vector<uint8_t> activeAnswers;
    std::vector<std::pair<int, int>> sameNumel;
    std::vector<uint8_t> sameNumelAnswers;
    std::vector<SizeRef> positive;
    std::vector<uint8_t> positiveAnswers;
    std::vector<SizeRef> offloadable; // at least kMinOffloadBytes (offload.cpp)
    std::vector<uint8_t> offloadableAnswers;
};

// The walk's inputs at one binding (the guards and the sizes read them).
struct SimContext
{
    const PlanData& plan;
    const Config& config;
    const ShapeTable& shapes;
    const Sizes& sizes;
};

int64_t sizeOf(const SimContext& c, const SizeRef& ref);
// loss.cpp: the chunked losses' chunk sizes (SizeRef::Kind::LossChunk, LinearLossChunk) and the shifted logits'
// (ShiftedLogProb)
int64_t lossChunkBytes(const SimContext& c, const SizeRef& ref);
bool guardsHold(const SimContext& c, const SimProgram& program);
// timeline.cpp: one structural walk of the iteration (the phases above).
SimProgram recordIteration(const SimContext& c, const SimOptions& options);
// timeline_replay.cpp: the figures of a recorded program at the context's sizes (bytes: each buffer's,
// bufferBytes()).
std::vector<int64_t> bufferBytes(const SimContext& c, const SimProgram& program);
// writeEvents false: no events and no culprits even when the program records them (the allocator replays
// from its allocOps instead).
SimResult replayIteration(const SimContext& c, const SimProgram& program, const std::vector<int64_t>& bytes,
                          bool writeEvents = true);
SimResult replayIteration(const SimContext& c, const SimProgram& program);

// Programs recorded for one plan (shared by its copies; a plan never changes once built).
struct SimCache
{
    std::mutex mutex;
    std::vector<std::shared_ptr<const SimProgram>> programs; // most recently used last
};

} // namespace headroom
