// runProbe against the test doubles in tests/helpers: every way a probe can end maps to a status, within
// the time limit, without throwing.
#include "headroom/probe/probe_protocol.h"

#include <QElapsedTimer>
#include <QTest>

#include <atomic>
#include <thread>

using namespace headroom;

namespace {

// Qt's QCOMPARE would find headroom::toString(Status) by ADL, which returns a string_view.
QString st(ProbeResult::Status s) { return QString::fromLatin1(toString(s).data(), qsizetype(toString(s).size())); }

std::string helper(const char* name) { return std::string(HEADROOM_BINARY_DIR) + "/tests/" + name; }

ProbePlan smallPlan()
{
    ProbePlan p;
    p.model = "toy.onnx";
    p.batch = 4;
    p.events = {{AllocEvent::Kind::Alloc, 1, 1024, Category::Weights, 0, 0},
                {AllocEvent::Kind::Alloc, 2, 4096, Category::Activations, 1, 1},
                {AllocEvent::Kind::Free, 2, 4096, Category::Activations, 2, 1}};
    p.batchPlans = {{2, p.events}, {4, p.events}};
    return p;
}

} // namespace

class TestProbeRunner : public QObject
{
    Q_OBJECT

private slots:
    void statuses_data()
    {
        QTest::addColumn<QString>("probe");
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("messagePart");
        QTest::newRow("crash") << "probe_double_abort" << int(ProbeResult::Status::Crashed) << "crashed (signal 6";
        QTest::newRow("no device") << "probe_double_nodevice" << int(ProbeResult::Status::NoDevice)
                                   << "no CUDA device found";
        QTest::newRow("garbage") << "probe_double_garbage" << int(ProbeResult::Status::Failed) << "not valid JSON";
        QTest::newRow("canned") << "probe_double_canned" << int(ProbeResult::Status::Ok)
                                << "canned: toy.onnx batch 4, 3 events, 2 batch plans";
    }
    void statuses()
    {
        QFETCH(QString, probe);
        QFETCH(int, status);
        QFETCH(QString, messagePart);
        const ProbeResult r = runProbe(smallPlan(), helper(probe.toUtf8().constData()), 20);
        QCOMPARE(QString::fromStdString(std::string(toString(r.status))),
                 QString::fromStdString(std::string(toString(static_cast<ProbeResult::Status>(status)))));
        QVERIFY2(r.message.find(messagePart.toStdString()) != std::string::npos, r.message.c_str());
        QVERIFY(r.message.find('\n') == std::string::npos);
    }

    void cannedResultParsed()
    {
        std::vector<std::pair<double, std::string>> progress;
        ProbeRunOptions options;
        options.progress = [&](double f, const std::string& stage) { progress.emplace_back(f, stage); };
        const ProbeResult r = runProbe(smallPlan(), helper("probe_double_canned"), 20, options);
        QVERIFY2(r.status == ProbeResult::Status::Ok, r.message.c_str());
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.deviceName, std::string("Canned GPU 24GB"));
        QCOMPARE(r.totalBytes, int64_t(25769803776LL));
        QCOMPARE(r.contextBytes, int64_t(314572800));
        QCOMPARE(r.measuredMaxBatch, int64_t(192));
        QCOMPARE(r.usedAfterEvent, (std::vector<int64_t>{2097152, 6291456, 4194304, 0}));
        QCOMPARE(r.peakByCategory.size(), size_t(2));
        QCOMPARE(r.peakByCategory[1].first, std::string("activations"));
        QCOMPARE(r.batchTrials.size(), size_t(2));
        QVERIFY(!r.batchTrials[1].fits);
        QCOMPARE(r.cudnnWorkspace, int64_t(-1));
        // The runner passes its limit (minus a second, so the probe can clean up) and the device.
        QVERIFY2(r.message.find("args: --time-limit 19 --device 0") != std::string::npos, r.message.c_str());
        QCOMPARE(progress.size(), size_t(1));
        QCOMPARE(progress[0].first, 0.5);
        QCOMPARE(progress[0].second, std::string("replaying caching"));
    }

    void hangIsKilledAtTheLimit()
    {
        QElapsedTimer t;
        t.start();
        const ProbeResult r = runProbe(smallPlan(), helper("probe_double_hang"), 1);
        QCOMPARE(st(r.status), st(ProbeResult::Status::TimedOut));
        QVERIFY2(r.message.find("within 1 s") != std::string::npos, r.message.c_str());
        // Generous: the point is "killed near the limit", not a timing measurement.
        QVERIFY2(t.elapsed() < 10000, qPrintable(QString::number(t.elapsed())));
    }

    void cancel()
    {
        std::atomic<bool> stop{false};
        ProbeRunOptions options;
        options.cancel = &stop;
        std::thread canceller([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            stop = true;
        });
        const ProbeResult r = runProbe(smallPlan(), helper("probe_double_hang"), 60, options);
        canceller.join();
        QCOMPARE(st(r.status), st(ProbeResult::Status::Cancelled));
    }

    void missingBinary()
    {
        const ProbeResult r = runProbe(smallPlan(), "/nonexistent/dir/headroom-probe", 5);
        QCOMPARE(st(r.status), st(ProbeResult::Status::BuiltWithoutCuda));
        QCOMPARE(r.message, std::string("headroom-probe not found: /nonexistent/dir/headroom-probe"));
        QVERIFY(findProbe("/nonexistent/dir/headroom-probe").empty());
        QCOMPARE(findProbe(helper("probe_double_canned")), helper("probe_double_canned"));
    }

    void listDevices()
    {
        const ProbeResult r = listProbeDevices(helper("probe_double_canned"), 20);
        QCOMPARE(st(r.status), st(ProbeResult::Status::Ok));
        QCOMPARE(r.deviceCount, 2);
        QCOMPARE(r.devices, (std::vector<std::string>{"Canned GPU 24GB", "Canned GPU 80GB"}));
        QVERIFY2(r.message.find("--list-devices") != std::string::npos, r.message.c_str());
    }

    void largePlanThroughThePipe()
    {
        // Megabytes of plan must not deadlock against a child that writes while we write.
        ProbePlan p = smallPlan();
        for (int64_t i = 0; i < 100000; ++i) {
            p.events.push_back({AllocEvent::Kind::Alloc, 10 + i, 512, Category::Activations, 3, -1});
            p.events.push_back({AllocEvent::Kind::Free, 10 + i, 512, Category::Activations, 4, -1});
        }
        const ProbeResult r = runProbe(p, helper("probe_double_canned"), 30);
        QCOMPARE(st(r.status), st(ProbeResult::Status::Ok));
        QVERIFY2(r.message.find("200003 events") != std::string::npos, r.message.c_str());
    }
};

QTEST_GUILESS_MAIN(TestProbeRunner)
#include "tst_proberunner.moc"
