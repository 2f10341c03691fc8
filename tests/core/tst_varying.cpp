// Config::varySymbol (--vary): a symbol whose value changes from step to step up to the one set, as the length
// of batches padded to their longest sample does. The reserved peak is the highest any of those steps makes on
// its own (engine.cpp applyVarying); the allocated peak, the timeline and the verdict stay the longest step's.
// The truth this stands on is PEFT's measured run (tst_published peft-mc-l32-3b-full-bs4-768: 38.87 GB reserved
// where the 768-token step alone reserves 36.08 GB); here the rule itself is checked against evaluations of each
// step, made one by one.
#include "headroom/hardware/gpus.h"
#include "headroom/hardware/multigpu.h"
#include "headroom/load/loader.h"
#include "headroom/memory/engine.h"

#include <QTest>

#include <algorithm>
#include <string>
#include <vector>

using namespace headroom;

Q_DECLARE_METATYPE(std::vector<int64_t>)

namespace {

// PEFT's MetaMathQA full fine-tuning set-up (bf16 weights, AdamW), whose reserved peak is not monotone in the
// length (tests/data/external/meta-llama--Llama-3.2-3B.json).
const Model& llama32()
{
    static const Model m = loadModel(std::string(HEADROOM_TEST_DATA) + "/external/meta-llama--Llama-3.2-3B.json");
    return m;
}

// A small Llama exported from transformers (tests/data/hf/README.md).
const Model& llamaSmall()
{
    static const Model m = loadModel(std::string(HEADROOM_TEST_DATA) + "/hf/llama_small.onnx");
    return m;
}

Config trainConfig(const Model& m, int64_t batch, int64_t seq, DtypePolicy dtype, Optimizer optimizer)
{
    Config c;
    c.mode = Mode::Train;
    c.dtype = dtype;
    c.optimizer = optimizer;
    c.allocator = AllocatorMode::Caching;
    c.gpu = customGpu(int64_t{48} << 30);
    c.symbols = m.defaultBindings();
    c.symbols[static_cast<size_t>(m.batchSymbol)] = batch;
    c.symbols[static_cast<size_t>(m.symbolIndex("seq"))] = seq;
    return c;
}

} // namespace

class TestVarying : public QObject
{
    Q_OBJECT

private slots:
    void values_data()
    {
        QTest::addColumn<int64_t>("top");
        QTest::addColumn<std::vector<int64_t>>("expected");
        QTest::newRow("1") << int64_t{1} << std::vector<int64_t>{1};
        QTest::newRow("5: every value") << int64_t{5} << std::vector<int64_t>{1, 2, 3, 4, 5};
        std::vector<int64_t> all32(32);
        for (int64_t i = 0; i < 32; ++i)
            all32[static_cast<size_t>(i)] = i + 1;
        QTest::newRow("32: every value") << int64_t{32} << all32;
        std::vector<int64_t> by24(32);
        for (int64_t k = 1; k <= 32; ++k)
            by24[static_cast<size_t>(k - 1)] = 24 * k;
        QTest::newRow("768: multiples of 24") << int64_t{768} << by24;
        // ceil(k * 33 / 32): 2, 3, ..., 33 (k + 1, since k < 32)
        std::vector<int64_t> thirtyThree(32);
        for (int64_t k = 1; k <= 32; ++k)
            thirtyThree[static_cast<size_t>(k - 1)] = k + 1;
        QTest::newRow("33: ceil(k * 33 / 32)") << int64_t{33} << thirtyThree;
    }
    void values()
    {
        QFETCH(int64_t, top);
        QFETCH(std::vector<int64_t>, expected);
        QCOMPARE(varyingValues(top), expected);
    }

    // Near the top of int64 the spacing is still ceil(k * top / 32), without the product overflowing.
    void valuesOfAHugeSymbol()
    {
        const int64_t top = (int64_t{1} << 62) + 3;
        const std::vector<int64_t> v = varyingValues(top);
        QCOMPARE(v.size(), size_t{32});
        QCOMPARE(v.back(), top);
        QCOMPARE(v.front(), (int64_t{1} << 57) + 1);
        QVERIFY(std::is_sorted(v.begin(), v.end()));
    }

