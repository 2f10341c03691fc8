// A slider tick replays the iteration recorded for the plan (memory/timeline_program.h) instead of walking it
// again. The recording is reused only while every binding-dependent decision it took still holds, so a plan
// kept across bindings must give exactly what a fresh plan and a fresh walk give: batch 1 and seq 1 flip
// those decisions (broadcast gradients, transposes of size-1 dims that stay contiguous), and the sequence
// goes back and forth so that recorded programs are reused, not only recorded.
#include "headroom/hardware/gpus.h"
#include "headroom/import/synthetic.h"
#include "headroom/load/loader.h"
#include "headroom/memory/allocator.h"
#include "headroom/memory/engine.h"

#include <QTest>

using namespace headroom;

namespace {

QString differs(const Evaluation& kept, const Evaluation& fresh)
{
    const Breakdown& a = kept.memory;
    const Breakdown& b = fresh.memory;
    const std::vector<std::pair<const char*, std::pair<int64_t, int64_t>>> figures = {
        {"peak", {a.peak, b.peak}},
        {"reservedPeak", {a.reservedPeak, b.reservedPeak}},
        {"activationsSaved", {a.activationsSaved, b.activationsSaved}},
        {"activationsPeak", {a.activationsPeak, b.activationsPeak}},
        {"activationsTransient", {a.activationsTransient, b.activationsTransient}},
        {"lossBytes", {a.lossBytes, b.lossBytes}},
        {"weights", {a.weights, b.weights}},
        {"gradients", {a.gradients, b.gradients}},
        {"optimizer", {a.optimizer, b.optimizer}},
        {"recomputeMacs", {kept.recomputeMacs, fresh.recomputeMacs}},
        {"inplaceTransientSaving", {kept.inplaceTransientSaving, fresh.inplaceTransientSaving}},
        {"peakStep", {kept.peakStep, fresh.peakStep}}};
    for (const auto& [name, v] : figures)
        if (v.first != v.second)
            return QString("%1: %2 vs %3").arg(name).arg(v.first).arg(v.second);
    if (kept.timeline.size() != fresh.timeline.size())
        return "timeline length";
    for (size_t i = 0; i < kept.timeline.size(); ++i) {
        const TimelinePoint& x = kept.timeline[i];
        const TimelinePoint& y = fresh.timeline[i];
        if (x.step != y.step || x.node != y.node || x.phase != y.phase || x.allocated != y.allocated ||
            x.high != y.high)
            return QString("timeline step %1").arg(i);
    }
    if (kept.events.size() != fresh.events.size())
        return QString("events: %1 vs %2").arg(kept.events.size()).arg(fresh.events.size());
    for (size_t i = 0; i < kept.events.size(); ++i) {
        const AllocEvent& x = kept.events[i];
        const AllocEvent& y = fresh.events[i];
        if (x.kind != y.kind || x.id != y.id || x.bytes != y.bytes || x.category != y.category || x.step != y.step ||
            x.tensor != y.tensor)
            return QString("event %1").arg(i);
    }
    if (kept.peakLive != fresh.peakLive || kept.peakLiveBytes != fresh.peakLiveBytes)
        return "peak culprits";
    return {};
}

} // namespace

