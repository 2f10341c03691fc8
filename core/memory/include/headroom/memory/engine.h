#pragma once
#include "headroom/base/config.h"
#include "headroom/import/model.h"
#include "headroom/shapes/shapes.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace headroom {

// The categories of docs/DESIGN.md "The memory model", each shown separately everywhere.
enum class Category : uint8_t {
    Weights,
    Buffers,
    Gradients,
    Optimizer,
    MasterWeights,
    Activations,
    Workspace,
    Context,
    Input, // the model input batch (kept alive by the data loader)
    Loss,  // loss-side tensors: log-probabilities, output gradient
    Count
};
std::string_view toString(Category c) noexcept;

struct Breakdown
{
    int64_t weights = 0; // trainable params + buffers at their dtype (+ autocast 16-bit copies)
    int64_t buffers = 0; // the buffer part of `weights`
    int64_t gradients = 0;
    int64_t optimizer = 0;
    int64_t masterWeights = 0;
    int64_t activationsSaved = 0; // distinct non-parameter tensors saved for backward (input incl. if saved)
    int64_t activationsPeak = 0;  // activation bytes live at the moment of peak (saved + transient)
    int64_t workspace = 0;
    int64_t context = 0;
    int64_t peak = 0;         // max of the allocated timeline (not workspace/context)
    int64_t reservedPeak = 0; // peak under the allocator model
    // Config::varySymbol: the value of the varying symbol whose step makes reservedPeak (0: no symbol varies, or
    // the exact allocator, whose reserved peak is the allocated one)
    int64_t reservedPeakAt = 0;
    int64_t classicEstimate = 0; // params * n + batch * sum(outputs) * 2 (the seed rule)
    // Added by the engine (issue 3):
    int64_t input = 0;          // the model input batch (in the timeline and the peak; Category::Input)
    int64_t lossBytes = 0;      // loss-side tensors at the peak (log-probabilities, output gradient)
    int64_t autocastCopies = 0; // the part of `weights` that is autocast's cached 16-bit weight copies
    // 4/8-bit weights (QLoRA): the largest weight dequantized to the compute dtype, which the timeline holds
    // at the peak (an upper bound); not in `weights`, which is what the weights take stored
    int64_t dequantTransient = 0;
    int64_t activationsTransient = 0; // activationsPeak - saved activations live at the peak
    int64_t microBatch = 0;           // batch the activations are computed at (ceil(batch / accumulate))
    // Paged optimizers: the state in CUDA unified memory, outside PyTorch's allocator and evictable to the
    // host; reported beside the peak, not in `optimizer`, the peak or the fit (docs/DESIGN.md "Fine-tuning").
    int64_t pagedOptimizer = 0;
    // Activation offloading (Config::offloadActivations): the saved checkpoint inputs copied to pinned host
    // memory in forward, one copy per pack as torchtune's OffloadActivations makes them; host memory, beside the
    // peak, not in it (docs/DESIGN.md "Activation offloading").
    int64_t offloadedActivations = 0;
};

enum class Phase : uint8_t { Forward, Loss, Backward, Optimizer, Recompute };
std::string_view toString(Phase p) noexcept;

// One step of the simulated iteration: allocated bytes after the step's allocations and frees.
struct TimelinePoint
{
    int step = 0;
    int node = -1; // graph node (-1 for loss/optimizer steps)
    Phase phase = Phase::Forward;
    int64_t allocated = 0; // total allocated after this step
    int64_t high = 0;      // highest allocated within the step (outputs allocated before inputs freed)
};

// Allocation events in timeline order: what the allocator model and the CUDA probe replay.
struct AllocEvent
{
    enum class Kind : uint8_t { Alloc, Free };
    Kind kind = Kind::Alloc;
    int64_t id = 0; // buffer id, unique per allocation
    int64_t bytes = 0;
    Category category = Category::Activations;
    int step = 0;    // timeline step it belongs to
    int tensor = -1; // model tensor it holds (-1 for gradients of params etc. use `tensor` of the param)
};

struct NodeCost
{
    int64_t outputBytes = 0;   // this node's outputs at this configuration (activation bytes)
    int64_t savedBytes = 0;    // bytes this node keeps for backward (shared storages attributed once)
    int64_t params = 0;        // trainable elements it owns (first consumer)
    int64_t recomputeMacs = 0; // forward MACs (Conv/Gemm/MatMul-class), for checkpoint recompute cost
    bool unknownShape = false;
};

struct Evaluation
{
    Breakdown memory;
    ShapeTable shapes;
    std::vector<NodeCost> nodes; // per graph node
    std::vector<TimelinePoint> timeline;
    int peakStep = -1;         // index into timeline
    std::vector<int> peakLive; // tensors live at the peak (the culprits), biggest first
    // parallel to peakLive: the bytes held for each at the peak (its buffers: the storage it owns and its
    // gradient), so views, aliases and fused units are not counted twice and the layers add up to at most
    // the peak
    std::vector<int64_t> peakLiveBytes;
    std::vector<AllocEvent> events;     // for the allocator model and the probe
    int64_t inplaceTransientSaving = 0; // peak difference inplace on vs off (train: transient only)
    int64_t recomputeMacs = 0;          // extra forward MACs from checkpointing
    int64_t forwardMacs = 0;
    std::vector<std::string> warnings; // ops with no saved-for-backward rule, unknown shapes, ...
};

