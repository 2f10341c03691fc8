// Engine speed: a full recompute for a new configuration (a slider tick) on resnet50 and on a
// 10,000-node transformer, the max-batch search, and the checkpoint curve.
//   build/<dir>/tests/bench_engine --benchmark_min_time=0.5
#include "headroom/hardware/gpus.h"
#include "headroom/import/synthetic.h"
#include "headroom/load/loader.h"
#include "headroom/memory/engine.h"

#include <benchmark/benchmark.h>

using namespace headroom;

namespace {

const Model& resnet50()
{
    static const Model m = loadModel(std::string(HEADROOM_TEST_DATA) + "/resnet50.onnx");
    return m;
}

const Model& transformer10k()
{
    static const Model m = loadModelFromBytes(makeSyntheticTransformer(120, 256, 4, 8000), "synthetic-120");
    return m;
}

Config configFor(const Model& m, int64_t batch)
{
    Config c;
    c.symbols = m.defaultBindings();
    if (m.batchSymbol >= 0)
        c.symbols[static_cast<size_t>(m.batchSymbol)] = batch;
    c.optimizer = Optimizer::AdamW;
    c.gpu = findGpu("4090").value_or(customGpu(int64_t(24) << 30));
    return c;
}

// Every iteration binds a different batch: nothing can be reused but the per-model plan.
void recompute(benchmark::State& state, const Model& m, bool withPlan)
{
    const EnginePlan plan = makePlan(m);
    Config c = configFor(m, 1);
    int64_t batch = 1;
    for (auto _ : state) {
        batch = batch % 64 + 1;
        if (m.batchSymbol >= 0)
            c.symbols[static_cast<size_t>(m.batchSymbol)] = batch;
        Evaluation e = withPlan ? evaluate(plan, c) : evaluate(m, c);
        benchmark::DoNotOptimize(e.memory.peak);
    }
    state.counters["nodes"] = static_cast<double>(m.nodes.size());
}

void BM_Resnet50_Recompute(benchmark::State& s) { recompute(s, resnet50(), true); }
void BM_Resnet50_RecomputeNoPlan(benchmark::State& s) { recompute(s, resnet50(), false); }
void BM_Transformer10k_Recompute(benchmark::State& s) { recompute(s, transformer10k(), true); }
void BM_Transformer10k_RecomputeNoPlan(benchmark::State& s) { recompute(s, transformer10k(), false); }

void BM_Resnet50_MaxBatch(benchmark::State& state)
{
    const EnginePlan plan = makePlan(resnet50());
    const Config c = configFor(resnet50(), 1);
    int64_t b = 0;
    for (auto _ : state)
        benchmark::DoNotOptimize(b = maxBatch(plan, c));
    state.counters["max_batch"] = static_cast<double>(b);
}

void BM_Transformer10k_MaxBatch(benchmark::State& state)
{
    const EnginePlan plan = makePlan(transformer10k());
    Config c = configFor(transformer10k(), 1);
    int64_t b = 0;
    for (auto _ : state)
        benchmark::DoNotOptimize(b = maxBatch(plan, c));
    state.counters["max_batch"] = static_cast<double>(b);
}

// Cold: load the file and evaluate batch 32, the whole job the seeds' method does (tests/bench/seed_method.py).
void BM_Resnet50_LoadAndEvaluateBatch32(benchmark::State& state)
{
    for (auto _ : state) {
        const Model m = loadModel(std::string(HEADROOM_TEST_DATA) + "/resnet50.onnx");
        Evaluation e = evaluate(m, configFor(m, 32));
        benchmark::DoNotOptimize(e.memory.peak);
    }
}

void BM_Resnet50_CheckpointCurve8(benchmark::State& state)
{
    Config c = configFor(resnet50(), 32);
    for (auto _ : state)
        benchmark::DoNotOptimize(checkpointCurve(resnet50(), c, 8));
}

} // namespace

BENCHMARK(BM_Resnet50_Recompute)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Resnet50_RecomputeNoPlan)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Transformer10k_Recompute)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Transformer10k_RecomputeNoPlan)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Resnet50_MaxBatch)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Transformer10k_MaxBatch)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Resnet50_LoadAndEvaluateBatch32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Resnet50_CheckpointCurve8)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
