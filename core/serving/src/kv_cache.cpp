// The KV cache's page, groups and per-request need, as vLLM V1 computes them (docs/SERVING.md §2;
// vllm/v1/kv_cache_interface.py and vllm/v1/core/kv_cache_utils.py @ 001cabc).
#include "serving_rules.h"

#include <algorithm>

namespace headroom {
namespace {

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// SlidingWindowSpec.max_memory_usage_bytes: the window plus one scheduled chunk, plus one block
int64_t slidingBlocks(const ServeModel& m, int blockSize, int64_t maxModelLen, int64_t batched)
{
    return cdiv(std::min(m.slidingWindow - 1 + batched, maxModelLen), blockSize) + 1;
}

} // namespace

KvLayout kvLayout(const ServeModel& m, const Stage& s, int tp, int blockSize, int kvBytes)
{
    KvLayout k;
    if (m.kvLoraRank > 0) // MLAAttentionSpec: one latent of kv_lora_rank + qk_rope_head_dim per token, not split by TP
        k.page = int64_t{blockSize} * (m.kvLoraRank + m.qkRopeDim) * kvBytes;
    else // AttentionSpec: K and V, num_kv_heads of this rank
        k.page = 2 * int64_t{blockSize} * kvHeadsPerRank(m, tp) * m.headDim * kvBytes;
    for (int64_t i = s.first; i < s.first + s.count; ++i)
        (m.layerKinds[static_cast<size_t>(i)] == LayerAttention::Sliding ? k.slidingLayers : k.fullLayers) += 1;
    if (k.fullLayers == 0 || k.slidingLayers == 0) {
        // _get_kv_cache_groups_uniform_spec: one group holding every layer
        k.groupSize = k.fullLayers + k.slidingLayers;
        (k.fullLayers ? k.fullGroups : k.slidingGroups) = 1;
        k.groups = 1;
        return k;
    }
    // _get_kv_cache_groups_uniform_page_size: groups of the smallest type's layer count (the largest when the
    // two are within 1.5x), the last group of a type padded; one block id spans a layer of every group
    const int64_t lo = std::min(k.fullLayers, k.slidingLayers), hi = std::max(k.fullLayers, k.slidingLayers);
    k.groupSize = hi * 2 < lo * 3 ? hi : lo;
    k.fullGroups = cdiv(k.fullLayers, k.groupSize);
    k.slidingGroups = cdiv(k.slidingLayers, k.groupSize);
    k.groups = k.fullGroups + k.slidingGroups;
    return k;
}

int64_t requestBytes(const ServeModel& m, const KvLayout& k, int blockSize, int64_t maxModelLen, int64_t batched)
{
    // max_memory_usage_bytes per layer, summed (check_enough_kv_cache_memory)
    int64_t blocks = k.fullLayers * cdiv(maxModelLen, blockSize);
    if (k.slidingLayers > 0)
        blocks += k.slidingLayers * slidingBlocks(m, blockSize, maxModelLen, batched);
    return blocks * k.page;
}

int64_t requestBlocks(const ServeModel& m, const KvLayout& k, int blockSize, int64_t maxModelLen, int64_t batched)
{
    int64_t blocks = k.fullGroups * cdiv(maxModelLen, blockSize);
    if (k.slidingGroups > 0)
        blocks += k.slidingGroups * slidingBlocks(m, blockSize, maxModelLen, batched);
    return blocks;
}

int64_t estimateMaxModelLen(const ServeModel& m, const KvLayout& k, int blockSize, int64_t upper, int64_t batched,
                            int64_t available)
{
    auto fits = [&](int64_t len) { return requestBytes(m, k, blockSize, len, batched) <= available; };
    if (upper < 1 || !fits(1))
        return 0;
    int64_t lo = 1, hi = upper;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo + 1) / 2;
        if (fits(mid))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

} // namespace headroom