// The pure function behind every figure: one configuration on one GPU (per-GPU batch, no strategy).
Evaluation evaluate(const Model& model, const Config& config);

// What does not depend on the symbol values or the optimizer, computed once per model: storage aliasing
// of views, requires-grad, fused decompositions (LayerNorm, GELU, SiLU, attention), saved-for-backward
// lists. Slider ticks call evaluate(plan, config).
// The plan refers to `model`, which must outlive it. It also depends on the freeze patterns, the
// attention mode, the device, the PyTorch version and the precision class (16-bit compute, autocast):
// a plan that does not match the config (planMatches) is rebuilt inside evaluate (correct, just slower).
struct PlanData;
struct EnginePlan
{
    const Model* model = nullptr;
    std::shared_ptr<const PlanData> data;
};
EnginePlan makePlan(const Model& model, const std::vector<std::string>& freeze = {});
// The plan for this configuration's freeze patterns, attention mode, device and precision class.
EnginePlan makePlan(const Model& model, const Config& config);
// Whether evaluate(plan, config) can use the plan as is (otherwise it rebuilds one).
bool planMatches(const EnginePlan& plan, const Config& config);
Evaluation evaluate(const EnginePlan& plan, const Config& config);
// Same as evaluate() but skips what a search does not need (events, culprits, the inplace comparison,
// per-node costs). Used by maxBatch and checkpointCurve.
Evaluation evaluateLight(const EnginePlan& plan, const Config& config);
// evaluateLight plus the allocation events (under a caching allocator, which records them anyway).
Evaluation evaluateLightWithEvents(const EnginePlan& plan, const Config& config);

// Config::varySymbol: the values a varying symbol set to `top` is evaluated at, ascending and ending at `top`:
// every value up to kVaryingValues, beyond it kVaryingValues evenly spaced ones (ceil(k * top / kVaryingValues)).
// The resolution of "the highest reserved peak any step makes" (docs/DESIGN.md "Lengths that vary").
inline constexpr int64_t kVaryingValues = 32;
std::vector<int64_t> varyingValues(int64_t top);
// Whether the reserved peak of this configuration is the highest over the varying symbol's values.
bool variesSymbol(const Config& config) noexcept;

// Peak + recompute against checkpoint segments k = 1..maxK, and the best k (lowest peak; ties: fewer k).
struct CheckpointPoint
{
    int k = 1;
    int64_t peak = 0;
    int64_t recomputeMacs = 0;
};
std::vector<CheckpointPoint> checkpointCurve(const Model& model, const Config& config, int maxK);
// Same over a plan the caller keeps (a report): no plan is built when it matches the config.
std::vector<CheckpointPoint> checkpointCurve(const EnginePlan& plan, const Config& config, int maxK);
int bestCheckpointSegments(const std::vector<CheckpointPoint>& curve);
// How many modules checkpoint_sequential cuts into segments (top-level modules, Sequentials expanded).
int checkpointModuleCount(const EnginePlan& plan);

