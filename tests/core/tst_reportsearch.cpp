// The report's searches reuse what they can (issue 16): each shortcut must give exactly what the plain
// computation gives. The reference here is that plain computation, assembled from the public functions
// the way the report did it before: a plan per search, full evaluations, every allocator replay run to
// its end. And a report that is cancelled says so and carries no curves or advice.
#include "headroom/hardware/gpus.h"
#include "headroom/load/loader.h"
#include "headroom/memory/allocator.h"
#include "headroom/report/report.h"

#include <QTest>

#include <algorithm>
#include <atomic>
#include <map>

using namespace headroom;

Q_DECLARE_METATYPE(headroom::AllocatorMode)

namespace {

const Model& model(const QString& file)
{
    static std::map<QString, Model> cache;
    auto it = cache.find(file);
    if (it == cache.end())
        it = cache.emplace(file, loadModel(std::string(HEADROOM_TEST_DATA) + "/" + file.toStdString())).first;
    return it->second;
}

Config configFor(const Model& m, int64_t batch, const char* gpu, AllocatorMode allocator)
{
    Config c;
    c.symbols = m.defaultBindings();
    if (m.batchSymbol >= 0)
        c.symbols[size_t(m.batchSymbol)] = batch;
    if (const int seq = m.symbolIndex("seq"); seq >= 0)
        c.symbols[size_t(seq)] = 64;
    c.gpu = *findGpu(gpu);
    c.allocator = allocator;
    return c;
}

// The curve as it was computed point by point: evaluate() at each k with the config's own allocator.
std::vector<CheckpointPoint> plainCurve(const Model& m, const Config& config, int maxK)
{
    std::vector<CheckpointPoint> curve;
    for (int k = 1; k <= maxK; ++k) {
        Config c = config;
        c.checkpointSegments = k;
        c.finetune.layerCheckpoint = false;
        const Evaluation e = evaluate(m, c);
        curve.push_back({k, e.memory.peak, e.recomputeMacs});
    }
    return curve;
}

// --max SYMBOL's scan as need() defines it: the full evaluation at every value, replay run to its end.
int64_t plainScan(const Model& m, const Config& config, int symbol, int64_t from)
{
    const int64_t budget = config.gpu.capacity - config.marginBytes;
    const auto fits = [&](int64_t v) {
        Config c = config;
        c.symbols[size_t(symbol)] = v;
        return neededBytes(c, evaluate(m, c)) <= budget;
    };
    for (int64_t v = from; v >= 1 && v > from - 512; --v)
        if (fits(v))
            return v;
    // past 512 values the search bisects below them
    int64_t a = 0, b = std::max<int64_t>(1, from - 512);
    while (b - a > 1) {
        const int64_t mid = a + (b - a) / 2;
        (fits(mid) ? a : b) = mid;
    }
    return a;
}

} // namespace

