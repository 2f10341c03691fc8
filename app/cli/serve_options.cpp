// The serving flags of `headroom-cli CONFIG.json --serve vllm` (vLLM's engine arguments, same names) and of
// `--serve hf-generate` (generate()'s prompt, max_new_tokens and cache_implementation).
#include "options.h"

#include <charconv>

namespace headroom::cli {
namespace {

int64_t whole(const std::string& flag, const std::string& v, int64_t lo, int64_t hi)
{
    int64_t n = 0;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || p != v.data() + v.size() || n < lo || n > hi)
        throw UsageError{flag + " expects a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
                         ", got '" + v + "'"};
    return n;
}

} // namespace

bool parseServeFlag(const std::string& a, const std::function<std::string(const std::string&)>& value, Options& o)
{
    VllmSettings& s = o.vllm;
    if (a == "--serve") {
        o.serve = value(a);
        if (*o.serve != "vllm" && *o.serve != "hf-generate")
            throw UsageError{"--serve: expected vllm or hf-generate, got '" + *o.serve + "'"};
        return true;
    }
    if (a == "--prompt-len" || a == "--new-tokens" || a == "--cache") {
        const std::string v = value(a);
        if (a == "--prompt-len")
            o.hf.promptLen = whole(a, v, 1, int64_t{1} << 24);
        else if (a == "--new-tokens")
            o.hf.newTokens = whole(a, v, 1, int64_t{1} << 24);
        else if (const auto c = parseHfCacheKind(v))
            o.hf.cache = *c;
        else
            throw UsageError{a + ": expected dynamic or static, got '" + v + "'"};
        o.hfFlags.push_back(a);
        return true;
    }
    if (a == "--gpu-memory-utilization") {
        const std::string v = value(a);
        char* end = nullptr;
        s.gpuMemoryUtilization = std::strtod(v.c_str(), &end);
        if (v.empty() || *end != '\0' || !(s.gpuMemoryUtilization > 0) || s.gpuMemoryUtilization > 1)
            throw UsageError{a + " expects a fraction in (0, 1], got '" + v + "'"};
    } else if (a == "--max-model-len")
        s.maxModelLen = whole(a, value(a), 1, int64_t{1} << 31);
    else if (a == "--tp")
        s.tp = static_cast<int>(whole(a, value(a), 1, 1024));
    else if (a == "--ep")
        s.expertParallel = true;
    else if (a == "--pp")
        s.pp = static_cast<int>(whole(a, value(a), 1, 1024));
    else if (a == "--block-size")
        s.blockSize = static_cast<int>(whole(a, value(a), 1, 4096));
    else if (a == "--max-num-seqs")
        s.maxNumSeqs = whole(a, value(a), 1, int64_t{1} << 24);
    else if (a == "--max-num-batched-tokens")
        s.maxNumBatchedTokens = whole(a, value(a), 1, int64_t{1} << 30);
    else if (a == "--enforce-eager")
        s.enforceEager = true;
    else if (a == "--kv-cache-dtype") {
        const std::string v = value(a);
        if (v != "auto" && v != "fp8" && v != "fp8_e4m3" && v != "fp8_e5m2")
            throw UsageError{a + ": expected auto, fp8, fp8_e4m3 or fp8_e5m2, got '" + v + "'"};
        s.kvCacheDtype = v == "auto" ? KvCacheDtype::Auto : KvCacheDtype::Fp8;
    } else if (a == "--vllm-version") {
        const std::string v = value(a);
        const auto parsed = parseVllmVersion(v);
        if (!parsed)
            throw UsageError{a + ": modelled versions are 0.11, 0.19 and 0.21, got '" + v + "'"};
        s.version = *parsed;
    } else if (a == "--quantization") {
        const std::string v = value(a);
        const auto f = parseWeightFormat(v);
        if (!f)
            throw UsageError{a + ": expected fp8, int8, gptq, awq, bitsandbytes, mxfp4, bf16, fp16 or fp32, got '" + v +
                             "'"};
        s.quantization = *f;
    } else if (a == "--gpu-free") {
        const std::string v = value(a);
        s.freeAtStart = parseBytes(v);
        if (!s.freeAtStart)
            throw UsageError{a + " expects bytes such as 60GiB, got '" + v + "'"};
    } else
        return false;
    o.serveFlags.push_back(a);
    return true;
}

void checkServeCombinations(const Options& o)
{
    const bool hf = o.serve && *o.serve == "hf-generate";
    if ((!o.serve || hf) && !o.serveFlags.empty())
        throw UsageError{o.serveFlags.front() + " applies to --serve vllm"};
    if ((!o.serve || !hf) && !o.hfFlags.empty())
        throw UsageError{o.hfFlags.front() + " applies to --serve hf-generate"};
    if (o.serve && (o.csv || o.csvFile || o.pdf || o.netron || o.probe || o.maxBatch || (o.batch && !hf)))
        throw UsageError{"--serve prints its plan (or --json); it does not combine with --csv, --pdf, --netron, "
                         "--probe, --max-batch or (under vllm) --batch"};
}

} // namespace headroom::cli
