#pragma once
// The serving stage's rules, one file each: vision towers (vision.cpp), weights per rank (weights.cpp), the KV
// cache's pages, groups and per-request need (kv_cache.cpp), the profile run's peak (activation.cpp).
#include "headroom/serving/serve_model.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <vector>

namespace headroom {

inline constexpr int64_t kGiB = int64_t{1} << 30;

// Vision tower + projector parameters of a VLM's config.json (0 without vision_config); an unknown tower is
// added to m.missing.
int64_t visionTowerParams(const nlohmann::json& root, ServeModel& m);

// vLLM's get_pp_indices (vllm/distributed/utils.py): L // pp layers each, the remainder on the stages before the
// last one.
struct Stage
{
    int64_t first = 0, count = 0;
    bool isFirst = false, isLast = false;
};
std::vector<Stage> pipelineStages(int64_t layers, int pp);

// Bytes one GPU of a stage holds after load_model (docs/SERVING.md §4).
// `ep`: --enable-expert-parallel, the routed experts placed whole on the tp ranks instead of split by width.
int64_t stageWeightBytes(const ServeModel& m, const Stage& s, int tp, WeightFormat format, int dtypeBytes,
                         bool padVocab = true, bool ep = false);

// The profile run's torch peak on one GPU (docs/SERVING.md §3, our fit). `sortingSampler`: the dummy sampler
// run sorts the logits (vLLM 0.11's PyTorch-native top-k/top-p).
int64_t activationPeakBytes(const ServeModel& m, const Stage& s, int tp, int64_t maxNumSeqs,
                            int64_t maxNumBatchedTokens, int dtypeBytes, bool ep = false, bool sortingSampler = false);

// KV cache layout of one stage (kv_cache_interface.py, kv_cache_utils.py @ 001cabc).
struct KvLayout
{
    int64_t page = 0;      // bytes per block per layer
    int64_t groups = 1;    // KV cache groups (one per attention type and group_size layers)
    int64_t groupSize = 0; // layers sharing one block id: num_blocks = available // page // groupSize
    int64_t fullGroups = 0, slidingGroups = 0;
    int64_t fullLayers = 0, slidingLayers = 0;
};
int64_t kvHeadsPerRank(const ServeModel& m, int tp);
KvLayout kvLayout(const ServeModel& m, const Stage& s, int tp, int blockSize, int kvBytes);
// max_memory_usage_bytes summed over the stage's layers: what one request of maxModelLen needs.
int64_t requestBytes(const ServeModel& m, const KvLayout& k, int blockSize, int64_t maxModelLen,
                     int64_t maxNumBatchedTokens);
// Blocks one request of maxModelLen takes from the shared pool (get_max_concurrency_for_kv_cache_config).
int64_t requestBlocks(const ServeModel& m, const KvLayout& k, int blockSize, int64_t maxModelLen,
                      int64_t maxNumBatchedTokens);
// estimate_max_model_len: the largest length in [1, upper] whose request fits `available` bytes (0: none).
int64_t estimateMaxModelLen(const ServeModel& m, const KvLayout& k, int blockSize, int64_t upper,
                            int64_t maxNumBatchedTokens, int64_t available);

} // namespace headroom
