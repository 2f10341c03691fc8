// The plan as the CLI prints it: one summary line, and the `serving` JSON object (bytes as integers).
#include "headroom/base/format.h"
#include "headroom/serving/serving_json.h"

#include <cmath>
#include <cstdio>

namespace headroom {
namespace {

// 131072 -> "131,072": the exact figure vLLM prints, not formatCount's rounded "131 k"
std::string grouped(int64_t n)
{
    const std::string digits = std::to_string(n < 0 ? -n : n);
    std::string out = n < 0 ? "-" : "";
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return out;
}

std::string tokensLabel(int64_t n) { return n % 1024 == 0 ? std::to_string(n / 1024) + "k" : grouped(n); }

std::string parallelLabel(const VllmSettings& s)
{
    std::string t = "TP " + std::to_string(s.tp) + (s.expertParallel ? " + EP" : "");
    if (s.pp > 1)
        t += ", PP " + std::to_string(s.pp);
    return t;
}

} // namespace

std::string vllmSummary(const VllmPlan& p)
{
    const std::string where = " on " + p.gpu + " (" + parallelLabel(p.settings) + ", vLLM " +
                              std::string(toString(p.version)) + ")";
    if (!p.starts)
        return "cannot tell" + where + ": " + p.reason.substr(p.reason.find(':') + 2);
    const std::string longest = p.maxModelLenThatStarts
                                    ? "; longest max_model_len that starts: " + grouped(*p.maxModelLenThatStarts)
                                    : "";
    if (!*p.starts)
        return "does not start" + where + ": " + p.reason + longest;
    const auto n = static_cast<int64_t>(std::floor(p.maxConcurrency));
    return "serves " + grouped(n) + " concurrent " + tokensLabel(*p.settings.maxModelLen) + "-token request" +
           (n == 1 ? "" : "s") + where + ": KV cache " + formatBytes(p.kvCache) + " = " + grouped(p.kvTokens) +
           " tokens" + longest;
}

nlohmann::json toJson(const VllmPlan& p)
{
    using nlohmann::json;
    const VllmSettings& s = p.settings;
    json settings = {{"gpu_memory_utilization", s.gpuMemoryUtilization},
                     {"max_model_len", s.maxModelLen ? json(*s.maxModelLen) : json()},
                     {"tensor_parallel_size", s.tp},
                     {"pipeline_parallel_size", s.pp},
                     {"block_size", s.blockSize},
                     {"kv_cache_dtype", s.kvCacheDtype == KvCacheDtype::Fp8 ? "fp8" : "auto"},
                     {"max_num_seqs", s.maxNumSeqs ? json(*s.maxNumSeqs) : json()},
                     {"max_num_batched_tokens", s.maxNumBatchedTokens ? json(*s.maxNumBatchedTokens) : json()},
                     {"enforce_eager", s.enforceEager},
                     {"weight_format", toString(p.format)}};
    if (s.expertParallel)
        settings["enable_expert_parallel"] = true;
    json ranks = json::array();
    for (const VllmRank& r : p.ranks)
        ranks.push_back({{"stage", r.stage},
                         {"layers", r.layers},
                         {"weights", r.weights},
                         {"activation_peak", r.activationPeak},
                         {"non_torch", r.nonTorch},
                         {"cuda_graphs", r.cudaGraphs},
                         {"kv_cache", r.kvCache},
                         {"kv_blocks", r.kvBlocks}});
    json cannot = json::array();
    for (const std::string& f : p.cannotTell)
        cannot.push_back(f);
    return {{"engine", "vllm"},
            {"vllm_version", toString(p.version)},
            {"gpu", p.gpu},
            {"settings", settings},
            {"starts", p.starts ? json(*p.starts) : json()},
            {"reason", p.reason.empty() ? json() : json(p.reason)},
            {"fix", p.fix.empty() ? json() : json(p.fix)},
            {"cannot_tell", cannot},
            {"total", p.total},
            {"requested", p.requested},
            {"context", p.context},
            {"weights", p.weights},
            {"activation_peak", p.activationPeak},
            {"non_torch", p.nonTorch},
            {"cuda_graphs", p.cudaGraphs},
            {"cuda_graphs_subtracted", p.version == VllmVersion::V0_21},
            {"kv_cache", p.kvCache},
            {"kv_blocks", p.kvBlocks},
            {"kv_tokens", p.kvTokens},
            {"kv_bytes_per_token", p.kvBytesPerToken},
            {"page_bytes", p.pageBytes},
            {"kv_groups", p.groups},
            {"blocks_per_request", p.blocksPerRequest},
            {"max_concurrency", std::round(p.maxConcurrency * 100) / 100},
            {"max_model_len_that_starts", p.maxModelLenThatStarts ? json(*p.maxModelLenThatStarts) : json()},
            {"ranks", ranks}};
}

} // namespace headroom