    // The reserved peak is the highest of the steps evaluated one by one at varyingValues(); the value named is
    // the shortest step that makes it; the rest of the evaluation is the longest step's.
    void reservedIsTheHighestStep_data()
    {
        QTest::addColumn<bool>("bigModel");
        QTest::addColumn<int64_t>("batch");
        QTest::addColumn<int64_t>("seq");
        QTest::addColumn<int>("dtype");
        QTest::addColumn<int>("optimizer");
        QTest::newRow("Llama-3.2-3B full bf16 AdamW 4 x 768")
            << true << int64_t{4} << int64_t{768} << int(DtypePolicy::BF16) << int(Optimizer::AdamW);
        QTest::newRow("Llama-3.2-3B full bf16 AdamW 2 x 1000")
            << true << int64_t{2} << int64_t{1000} << int(DtypePolicy::BF16) << int(Optimizer::AdamW);
        QTest::newRow("llama_small fp32 Adam 8 x 512")
            << false << int64_t{8} << int64_t{512} << int(DtypePolicy::FP32) << int(Optimizer::Adam);
        QTest::newRow("llama_small amp-bf16 SGD 3 x 20")
            << false << int64_t{3} << int64_t{20} << int(DtypePolicy::AmpBF16) << int(Optimizer::SGD);
    }
    void reservedIsTheHighestStep()
    {
        QFETCH(bool, bigModel);
        QFETCH(int64_t, batch);
        QFETCH(int64_t, seq);
        QFETCH(int, dtype);
        QFETCH(int, optimizer);
        const Model& m = bigModel ? llama32() : llamaSmall();
        const Config fixed = trainConfig(m, batch, seq, static_cast<DtypePolicy>(dtype),
                                         static_cast<Optimizer>(optimizer));
        Config varying = fixed;
        varying.varySymbol = m.symbolIndex("seq");
        const EnginePlan plan = makePlan(m, fixed);

        int64_t highest = 0, at = 0;
        for (int64_t v : varyingValues(seq)) {
            Config step = fixed;
            step.symbols[static_cast<size_t>(m.symbolIndex("seq"))] = v;
            const int64_t r = evaluate(plan, step).memory.reservedPeak;
            if (r > highest) {
                highest = r;
                at = v;
            }
        }
        const Evaluation e = evaluate(plan, varying);
        const Evaluation f = evaluate(plan, fixed);
        QCOMPARE(e.memory.reservedPeak, highest);
        QCOMPARE(e.memory.reservedPeakAt, at);
        QVERIFY(e.memory.reservedPeak >= f.memory.reservedPeak);
        QCOMPARE(f.memory.reservedPeakAt, int64_t{0});
        QCOMPARE(e.memory.peak, f.memory.peak);
        QCOMPARE(e.peakStep, f.peakStep);
        QCOMPARE(e.timeline.size(), f.timeline.size());
        QCOMPARE(e.events.size(), f.events.size());
        // The light evaluations a search runs give the same reserved figure.
        QCOMPARE(evaluateLight(plan, varying).memory.reservedPeak, highest);
        QCOMPARE(evaluateLightWithEvents(plan, varying).memory.reservedPeak, highest);
        // The verdict and the largest batch are the longest step's (the allocator gives its cache back before
        // it fails).
        const Fit fv = computeFit(plan, varying, e);
        const Fit ff = computeFit(plan, fixed, f);
        QCOMPARE(fv.fits, ff.fits);
        QCOMPARE(fv.fitsSafely, ff.fitsSafely);
        QCOMPARE(fv.maxBatch, ff.maxBatch);
        QCOMPARE(fv.expectedMaxBatch, ff.expectedMaxBatch);
    }

