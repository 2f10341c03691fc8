// The limits of hf_limits.h. Each is far above the largest published model's value (so a real config.json, the
// biggest included, opens) and far below what takes the importer more than a moment (the graph has a few dozen
// nodes per layer, so 10^4 layers is under a second to build).
#include "hf_limits.h"

#include "headroom/base/error.h"

#include <nlohmann/json.hpp>

#include <string_view>

namespace headroom::detail {
namespace {

struct Limit
{
    std::string_view key;
    int64_t max;
    const char* what;
};

// Published maxima, for scale: layers 126 (Llama-3.1-405B), hidden 16384 (405B), intermediate 53248 (405B),
// attention heads 128 (405B, DeepSeek-V3), vocabulary 262144 (Gemma 3), routed experts 384 (Kimi K2),
// learned position tables 2048 (GPT-3 class) and context windows 10^7 (Llama 4 Scout).
constexpr Limit kLimits[] = {
    {"num_hidden_layers", 10'000, "layers"},
    {"n_layer", 10'000, "layers"},
    {"num_layers", 10'000, "layers"},
    {"hidden_size", 1'000'000, "hidden width"},
    {"n_embd", 1'000'000, "hidden width"},
    {"d_model", 1'000'000, "hidden width"},
    {"head_dim", 1'000'000, "head width"},
    {"intermediate_size", 10'000'000, "MLP width"},
    {"n_inner", 10'000'000, "MLP width"},
    {"moe_intermediate_size", 10'000'000, "MLP width"},
    {"num_attention_heads", 100'000, "attention heads"},
    {"n_head", 100'000, "attention heads"},
    {"num_key_value_heads", 100'000, "attention heads"},
    {"num_kv_heads", 100'000, "attention heads"},
    {"vocab_size", 100'000'000, "vocabulary"},
    {"num_local_experts", 1'000'000, "experts"},
    {"num_experts", 1'000'000, "experts"},
    {"n_routed_experts", 1'000'000, "experts"},
    {"moe_num_experts", 1'000'000, "experts"},
};
// Any other size (position tables, ranks, label counts): a billion.
constexpr int64_t kOtherMax = 1'000'000'000;
// 10^14 parameters: 100x the largest published model (about 1e12: Kimi K2, 1.04e12) and 200 TB of bf16 weights,
// more than any cluster's GPU memory a single training run is planned on.
constexpr int64_t kMaxParams = 100'000'000'000'000;

} // namespace

void checkCount(const char* key, int64_t value, const std::string& file)
{
    int64_t max = kOtherMax;
    const char* what = "size";
    for (const Limit& l : kLimits)
        if (l.key == key) {
            max = l.max;
            what = l.what;
        }
    if (value > max)
        throw Error(file + ": config.json's '" + key + "' is " + std::to_string(value) + ", above any real model's " +
                    what + " (limit " + std::to_string(max) + ")");
}

int64_t needCount(const nlohmann::json& j, const char* key, const std::string& file)
{
    auto it = j.find(key);
    if (it == j.end() || it->is_null())
        throw Error(file + ": config.json has no '" + key + "'");
    if (!it->is_number_integer() || it->get<int64_t>() <= 0)
        throw Error(file + ": config.json's '" + key + "' is not a positive integer");
    const int64_t v = it->get<int64_t>();
    checkCount(key, v, file);
    return v;
}

void checkTotal(const HfArch& a, const std::string& file)
{
    // An upper bound of the parameters: per layer q/k/v/o (4 x hidden x heads x head_dim) and three MLP matrices
    // per expert; the embedding and head tables (2 x vocab x hidden) and a learned position table.
    bool over = false;
    auto mul = [&](int64_t x, int64_t y) {
        int64_t r = 0;
        over = over || __builtin_mul_overflow(x, y, &r);
        return r;
    };
    auto add = [&](int64_t x, int64_t y) {
        int64_t r = 0;
        over = over || __builtin_add_overflow(x, y, &r);
        return r;
    };
    const int64_t heads = a.heads > 0 ? a.heads : 1;
    const int64_t headDim = a.headDim > 0 ? a.headDim : a.hidden / heads;
    const int64_t attn = mul(4, mul(a.hidden, mul(heads, headDim)));
    const int64_t width = a.moe.experts > 0 ? a.moe.expertWidth : a.intermediate;
    const int64_t mlp = mul(3, mul(mul(a.hidden, width), a.moe.experts > 0 ? a.moe.experts : 1));
    const int64_t layers = mul(a.layers, add(attn, mlp));
    const int64_t tables = add(mul(2, mul(a.vocab, a.hidden)), mul(a.positions, a.hidden));
    const int64_t total = add(layers, tables);
    if (over || total > kMaxParams)
        throw Error(file + ": config.json's sizes (layers x (hidden x heads x head_dim + hidden x intermediate x " +
                    "experts) + vocab x hidden) give " +
                    (over ? std::string("more parameters than 64 bits count")
                          : "about " + std::to_string(total) + " parameters") +
                    ", above any real model's (limit " + std::to_string(kMaxParams) + ")");
}

} // namespace headroom::detail
