// Serving benchmark (docs/BENCHMARKS.md "Serving"): the whole vLLM plan of a 70B config.json (parse, weights
// per rank, profile peak, KV layout, blocks, the longest max_model_len by binary search), target < 50 ms.
#include "headroom/hardware/gpus.h"
#include "headroom/serving/serve_model.h"
#include "headroom/serving/vllm.h"

#include <benchmark/benchmark.h>

namespace {

// Llama-3.1-70B-Instruct's config.json (the fields vLLM reads)
constexpr const char* kLlama70b = R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":8192,
  "intermediate_size":28672,"num_hidden_layers":80,"num_attention_heads":64,"num_key_value_heads":8,
  "vocab_size":128256,"max_position_embeddings":131072,"rope_theta":500000.0,"tie_word_embeddings":false,
  "torch_dtype":"bfloat16"})";

void BM_VllmPlan70B(benchmark::State& state)
{
    const headroom::GpuSpec h100 = *headroom::findGpu("h100");
    headroom::VllmSettings s;
    s.tp = static_cast<int>(state.range(0));
    s.pp = static_cast<int>(state.range(1));
    s.maxModelLen = 32768;
    for (auto _ : state) {
        const headroom::ServeModel m = headroom::parseServeModel(kLlama70b, "config.json");
        headroom::VllmPlan p = headroom::planVllm(m, s, h100);
        benchmark::DoNotOptimize(p.kvBlocks);
    }
}
BENCHMARK(BM_VllmPlan70B)->Args({4, 1})->Args({2, 2})->Unit(benchmark::kMicrosecond);

} // namespace
BENCHMARK_MAIN();
