// Import benchmarks (docs/BENCHMARKS.md "Import"): targets resnet50 < 100 ms, 10k-node transformer < 1 s,
// every tensor size for a new batch < 1 ms.
#include "headroom/hardware/multigpu.h"
#include "headroom/import/synthetic.h"
#include "headroom/load/loader.h"
#include "headroom/memory/engine.h"
#include "headroom/shapes/shapes.h"

#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>

namespace {

void BM_ImportResnet50(benchmark::State& state)
{
    for (auto _ : state) {
        headroom::Model m = headroom::loadModel(HEADROOM_TEST_DATA "/resnet50.onnx");
        benchmark::DoNotOptimize(m.nodes.data());
    }
}
BENCHMARK(BM_ImportResnet50)->Unit(benchmark::kMillisecond);

void BM_ImportTransformer10k(benchmark::State& state)
{
    const std::string bytes = headroom::makeSyntheticTransformer(120, 256, 8, 8000);
    size_t nodes = 0;
    for (auto _ : state) {
        headroom::Model m = headroom::loadModelFromBytes(bytes, "synthetic.onnx");
        nodes = m.nodes.size();
        benchmark::DoNotOptimize(m.nodes.data());
    }
    state.counters["nodes"] = static_cast<double>(nodes);
}
BENCHMARK(BM_ImportTransformer10k)->Unit(benchmark::kMillisecond);

void evaluateNewBatch(benchmark::State& state, const headroom::Model& m)
{
    headroom::Bindings b = m.defaultBindings();
    int64_t batch = 1;
    for (auto _ : state) {
        if (m.batchSymbol >= 0)
            b[size_t(m.batchSymbol)] = batch = batch % 512 + 1;
        headroom::ShapeTable st = headroom::evaluateShapes(m, b);
        benchmark::DoNotOptimize(st.bytes.data());
    }
    state.counters["tensors"] = static_cast<double>(m.tensors.size());
}

void BM_EvaluateShapesResnet50(benchmark::State& state)
{
    const headroom::Model m = headroom::loadModel(HEADROOM_TEST_DATA "/resnet50.onnx");
    evaluateNewBatch(state, m);
}
BENCHMARK(BM_EvaluateShapesResnet50)->Unit(benchmark::kMicrosecond);

void BM_EvaluateShapesTransformer10k(benchmark::State& state)
{
    const headroom::Model m = headroom::loadModelFromBytes(headroom::makeSyntheticTransformer(120, 256, 8, 8000),
                                                           "synthetic.onnx");
    evaluateNewBatch(state, m);
}
BENCHMARK(BM_EvaluateShapesTransformer10k)->Unit(benchmark::kMicrosecond);

// A MoE config.json must open and tick as fast as the dense model of the same depth and width (issue 24):
// Mixtral-8x7B against Mistral-7B-v0.1 (both 32 layers, hidden 4096, 32/8 heads, 14336 wide, vocab 32000).
std::string mistral7b()
{
    const std::string path = (std::filesystem::temp_directory_path() / "headroom_bench_mistral7b.json").string();
    std::ofstream(path) << R"({"model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
        "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
        "max_position_embeddings": 32768, "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": false,
        "sliding_window": 4096, "torch_dtype": "bfloat16"})";
    return path;
}

const std::string kMixtral = HEADROOM_TEST_DATA "/moe/Mixtral-8x7B-v0.1.config.json";

void BM_LoadConfig(benchmark::State& state, bool moe)
{
    const std::string path = moe ? kMixtral : mistral7b();
    for (auto _ : state) {
        headroom::Model m = headroom::loadModel(path);
        benchmark::DoNotOptimize(m.nodes.data());
    }
}
BENCHMARK_CAPTURE(BM_LoadConfig, mistral7b, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LoadConfig, mixtral8x7b, true)->Unit(benchmark::kMillisecond);

// One slider tick: a new batch through the whole evaluation (shapes, plan, timeline).
void BM_TickConfig(benchmark::State& state, bool moe)
{
    const headroom::Model m = headroom::loadModel(moe ? kMixtral : mistral7b());
    headroom::Config c;
    c.dtype = headroom::DtypePolicy::MixedBF16;
    c.symbols = m.defaultBindings();
    int64_t batch = 1;
    for (auto _ : state) {
        c.symbols[size_t(m.batchSymbol)] = batch = batch % 16 + 1;
        headroom::Evaluation e = headroom::evaluate(m, c);
        benchmark::DoNotOptimize(e.memory.peak);
    }
    state.counters["nodes"] = static_cast<double>(m.nodes.size());
}
BENCHMARK_CAPTURE(BM_TickConfig, mistral7b, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TickConfig, mixtral8x7b, true)->Unit(benchmark::kMillisecond);

