// AnalysisSession on a large graph (issue 16): the plan and the first figures of a newly opened model are
// computed off the GUI thread (setModel returns with them pending), what lands is core's report for that
// configuration, and a configuration change while the full report runs drops it: only the latest
// configuration's report is ever shown.
#include "session.h"

#include "headroom/import/loader.h"
#include "headroom/import/synthetic.h"
#include "headroom/report/report.h"

#include <QSignalSpy>
#include <QTest>

using namespace gui;

namespace {

// A residual chain past the session's large-graph threshold (5,000 nodes).
ModelPtr chainModel()
{
    static const ModelPtr m = std::make_shared<const headroom::Model>(
        headroom::loadModelFromBytes(headroom::makeSyntheticChain(headroom::syntheticChainBlocksFor(6000), 64), "chain.onnx"));
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

} // namespace

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
        QVERIFY(s.isPending());   // nothing computed on this thread
        QCOMPARE(changed.count(), 0);
        QVERIFY(QTest::qWaitFor([&] { return s.isComplete(); }, 120000));
        QVERIFY(changed.count() >= 1);
        QCOMPARE(QString::fromStdString(json(*m, s.report())), QString::fromStdString(json(*m, headroom::buildReport(*m, c))));
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
        QCOMPARE(QString::fromStdString(json(*m, s.report())), QString::fromStdString(json(*m, headroom::buildReport(*m, last))));
    }
};

QTEST_MAIN(TestSession)
#include "tst_session.moc"
