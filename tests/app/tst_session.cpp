// AnalysisSession on a large graph (issue 16): the plan and the first figures of a newly opened model are
// computed off the GUI thread (setModel returns with them pending), what lands is core's report for that
// configuration, and a configuration change while the full report runs drops it: only the latest
// configuration's report is ever shown.
#include "session.h"

#include "headroom/import/synthetic.h"
#include "headroom/load/loader.h"
#include "headroom/report/report.h"

#include <QSignalSpy>
#include <QTest>

#include <functional>

using namespace gui;

namespace {

// A residual chain past the session's large-graph threshold (5,000 nodes).
ModelPtr chainModel()
{
    static const ModelPtr m = std::make_shared<const headroom::Model>(headroom::loadModelFromBytes(
        headroom::makeSyntheticChain(headroom::syntheticChainBlocksFor(6000), 64), "chain.onnx"));
    return m;
}

headroom::Config configAt(const headroom::Model& m, int64_t batch)
{
    headroom::Config c;
    c.symbols = m.defaultBindings();
    c.symbols[size_t(m.batchSymbol)] = batch;
    c.gpu.name = "test";
    c.gpu.capacity = int64_t(16) << 30;
    return c;
}

std::string json(const headroom::Model& m, const headroom::Report& r) { return headroom::toJson(m, r).dump(); }

// The JSON without its batch sweep: everything else a full report holds (curve, advice, fit, layers).
std::string jsonWithoutSweep(const headroom::Model& m, const headroom::Report& r)
{
    nlohmann::json j = headroom::toJson(m, r);
    j.erase("batch_sweep");
    return j.dump();
}

ModelPtr resnet18()
{
    static const ModelPtr m = std::make_shared<const headroom::Model>(
        headroom::loadModel(HEADROOM_TEST_DATA "/resnet18.onnx"));
    return m;
}

ModelPtr llamaSmall()
{
    static const ModelPtr m = std::make_shared<const headroom::Model>(
        headroom::loadModel(HEADROOM_TEST_DATA "/hf/llama_small.config.json"));
    return m;
}

using Change = std::function<void(headroom::Config&)>;

} // namespace

Q_DECLARE_METATYPE(Change)

class TestSession : public QObject
{
    Q_OBJECT

private slots:
    void largeModelOpensOffTheGuiThread()
    {
        const ModelPtr m = chainModel();
        QVERIFY(m->nodes.size() > 5000);
        AnalysisSession s;
        QSignalSpy changed(&s, &AnalysisSession::reportChanged);
        const headroom::Config c = configAt(*m, 4);
        s.setModel(m, c);
        QVERIFY(s.isPending()); // nothing computed on this thread
        QCOMPARE(changed.count(), 0);
        QVERIFY(QTest::qWaitFor([&] { return s.isComplete(); }, 120000));
        QVERIFY(changed.count() >= 1);
        QCOMPARE(QString::fromStdString(json(*m, s.report())),
                 QString::fromStdString(json(*m, headroom::buildReport(*m, c))));
    }

    void staleFullReportIsNeverShown()
    {
        const ModelPtr m = chainModel();
        AnalysisSession s;
        s.setModel(m, configAt(*m, 4));
        QVERIFY(QTest::qWaitFor([&] { return s.isComplete(); }, 120000));
        std::vector<int64_t> detailsFor;
        bool stale = false;
        connect(&s, &AnalysisSession::detailsChanged, this, [&] {
            const int64_t shown = s.report().config.symbols[size_t(m->batchSymbol)];
            stale = stale || shown != s.config().symbols[size_t(m->batchSymbol)] || s.report().cancelled;
            detailsFor.push_back(shown);
        });
        // Each change lands while the previous full report may be running: it is cancelled or dropped.
        for (int64_t b : {8, 12, 16}) {
            s.setConfig(configAt(*m, b));
            QTest::qWait(150); // past the details delay, so a full report starts for each
        }
        QVERIFY(QTest::qWaitFor([&] { return s.isComplete() && !s.isPending(); }, 120000));
        QVERIFY(!detailsFor.empty());
        QVERIFY(!stale); // every full report shown is the configuration set at that moment, complete
        QCOMPARE(detailsFor.back(), int64_t{16});
        const headroom::Config last = configAt(*m, 16);
        QCOMPARE(QString::fromStdString(json(*m, s.report())),
                 QString::fromStdString(json(*m, headroom::buildReport(*m, last))));
    }