// The GUI's tick: the plan is kept across ticks (app/gui/session.cpp planFor), only evaluate(plan, config) runs.
void BM_TickPlanConfig(benchmark::State& state, bool moe)
{
    const headroom::Model m = headroom::loadModel(moe ? kMixtral : mistral7b());
    headroom::Config c;
    c.dtype = headroom::DtypePolicy::MixedBF16;
    c.symbols = m.defaultBindings();
    const headroom::EnginePlan plan = headroom::makePlan(m, c);
    int64_t batch = 1;
    size_t events = 0, units = 0;
    for (auto _ : state) {
        c.symbols[size_t(m.batchSymbol)] = batch = batch % 16 + 1;
        headroom::Evaluation e = headroom::evaluate(plan, c);
        events = e.events.size();
        units = e.timeline.size();
        benchmark::DoNotOptimize(e.memory.peak);
    }
    state.counters["nodes"] = static_cast<double>(m.nodes.size());
    state.counters["events"] = static_cast<double>(events);
    state.counters["steps"] = static_cast<double>(units);
}
BENCHMARK_CAPTURE(BM_TickPlanConfig, mistral7b, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TickPlanConfig, mixtral8x7b, true)->Unit(benchmark::kMillisecond);

// The same tick with "Padded batches" on (Config::varySymbol, --vary seq): the step is evaluated at up to
// kVaryingValues lengths for the highest reserved peak (engine.cpp applyVarying), two cores sharing them.
void BM_TickPlanConfigVarying(benchmark::State& state)
{
    const headroom::Model m = headroom::loadModel(mistral7b());
    headroom::Config c;
    c.dtype = headroom::DtypePolicy::MixedBF16;
    c.symbols = m.defaultBindings();
    c.varySymbol = m.symbolIndex("seq");
    const headroom::EnginePlan plan = headroom::makePlan(m, c);
    int64_t batch = 1;
    for (auto _ : state) {
        c.symbols[size_t(m.batchSymbol)] = batch = batch % 16 + 1;
        headroom::Evaluation e = headroom::evaluate(plan, c);
        benchmark::DoNotOptimize(e.memory.reservedPeak);
    }
    state.counters["seq"] = static_cast<double>(c.symbols[size_t(c.varySymbol)]);
}
BENCHMARK(BM_TickPlanConfigVarying)->Unit(benchmark::kMillisecond);

// A sequence-length (or any non-batch) slider tick also searches the max batch again (app/gui/session.cpp
// knownMaxBatch: reused only while the batch alone changes). On a device large enough for both models to fit,
// the search does its whole work: the worst case of such a tick.
void BM_SearchConfig(benchmark::State& state, bool moe)
{
    const headroom::Model m = headroom::loadModel(moe ? kMixtral : mistral7b());
    headroom::Config c;
    c.dtype = headroom::DtypePolicy::MixedBF16;
    c.symbols = m.defaultBindings();
    c.gpu.name = "4 TB";
    c.gpu.capacity = int64_t(4) << 40;
    const headroom::EnginePlan plan = headroom::makePlan(m, c);
    int64_t batch = 0, expected = 0;
    for (auto _ : state) {
        // computeClusterFit without a known max batch: the safe figure the verdict uses, and the expected one
        batch = headroom::maxGlobalBatch(plan, c);
        expected = headroom::maxBatch(plan, c);
        benchmark::DoNotOptimize(expected);
    }
    state.counters["max_batch"] = static_cast<double>(batch);
    state.counters["expected"] = static_cast<double>(expected);
}
BENCHMARK_CAPTURE(BM_SearchConfig, mistral7b, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SearchConfig, mixtral8x7b, true)->Unit(benchmark::kMillisecond);

// Building the plan (once per model and freeze/precision class: on open and when such a setting changes).
void BM_PlanConfig(benchmark::State& state, bool moe)
{
    const headroom::Model m = headroom::loadModel(moe ? kMixtral : mistral7b());
    headroom::Config c;
    c.dtype = headroom::DtypePolicy::MixedBF16;
    c.symbols = m.defaultBindings();
    for (auto _ : state) {
        headroom::EnginePlan plan = headroom::makePlan(m, c);
        benchmark::DoNotOptimize(plan.data.get());
    }
}
BENCHMARK_CAPTURE(BM_PlanConfig, mistral7b, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PlanConfig, mixtral8x7b, true)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