class TestSimProgram : public QObject
{
    Q_OBJECT

private slots:
    void keptPlanEqualsFreshWalk_data()
    {
        QTest::addColumn<QString>("file"); // under tests/data, or "chain" for the synthetic residual chain
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<bool>("inference");
        QTest::addColumn<bool>("inplace");
        QTest::addColumn<int>("checkpoint");
        QTest::addColumn<int>("accumulate");
        QTest::newRow("tiny_gpt train") << "tiny_gpt.onnx"
                                        << "fp32" << false << false << 1 << 1;
        QTest::newRow("tiny_gpt amp ckpt 3") << "tiny_gpt.onnx"
                                             << "amp-bf16" << false << false << 3 << 1;
        QTest::newRow("bert_like inplace acc 2") << "bert_like.onnx"
                                                 << "fp32" << false << true << 1 << 2;
        QTest::newRow("bert_like infer") << "bert_like.onnx"
                                         << "fp16" << true << false << 1 << 1;
        QTest::newRow("resnet18 inplace ckpt 4") << "resnet18.onnx"
                                                 << "fp32" << false << true << 4 << 1;
        QTest::newRow("lstm_tagger ckpt 2") << "lstm_tagger.onnx"
                                            << "fp32" << false << false << 2 << 1;
        QTest::newRow("llama_small amp") << "hf/llama_small.onnx"
                                         << "amp-fp16" << false << false << 1 << 1;
        QTest::newRow("llama_small mixed ckpt 2") << "hf/llama_small.onnx"
                                                  << "mixed-bf16" << false << false << 2 << 1;
        QTest::newRow("bert_base infer") << "hf/bert_base.onnx"
                                         << "fp32" << true << false << 1 << 1;
        QTest::newRow("chain inplace ckpt 5") << "chain"
                                              << "fp32" << false << true << 5 << 1;
    }
    void keptPlanEqualsFreshWalk()
    {
        QFETCH(QString, file);
        QFETCH(QString, dtype);
        QFETCH(bool, inference);
        QFETCH(bool, inplace);
        QFETCH(int, checkpoint);
        QFETCH(int, accumulate);
        const Model m = file == "chain" ? loadModelFromBytes(makeSyntheticChain(40, 32), "chain.onnx")
                                        : loadModel(std::string(HEADROOM_TEST_DATA) + "/" + file.toStdString());
        Config c;
        c.dtype = *parseDtype(dtype.toStdString());
        c.mode = inference ? Mode::Infer : Mode::Train;
        c.inplace = inplace;
        c.checkpointSegments = checkpoint;
        c.accumulate = accumulate;
        c.symbols = m.defaultBindings();
        const EnginePlan plan = makePlan(m, c);
        const int seq = m.symbolIndex("seq");
        const int64_t batches[] = {8, 1, 3, 1, 16, 8};
        const int64_t seqs[] = {64, 1, 7, 1, 32, 64};
        for (size_t i = 0; i < std::size(batches); ++i) {
            if (m.batchSymbol >= 0)
                c.symbols[static_cast<size_t>(m.batchSymbol)] = batches[i];
            if (seq >= 0)
                c.symbols[static_cast<size_t>(seq)] = seqs[i];
            QVERIFY(planMatches(plan, c));
            const QString d = differs(evaluate(plan, c), evaluate(m, c));
            QVERIFY2(d.isEmpty(), qPrintable(QString("batch %1 seq %2: %3").arg(batches[i]).arg(seqs[i]).arg(d)));
        }
    }

    // The reserved peak comes from the program's allocator stream (replayOps), on a second thread for a deep
    // graph and without any events for a light evaluation: it must be what replaying the evaluation's own
    // events through the allocator model gives (the definition), for both non-exact allocators.
    void reservedPeakIsTheEventsReplay_data()
    {
        QTest::addColumn<QString>("file"); // under tests/data, or "deep" for a 24k-node residual chain
        QTest::addColumn<int>("allocator");
        QTest::addColumn<bool>("inplace");
        QTest::newRow("tiny_gpt caching") << "tiny_gpt.onnx" << int(AllocatorMode::Caching) << false;
        QTest::newRow("resnet18 expandable inplace") << "resnet18.onnx" << int(AllocatorMode::Expandable) << true;
        QTest::newRow("lstm_tagger caching") << "lstm_tagger.onnx" << int(AllocatorMode::Caching) << false;
        QTest::newRow("deep caching (threaded)") << "deep" << int(AllocatorMode::Caching) << false;
        QTest::newRow("deep expandable (threaded)") << "deep" << int(AllocatorMode::Expandable) << true;
    }
    void reservedPeakIsTheEventsReplay()
    {
        QFETCH(QString, file);
        QFETCH(int, allocator);
        QFETCH(bool, inplace);
        const Model m = file == "deep" ? loadModelFromBytes(makeSyntheticChain(6000, 64), "deep.onnx")
                                       : loadModel(std::string(HEADROOM_TEST_DATA) + "/" + file.toStdString());
        Config c;
        c.symbols = m.defaultBindings();
        c.allocator = AllocatorMode(allocator);
        c.inplace = inplace;
        c.gpu = customGpu(int64_t(80) << 30);
        const EnginePlan plan = makePlan(m, c);
        for (int64_t batch : {int64_t(1), int64_t(4), int64_t(9)}) {
            if (m.batchSymbol >= 0)
                c.symbols[static_cast<size_t>(m.batchSymbol)] = batch;
            const Evaluation e = evaluate(plan, c);
            if (file == "deep")
                QVERIFY(e.events.size() > 20000); // past the threshold for the second thread
            AllocatorOptions o;
            o.preallocated = c.gpu.workspace;
            const int64_t expected = std::max(e.memory.peak, replay(e.events, c.allocator, o).reservedPeak);
            QCOMPARE(e.memory.reservedPeak, expected);
            QVERIFY(e.memory.reservedPeak > e.memory.peak); // the caching effect is there to be got wrong
            QCOMPARE(evaluateLight(plan, c).memory.reservedPeak, expected);
            QCOMPARE(evaluateLightWithEvents(plan, c).memory.reservedPeak, expected);
        }
    }
};

QTEST_APPLESS_MAIN(TestSimProgram)
#include "tst_simprogram.moc"