class TestReportSearch : public QObject
{
    Q_OBJECT
private slots:
    void reuseGivesThePlainAnswers_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<qint64>("batch");
        QTest::addColumn<QString>("gpu");
        QTest::addColumn<AllocatorMode>("allocator");
        QTest::newRow("resnet18 fits") << "resnet18.onnx" << qint64(32) << "RTX 4090" << AllocatorMode::Caching;
        QTest::newRow("resnet50 over T4") << "resnet50.onnx" << qint64(256) << "T4" << AllocatorMode::Caching;
        QTest::newRow("tiny_gpt expandable")
            << "tiny_gpt.onnx" << qint64(16) << "RTX 3060" << AllocatorMode::Expandable;
        QTest::newRow("lstm exact") << "lstm_tagger.onnx" << qint64(64) << "T4" << AllocatorMode::Exact;
        QTest::newRow("mobilenet over 3060")
            << "mobilenet_v2.onnx" << qint64(512) << "RTX 3060" << AllocatorMode::Caching;
    }
    void reuseGivesThePlainAnswers()
    {
        QFETCH(QString, file);
        QFETCH(qint64, batch);
        QFETCH(QString, gpu);
        QFETCH(AllocatorMode, allocator);
        const Model& m = model(file);
        const Config c = configFor(m, batch, gpu.toUtf8().constData(), allocator);
        const Report r = buildReport(m, c);
        QVERIFY(!r.cancelled);

        // The curve: one plan and no allocator events, the same peaks and recompute at every k.
        const std::vector<CheckpointPoint> plain = plainCurve(m, c, 16);
        QCOMPARE(r.checkpointCurve.size(), plain.size());
        for (size_t i = 0; i < plain.size(); ++i) {
            QCOMPARE(r.checkpointCurve[i].peak, plain[i].peak);
            QCOMPARE(r.checkpointCurve[i].recomputeMacs, plain[i].recomputeMacs);
        }
        // The sweep: every point the need of a fresh evaluation at that batch (the configured batch's is
        // the report's own evaluation).
        QVERIFY(!r.batchSweep.empty());
        for (const auto& [b, needed] : r.batchSweep) {
            Config cb = c;
            cb.symbols[size_t(m.batchSymbol)] = b;
            QCOMPARE(needed, neededBytes(cb, evaluate(m, cb)));
        }
        // The advice: given the report's plan, curve and need, the same tips as computed from nothing.
        const std::vector<Advice> alone = advise(m, c);
        QCOMPARE(r.advice.size(), alone.size());
        for (size_t i = 0; i < alone.size(); ++i) {
            QCOMPARE(r.advice[i].summary, alone[i].summary);
            QCOMPARE(r.advice[i].needBefore, alone[i].needBefore);
            QCOMPARE(r.advice[i].needAfter, alone[i].needAfter);
            QCOMPARE(r.advice[i].fitsAfter, alone[i].fitsAfter);
        }
        // ... and its need before is the fit's own.
        if (!alone.empty())
            QCOMPARE(alone.front().needBefore, r.fit.needed);
    }

    // --max seq under the caching allocator: the replays that stop early at the budget find the value the
    // full evaluation finds, and the value above it does not fit by that same need.
    void maxSymbolScanStopsEarlyWithTheSameAnswer_data()
    {
        QTest::addColumn<QString>("gpu");
        QTest::addColumn<int>("allocator");
        QTest::addColumn<qint64>("batch");
        QTest::newRow("tiny_gpt T4 caching") << "T4" << int(AllocatorMode::Caching) << qint64(8);
        QTest::newRow("tiny_gpt 3060 expandable") << "RTX 3060" << int(AllocatorMode::Expandable) << qint64(8);
        // batch 1 on 24 GB: the cache runs hundreds of tokens above the allocated bound, past the
        // 512-value scan into the bisection
        QTest::newRow("tiny_gpt 4090 caching, scan and bisection")
            << "RTX 4090" << int(AllocatorMode::Caching) << qint64(1);
    }
    void maxSymbolScanStopsEarlyWithTheSameAnswer()
    {
        QFETCH(QString, gpu);
        QFETCH(int, allocator);
        QFETCH(qint64, batch);
        const Model& m = model("tiny_gpt.onnx");
        const int seq = m.symbolIndex("seq");
        QVERIFY(seq >= 0);
        const Config c = configFor(m, batch, gpu.toUtf8().constData(), AllocatorMode(allocator));
        const int64_t v = maxSymbolValue(makePlan(m, c), c, seq);
        QVERIFY(v > 1);
        // The allocated bound the scan starts from: the largest value whose exact need fits.
        Config exact = c;
        exact.allocator = AllocatorMode::Exact;
        const int64_t bound = maxSymbolValue(makePlan(m, exact), exact, seq);
        QVERIFY(bound >= v);
        QCOMPARE(v, plainScan(m, c, seq, bound));
    }

    void cancelledReportIsMarkedAndStopsBeforeTheCurves()
    {
        const Model& m = model("resnet18.onnx");
        const Config c = configFor(m, 32, "RTX 4090", AllocatorMode::Caching);
        std::atomic<bool> cancel{true};
        ReportOptions o;
        o.cancel = &cancel;
        const Report r = buildReport(m, c, o);
        QVERIFY(r.cancelled);
        QVERIFY(r.checkpointCurve.empty());
        QVERIFY(r.batchSweep.empty());
        QVERIFY(r.advice.empty());
        // The same with the flag down is the plain report.
        cancel = false;
        const Report full = buildReport(m, c, o);
        QVERIFY(!full.cancelled);
        QCOMPARE(toJson(m, full).dump(), toJson(m, buildReport(m, c)).dump());
        QCOMPARE(full.checkpointCurve.size(), size_t(16));
    }
};

QTEST_APPLESS_MAIN(TestReportSearch)
#include "tst_reportsearch.moc"
