#pragma once
#include "headroom/base/config.h"
#include "headroom/serving/serve_model.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace headroom {

// The vLLM V1 versions whose startup rules are modelled (docs/SERVING.md §1.3): 0.19 computes the CUDA-graph
// estimate but does not subtract it; 0.21 subtracts it by default ("default since v0.21.0"). 0.11 is 0.19's
// startup with the PyTorch-native top-k/top-p sampler, whose sort sets the profile run's peak (§3).
enum class VllmVersion { V0_11, V0_19, V0_21 };
inline constexpr VllmVersion kNewestVllm = VllmVersion::V0_21;
std::string_view toString(VllmVersion v) noexcept;
std::optional<VllmVersion> parseVllmVersion(std::string_view s) noexcept;

enum class KvCacheDtype { Auto, Fp8 };

// vLLM's engine arguments that change the memory plan; unset ones take vLLM's defaults for the GPU.
struct VllmSettings
{
    VllmVersion version = kNewestVllm;
    double gpuMemoryUtilization = 0.9;  // cache.py: default 0.9, a fraction of total device memory
    std::optional<int64_t> maxModelLen; // default: the config's max_position_embeddings
    int tp = 1, pp = 1;                 // tensor / pipeline parallel size
    bool expertParallel = false;        // --enable-expert-parallel: experts spread over the TP ranks, whole
    int blockSize = 16;                 // tokens per KV block (16 on CUDA)
    KvCacheDtype kvCacheDtype = KvCacheDtype::Auto;
    std::optional<int64_t> maxNumSeqs; // default: get_batch_defaults for the GPU
    std::optional<int64_t> maxNumBatchedTokens;
    bool enforceEager = false;                      // no CUDA graphs
    WeightFormat quantization = WeightFormat::Auto; // --quantization / --dtype; Auto: the config's
    std::optional<int64_t> freeAtStart;             // bytes free on the device when vLLM starts (other processes)
};

// One pipeline stage's GPU (all tensor-parallel ranks of a stage hold the same bytes).
struct VllmRank
{
    int stage = 0;
    int64_t layers = 0;
    int64_t weights = 0, activationPeak = 0, nonTorch = 0, cudaGraphs = 0, kvCache = 0, kvBlocks = 0;
};

// vLLM's startup on one GPU preset: what determine_available_memory and get_kv_cache_configs compute.
struct VllmPlan
{
    std::string model, gpu;
    VllmVersion version = kNewestVllm;
    VllmSettings settings;      // as given, with the defaults filled in
    std::optional<bool> starts; // empty: cannot tell (see cannotTell)
    std::string reason, fix;    // vLLM's refusal and what changes it
    std::vector<std::string> cannotTell;
    WeightFormat format = WeightFormat::Bf16;
    int64_t total = 0, requested = 0, context = 0; // device total, total x util, memory before the snapshot
    // The limiting GPU (fewest blocks; all GPUs get that many)
    int64_t weights = 0, activationPeak = 0, nonTorch = 0, cudaGraphs = 0, kvCache = 0;
    int64_t kvBlocks = 0, kvTokens = 0;
    double maxConcurrency = 0; // requests of max_model_len tokens, every one at full length
    std::optional<int64_t> maxModelLenThatStarts;
    int64_t pageBytes = 0; // bytes per block per layer
    int64_t groups = 1, groupSize = 0, blocksPerRequest = 0;
    int64_t kvBytesPerToken = 0; // all layers of one GPU
    std::vector<VllmRank> ranks; // one per pipeline stage
};

VllmPlan planVllm(const ServeModel& model, const VllmSettings& settings, const GpuSpec& gpu);

// The plan as the CLI's `serving` object and its one-line summary.
std::string vllmSummary(const VllmPlan& plan);

} // namespace headroom
