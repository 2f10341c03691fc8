#pragma once
// Private to the memory engine: the per-model plan that evaluate() reuses on every slider tick.
#include "headroom/memory/allocator.h"
#include "headroom/memory/engine.h"
#include "headroom/shapes/shapes.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace headroom {

// One thing a unit keeps for backward.
struct SavedItem
{
    enum class Kind : uint8_t {
        Storage, // a tensor's storage (views resolved to their root; shared storages count once)
        Copy,    // a contiguous copy of a non-contiguous view, made by the kernel (matmul/conv) and saved
        Extra,   // per-unit tensors autograd creates: statistics, indices, masks, RNN gates
    };
    Kind kind = Kind::Storage;
    int tensor = -1; // Storage: root tensor; Copy: the view tensor; Extra: the tensor sizing it
    // Extra size = elements(tensor or dims [dimBegin, dimEnd) of it) * num / den * elemBytes
    int64_t num = 1, den = 1;
    int dimBegin = -1, dimEnd = -1;
    int elemBytes = 0;     // 0: the activation element size of `tensor` under the policy
    bool fp32Stat = false; // statistics stay fp32 under every policy
    // Binding-dependent items: kept only when view `condView` is (condContig) or is not (!condContig)
    // contiguous at the bound sizes (a transpose that only moves size-1 dims needs no copy). -1: always.
    int condView = -1;
    bool condContig = false;
    int span = -1; // dims [dimBegin, dimEnd) of an exact shape: index into PlanData::spans
};

// dims [begin, end) of one of the model's distinct shapes (ShapeClasses): items sized by the same span
// (a LayerNorm's statistics in every layer) share one evaluation per tick (issue 16).
struct DimSpan
{
    int shape = -1;
    int begin = 0, end = 0;
    friend bool operator==(const DimSpan&, const DimSpan&) = default;
};

enum class UnitKind : uint8_t { Op, LayerNorm, Gelu, Silu, GroupNorm, Attention };

// An op as autograd sees it: a single ONNX node, or a recognised decomposition (LayerNorm written
// with ReduceMean/Sub/Pow/Sqrt/Div, GELU with Erf, SiLU with Sigmoid*x, GroupNorm as Reshape,
// InstanceNormalization, Reshape, Mul, Add) that PyTorch runs as one op.
struct Unit
{
    UnitKind kind = UnitKind::Op;
    int head = -1;                // node whose position the unit takes in topological order
    std::vector<int> nodes;       // member nodes (head last)
    std::vector<int> inputs;      // external input tensors (distinct, omitted ones dropped)
    std::vector<int> outputs;     // output tensors (head's outputs)
    std::vector<SavedItem> saved; // what backward needs
    // Transient workspaces (Extra-sized), alive only during the unit's forward / backward step: an RNN's
    // precomputed input-side gates, and the per-step gate gradients backward stacks for them.
    std::vector<SavedItem> forwardScratch, backwardScratch;
    // What the kernel makes even when autograd keeps none of it: CUDA native_dropout's mask, allocated before
    // the output and dropped at once where the unit saves nothing (no grad recorded, a checkpoint's forward).
    std::vector<SavedItem> unsavedScratch;
    bool extrasBeforeOutputs = false; // its saved extras are made before its outputs (that same mask)
    // Gradients the unit's backward makes that live until its input gradients exist (autocast: the 16-bit
    // gradient of each cast copy, which ToCopyBackward turns into the fp32 input's gradient).
    std::vector<SavedItem> castGrads;
    bool isView = false;             // outputs alias input 0's storage (no allocation)
    bool viewInInference = false;    // Dropout: identity at inference
    bool passGrad = false;           // backward hands the output gradient to same-sized inputs as is
    bool inplaceable = false;        // activation that can write into its input (config.inplace)
    bool inplaceSavesResult = false; // inplace form saves its result (hardtanh_, ...)
    bool differentiable = true;
    bool conservative = false; // no rule known: saved inputs and outputs
    int macTensor = -1;        // output whose elements times macPerElem gives forward MACs
    int64_t macPerElem = 0;
    int macDimTensor = -1, macDim = -1; // or: a symbolic reduction dim (MatMul K)
    int macSpan = -1;                   // that dim (RNNs: dims [0, 2)) of an exact shape: index into PlanData::spans
};

