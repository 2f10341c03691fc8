// Import benchmarks (docs/BENCHMARKS.md "Import"): targets resnet50 < 100 ms, 10k-node transformer < 1 s,
// every tensor size for a new batch < 1 ms.
#include "headroom/import/synthetic.h"
#include "headroom/load/loader.h"
#include "headroom/shapes/shapes.h"

#include <benchmark/benchmark.h>

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

} // namespace

BENCHMARK_MAIN();
