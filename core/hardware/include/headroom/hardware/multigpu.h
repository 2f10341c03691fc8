#pragma once
#include "headroom/memory/engine.h"

#include <optional>
#include <vector>

namespace headroom {

// Per-GPU figures for N GPUs and a global batch B under config.strategy (docs/DESIGN.md "Multi-GPU").
struct GpuShare
{
    int index = 0;
    int64_t batch = 0; // samples this GPU processes
    int64_t peak = 0;
    int64_t reservedPeak = 0;
    int64_t weights = 0;
    int64_t gradients = 0;
    int64_t optimizer = 0;
    int64_t activations = 0;
    int64_t communication = 0; // DDP buckets, ZeRO/FSDP gather buffers, DP gathered outputs
    int64_t cpuBytes = 0;      // offloaded to host memory
    int64_t sideReserved = 0;  // other streams' pools, part of reservedPeak (FSDP: fsdp_units.cpp)
    // Added by the multi-GPU model:
    int64_t needed = 0; // peak (Exact) or reservedPeak, + context + workspace: what must fit
    // Where reservedPeak + context + workspace is above the capacity and the step's replay under capacity fits:
    // what the allocator holds when, at capacity, it gives its cached segments back, retries and grows again,
    // i.e. what the card leaves it (atCapacityReserved, workspace and side pools included); `needed` is this +
    // context where the step also fits with the safety margin kept free (else it stays the unconstrained need:
    // "does not fit"). 0: not at capacity, or the step does not fit even so.
    int64_t reservedAtCapacity = 0;
    // The least torch.cuda.max_memory_reserved can read at capacity (0 where reservedAtCapacity is 0): a cudaMalloc
    // fails only when the reserved bytes plus the segment it asks for pass what the card leaves, so the first
    // failure comes above that budget less the step's largest segment (multigpu.cpp shareFrom). Where between the
    // two a run reads depends on which request fails first, which the allocator model does not pin down.
    int64_t reservedAtCapacityLow = 0;
    int64_t lossBytes = 0; // loss-side tensors live at this GPU's peak (part of `activations`)
};

struct ClusterEvaluation
{
    std::vector<GpuShare> gpus;     // one per GPU; a single entry for Strategy::Single
    int heaviest = 0;               // index of the GPU with the largest need
    std::vector<std::string> notes; // e.g. "GPU 0 holds 1.2 GiB more: gathered outputs and loss"
};

ClusterEvaluation evaluateCluster(const Model& model, const Config& config);
// The same on a prepared engine plan (the advisor and slider ticks re-evaluate many configs).
ClusterEvaluation evaluateCluster(const EnginePlan& plan, const Config& config);

// The per-GPU batches the strategy hands out for global batch B (torch.chunk for DataParallel, the
// seed's BalancedDataParallel chunking for a GPU-0 batch, ceil(B/N) for DDP/ZeRO/FSDP).
std::vector<int64_t> perGpuBatches(Strategy strategy, int gpus, int64_t batch, int64_t gpu0Batch);

// The verdict of a multi-GPU configuration: the heaviest GPU's need against one GPU's capacity, and the
// largest GLOBAL batch whose heaviest GPU fits (`knownMaxBatch` reuses an earlier search when only the
// batch changed). Single-GPU configurations give computeFit(); their max batch keeps the safety margin
// (safeMaxBatch, docs/ACCURACY.md "Safe max batch"), a cluster's is the model's own.
Fit computeClusterFit(const EnginePlan& plan, const Config& config, const Evaluation& evaluation,
                      const ClusterEvaluation& cluster, std::optional<int64_t> knownMaxBatch = std::nullopt);
int64_t maxGlobalBatch(const EnginePlan& plan, const Config& config, int64_t limit = 1 << 20);

} // namespace headroom