// What the plan's structure depends on besides the model: the freeze patterns, whether attention runs
// by which kernel (SDPA's backend choice, flash_attention_2, flex_attention: fused_units.cpp attentionKernel,
// which reads the operands' width), and the device's kernels (cuDNN RNN on CUDA).
struct PlanOptions
{
    std::vector<std::string> freeze;
    Attention attention = Attention::Fused;
    Device device = Device::CUDA;
    TorchVersion torch = TorchVersion::V2;
    bool lowPrecision = false; // 16-bit compute (fp16/bf16, AMP, mixed): SDPA can pick flash attention
    bool autocast = false;     // AMP: activation cast copies are what lower-precision ops save
    // Fine-tuning precision without autocast (finetune/precision.cpp): the activation element size of the
    // policy (0: the pass is off), the LoRA adapters' element size, bitsandbytes quantization, whether
    // prepare_model_for_kbit_training made the other parameters fp32, and the 4-bit layers' compute size.
    int streamBytes = 0;
    int adapterBytes = 4;
    Quant quant = Quant::None;
    bool kbitFp32 = false;
    int computeBytes = 2;
    bool inputRequiresGrad = false; // transformers' enable_input_require_grads(): the embedding output requires grad
    bool litgptModel = false;       // Config::modelCode == ModelCode::Litgpt (litgpt_model.cpp)
    bool litgptInference = false;   // ... running inference (litgpt generate): its own lm_head is a weight too
    bool bnbKeepsInput = false;     // Config::bnbKeepsMatmulInput (litgpt_model.cpp rule 4)
    bool operator==(const PlanOptions&) const = default;
};
PlanOptions planOptions(const Config& config);

struct SimCache; // timeline/timeline_program.h
std::shared_ptr<SimCache> newSimCache();

struct PlanData
{
    const Model* model = nullptr;
    std::vector<std::string> freeze;
    PlanOptions options;
    std::vector<Unit> units;     // in topological order of their heads
    std::vector<int> unitOfNode; // -1: static node (depends on no graph input)
    // per tensor
    std::vector<uint8_t> dynamic;                    // depends on a graph input (activations that exist at run time)
    std::vector<uint8_t> reqGrad;                    // requires grad
    std::vector<uint8_t> getsGrad;                   // requires grad and lies on a path to the loss output
    std::vector<uint8_t> frozen;                     // parameter matched by a freeze pattern
    std::vector<uint8_t> virtualOut;                 // inner tensor of a fused unit: never materialised
    std::vector<uint8_t> amp16;                      // under autocast this activation is 16-bit
    std::vector<int> root;                           // storage root (views resolved)
    std::vector<uint8_t> nonContig;                  // a non-contiguous view
    std::vector<std::vector<int>> paramSources;      // static float tensor -> trainable params it derives from
    std::vector<std::vector<int>> consumerUnits;     // dynamic tensor -> units consuming it (ascending)
    std::vector<int> trainable;                      // parameter tensors (deduplicated, aliases resolved)
    std::vector<std::vector<int64_t>> trainableDims; // parallel to trainable: constant dims (0: symbolic)
    std::vector<int64_t> trainableDimsNumel;         // parallel to trainable: product of trainableDims (what
                                                     // optimizerStateBytes counts), kept so a tick does not redo it
    ShapeClasses shapeClasses;                       // the model's distinct shapes: a tick evaluates each once
    std::vector<DimSpan> spans;                      // distinct SavedItem dim spans (SavedItem::span)
    std::vector<uint8_t> trainableAdapter;           // parallel to trainable: a LoRA adapter (".lora_A." / ".lora_B.")
    std::vector<int> buffers;                        // buffer tensors
    std::vector<int> amp16Params;                    // params autocast caches a 16-bit copy of
    std::vector<uint8_t> quantizable;                // weights bitsandbytes would quantize (quant_weights.cpp)
    // lit-gpt's separate lm_head on a config with tied embeddings (quant_weights.cpp untiedHeadWeight): the trainable
    // index of the shared weight, whose second copy lit-gpt's model holds; -1 when none
    int untiedHead = -1;
    // lit-gpt (litgpt_model.cpp rule 5): (root, unit) of what the previous iteration's autograd graph still
    // holds through this iteration's forward (the Linear4bit inputs bitsandbytes keeps on ctx, the logits)
    std::vector<std::pair<int, int>> graphHeld;
    std::vector<uint8_t> mxfp4;   // expert weights a checkpoint ships in MXFP4 (gpt-oss)
    std::vector<uint8_t> actElem; // activation element size set by fine-tuning precision (0: the policy's)
    int lossTensor = -1;          // the first graph output
    bool anyInplaceable = false;  // some unit can run inplace (evaluate compares both settings)
    // Flat copies of what every tick reads from the model and the units, so that a tick walks arrays
    // instead of chasing each node's, tensor's and unit's own vectors (issue 16).
    std::vector<std::pair<int, int>> nodeOutputs; // (node, output tensor), node by node
    std::vector<int> paramNode;                   // parallel to trainable: node its gradient is attributed to (-1)
    std::vector<SavedItem> savedFlat;             // every unit's saved items, unit by unit
    std::vector<int> savedBegin;                  // per unit + 1: its first item in savedFlat
    std::vector<int> classicParams;               // classicEstimate's parameters (stored, not aliases)
    std::vector<int> classicOutputs;              // classicEstimate's node outputs that are activations
    std::vector<std::string> warnings;
    // The simulated iteration's recorded structure per switch setting, reused by every tick (timeline/)
    std::shared_ptr<SimCache> simCache;
};

