// --compare's reader: gpu_truth.py JSON lines (the line matching the configuration) and PyTorch memory
// snapshots saved as JSON (peaks rebuilt from the trace), with one-line errors naming the file.
#include "headroom/base/error.h"
#include "headroom/probe/measurement.h"

#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

using namespace headroom;

namespace {

std::string points() { return std::string(HEADROOM_TEST_DATA) + "/gpu/h100-points.jsonl"; }

MeasurementKey key(const char* model, int64_t batch, std::optional<int64_t> seq, Optimizer opt, DtypePolicy dtype)
{
    MeasurementKey k;
    k.model = model;
    k.batch = batch;
    k.seq = seq;
    k.config.optimizer = opt;
    k.config.dtype = dtype;
    return k;
}

std::string write(const QTemporaryDir& dir, const char* name, const std::string& text)
{
    const std::string path = dir.filePath(QString::fromUtf8(name)).toStdString();
    std::ofstream(path) << text;
    return path;
}

} // namespace

class TestMeasurement : public QObject
{
    Q_OBJECT

private slots:
    // Figures copied by hand from tests/data/gpu/h100-points.jsonl.
    void truthLine_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<qint64>("batch");
        QTest::addColumn<qint64>("seq");
        QTest::addColumn<QString>("optimizer");
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<qint64>("maxAllocated");
        QTest::addColumn<qint64>("maxReserved");
        QTest::addColumn<qint64>("steady");
        QTest::newRow("resnet50 b64 adam") << "resnet50" << qint64(64) << qint64(0) << "adam"
                                           << "fp32" << qint64(5893646336) << qint64(7065305088) << qint64(458455040);
        QTest::newRow("resnet18 b8 sgd") << "resnet18" << qint64(8) << qint64(0) << "sgd"
                                         << "fp32" << qint64(345965056) << qint64(461373440) << qint64(168055296);
    }

    void truthLine()
    {
        QFETCH(QString, model);
        QFETCH(qint64, batch);
        QFETCH(qint64, seq);
        QFETCH(QString, optimizer);
        QFETCH(QString, dtype);
        QFETCH(qint64, maxAllocated);
        QFETCH(qint64, maxReserved);
        QFETCH(qint64, steady);
        const Measurement m = loadMeasurement(
            points(), key(model.toUtf8().constData(), batch, seq ? std::optional<int64_t>(seq) : std::nullopt,
                          *parseOptimizer(optimizer.toStdString()), *parseDtype(dtype.toStdString())));
        QCOMPARE(m.source, std::string("gpu_truth"));
        QCOMPARE(*m.allocatedPeak, maxAllocated);
        QCOMPARE(*m.reservedPeak, maxReserved);
        QCOMPARE(*m.steadyState, steady);
    }

    void sequenceModelNeedsItsSeq()
    {
        // tiny_gpt has (8, 128) and (32, 512) points: the seq picks the line.
        const Measurement m = loadMeasurement(points(), key("tiny_gpt", 32, 512, Optimizer::SGD, DtypePolicy::FP32));
        QCOMPARE(*m.allocatedPeak, int64_t(3241405440));
        QVERIFY_THROWS_EXCEPTION(
            Error, loadMeasurement(points(), key("tiny_gpt", 32, 128, Optimizer::SGD, DtypePolicy::FP32)));
    }

    // Two segments (2 MiB small, 20 MiB large) and a trace: hand-computed peaks.
    void snapshot()
    {
        QTemporaryDir dir;
        const std::string path = write(dir, "snap.json", R"({
          "segments": [
            {"total_size": 2097152, "allocated_size": 1024, "blocks": []},
            {"total_size": 20971520, "allocated_size": 0, "blocks": []}
          ],
          "device_traces": [[
            {"action": "segment_alloc", "size": 20971520},
            {"action": "alloc", "size": 8388608},
            {"action": "alloc", "size": 4194304},
            {"action": "free_requested", "size": 8388608},
            {"action": "free_completed", "size": 8388608},
            {"action": "free_completed", "size": 4194304}
          ]]
        })");
        const Measurement m = loadMeasurement(path, key("x", 1, std::nullopt, Optimizer::Adam, DtypePolicy::FP32));
        QCOMPARE(m.source, std::string("snapshot"));
        // start: 1024 allocated, 2 MiB reserved; +8 MiB +4 MiB on top of the start
        QCOMPARE(*m.allocatedPeak, int64_t(1024 + 8388608 + 4194304));
        QCOMPARE(*m.reservedPeak, int64_t(2097152 + 20971520));
        QVERIFY(!m.weights);
    }

    void compareBlock()
    {
        Measurement m;
        m.file = "f";
        m.source = "gpu_truth";
        m.allocatedPeak = 1000;
        Breakdown b;
        b.peak = 1100;
        b.reservedPeak = 1500;
        const nlohmann::json j = compareJson(m, b);
        QCOMPARE(j["allocated_peak"]["theory"].get<int64_t>(), int64_t(1100));
        QCOMPARE(j["allocated_peak"]["error_pct"].get<double>(), 10.0);
        QVERIFY(j["reserved_peak"]["measured"].is_null());
        QVERIFY(j["reserved_peak"]["error_pct"].is_null());
    }

    void badFiles_data()
    {
        QTest::addColumn<QString>("text");
        QTest::newRow("not json") << "{nope";
        QTest::newRow("other json") << R"({"a": 1})";
        QTest::newRow("empty") << "";
        QTest::newRow("no matching line")
            << R"({"model": "other", "batch": 1, "optimizer": "adam", "dtype": "fp32", "max_allocated": 1})";
    }

    void badFiles()
    {
        QFETCH(QString, text);
        QTemporaryDir dir;
        const std::string path = write(dir, "bad.jsonl", text.toStdString() + "\n");
        try {
            loadMeasurement(path, key("resnet50", 1, std::nullopt, Optimizer::Adam, DtypePolicy::FP32));
            QFAIL("no error");
        } catch (const Error& e) {
            const std::string what = e.what();
            QVERIFY2(what.rfind(path + ": ", 0) == 0, e.what());
            QVERIFY(what.find('\n') == std::string::npos);
        }
    }

    void missingFile()
    {
        QVERIFY_THROWS_EXCEPTION(Error, loadMeasurement("/nonexistent/x.jsonl",
                                                        key("x", 1, std::nullopt, Optimizer::Adam, DtypePolicy::FP32)));
    }
};

QTEST_APPLESS_MAIN(TestMeasurement)
#include "tst_measurement.moc"
