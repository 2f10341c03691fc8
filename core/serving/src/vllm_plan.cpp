// vLLM V1's startup on one GPU, in its order (docs/SERVING.md §1.1, §1.4; gpu_worker.py @ 35d5cda):
// init_device (NCCL, the snapshot, requested = total x util), load_model (W), determine_available_memory
// (profile run: A, non-torch NT, the CUDA-graph estimate from 0.21), get_kv_cache_configs (blocks, the min over
// ranks, the one-request check and estimate_max_model_len).
#include "headroom/serving/vllm.h"

#include "serving_rules.h"

#include <algorithm>
#include <cstdio>

namespace headroom {
namespace {

std::string gib(int64_t bytes)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / kGiB);
    return buf;
}

// Memory outside torch, per GPU, from the llm-d v0.19 H100 logs (docs/SERVING.md §1.1, §5): the CUDA context
// before the snapshot (outside the budget) and the profile's non-torch increase (inside it).
int64_t contextBytes(int tp, int pp) { return tp * pp > 1 ? kGiB * 3 / 2 : kGiB * 51 / 100; }
int64_t nonTorchBytes(int tp, int pp)
{
    if (tp > 1) // NCCL + custom all-reduce buffers: 2.06-2.21 GiB at TP >= 2
        return kGiB * 21 / 10;
    return pp > 1 ? kGiB * 7 / 100 : kGiB / 4;
}
// CUDA-graph pool for 51 piecewise + 51 full captures (max 512), our fit on the CSV's actual pools:
// 0.45 GiB + 14.5 MiB per layer on the GPU (Llama-8B 0.91 vs 0.91, Kimi-Dev-72B TP2 1.61 vs 1.61; MoE above it).
int64_t cudaGraphBytes(int64_t layers, bool eager)
{
    return eager ? 0 : kGiB * 45 / 100 + layers * (kGiB * 145 / 10000);
}

// get_batch_defaults (arg_utils.py): >= 70 GiB and not an A100 -> 8192 / 1024 for the API server, else 2048 / 256
void fillDefaults(VllmSettings& s, const GpuSpec& gpu)
{
    const bool big = gpu.capacity >= 70 * kGiB && gpu.name.find("A100") == std::string::npos;
    if (!s.maxNumBatchedTokens)
        s.maxNumBatchedTokens = big ? 8192 : 2048;
    if (!s.maxNumSeqs)
        s.maxNumSeqs = big ? 1024 : 256;
}

WeightFormat resolveFormat(const ServeModel& m, const VllmSettings& s)
{
    if (s.quantization != WeightFormat::Auto)
        return s.quantization;
    if (m.format != WeightFormat::Auto)
        return m.format;
    return m.dtypeName == "float16" ? WeightFormat::Fp16 : WeightFormat::Bf16;
}

void refuse(VllmPlan& p, std::string reason, std::string fix)
{
    p.starts = false;
    p.reason = std::move(reason);
    p.fix = std::move(fix);
}

// Checks before any memory is touched: missing fields, TP divisibility, the derived max length, free memory.
bool precheck(const ServeModel& m, VllmPlan& p)
{
    const VllmSettings& s = p.settings;
    p.cannotTell = m.missing;
    if (!s.maxModelLen && m.maxPositions <= 0)
        p.cannotTell.emplace_back("max_position_embeddings (or give --max-model-len)");
    if (!p.cannotTell.empty()) {
        std::string list;
        for (const std::string& f : p.cannotTell)
            list += (list.empty() ? "" : ", ") + f;
        p.reason = "cannot tell: " + m.file + " lacks " + list;
        return false;
    }
    if (m.heads % s.tp != 0) { // ModelConfig.verify_with_parallel_config
        refuse(p,
               "Total number of attention heads (" + std::to_string(m.heads) +
                   ") must be divisible by tensor parallel size (" + std::to_string(s.tp) + ").",
               "use a tensor parallel size that divides " + std::to_string(m.heads));
        return false;
    }
    if (m.maxPositions > 0 && *s.maxModelLen > m.maxPositions) { // _get_and_verify_max_len
        refuse(p,
               "User-specified max_model_len (" + std::to_string(*s.maxModelLen) +
                   ") is greater than the derived max_model_len (max_position_embeddings=" +
                   std::to_string(m.maxPositions) + " in the model's config.json).",
               "use --max-model-len " + std::to_string(m.maxPositions) + " or less");
        return false;
    }
    if (s.freeAtStart && *s.freeAtStart < p.requested) { // Worker.init_device
        char u[16];
        std::snprintf(u, sizeof u, "%.2f", s.gpuMemoryUtilization);
        refuse(p,
               "Free memory on device (" + gib(*s.freeAtStart) + "/" + gib(p.total) +
                   ") on startup is less than desired GPU memory utilization (" + u + ", " + gib(p.requested) +
                   "). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
               "lower --gpu-memory-utilization or free the GPU");
        return false;
    }
    return true;
}

} // namespace

