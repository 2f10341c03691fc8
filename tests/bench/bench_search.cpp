// Searches at scale (issue 16, docs/BENCHMARKS.md "Searches at scale"): the max-batch search, the
// checkpoint curve and the whole default report as headroom-cli assembles it (buildReport + toJson, not
// printed) on the deep residual chain (MatMul -> Add -> Relu -> residual Add, d = 256) at 10k and 100k
// nodes, configured as `headroom-cli chain.onnx --batch 8 --set seq=128` is (RTX 4090, Adam, caching
// allocator).
//   build/release/tests/bench_search --benchmark_min_time=0.5
#include "headroom/hardware/gpus.h"
#include "headroom/import/synthetic.h"
#include "headroom/load/loader.h"
#include "headroom/memory/engine.h"
#include "headroom/report/report.h"

#include <benchmark/benchmark.h>

#include <map>
#include <string>

using namespace headroom;

namespace {

const Model& chain(int nodes)
{
    static std::map<int, Model> models;
    auto it = models.find(nodes);
    if (it == models.end())
        it = models
                 .emplace(nodes,
                          loadModelFromBytes(makeSyntheticChain(syntheticChainBlocksFor(nodes), 256), "chain.onnx"))
                 .first;
    return it->second;
}

// headroom-cli's defaults (options.cpp: train, fp32, Adam, caching allocator, RTX 4090) at batch 8, seq 128.
Config cliConfig(const Model& m)
{
    Config c;
    c.symbols = m.defaultBindings();
    if (m.batchSymbol >= 0)
        c.symbols[static_cast<size_t>(m.batchSymbol)] = 8;
    if (const int seq = m.symbolIndex("seq"); seq >= 0)
        c.symbols[static_cast<size_t>(seq)] = 128;
    c.gpu = findGpu("RTX 4090").value_or(customGpu(int64_t(24) << 30));
    return c;
}

void BM_Chain_MaxBatch(benchmark::State& state)
{
    const Model& m = chain(static_cast<int>(state.range(0)));
    const Config c = cliConfig(m);
    const EnginePlan plan = makePlan(m, c); // the report's plan, kept
    int64_t b = 0;
    for (auto _ : state)
        benchmark::DoNotOptimize(b = maxBatch(plan, c));
    state.counters["max_batch"] = static_cast<double>(b);
    state.counters["nodes"] = static_cast<double>(m.nodes.size());
}

void BM_Chain_CheckpointCurve16(benchmark::State& state)
{
    const Model& m = chain(static_cast<int>(state.range(0)));
    const Config c = cliConfig(m);
    const EnginePlan plan = makePlan(m, c);
    int best = 0;
    for (auto _ : state)
        benchmark::DoNotOptimize(best = bestCheckpointSegments(checkpointCurve(plan, c, 16)));
    state.counters["best_k"] = best;
}

// The whole default report: plan, evaluation, fit and max batch, checkpoint curve, batch sweep, advice, and
// the JSON the CLI writes (serialised, not printed).
void BM_Chain_Report(benchmark::State& state)
{
    const Model& m = chain(static_cast<int>(state.range(0)));
    const Config c = cliConfig(m);
    size_t bytes = 0;
    for (auto _ : state) {
        const Report r = buildReport(m, c);
        const std::string json = toJson(m, r).dump(1);
        benchmark::DoNotOptimize(bytes = json.size());
    }
    state.counters["json_bytes"] = static_cast<double>(bytes);
}

} // namespace

BENCHMARK(BM_Chain_MaxBatch)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Chain_CheckpointCurve16)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Chain_Report)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
