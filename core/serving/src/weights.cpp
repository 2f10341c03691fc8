// W_rank: the bytes one GPU holds after vLLM's load_model, by weight format and tensor/pipeline split
// (docs/SERVING.md §4; vLLM's linear.py, vocab_parallel_embedding.py, model.py get_num_kv_heads).
#include "serving_rules.h"

#include "headroom/base/finetune.h"

#include <algorithm>
#include <cmath>

namespace headroom {
namespace {

// Parameter counts of one GPU, by how they are stored.
struct Params
{
    double linear = 0;  // quantized linear layers (column/row parallel or replicated)
    double experts = 0; // routed experts' linear layers
    double plain = 0;   // kept in the model dtype: embeddings, lm_head, norms, routers, biases, vision tower
};

// Bytes per parameter of a quantized linear layer (docs/SERVING.md §4 table).
double linearBytes(WeightFormat f, int64_t groupSize, int dtypeBytes)
{
    switch (f) {
    case WeightFormat::Fp8:
    case WeightFormat::Int8W8A8: return 1.0; // + one fp32 scale per output channel, under 0.1 %
    case WeightFormat::W4A16:                // int4 + fp16 scale + packed int4 zero point per group (Marlin)
        return 0.5 + 2.5 / static_cast<double>(groupSize);
    case WeightFormat::Bnb4: return 0.5 + 4.0 / 64; // nf4 + fp32 absmax per 64 weights (bitsandbytes blocksize)
    case WeightFormat::Fp32: return 4;
    default: return dtypeBytes;
    }
}

void addAttention(const ServeModel& m, int tp, Params& p)
{
    const double h = static_cast<double>(m.hidden), heads = static_cast<double>(m.heads) / tp;
    if (m.kvLoraRank > 0) {
        // DeepseekV2MLAAttention: q_a/kv_a are ReplicatedLinear, q_b/kv_b column- and o_proj row-parallel
        const double qk = static_cast<double>(m.qkNopeDim + m.qkRopeDim);
        const double q = m.qLoraRank > 0 ? h * m.qLoraRank + m.qLoraRank * heads * qk : h * heads * qk;
        p.linear += q + h * (m.kvLoraRank + m.qkRopeDim) +
                    static_cast<double>(m.kvLoraRank) * heads * (m.qkNopeDim + m.vHeadDim) + heads * m.vHeadDim * h;
        p.plain += static_cast<double>(m.kvLoraRank + m.qLoraRank);
        return;
    }
    // QKVParallelLinear: KV heads split, replicated when fewer than TP ranks
    const double kv = static_cast<double>(kvHeadsPerRank(m, tp)), hd = static_cast<double>(m.headDim);
    p.linear += h * heads * hd + 2 * h * kv * hd + heads * hd * h;
    if (m.qkvBias)
        p.plain += (heads + 2 * kv) * hd;
}

void addMlp(const ServeModel& m, int64_t layer, int tp, bool ep, Params& p)
{
    const double h = static_cast<double>(m.hidden);
    if (m.experts > 0 && layer >= m.firstDense) {
        // FusedMoE: each expert's intermediate split over TP; the router (gate) is replicated. Expert parallel
        // (ep_size = tp with dp 1): whole experts, determine_expert_map (fused_moe/layer.py) gives the first
        // E % ep ranks one more, so the fullest rank holds ceil(E / ep)
        const double local = ep ? static_cast<double>((m.experts + tp - 1) / tp) : static_cast<double>(m.experts) / tp;
        p.experts += local * 3 * h * static_cast<double>(m.moeIntermediate);
        p.linear += 3 * h * static_cast<double>(m.sharedIntermediate) / tp;
        p.plain += h * static_cast<double>(m.experts);
        return;
    }
    p.linear += 3 * h * static_cast<double>(m.intermediate) / tp;
}

int64_t paddedVocab(int64_t vocab, bool pad)
{
    // vocab_parallel_embedding.py: DEFAULT_VOCAB_PADDING_SIZE = 64
    return pad ? (vocab + 63) / 64 * 64 : vocab;
}

Params stageParams(const ServeModel& m, const Stage& s, int tp, bool pad, bool ep = false)
{
    Params p;
    for (int64_t i = s.first; i < s.first + s.count; ++i) {
        addAttention(m, tp, p);
        addMlp(m, i, tp, ep, p);
        p.plain += 2.0 * static_cast<double>(m.hidden); // input and post-attention norms
    }
    const double table = static_cast<double>(paddedVocab(m.vocab, pad)) / tp * static_cast<double>(m.hidden);
    if (s.isFirst)
        p.plain += table + static_cast<double>(m.visionParams) / tp;
    // ParallelLMHead: shares embed_tokens when tied on the same GPU; the last stage of a pipeline loads its own
    if (s.isLast) {
        p.plain += static_cast<double>(m.hidden);
        if (!(m.tied && s.isFirst))
            (m.lmHeadQuantized ? p.linear : p.plain) += table;
    }
    return p;
}

} // namespace

std::vector<Stage> pipelineStages(int64_t layers, int pp)
{
    std::vector<int64_t> counts(static_cast<size_t>(pp), layers / pp);
    for (int64_t i = 2; i < layers % pp + 2; ++i)
        ++counts[static_cast<size_t>(pp - i)];
    std::vector<Stage> stages;
    int64_t first = 0;
    for (int r = 0; r < pp; ++r) {
        stages.push_back({first, counts[static_cast<size_t>(r)], r == 0, r == pp - 1});
        first += counts[static_cast<size_t>(r)];
    }
    return stages;
}

int64_t kvHeadsPerRank(const ServeModel& m, int tp)
{
    // model.py get_num_kv_heads: MLA decodes as MQA (1 latent head); else max(1, kv // tp)
    return m.kvLoraRank > 0 ? 1 : std::max<int64_t>(1, m.kvHeads / tp);
}

int64_t stageWeightBytes(const ServeModel& m, const Stage& s, int tp, WeightFormat format, int dtypeBytes,
                         bool padVocab, bool ep)
{
    Params p = stageParams(m, s, tp, padVocab, ep);
    if (format == WeightFormat::Mxfp4 && m.experts > 0 && m.moeIntermediate > 0) {
        // Mxfp4MoEMethod.create_weights (vLLM quantization/mxfp4.py), Marlin backend: "the moe marlin kernel
        // requires that for each linear n % 256 == 0 and k % 128 == 0", so the expert width on a rank is padded to
        // a multiple of 128 and the hidden size to 256 (gpt-oss: 2880 -> 2944 and 3072)
        auto up = [](int64_t v, int64_t to) { return static_cast<double>((v + to - 1) / to * to); };
        const int64_t width = ep ? m.moeIntermediate : m.moeIntermediate / tp;
        p.experts *= up(width, 128) * up(m.hidden, 256) / (static_cast<double>(width) * static_cast<double>(m.hidden));
    }
    const int plainBytes = format == WeightFormat::Fp32 ? 4 : dtypeBytes;
    const double lin = linearBytes(format, m.groupSize, dtypeBytes);
    // mxfp4 (gpt-oss): only the experts are 4-bit, 4.25 bits per weight with the e8m0 scale per 32
    const double exp = format == WeightFormat::Mxfp4 ? kMxfp4BytesPerWeight : lin;
    const double linear = format == WeightFormat::Mxfp4 ? dtypeBytes : lin;
    return static_cast<int64_t>(std::llround(p.linear * linear + p.experts * exp + p.plain * plainBytes));
}

int64_t servingParameterCount(const ServeModel& m)
{
    const Stage all{0, m.layers, true, true};
    const Params p = stageParams(m, all, 1, false);
    return static_cast<int64_t>(std::llround(p.linear + p.experts + p.plain));
}

} // namespace headroom