PlanData buildPlan(const Model& model, const PlanOptions& options);
// Saved-for-backward rules (saved_rules.cpp): fills unit.saved and the unit flags for a single node.
void applyOpRule(const Model& model, const PlanData& plan, Unit& unit);
bool isViewOp(const std::string& op) noexcept;
// Whether that PyTorch's log_softmax keeps its input for backward as well as its result (kOlderRules): the
// loss's log_softmax (timeline/loss.cpp) reads it.
bool logSoftmaxKeepsInput(TorchVersion torch) noexcept;
// QLoRA (quant_weights.cpp): per tensor, a Linear weight that --quant stores in 4/8 bits; its bytes.
// outputLayerToo: lit-gpt's BitsandbytesPrecision also quantizes lm_head (transformers keeps it 16-bit).
std::vector<uint8_t> quantizableWeights(const Model& model, bool outputLayerToo);
// The parameter a config with tied embeddings shares between the input embedding (Gather) and a MatMul, the
// output layer's; -1 when the embeddings are not tied (quant_weights.cpp).
int tiedOutputEmbedding(const Model& model);
std::vector<uint8_t> mxfp4Weights(const Model& model);
int64_t quantizedBytes(const FineTune& finetune, int64_t numel, int64_t rows);
// A quantized weight's bytes and its dequantized transient: 2D [in, out] one Linear; 3D routed experts [E, K, N]
// dequantized one expert's [K, N] slice at a time (the fused gate_up slice; 4.x's separate gate and up
// Linear4bit dequantize half of it each).
struct QuantCost
{
    int64_t bytes = 0, transient = 0;
};
QuantCost quantizedCost(const FineTune& finetune, int64_t numel, const std::vector<int64_t>& dims, int dequantElem);
// Bytes per element of a 4/8-bit matmul's dequantized weight at its largest (quant_weights.cpp).
int dequantElemBytes(const Config& config);
// The stored weight a MatMul reads through the exporter's Transpose and aliases (-1: not a stored tensor).
int storedWeight(const Model& model, int weightInput);
// A LoRA adapter's element size (4: PEFT's default fp32, 2: --lora dtype=bf16|fp16); 0 for other tensors.
int adapterElemBytes(const Config& config, const Tensor& tensor);
bool isAdapterTensor(const Tensor& tensor);
// The element count optimizerStateBytes reads from a parameter's dims (a symbolic dim, 0, counts as 0), and
// the two size functions given it already (the plan keeps it per parameter: trainableDimsNumel).
int64_t dimsNumel(const std::vector<int64_t>& dims);
int64_t optimizerStateBytes(const Config& config, const std::vector<int64_t>& dims, int64_t numel);
int64_t pagedOptimizerBytes(const Config& config, int64_t numel);
// Fine-tuning precision (finetune/precision.cpp): each activation's element size where PEFT's dtype casts
// and prepare_model_for_kbit_training's fp32 parameters make it differ from the policy (before the units
// are built), and the per-unit consequences (a LoRA cast that copies, bitsandbytes' compute-dtype copies).
std::vector<uint8_t> finetuneActivationElems(const Model& model, const PlanData& plan);
void adjustFinetuneUnit(const Model& model, const PlanData& plan, Unit& unit);
// Whether this node is the input embedding lookup whose output enable_input_require_grads() marks.
bool inputEmbeddingRequiresGrad(const Model& model, const PlanOptions& options, const Node& node);
bool globMatch(std::string_view pattern, std::string_view text) noexcept;
// lit-gpt's own model code (litgpt_model.cpp): its fused qkv and LoRAQKVLinear on the transformers + PEFT graph.
void applyLitgptModel(PlanData& plan, const Model& model);
// litgpt_model.cpp rule 4, whatever the model code: bitsandbytes < 0.43.2 keeps every 4-bit Linear's input
// (PlanOptions::bnbKeepsInput); before applyLitgptModel, whose rule 5 holds those inputs under lit-gpt's fit().
void keepLinear4bitInputs(PlanData& plan, const Model& model);

