// The Probe page with the probe doubles: every failure path ends in one line on the page while the event
// loop keeps running, and a canned measurement fills the table beside the theory.
#include "probepage.h"

#include "headroom/base/format.h"
#include "headroom/load/loader.h"

#include <QComboBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QProgressBar>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTest>
#include <QTimer>

using namespace headroom;

namespace {

QString helper(const char* name) { return QStringLiteral(HEADROOM_BINARY_DIR "/tests/") + QLatin1String(name); }

// Runs the page and, while waiting, checks the GUI thread keeps servicing events (a timer must tick).
bool runAndStayResponsive(gui::ProbePage& page, int timeoutMs, int* ticks)
{
    QSignalSpy done(&page, &gui::ProbePage::finished);
    QTimer timer;
    *ticks = 0;
    QObject::connect(&timer, &QTimer::timeout, [ticks] { ++*ticks; });
    timer.start(20);
    page.run();
    return done.wait(timeoutMs);
}

QString tableText(const QTableWidget* t, int row, int column)
{
    const QTableWidgetItem* it = t->item(row, column);
    return it ? it->text() : QString();
}

} // namespace

class TestProbePage : public QObject
{
    Q_OBJECT

private slots:
    void failurePaths_data()
    {
        QTest::addColumn<QString>("probe");
        QTest::addColumn<int>("limit");
        QTest::addColumn<QString>("expected");
        QTest::newRow("built without CUDA")
            << "/nonexistent/headroom-probe" << 5 << "Probe unavailable: headroom-probe not found";
        QTest::newRow("no device") << helper("probe_double_nodevice") << 5
                                   << "No CUDA device on this machine: the probe needs an NVIDIA GPU";
        QTest::newRow("crash") << helper("probe_double_abort") << 5 << "The probe crashed";
        QTest::newRow("hang") << helper("probe_double_hang") << 1 << "The probe was stopped at the time limit";
        QTest::newRow("garbage") << helper("probe_double_garbage") << 5
                                 << "The probe failed: probe result: not valid JSON";
    }
    void failurePaths()
    {
        QFETCH(QString, probe);
        QFETCH(int, limit);
        QFETCH(QString, expected);
        gui::ProbePage page;
        page.show();
        page.setProbePath(probe);
        page.setTimeLimit(limit);
        int ticks = 0;
        QVERIFY(runAndStayResponsive(page, 15000, &ticks));
        QVERIFY(!page.isRunning());
        QVERIFY2(page.message().startsWith(expected), qPrintable(page.message()));
        QVERIFY(!page.message().contains(QLatin1Char('\n')));
        // A failed run does not leave a full progress bar behind.
        auto* progress = page.findChild<QProgressBar*>();
        QVERIFY(progress);
        QCOMPARE(progress->value(), progress->minimum());
        if (limit > 1)
            return;
        // The hang took about a second; the GUI thread kept ticking throughout.
        QVERIFY2(ticks >= 10, qPrintable(QString::number(ticks)));
    }

    // Before Detect, the device box claims no device it has not seen.
    void noPhantomDevice()
    {
        gui::ProbePage page;
        auto* device = page.findChild<QComboBox*>(QStringLiteral("probeDevice"));
        QVERIFY(device);
        QCOMPARE(device->count(), 1);
        QVERIFY2(!device->currentText().contains(QStringLiteral("Device 0")), qPrintable(device->currentText()));
    }

    void cancelWhileHanging()
    {
        gui::ProbePage page;
        page.setProbePath(helper("probe_double_hang"));
        page.setTimeLimit(60);
        QSignalSpy done(&page, &gui::ProbePage::finished);
        page.run();
        QVERIFY(page.isRunning());
        QTest::qWait(200);
        page.cancel();
        QVERIFY(done.wait(5000));
        QCOMPARE(page.message(), gui::ProbePage::tr("Probe cancelled."));
    }

    void destroyWhileRunning()
    {
        // Closing the tab mid-run must neither hang nor leave the probe running.
        QElapsedTimer t;
        t.start();
        {
            gui::ProbePage page;
            page.setProbePath(helper("probe_double_hang"));
            page.setTimeLimit(60);
            page.run();
            QTest::qWait(100);
        }
        QVERIFY(t.elapsed() < 5000);
    }