    // Issue 16: the batch sweep is computed only while something wants it (its tab). Without it the
    // complete report is core's full report less the sweep (checkpoint curve and advice included: the
    // verdict's tips read them); wanting it lands exactly buildReport(...)'s sweep.
    void sweepOnlyWhenWanted_data()
    {
        QTest::addColumn<bool>("large"); // the 6k-node chain (worker path) or resnet18
        QTest::addColumn<bool>("train");
        QTest::addColumn<bool>("synchronous"); // the screenshot mode's synchronous details
        QTest::addColumn<int>("batch");
        QTest::newRow("resnet18 train") << false << true << false << 8;
        QTest::newRow("resnet18 inference") << false << false << false << 32;
        QTest::newRow("resnet18 train, synchronous") << false << true << true << 4;
        QTest::newRow("chain train") << true << true << false << 4;
        QTest::newRow("chain inference") << true << false << false << 16;
    }
    void sweepOnlyWhenWanted()
    {
        QFETCH(bool, large);
        QFETCH(bool, train);
        QFETCH(bool, synchronous);
        QFETCH(int, batch);
        const ModelPtr m = large ? chainModel() : resnet18();
        headroom::Config c = configAt(*m, batch);
        c.mode = train ? headroom::Mode::Train : headroom::Mode::Infer;
        const headroom::Report expected = headroom::buildReport(*m, c);
        QVERIFY(!expected.batchSweep.empty()); // the comparison below is about something
        QCOMPARE(expected.checkpointCurve.empty(), !train);

        AnalysisSession s;
        s.setSynchronousDetails(synchronous);
        s.setSweepWanted(false);
        s.setModel(m, c);
        QVERIFY(QTest::qWaitFor([&] { return s.isComplete(); }, 120000));
        QTest::qWait(50); // nothing else is on its way
        QVERIFY(s.isComplete());
        QVERIFY(!s.hasSweep());
        QVERIFY(s.report().batchSweep.empty());
        QCOMPARE(s.report().checkpointCurve.size(), expected.checkpointCurve.size());
        QCOMPARE(s.report().bestCheckpoint, expected.bestCheckpoint);
        QCOMPARE(s.report().advice.size(), expected.advice.size());
        QCOMPARE(QString::fromStdString(jsonWithoutSweep(*m, s.report())),
                 QString::fromStdString(jsonWithoutSweep(*m, expected)));

        QSignalSpy details(&s, &AnalysisSession::detailsChanged);
        s.setSweepWanted(true); // the tab is shown
        QVERIFY(QTest::qWaitFor([&] { return s.hasSweep(); }, 120000));
        QVERIFY(details.count() >= 1);
        QCOMPARE(s.report().batchSweep, expected.batchSweep);
        QCOMPARE(QString::fromStdString(json(*m, s.report())), QString::fromStdString(json(*m, expected)));

        // Hidden again, a new configuration's report leaves the sweep out once more.
        s.setSweepWanted(false);
        headroom::Config next = c;
        next.symbols[size_t(m->batchSymbol)] = batch * 2;
        s.setConfig(next);
        QVERIFY(QTest::qWaitFor([&] { return s.isComplete(); }, 120000));
        QVERIFY(!s.hasSweep());
        QVERIFY(s.report().batchSweep.empty());
        QCOMPARE(s.report().config.symbols[size_t(m->batchSymbol)], int64_t{batch * 2});
    }

    // The max batch is reused only while nothing but the batch changes: the fast figures shown right after
    // any other change carry the max batch core computes for the new configuration. Hugging Face's layer
    // checkpointing is a FineTune field, which the hand-written field list this comparison replaced left out:
    // it takes llama_small (fp32, Adam, 4 GiB) from 16 to 49, and with that list the session showed 16.
    void maxBatchFollowsEveryChange_data()
    {
        QTest::addColumn<Change>("change");
        QTest::addColumn<bool>("moves"); // the max batch of the changed configuration differs
        QTest::newRow("batch") << Change([](headroom::Config& c) { c.symbols[0] = 8; }) << false;
        QTest::newRow("bf16") << Change([](headroom::Config& c) { c.dtype = headroom::DtypePolicy::BF16; }) << true;
        QTest::newRow("layer checkpointing")
            << Change([](headroom::Config& c) { c.finetune.layerCheckpoint = true; }) << true;
    }
    void maxBatchFollowsEveryChange()
    {
        QFETCH(Change, change);
        QFETCH(bool, moves);
        const ModelPtr m = llamaSmall();
        QCOMPARE(m->batchSymbol, 0); // the "batch" row sets symbols[0]
        headroom::Config c = configAt(*m, 1);
        c.gpu.capacity = int64_t(4) << 30;
        headroom::Config next = c;
        change(next);
        const headroom::ReportOptions fast{.timeline = false, .sweep = false};
        const int64_t before = headroom::buildReport(*m, c, fast).fit.maxBatch;
        const int64_t after = headroom::buildReport(*m, next, fast).fit.maxBatch;
        QCOMPARE(after != before, moves);

        AnalysisSession s;
        s.setAsyncThresholdMs(1e9); // the fast figures on this thread: shown as soon as setConfig returns
        s.setModel(m, c);
        QVERIFY(!s.isPending());
        QCOMPARE(s.report().fit.maxBatch, before);
        s.setConfig(next);
        QVERIFY(!s.isPending());
        QVERIFY(!s.isComplete()); // the fast figures, before the detail pass
        QCOMPARE(s.report().fit.maxBatch, after);
        QVERIFY(QTest::qWaitFor([&] { return s.isComplete(); }, 120000));
        QCOMPARE(s.report().fit.maxBatch, after);
    }
};

QTEST_MAIN(TestSession)
#include "tst_session.moc"
