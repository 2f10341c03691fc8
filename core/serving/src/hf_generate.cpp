// Hugging Face generate() (transformers 4.56, PyTorch >= 2.5): weights, the KV cache after the prefill and at the
// last step, the prefill's transients and the last decode step's, per docs/SERVING.md "Hugging Face generate()".
// Our reading of generation/utils.py (_sample: logits_to_keep=1 for the prefill, `outputs.logits[:, -1, :].to(
// copy=True, dtype=torch.float32)`), cache_utils.py (DynamicLayer.update: torch.cat; StaticLayer: preallocated,
// index_copy_), models/llama/modeling_llama.py (LlamaDecoderLayer, LlamaMLP, LlamaRMSNorm, apply_rotary_pos_emb)
// and integrations/sdpa_attention.py (enable_gqa only when the mask is None, else repeat_kv).
#include "headroom/serving/hf_generate.h"

#include "serving_rules.h"

#include <algorithm>

namespace headroom {
namespace {

// Bytes per position of the tensors one decoder layer makes (d: the activation dtype's bytes).
struct Widths
{
    int64_t d = 2;
    int64_t hidden = 0, inter = 0; // h x d, I x d
    int64_t q = 0, k = 0, v = 0;   // one layer's query, key and value
    int64_t rope = 0;              // cos + sin
    int64_t heads = 0;
    bool grouped = false; // fewer KV heads than query heads: repeat_kv copies them when a mask is passed
};

Widths widths(const ServeModel& m, int d)
{
    Widths w;
    w.d = d;
    w.hidden = m.hidden * d;
    w.inter = m.intermediate * d;
    w.heads = m.heads;
    if (m.kvLoraRank > 0) { // DeepseekV3Attention caches the decompressed K (nope + rope) and V of every head
        w.q = w.k = m.heads * (m.qkNopeDim + m.qkRopeDim) * d;
        w.v = m.heads * m.vHeadDim * d;
        w.rope = 2 * m.qkRopeDim * d;
    } else {
        w.q = m.heads * m.headDim * d;
        w.k = w.v = m.kvHeads * m.headDim * d;
        w.rope = 2 * m.headDim * d;
        w.grouped = m.kvHeads < m.heads;
    }
    return w;
}

int64_t cacheBytes(const ServeModel& m, const Widths& w, int64_t batch, int64_t fullLen, int64_t slidingLen)
{
    int64_t tokens = 0;
    for (LayerAttention kind : m.layerKinds)
        tokens += kind == LayerAttention::Sliding ? slidingLen : fullLen;
    return batch * tokens * (w.k + w.v);
}

int64_t slidingLen(const ServeModel& m, int64_t len)
{
    return m.slidingWindow > 0 ? std::min(m.slidingWindow, len) : len;
}

// The MLP block's transient per position beyond the layer input: the post-attention residual and norm output,
// plus LlamaMLP's down(act(gate(x)) * up(x)) with act(gate), up and the product alive at once. A MoE block
// (Mixtral/Qwen-MoE style) adds its output buffer, the router's logits and fp32 softmax, the int64 one-hot
// expert mask, and one expert's MLP over its share of the tokens (balanced routing).
int64_t mlpPerPosition(const ServeModel& m, const Widths& w)
{
    const int64_t dense = 2 * w.hidden + 3 * w.inter;
    if (m.experts == 0)
        return dense;
    const double share = static_cast<double>(m.topK) / static_cast<double>(m.experts);
    const auto expert = static_cast<int64_t>(share * static_cast<double>(w.hidden + 3 * m.moeIntermediate * w.d));
    const int64_t moe = 3 * w.hidden + m.experts * (w.d + 4) + 8 * m.topK * m.experts + expert +
                        3 * m.sharedIntermediate * w.d;
    return m.firstDense > 0 ? std::max(dense, moe) : moe;
}

// The attention block's transient per position beyond the layer input and the cache (the normed input plus the
// largest of: q's rotary (q, q*cos, rotate_half(q)*sin, the sum), k's rotary while q and q_embed live, sdpa's
// output with its fp32 logsumexp, the transpose's contiguous copy, o_proj's output). `fresh`: this layer's new
// K and V are not yet part of the cache (static: they are copied into it).
int64_t attentionPerPosition(const Widths& w, int64_t fresh)
{
    return w.hidden +
           std::max({4 * w.q + fresh, 2 * w.q + 3 * w.k + fresh, 2 * w.q + 4 * w.heads, 3 * w.q, 2 * w.q + w.hidden});
}

// LlamaRMSNorm: hidden.to(float32), its pow(2) (or x * rsqrt) beside it: 8 bytes per element, beside the
// residual.
int64_t normPerPosition(const ServeModel& m, const Widths& w) { return w.hidden + 8 * m.hidden; }

HfPrefill prefill(const ServeModel& m, const Widths& w, const HfGenerateSettings& s, int64_t maxLen)
{
    const int64_t b = s.batch, t = s.batch * s.promptLen;
    const bool isStatic = s.cache == HfCacheKind::Static;
    // inputs_embeds stays referenced by the model's forward, cos/sin [B, P, rotary] for all layers; the layer's
    // input is held by the caller's loop while the layer runs
    const int64_t base = t * (w.hidden + w.rope + w.hidden);
    HfPrefill p;
    p.attention = base + t * attentionPerPosition(w, isStatic ? w.k + w.v : 0);
    if (isStatic) {
        // the padded cache needs a mask: bool [B, 1, P, max], sdpa's additive copy in the dtype, and repeat_kv's
        // copies of the whole preallocated K and V of one layer (enable_gqa needs mask None)
        const int64_t mask = b * s.promptLen * maxLen * (1 + w.d);
        const int64_t repeated = w.grouped ? 2 * b * maxLen * w.q : 0;
        p.attention = std::max(p.attention, base + t * (w.hidden + 2 * w.q + 4 * w.heads) + mask + repeated);
    }
    p.mlp = base + t * mlpPerPosition(m, w);
    p.norm = base + t * normPerPosition(m, w);
    // lm_head on hidden[:, -1:] beside the final norm's output, then the float32 copy beside the dtype logits
    p.logits = std::max(t * w.hidden + b * m.vocab * w.d, b * m.vocab * (w.d + 4));
    p.activation = std::max({p.attention, p.mlp, p.norm, p.logits});
    return p;
}

// The last decode step (one position per sequence): the layer's one-token transients plus the cache's own
// (dynamic: torch.cat holds the old and the new K of one layer; static: the mask and repeat_kv of one layer's
// whole K and V), or the logits.
int64_t decodeTransient(const ServeModel& m, const Widths& w, const HfGenerateSettings& s, int64_t endLen)
{
    const int64_t b = s.batch;
    const int64_t layer = b * (2 * w.hidden + w.rope +
                               std::max({attentionPerPosition(w, 0), mlpPerPosition(m, w), normPerPosition(m, w)}));
    int64_t cache = 0;
    if (s.cache == HfCacheKind::Dynamic) {
        const bool anyFull = std::count(m.layerKinds.begin(), m.layerKinds.end(), LayerAttention::Sliding) <
                             static_cast<std::ptrdiff_t>(m.layerKinds.size());
        cache = b * w.k * (anyFull ? endLen - 1 : slidingLen(m, endLen - 1));
    } else {
        cache = b * endLen * (1 + w.d) + (w.grouped ? 2 * b * endLen * w.q : 0);
    }
    return std::max(layer + cache, b * m.vocab * (w.d + 4));
}

WeightFormat resolveFormat(const ServeModel& m, WeightFormat asked)
{
    if (asked != WeightFormat::Auto)
        return asked;
    if (m.format != WeightFormat::Auto)
        return m.format;
    return m.dtypeName == "float16" ? WeightFormat::Fp16 : WeightFormat::Bf16;
}

// Weights, KV and peaks of one setting (no search).
void evaluate(const ServeModel& m, HfGeneratePlan& p)
{
    const HfGenerateSettings& s = p.settings;
    const Widths w = widths(m, p.activationBytes);
    const int64_t maxLen = s.promptLen + s.newTokens;
    // the last generated token is never fed back: the dynamic cache ends at prompt + new - 1 positions
    const int64_t endLen = s.cache == HfCacheKind::Static ? maxLen : maxLen - 1;
    p.kvBytesPerToken = cacheBytes(m, w, 1, 1, 1);
    if (s.cache == HfCacheKind::Static) {
        p.kvPrefill = p.kvEnd = cacheBytes(m, w, s.batch, maxLen, slidingLen(m, maxLen));
    } else {
        // DynamicSlidingWindowLayer keeps a view of the last window - 1 tokens: the prompt's storage stays
        p.kvPrefill = cacheBytes(m, w, s.batch, s.promptLen, s.promptLen);
        p.kvEnd = cacheBytes(m, w, s.batch, endLen, slidingLen(m, endLen));
    }
    p.prefill = prefill(m, w, s, maxLen);
    p.decodeTransient = s.newTokens > 1 ? decodeTransient(m, w, s, endLen) : 0;
    p.prefillPeak = p.weights + p.kvPrefill + p.prefill.activation;
    p.decodePeak = s.newTokens > 1 ? p.weights + p.kvEnd + p.decodeTransient : 0;
    p.peak = std::max(p.prefillPeak, p.decodePeak);
    p.fits = p.peak + p.outside <= p.capacity;
}

// The largest value in [1, hi] for which `set` then evaluate fits (0: none); fitting shrinks as the value grows.
template <typename Set> int64_t largestFitting(const ServeModel& m, const HfGeneratePlan& base, int64_t hi, Set set)
{
    auto fits = [&](int64_t v) {
        HfGeneratePlan q = base;
        set(q.settings, v);
        evaluate(m, q);
        return *q.fits;
    };
    if (hi < 1 || !fits(1))
        return 0;
    int64_t lo = 1;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo + 1) / 2;
        if (fits(mid))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

} // namespace

std::string_view toString(HfCacheKind c) noexcept { return c == HfCacheKind::Static ? "static" : "dynamic"; }

std::optional<HfCacheKind> parseHfCacheKind(std::string_view s) noexcept
{
    if (s == "dynamic")
        return HfCacheKind::Dynamic;
    if (s == "static")
        return HfCacheKind::Static;
    return std::nullopt;
}

HfGeneratePlan planHfGenerate(const ServeModel& m, const HfGenerateSettings& settings, const GpuSpec& gpu)
{
    HfGeneratePlan p;
    p.model = m.file;
    p.gpu = gpu.name;
    p.settings = settings;
    p.capacity = gpu.capacity;
    p.outside = gpu.context + gpu.workspace;
    p.format = resolveFormat(m, settings.dtype);
    p.activationBytes = p.format == WeightFormat::Fp32 ? 4 : 2;
    p.cannotTell = m.missing;
    if (!p.cannotTell.empty())
        return p;
    const Stage all{0, m.layers, true, true};
    p.weights = stageWeightBytes(m, all, 1, p.format, p.activationBytes, false); // HF does not pad the vocabulary
    evaluate(m, p);
    p.maxBatch = largestFitting(m, p, int64_t{1} << 24, [](HfGenerateSettings& s, int64_t v) { s.batch = v; });
    // up to max_position_embeddings (generate() does not refuse longer, but the model was not trained for it)
    const int64_t room = (m.maxPositions > 0 ? m.maxPositions : int64_t{1} << 24) - settings.newTokens;
    p.longestPrompt = largestFitting(m, p, room, [](HfGenerateSettings& s, int64_t v) { s.promptLen = v; });
    return p;
}

} // namespace headroom