    void cannedMeasurementWithoutModel()
    {
        gui::ProbePage page;
        page.setProbePath(helper("probe_double_canned"));
        int ticks = 0;
        QVERIFY(runAndStayResponsive(page, 15000, &ticks));
        QVERIFY2(page.message().startsWith(QLatin1String("Measured on Canned GPU 24GB")), qPrintable(page.message()));
        QCOMPARE(page.result().measuredMaxBatch, int64_t(192));
        const QTableWidget* t = page.table();
        QCOMPARE(tableText(t, gui::ProbePage::ContextRow, gui::ProbePage::MeasuredColumn), QStringLiteral("300 MiB"));
        QCOMPARE(tableText(t, gui::ProbePage::MaxBatchRow, gui::ProbePage::MeasuredColumn), QStringLiteral("192"));
        QCOMPARE(tableText(t, gui::ProbePage::ContextRow, gui::ProbePage::TheoryColumn), QStringLiteral("—"));
        QCOMPARE(page.findChild<QLabel*>(QStringLiteral("probeMaxBatch"))->text(),
                 QStringLiteral("Max batch: measured 192"));
    }

    // "Load measurement…": the shipped H100 truth's resnet50 b64 Adam fp32 line beside the theory.
    void realRunBesideTheory()
    {
        auto model = std::make_shared<const Model>(loadModel(HEADROOM_TEST_DATA "/resnet50.onnx"));
        Config config;
        config.symbols = model->defaultBindings();
        config.symbols[size_t(model->batchSymbol)] = 64;
        config.inplace = true;
        gui::ProbePage page;
        page.setContext(model, config);
        const QString truth = QStringLiteral(HEADROOM_TEST_DATA "/gpu/h100-points.jsonl");
        page.loadMeasurement(truth);
        const auto* t = page.findChild<QTableWidget*>(QStringLiteral("probeMeasurementTable"));
        QVERIFY(t);
        QCOMPARE(t->rowCount(), 5);
        QCOMPARE(t->item(0, 0)->text(), gui::ProbePage::tr("Allocated peak"));
        QCOMPARE(t->item(0, 2)->text(), QString::fromStdString(formatBytes(5893646336)));
        QCOMPARE(t->item(1, 2)->text(), QString::fromStdString(formatBytes(7065305088)));
        QVERIFY2(page.message().startsWith(QStringLiteral("Measured (gpu_truth)")), qPrintable(page.message()));

        // No line for batch 63: one line naming the file, the table keeps the last comparison.
        config.symbols[size_t(model->batchSymbol)] = 63;
        page.setContext(model, config);
        page.loadMeasurement(truth);
        QVERIFY2(page.message().contains(QStringLiteral("h100-points.jsonl")), qPrintable(page.message()));
        QVERIFY(!page.message().contains(QLatin1Char('\n')));
        QCOMPARE(t->rowCount(), 5);
    }

    void cannedMeasurementBesideTheory()
    {
        auto model = std::make_shared<const Model>(loadModel(HEADROOM_TEST_DATA "/resnet18.onnx"));
        Config config;
        config.symbols = model->defaultBindings();
        config.symbols[size_t(model->batchSymbol)] = 8;
        config.gpu.capacity = int64_t(24) << 30;
        config.gpu.context = 300 << 20;
        gui::ProbePage page;
        page.setContext(model, config);
        page.setProbePath(helper("probe_double_canned"));
        int ticks = 0;
        QVERIFY(runAndStayResponsive(page, 30000, &ticks));
        QVERIFY2(page.result().status == ProbeResult::Status::Ok, page.result().message.c_str());
        // The plan reached the probe: resnet18 at batch 8 with bisection plans.
        QVERIFY2(page.result().message.find("batch 8, ") != std::string::npos, page.result().message.c_str());
        const QTableWidget* t = page.table();
        QCOMPARE(tableText(t, gui::ProbePage::ContextRow, gui::ProbePage::TheoryColumn), QStringLiteral("300 MiB"));
        QCOMPARE(tableText(t, gui::ProbePage::ContextRow, gui::ProbePage::DifferenceColumn), QStringLiteral("0 B"));
        QVERIFY(tableText(t, gui::ProbePage::ExactPeakRow, gui::ProbePage::TheoryColumn) != QStringLiteral("—"));
        const int64_t predicted = maxBatch(*model, config);
        QCOMPARE(tableText(t, gui::ProbePage::MaxBatchRow, gui::ProbePage::TheoryColumn), QString::number(predicted));
        QVERIFY(t->rowCount() > gui::ProbePage::FIRST_CATEGORY_ROW);
    }

    void detectDevices()
    {
        gui::ProbePage page;
        page.setProbePath(helper("probe_double_canned"));
        QSignalSpy done(&page, &gui::ProbePage::finished);
        page.detectDevices();
        QVERIFY(done.wait(15000));
        auto* combo = page.findChild<QComboBox*>();
        QVERIFY(combo);
        QCOMPARE(combo->count(), 2);
        QCOMPARE(combo->itemText(1), QStringLiteral("1: Canned GPU 80GB"));
    }
};

QTEST_MAIN(TestProbePage)
#include "tst_probepage.moc"
