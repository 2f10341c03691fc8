// A_peak: the torch peak of vLLM's profile run (a dummy batch of max_num_batched_tokens over
// min(max_num_seqs, tokens) requests, attention skipped, then the sampler on one row per request).
// Fitted on the 22 single-stage llm-d runs (docs/SERVING.md §3, our fit); TP-invariant in the data because the
// logits are gathered to the full vocabulary on every rank.
#include "serving_rules.h"

#include <algorithm>

namespace headroom {
namespace {

// vLLM 0.11's profile run with the PyTorch-native top-k/top-p (topk_topp_sampler.py forward_native, chosen when
// FlashInfer is not used; derived, not fitted). profile_run (gpu_model_runner.py) runs the forward, keeps its
// output hidden_states [tokens, H] and then _dummy_sampler_run, so the forward's buffers (the dense and fused-MoE
// terms) are freed before the sampler: the peak is the larger of the two, not their sum. The dummy metadata
// asks for top_k = vocab - 1 and top_p = 0.9, so apply_top_k_top_p sorts the [reqs, vocab] logits; per logit:
//   2 B  compute_logits' output in the model dtype (held by _dummy_sampler_run)
//   4 B  logits.to(torch.float32) (Sampler.forward)
//  12 B  logits.sort(): the values (4 B) and int64 indices (8 B)
//   8 B  the int64 segment positions the segmented sort fills (aten/src/ATen/native/cuda/Sort.cu,
//        segmented_sort_pairs: reverse_indices)
//  12 B  cub::DeviceSegmentedRadixSort::SortPairs's temp storage: the alternate key (4 B) and value (8 B) buffers
// = 38 B. Against the llm-d v0.11 H100 logs (measured.jsonl ld-*): Llama-3.1-8B 4.71 vs 4.76 GiB, Qwen3-32B 5.58
// vs 5.64, gpt-oss-20b 7.33 vs 7.38 (the 0.19 rule: 1.86, 2.20, 3.62).
double sortingSamplerPeak(const ServeModel& m, const Stage& s, double tokens, double reqs, int dtypeBytes,
                          double forward)
{
    if (!s.isLast)
        return forward;
    const double sampler = 38.0 * reqs * static_cast<double>(m.vocab) +
                           tokens * static_cast<double>(m.hidden) * dtypeBytes; // the kept hidden_states
    return std::max(sampler, forward);
}

} // namespace

int64_t activationPeakBytes(const ServeModel& m, const Stage& s, int tp, int64_t maxNumSeqs,
                            int64_t maxNumBatchedTokens, int dtypeBytes, bool ep, bool sortingSampler)
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
    if (sortingSampler)
        return static_cast<int64_t>(sortingSamplerPeak(m, s, tokens, reqs, dtypeBytes, dense + moe));
    return static_cast<int64_t>(std::max(sampler, dense) + moe);
}

} // namespace headroom