std::string_view toString(VllmVersion v) noexcept
{
    switch (v) {
    case VllmVersion::V0_11: return "0.11";
    case VllmVersion::V0_19: return "0.19";
    case VllmVersion::V0_21: break;
    }
    return "0.21";
}

std::optional<VllmVersion> parseVllmVersion(std::string_view s) noexcept
{
    if (s.starts_with("v"))
        s.remove_prefix(1);
    if (s == "0.11" || s == "0.11.0")
        return VllmVersion::V0_11;
    if (s == "0.19" || s == "0.19.0" || s == "0.19.1" || s == "0.20" || s == "0.20.0")
        return VllmVersion::V0_19;
    if (s == "0.21" || s == "0.21.0")
        return VllmVersion::V0_21;
    return std::nullopt;
}

// Long on purpose: vLLM's startup in its order, one step per paragraph, as a reader checks it against the log.
VllmPlan planVllm(const ServeModel& m, const VllmSettings& settings, const GpuSpec& gpu)
{
    VllmPlan p;
    p.model = m.file;
    p.gpu = gpu.name;
    p.version = settings.version;
    p.settings = settings;
    VllmSettings& s = p.settings;
    fillDefaults(s, gpu);
    if (!s.maxModelLen && m.maxPositions > 0)
        s.maxModelLen = m.maxPositions;
    p.total = gpu.capacity;
    p.requested = static_cast<int64_t>(static_cast<double>(gpu.capacity) * s.gpuMemoryUtilization);
    p.context = contextBytes(s.tp, s.pp);
    p.format = resolveFormat(m, s);
    if (!precheck(m, p))
        return p;
    const int dtypeBytes = p.format == WeightFormat::Fp32 ? 4 : 2;
    const int kvBytes = s.kvCacheDtype == KvCacheDtype::Fp8 ? 1 : dtypeBytes; // CacheDType: fp8* = 1 byte
    const int64_t mml = *s.maxModelLen, batched = *s.maxNumBatchedTokens;
    const bool applyGraphs = s.version == VllmVersion::V0_21;

    // Every stage's GPU: load_model, the profile run, the KV cache left, its blocks.
    const std::vector<Stage> stages = pipelineStages(m.layers, s.pp);
    std::vector<KvLayout> layouts;
    size_t limiting = 0;
    for (size_t i = 0; i < stages.size(); ++i) {
        const Stage& st = stages[i];
        VllmRank r;
        r.stage = static_cast<int>(i);
        r.layers = st.count;
        const bool ep = s.expertParallel && m.experts > 0;
        r.weights = stageWeightBytes(m, st, s.tp, p.format, dtypeBytes, true, ep);
        r.activationPeak = activationPeakBytes(m, st, s.tp, *s.maxNumSeqs, batched, dtypeBytes, ep,
                                               s.version == VllmVersion::V0_11);
        r.nonTorch = nonTorchBytes(s.tp, s.pp);
        r.cudaGraphs = cudaGraphBytes(st.count, s.enforceEager);
        r.kvCache = p.requested - r.weights - r.activationPeak - r.nonTorch - (applyGraphs ? r.cudaGraphs : 0);
        layouts.push_back(kvLayout(m, st, s.tp, s.blockSize, kvBytes));
        const KvLayout& k = layouts.back();
        r.kvBlocks = r.kvCache > 0 && k.groupSize > 0 ? r.kvCache / k.page / k.groupSize : 0;
        p.ranks.push_back(r);
        if (r.kvBlocks < p.ranks[limiting].kvBlocks ||
            (i > 0 && r.kvBlocks == p.ranks[limiting].kvBlocks && r.kvCache < p.ranks[limiting].kvCache))
            limiting = i;
    }
    const VllmRank& lim = p.ranks[limiting];
    const KvLayout& k = layouts[limiting];
    p.weights = lim.weights;
    p.activationPeak = lim.activationPeak;
    p.nonTorch = lim.nonTorch;
    p.cudaGraphs = lim.cudaGraphs;
    p.kvCache = lim.kvCache;
    p.kvBlocks = lim.kvBlocks; // get_kv_cache_configs: every rank gets the smallest num_blocks
    p.pageBytes = k.page;
    p.groups = k.groups;
    p.groupSize = k.groupSize;
    for (const KvLayout& l : layouts)
        p.kvBytesPerToken += l.page / s.blockSize * (l.fullLayers + l.slidingLayers);
    // _report_kv_cache_config (v0.19): num_blocks // len(groups) * block_size
    p.kvTokens = p.kvBlocks / k.groups * s.blockSize;
    p.blocksPerRequest = requestBlocks(m, k, s.blockSize, mml, batched);
    p.maxConcurrency = p.blocksPerRequest > 0
                           ? static_cast<double>(p.kvBlocks) / static_cast<double>(p.blocksPerRequest)
                           : 0;

    // The longest max_model_len every stage's pool holds one request of (estimate_max_model_len).
    const int64_t upper = m.maxPositions > 0 ? m.maxPositions : mml;
    int64_t longest = upper;
    for (size_t i = 0; i < stages.size(); ++i)
        longest = std::min(longest, p.ranks[i].kvCache > 0 ? estimateMaxModelLen(m, layouts[i], s.blockSize, upper,
                                                                                 batched, p.ranks[i].kvCache)
                                                           : 0);
    if (longest > 0)
        p.maxModelLenThatStarts = longest;

    // The refusals, in the order vLLM meets them.
    const std::string lenFix = longest > 0 ? "use --max-model-len " + std::to_string(longest) + " or less"
                                           : "add GPUs (--tp/--pp) or raise --gpu-memory-utilization";
    for (const VllmRank& r : p.ranks)
        if (r.weights > p.total - p.context) {
            refuse(p,
                   "CUDA out of memory while loading the model weights (" + gib(r.weights) + " per GPU, " +
                       gib(p.total - p.context) + " free).",
                   "more GPUs (--tp/--pp) or a smaller weight format (--quantization)");
            return p;
        }
    for (const VllmRank& r : p.ranks)
        if (r.kvCache <= 0) { // kv_cache_utils.check_enough_kv_cache_memory
            refuse(p,
                   "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
                   "initializing the engine.",
                   "raise --gpu-memory-utilization, lower --max-num-batched-tokens/--max-num-seqs, or add GPUs");
            return p;
        }
    for (size_t i = 0; i < stages.size(); ++i) {
        const int64_t need = requestBytes(m, layouts[i], s.blockSize, mml, batched);
        if (need > p.ranks[i].kvCache) {
            const int64_t est = estimateMaxModelLen(m, layouts[i], s.blockSize, mml, batched, p.ranks[i].kvCache);
            refuse(p,
                   "To serve at least one request with the models's max seq len (" + std::to_string(mml) + "), (" +
                       gib(need) + " KV cache is needed, which is larger than the available KV cache memory (" +
                       gib(p.ranks[i].kvCache) +
                       "). Based on the available memory, the estimated maximum model "
                       "length is " +
                       std::to_string(est) +
                       ". Try increasing `gpu_memory_utilization` or "
                       "decreasing `max_model_len` when initializing the engine.",
                   lenFix);
            return p;
        }
    }
    p.starts = true;
    return p;
}

} // namespace headroom
