// A_peak: the torch peak of vLLM's profile run (a dummy batch of max_num_batched_tokens over
// min(max_num_seqs, tokens) requests, attention skipped, then the sampler on one row per request).
// Fitted on the 22 single-stage llm-d runs (docs/SERVING.md §3, our fit); TP-invariant in the data because the
// logits are gathered to the full vocabulary on every rank.
#include "serving_rules.h"

#include <algorithm>

namespace headroom {

int64_t activationPeakBytes(const ServeModel& m, const Stage& s, int tp, int64_t maxNumSeqs,
                            int64_t maxNumBatchedTokens, int dtypeBytes, bool ep)
{
    const double tokens = static_cast<double>(maxNumBatchedTokens);
    const double reqs = static_cast<double>(std::min(maxNumSeqs, maxNumBatchedTokens));
    // _dummy_sampler_run: fp32 logits [reqs, vocab] and ~2.8 copies (softmax, top-k/p); only the last stage samples
    const double sampler = s.isLast ? 3.8 * 4 * reqs * static_cast<double>(m.vocab) : 0;
    // the dense forward: gate_up output, activation and the residual stream (our fit: CodeLlama-7b 0.75 vs 0.77 GiB)
    const double dense = tokens *
                         (3.0 * static_cast<double>(m.intermediate) / tp + 4.0 * static_cast<double>(m.hidden)) *
                         dtypeBytes;
    double moe = 0;
    if (m.experts > 0 && s.first + s.count > m.firstDense) {
        // fused_experts_impl (fused_moe/fused_moe.py): intermediate_cache1 (M, k, 2N), cache2 (M * k, N) and
        // cache3 (M, k, H) for M = min(tokens, VLLM_FUSED_MOE_CHUNK_SIZE 32768), N the expert width on this rank:
        // I / tp, or the whole I under expert parallelism (the local experts are not split; every rank sees the
        // all-gathered tokens and masks the others' experts through expert_map, so M and k do not shrink)
        const double chunk = std::min(tokens, 32768.0);
        const double width = static_cast<double>(m.moeIntermediate) / (ep ? 1 : tp);
        moe = chunk * static_cast<double>(m.topK) * (3.0 * width + static_cast<double>(m.hidden)) * dtypeBytes;
    }
    return static_cast<int64_t>(std::max(sampler, dense) + moe);
}

} // namespace headroom