// Element sizes under the dtype policy (dtype_policy.cpp).
int64_t activationBytes(const Config& config, const PlanData& plan, int tensor, int64_t numel);
int64_t paramBytes(const Config& config, DType dt, int64_t numel);
int64_t bufferBytes(const Config& config, DType dt, int64_t numel);
int gradElemBytes(const Config& config) noexcept;
bool policyIsInference(const Config& config) noexcept;
// prepare_model_for_kbit_training's fp32 casts and enable_input_require_grads() (peft/utils/other.py): a training
// preparation, so only a training step with quantized weights has them; inference loads the model as it is.
bool kbitPrepApplies(const Config& config) noexcept;

// The simulated iteration (timeline/).
struct SimOptions
{
    bool events = true;
    bool inplace = false;
    std::vector<int> segmentOfUnit; // checkpoint segment per unit (empty: off)
    int segments = 0;
    bool offload = false; // torchtune's activation offloading of the checkpoint inputs (timeline/offload.cpp)
};
// torchtune's OffloadActivations defaults (torchtune/training/_activation_offloading.py __init__, as
// get_act_offloading_ctx_manager builds it): a saved tensor of fewer bytes stays where it is
// (min_offload_size); the GPU original of an offloaded one is kept until a qualifying pack this many ids later
// (max_fwd_stash_size).
constexpr int64_t kMinOffloadBytes = 1024;
constexpr int kMaxFwdStashSize = 5;
// Whether a checkpointed segment's input is what the previous segment hands on (the checkpoint's positional
// argument, which activation offloading packs): an output of its last unit other than a view (timeline/offload.cpp).
bool handedOn(const PlanData& plan, const SimOptions& options, int root, int seg);
struct SimResult
{
    std::vector<TimelinePoint> timeline;
    std::vector<AllocEvent> events;
    int peakStep = -1;
    int64_t peak = 0;
    std::vector<int> peakLive;          // tensors
    std::vector<int64_t> peakLiveBytes; // parallel: bytes of the buffers attributed to each
    int64_t peakActivations = 0, peakSaved = 0, peakLoss = 0;
    int64_t recomputeMacs = 0;
};
struct Sizes
{
    std::vector<int64_t> act; // per tensor: activation bytes under the policy (0 when unknown)
    std::vector<int64_t> numel;
    int64_t persistentWeights = 0, persistentOptimizer = 0, master = 0, autocast = 0, inputBytes = 0;
    int64_t quantized = 0, dequantTransient = 0; // QLoRA: 4/8-bit weight bytes; largest dequantized weight
    int64_t dequantHeld = 0;        // the part of persistentWeights that is dequantTransient (held at every step)
    int64_t untiedHead = 0;         // lit-gpt's own lm_head beside a tied embedding (PlanData::untiedHead)
    int64_t pagedOptimizer = 0;     // paged optimizer state outside the allocator (not in persistentOptimizer)
    std::vector<int64_t> spanElems; // per PlanData::spans: the elements of those dims at this binding
    std::vector<int64_t> gradBytes; // per tensor (params): gradient bytes
    // per tensor (params): stored bytes as the step holds them (quantized, kbit-prep fp32, fp32 adapters);
    // the per-block replay and persistentWeights must agree on them
    std::vector<int64_t> weightBytes;
};
SimResult simulate(const PlanData& plan, const Config& config, const ShapeTable& shapes, const Sizes& sizes,
                   const SimOptions& options);
