// Scale (issue 16, docs/BENCHMARKS.md "Scale"): import and one slider tick (evaluate with the kept plan,
// caching allocator) on the deep residual chain (MatMul -> Add -> Relu -> residual Add, d = 256) and on the
// synthetic transformer repeated to the same node counts, so the growth exponent 10k -> 100k can be read.
//   build/release/tests/bench_scale --benchmark_min_time=0.5
//   build/release/tests/bench_scale --write DIR   writes chain_<N>.onnx and transformer_<N>.onnx for the CLI
//     (headroom-cli DIR/chain_20k.onnx --batch 8 --set seq=128 --bench 20)
#include "headroom/hardware/gpus.h"
#include "headroom/import/synthetic.h"
#include "headroom/load/loader.h"
#include "headroom/memory/allocator.h"
#include "headroom/memory/engine.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>

using namespace headroom;

namespace {

constexpr int kWidth = 256;

std::string chainBytes(int nodes) { return makeSyntheticChain(syntheticChainBlocksFor(nodes), kWidth); }
std::string transformerBytes(int nodes)
{
    return makeSyntheticTransformer(syntheticTransformerLayersFor(nodes), 256, 4, 8000);
}

std::string label(int nodes) { return nodes % 1000 == 0 ? std::to_string(nodes / 1000) + "k" : std::to_string(nodes); }

// The configuration: batch 8, seq 128, the caching allocator (the default), AdamW.
Config configFor(const Model& m)
{
    Config c;
    c.symbols = m.defaultBindings();
    if (m.batchSymbol >= 0)
        c.symbols[static_cast<size_t>(m.batchSymbol)] = 8;
    const int seq = m.symbolIndex("seq");
    if (seq >= 0)
        c.symbols[static_cast<size_t>(seq)] = 128;
    c.optimizer = Optimizer::AdamW;
    c.allocator = AllocatorMode::Caching;
    c.gpu = findGpu("H100").value_or(customGpu(int64_t(80) << 30));
    return c;
}

const Model& cachedModel(bool chain, int nodes)
{
    static std::map<std::pair<bool, int>, Model> models;
    auto it = models.find({chain, nodes});
    if (it == models.end()) {
        const std::string bytes = chain ? chainBytes(nodes) : transformerBytes(nodes);
        it = models.emplace(std::make_pair(chain, nodes), loadModelFromBytes(bytes, "synthetic.onnx")).first;
    }
    return it->second;
}

void import(benchmark::State& state, bool chain)
{
    const int nodes = static_cast<int>(state.range(0));
    const std::string bytes = chain ? chainBytes(nodes) : transformerBytes(nodes);
    size_t n = 0;
    for (auto _ : state) {
        Model m = loadModelFromBytes(bytes, "synthetic.onnx");
        n = m.nodes.size();
        benchmark::DoNotOptimize(m.nodes.data());
    }
    state.counters["nodes"] = static_cast<double>(n);
}

// One tick: a new batch each iteration (1..16 around the 8), the plan kept as the GUI and CLI keep it.
void tick(benchmark::State& state, bool chain)
{
    const Model& m = cachedModel(chain, static_cast<int>(state.range(0)));
    Config c = configFor(m);
    const EnginePlan plan = makePlan(m, c);
    int64_t batch = 8;
    for (auto _ : state) {
        batch = batch % 16 + 1;
        if (m.batchSymbol >= 0)
            c.symbols[static_cast<size_t>(m.batchSymbol)] = batch;
        Evaluation e = evaluate(plan, c);
        benchmark::DoNotOptimize(e.memory.reservedPeak);
    }
    state.counters["nodes"] = static_cast<double>(m.nodes.size());
}

// The caching-allocator replay alone over one tick's events (what the tick's second thread runs).
void replayOnly(benchmark::State& state, bool chain)
{
    const Model& m = cachedModel(chain, static_cast<int>(state.range(0)));
    const Config c = configFor(m);
    const Evaluation e = evaluate(makePlan(m, c), c);
    AllocatorOptions o;
    o.preallocated = c.gpu.workspace;
    o.perEvent = false;
    for (auto _ : state)
        benchmark::DoNotOptimize(replay(e.events, AllocatorMode::Caching, o).reservedPeak);
    state.counters["events"] = static_cast<double>(e.events.size());
}

void BM_ChainImport(benchmark::State& s) { import(s, true); }
void BM_ChainReplay(benchmark::State& s) { replayOnly(s, true); }
void BM_TransformerReplay(benchmark::State& s) { replayOnly(s, false); }
void BM_ChainTick(benchmark::State& s) { tick(s, true); }
void BM_TransformerImport(benchmark::State& s) { import(s, false); }
void BM_TransformerTick(benchmark::State& s) { tick(s, false); }

int writeModels(const std::string& dir)
{
    auto write = [&](const std::string& name, const std::string& bytes) {
        const std::string path = dir + "/" + name;
        std::ofstream f(path, std::ios::binary);
        f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        if (!f) {
            std::fprintf(stderr, "%s: cannot write\n", path.c_str());
            return false;
        }
        std::printf("%s\n", path.c_str());
        return true;
    };
    for (int n : {1000, 5000, 10000, 20000, 40000, 100000})
        if (!write("chain_" + label(n) + ".onnx", chainBytes(n)))
            return 1;
    for (int n : {1000, 10000, 100000})
        if (!write("transformer_" + label(n) + ".onnx", transformerBytes(n)))
            return 1;
    return 0;
}

} // namespace

BENCHMARK(BM_ChainImport)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChainTick)
    ->Arg(1000)
    ->Arg(5000)
    ->Arg(10000)
    ->Arg(20000)
    ->Arg(40000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ChainReplay)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TransformerReplay)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TransformerImport)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TransformerTick)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

int main(int argc, char** argv)
{
    if (argc == 3 && std::strcmp(argv[1], "--write") == 0)
        return writeModels(argv[2]);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