    // The case the rule is for: PEFT's 768-token step reserves less than a 720-token one, whose step's
    // temporaries find no hole in its activations' segments (36.08 GB against 40.55 GB). Measured over the run:
    // 38.87 GB (tst_published).
    void shorterStepReservesMore()
    {
        const Model& m = llama32();
        Config c = trainConfig(m, 4, 768, DtypePolicy::BF16, Optimizer::AdamW);
        const int64_t longest = evaluate(m, c).memory.reservedPeak;
        c.varySymbol = m.symbolIndex("seq");
        const Evaluation e = evaluate(m, c);
        QVERIFY2(e.memory.reservedPeakAt < 768, "a shorter step should make the highest reserved peak");
        QVERIFY(e.memory.reservedPeak > longest + (int64_t{2} << 30));
    }

    // Nothing varies with the exact allocator (reserved is the allocated peak, which the longest step makes),
    // with no symbol named, or a symbol at 1.
    void nothingVaries_data()
    {
        QTest::addColumn<int>("allocator");
        QTest::addColumn<int>("symbol"); // -1: none; 0: batch; 1: seq
        QTest::addColumn<int64_t>("seq");
        QTest::newRow("exact allocator") << int(AllocatorMode::Exact) << 1 << int64_t{512};
        QTest::newRow("no symbol") << int(AllocatorMode::Caching) << -1 << int64_t{512};
        QTest::newRow("seq 1") << int(AllocatorMode::Caching) << 1 << int64_t{1};
        QTest::newRow("symbol out of range") << int(AllocatorMode::Caching) << 7 << int64_t{512};
    }
    void nothingVaries()
    {
        QFETCH(int, allocator);
        QFETCH(int, symbol);
        QFETCH(int64_t, seq);
        const Model& m = llamaSmall();
        Config c = trainConfig(m, 4, seq, DtypePolicy::FP32, Optimizer::Adam);
        c.allocator = static_cast<AllocatorMode>(allocator);
        const Evaluation f = evaluate(m, c);
        c.varySymbol = symbol < 0 ? -1 : symbol == 1 ? m.symbolIndex("seq") : symbol == 0 ? m.batchSymbol : symbol;
        QCOMPARE(variesSymbol(c), false);
        const Evaluation e = evaluate(m, c);
        QCOMPARE(e.memory.reservedPeak, f.memory.reservedPeak);
        QCOMPARE(e.memory.reservedPeakAt, int64_t{0});
    }

    // Several GPUs: each GPU's reserved peak is the highest of its steps; what it needs stays its longest
    // step's, as the single-GPU verdict.
    void clusterReservedIsTheHighestStep()
    {
        const Model& m = llamaSmall();
        Config fixed = trainConfig(m, 8, 512, DtypePolicy::FP32, Optimizer::Adam);
        fixed.gpus = 2;
        fixed.strategy = Strategy::DDP;
        Config varying = fixed;
        varying.varySymbol = m.symbolIndex("seq");
        const EnginePlan plan = makePlan(m, fixed);
        const ClusterEvaluation f = evaluateCluster(plan, fixed);
        const ClusterEvaluation e = evaluateCluster(plan, varying);
        QCOMPARE(e.gpus.size(), f.gpus.size());
        for (size_t g = 0; g < e.gpus.size(); ++g) {
            int64_t highest = 0;
            for (int64_t v : varyingValues(512)) {
                Config step = fixed;
                step.symbols[static_cast<size_t>(m.symbolIndex("seq"))] = v;
                highest = std::max(highest, evaluateCluster(plan, step).gpus[g].reservedPeak);
            }
            QCOMPARE(e.gpus[g].reservedPeak, highest);
            QCOMPARE(e.gpus[g].needed, f.gpus[g].needed);
            QCOMPARE(e.gpus[g].peak, f.gpus[g].peak);
        }
    }
};

QTEST_GUILESS_MAIN(TestVarying)
#include "tst_varying.moc"