// Elements of dims [begin, end) at a binding (an unknown dim counts 0): a SavedItem's span.
int64_t spanElements(const std::vector<DimExpr>& dims, int begin, int end, const Bindings& values);
// simulate()'s peak alone (SimResult::peak), without the timeline, events or culprits.
int64_t simulatePeak(const PlanData& plan, const Config& config, const ShapeTable& shapes, const Sizes& sizes,
                     const SimOptions& options);
// simulate() in two steps, so that the allocator replay can start before the walk (issue 16): the program
// this binding runs with each buffer's bytes, then the walk, and meanwhile the allocator replay from it
// (the same figures as replay() over the walk's events).
struct SimProgram;
struct PreparedSim
{
    std::shared_ptr<const SimProgram> program;
    std::vector<int64_t> bytes;
    size_t events() const; // allocator events (0 unless options.events)
};
PreparedSim prepareSimulation(const PlanData& plan, const Config& config, const ShapeTable& shapes, const Sizes& sizes,
                              const SimOptions& options);
// writeEvents false: SimResult without events or culprits (replayAllocator gives the reserved peak).
SimResult runSimulation(const PlanData& plan, const Config& config, const ShapeTable& shapes, const Sizes& sizes,
                        const PreparedSim& prepared, bool writeEvents = true);
AllocatorStats replayAllocator(const PreparedSim& prepared, AllocatorMode mode, const AllocatorOptions& options);
// Whether a binding-dependent item applies at these shapes (always true for unconditional items).
bool savedItemActive(const PlanData& plan, const ShapeTable& shapes, const SavedItem& item);
int64_t savedItemBytes(const PlanData& plan, const Config& config, const ShapeTable& shapes, const Sizes& sizes,
                       const SavedItem& item);

// Highest allocated bytes of every timeline step (exact allocator, no events): what maxBatch fits
// per step (engine.cpp).
std::vector<int64_t> stepHighs(const PlanData& plan, const Config& config);
// The step's allocation events (what the allocator model replays), without the rest of an evaluation.
std::vector<AllocEvent> stepEvents(const PlanData& plan, const Config& config);

// One evaluation's parts (engine.cpp runs them in order). Before the walk (sizes.cpp): the bindings a step runs
// at, every tensor's bytes at them, and the simulation options.
Bindings bindingsFor(const Model& m, const Config& config);
Sizes computeSizes(const PlanData& p, const Config& config, const ShapeTable& shapes, bool train);
SimOptions simOptionsFor(const PlanData& p, const Config& config, const ShapeTable& shapes, const Sizes& sizes,
                         bool train, bool events);
// After it (breakdown.cpp): the figures of the evaluation.
void fillBreakdown(const PlanData& p, const Config& config, const Sizes& sizes, const SimResult& sim, bool train,
                   Breakdown& b);
std::vector<int64_t> savedPerUnit(const PlanData& p, const Config& config, const ShapeTable& shapes, const Sizes& sizes,
                                  const SimOptions& opt);
int64_t offloadedBytes(const PlanData& p, const Sizes& sizes, const SimOptions& opt);
void addWarnings(const PlanData& p, const Config& config, const SimOptions& opt, bool train, Evaluation& e);
void fillNodeCosts(const PlanData& p, const Sizes& sizes, const std::vector<int64_t>& savedBytes,
                   const std::vector<int64_t>& macsPerUnit, Evaluation& e);
// classicEstimate (engine.h) over the plan's flat lists.
int64_t classicEstimate(const PlanData& p, const Config& config, const ShapeTable& shapes);

// Checkpoint segments (checkpoint.cpp): segment index per unit for k segments.
std::vector<int> checkpointSegments(const PlanData& plan, const Config& config, const ShapeTable& shapes,
                                    const Sizes& sizes, int k);
// Hugging Face per-decoder-layer checkpointing (layer_checkpoint.cpp); empty when no layer list is found.
std::vector<int> layerCheckpointSegments(const PlanData& plan);
int64_t unitMacs(const PlanData& plan, const Unit& unit, const ShapeTable& shapes, const Sizes& sizes);
// The module sequence checkpoint_sequential runs: the model's top-level modules with every Sequential /
// ModuleList (a layer whose children are named "<name>.<int>") expanded one level; a top-level op with no
// module is its own item. Item index per unit (non-decreasing in topological order), followed by one more
// entry: the number of modules.
std::vector<int> checkpointItems(const PlanData& plan);

} // namespace headroom
