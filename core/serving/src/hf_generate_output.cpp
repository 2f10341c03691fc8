// The generate() plan as the CLI prints it: one summary line, and the `serving` JSON object (bytes as integers).
#include "headroom/base/format.h"
#include "headroom/serving/hf_generate.h"
#include "headroom/serving/serving_json.h"

namespace headroom {
namespace {

std::string dtypeLabel(WeightFormat f) { return std::string(toString(f)); }

} // namespace

std::string hfGenerateSummary(const HfGeneratePlan& p)
{
    const HfGenerateSettings& s = p.settings;
    const std::string where = " on " + p.gpu + " (transformers " + std::string(kTransformersVersion) + " generate(), " +
                              dtypeLabel(p.format) + ", " + std::string(toString(s.cache)) + " cache, batch " +
                              std::to_string(s.batch) + ", " + std::to_string(s.promptLen) + " + " +
                              std::to_string(s.newTokens) + " tokens)";
    if (!p.cannotTell.empty()) {
        std::string list;
        for (const std::string& f : p.cannotTell)
            list += (list.empty() ? "" : ", ") + f;
        return "cannot tell" + where + ": " + p.model + " lacks " + list;
    }
    const bool atDecode = p.decodePeak > p.prefillPeak;
    return std::string(*p.fits ? "fits" : "does not fit") + where + ": peak " + formatBytes(p.peak) + " at " +
           (atDecode ? "the last decode step" : "the prefill") + " (weights " + formatBytes(p.weights) + ", KV cache " +
           formatBytes(p.kvEnd) + " at the end, prefill activation " + formatBytes(p.prefill.activation) +
           "); max batch " + std::to_string(p.maxBatch) + ", longest prompt " + std::to_string(p.longestPrompt);
}

nlohmann::json toJson(const HfGeneratePlan& p)
{
    using nlohmann::json;
    const HfGenerateSettings& s = p.settings;
    json cannot = json::array();
    for (const std::string& f : p.cannotTell)
        cannot.push_back(f);
    const bool known = p.cannotTell.empty();
    return {{"engine", "hf-generate"},
            {"transformers_version", kTransformersVersion},
            {"gpu", p.gpu},
            {"settings",
             {{"prompt_len", s.promptLen},
              {"new_tokens", s.newTokens},
              {"batch", s.batch},
              {"cache", toString(s.cache)},
              {"dtype", toString(p.format)}}},
            {"fits", known ? json(*p.fits) : json()},
            {"cannot_tell", cannot},
            {"capacity", p.capacity},
            {"outside_allocator", p.outside},
            {"weights", p.weights},
            {"kv_bytes_per_token", p.kvBytesPerToken},
            {"kv_cache_prefill", p.kvPrefill},
            {"kv_cache_end", p.kvEnd},
            {"prefill",
             {{"attention", p.prefill.attention},
              {"mlp", p.prefill.mlp},
              {"norm", p.prefill.norm},
              {"logits", p.prefill.logits},
              {"activation", p.prefill.activation},
              {"peak", p.prefillPeak}}},
            {"decode", {{"transient", p.decodeTransient}, {"peak", p.decodePeak}}},
            {"peak", p.peak},
            {"peak_phase", p.decodePeak > p.prefillPeak ? "decode" : "prefill"},
            {"max_batch", known ? json(p.maxBatch) : json()},
            {"longest_prompt", known ? json(p.longestPrompt) : json()}};
}

} // namespace headroom