// Total bytes the GPU needs for this configuration (peak or reserved per config.allocator, + context
// + workspace) and whether it fits config.gpu.
struct Fit
{
    std::string gpu;
    int64_t capacity = 0;
    int64_t needed = 0;
    bool fits = false;
    int64_t headroom = 0; // capacity - needed (negative when it does not fit)
    // The step fits only because PyTorch gives its cache back and retries at capacity (maxbatch.cpp
    // atCapacityReserved): its cache then fills the card, so `headroom` is the margin alone.
    bool atCapacity = false;
    int64_t maxBatch =
        0; // largest batch that fits with the safety margin (0: not even batch 1; kUnknownMax: cannot tell)
    // With and without the safety margin (docs/ACCURACY.md "Safe max batch"): `fits` is the model's own
    // verdict, `fitsSafely` keeps the margin free and is the verdict the outputs give; `maxBatch` is the safe
    // largest batch, `expectedMaxBatch` the model's own, shown beside it ("max batch 85 - 88 expected").
    bool fitsSafely = false;
    int64_t expectedMaxBatch = 0;
    // While any activation's size is unknown the fit is unknown (docs/DESIGN.md "Fit and max batch"): `fits` is
    // false, `maxBatch` is kUnknownMax and every output says "cannot tell" instead of a verdict.
    bool sizesUnknown = false;
    int64_t unknownTensors = 0; // activations of unknown size at this configuration
    int unknownNode = -1;       // the node that makes the first of them unknown
    // --max SYMBOL: the largest value of `maxSymbol` that fits (kUnknownMax: cannot tell); -1: not asked.
    int maxSymbol = -1;
    int64_t maxSymbolValue = 0;
};
// maxBatch / maxSymbolValue when no number is honest: sizes unknown, or nothing grows with the symbol.
inline constexpr int64_t kUnknownMax = -1;
// "cannot tell: 721 tensors of unknown size, first at node m/model/layers.0/SplitToSequence".
std::string unknownFitText(const Model& model, const Fit& fit);
// Activations of unknown size in `shapes` and the node behind the first one (-1 if none).
std::pair<int64_t, int> unknownActivations(const Model& model, const ShapeTable& shapes);
// Marks `fit` unknown when `evaluation` has activations of unknown size; true if it did.
bool markUnknownFit(const Model& model, const Evaluation& evaluation, Fit& fit);
// Largest value of symbol `symbol` (any symbol, not only batch) whose need fits, the others as in config.
// kUnknownMax when sizes are unknown or the need does not grow with the symbol; 0 when even 1 does not fit.
int64_t maxSymbolValue(const EnginePlan& plan, const Config& config, int symbol, int64_t limit = 1 << 24);
Fit computeFit(const Model& model, const Config& config, const Evaluation& evaluation);
// Same with a plan the caller keeps (a report, a slider tick): the plan is not rebuilt.
Fit computeFit(const EnginePlan& plan, const Config& config, const Evaluation& evaluation);
// Largest batch (global) whose need <= capacity - margin; 0 if none; searches the fitted functions.
int64_t maxBatch(const Model& model, const Config& config, int64_t limit = 1 << 20);
int64_t maxBatch(const EnginePlan& plan, const Config& config, int64_t limit = 1 << 20);
// The same with the safety margin of fitsOnGpuSafely (what Fit::maxBatch reports).
int64_t safeMaxBatch(const EnginePlan& plan, const Config& config, int64_t limit = 1 << 20);
// Bytes the GPU needs: reserved peak (library workspaces inside) + context under an allocator model;
// exact: allocated peak + context + workspace.
int64_t neededBytes(const Config& config, const Evaluation& evaluation);

// The fit as PyTorch decides it: the step replayed through the allocator model with cudaMalloc failing
// beyond capacity - context (memory outside the allocator) - margin; at that limit the model frees its
// cached segments and retries, as PyTorch does, before an allocation counts as failed. The persistent
// library workspace (config.gpu.workspace) is the replay's first block. Exact mode: allocated peak +
// context + workspace <= capacity - margin.
struct CapacityReplay
{
    bool fits = false;
    int64_t reservedPeak = 0; // most bytes the allocator held (workspace included)
    int64_t retries = 0;      // allocations answered by releasing cached segments
};
int64_t allocatorBudget(const Config& config);
// What a step that fits only at capacity holds reserved: the allocator budget (maxbatch.cpp says why).
int64_t atCapacityReserved(const Config& config);
// `reserve`: bytes the replay may not use on top of the margin (the safety margin below).
CapacityReplay replayUnderCapacity(const std::vector<AllocEvent>& events, const Config& config, int64_t reserve = 0);
bool fitsOnGpu(const EnginePlan& plan, const Config& config);
// The safety margin under an allocator model (docs/ACCURACY.md "Safe max batch"): a share of the step's
// largest single allocation kept free, for the placement at capacity the allocator model gets wrong.
int64_t safetyMargin(const std::vector<AllocEvent>& events);
// fitsOnGpu with the safety margin kept free: the verdict the outputs give (exact allocator: fitsOnGpu).
bool fitsOnGpuSafely(const EnginePlan& plan, const Config& config);
// computeFit without the max-batch search (a caller that already knows it).
Fit computeFitOnly(const EnginePlan& plan, const Config& config, const Evaluation& evaluation);
// computeFitOnly over a light evaluation made here: one simulation serves the need and the replay under
// capacity (a search that only reads the fit, such as the advisor's tips).
Fit computeFitLight(const EnginePlan& plan, const Config& config);

// Optimizer state bytes for one trainable tensor of `dims` (fp32 states; Adafactor factors matrices
// into rows + columns), and the per-parameter figure of docs/DESIGN.md's table for elementwise optimizers.
int64_t optimizerStateBytes(const Config& config, const std::vector<int64_t>& dims);
// The part of optimizerStateBytes a paged optimizer keeps in CUDA unified memory (0 for the others).
int64_t pagedOptimizerBytes(const Config& config, const std::vector<int64_t>& dims);
double optimizerBytesPerParam(const Config& config) noexcept;
// How many state tensors the optimizer creates on the GPU for each parameter it steps (torch/optim, 2.x:
// _init_group's zeros_like per state; Adam's 'step' is a CPU scalar unless capturable or fused). 0: none.
int optimizerStateTensors(const Config& config) noexcept;

// The seed rule, for comparison in every output.
int64_t classicEstimate(const Model& model, const Config& config, const ShapeTable& shapes);

} // namespace headroom
