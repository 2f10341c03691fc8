// The engine against PyTorch's own measurements (tests/data/truth.json, torch 1.13, fp32, SGD, CE loss):
//  activations_saved within 3 % of saved_for_backward.activation_bytes + input_bytes,
//  peak - weights     within 10 % of peak_train_step.peak_bytes_above_baseline.
// HEADROOM_ACCURACY_TABLE=1 prints the Markdown table of docs/ACCURACY.md.
#include "headroom/load/loader.h"
#include "headroom/memory/engine.h"

#include <QTest>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>

using namespace headroom;

namespace {

nlohmann::json truth()
{
    std::ifstream in(std::string(HEADROOM_TEST_DATA) + "/truth.json");
    return nlohmann::json::parse(in);
}

const Model& model(const std::string& name)
{
    static std::map<std::string, Model> cache;
    auto it = cache.find(name);
    if (it == cache.end())
        it = cache.emplace(name, loadModel(std::string(HEADROOM_TEST_DATA) + "/" + name + ".onnx")).first;
    return it->second;
}

Config configFor(const Model& m, int64_t batch, int64_t seq)
{
    Config c;
    c.mode = Mode::Train;
    c.dtype = DtypePolicy::FP32;
    c.optimizer = Optimizer::SGD;
    c.loss = Loss::CrossEntropy;
    c.allocator = AllocatorMode::Exact;
    // The truth is torch 1.13 autograd on a CPU: per-step RNN cells, attention written out (1.13's
    // nn.MultiheadAttention had no fused kernel), mean.dim keeping its input and result.
    c.device = Device::CPU;
    c.attention = Attention::Math;
    c.torch = TorchVersion::V1_13;
    c.symbols = m.defaultBindings();
    if (m.batchSymbol >= 0)
        c.symbols[static_cast<size_t>(m.batchSymbol)] = batch;
    const int s = m.symbolIndex("seq");
    if (s >= 0 && seq > 0)
        c.symbols[static_cast<size_t>(s)] = seq;
    return c;
}

double errPct(int64_t got, int64_t want)
{
    return want == 0 ? 0.0 : 100.0 * (static_cast<double>(got) - static_cast<double>(want)) / static_cast<double>(want);
}

} // namespace

class TestAccuracy : public QObject
{
    Q_OBJECT
private slots:
    void initTestCase()
    {
        if (std::getenv("HEADROOM_ACCURACY_TABLE")) {
            std::printf(
                "| model | batch | seq | saved truth | saved Headroom | error | peak truth | peak - weights Headroom | error |\n");
            std::printf("|---|---|---|---|---|---|---|---|---|\n");
        }
    }

    void corpus_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<qint64>("batch");
        QTest::addColumn<qint64>("seq");
        QTest::addColumn<qint64>("saved");
        QTest::addColumn<qint64>("peak");
        const nlohmann::json t = truth();
        for (auto it = t.begin(); it != t.end(); ++it) {
            if (it.key() == "method" || !it.value().contains("saved_for_backward"))
                continue;
            const auto& sv = it.value()["saved_for_backward"];
            const auto& pk = it.value()["peak_train_step"];
            for (size_t i = 0; i < sv.size(); ++i) {
                const int64_t b = sv[i]["batch"].get<int64_t>();
                const int64_t s = sv[i].contains("seq") ? sv[i]["seq"].get<int64_t>() : 0;
                const int64_t saved = sv[i]["activation_bytes"].get<int64_t>() + sv[i]["input_bytes"].get<int64_t>();
                const int64_t peak = pk[i]["peak_bytes_above_baseline"].get<int64_t>();
                const std::string tag = it.key() + " b" + std::to_string(b) + (s ? " s" + std::to_string(s) : "");
                QTest::newRow(tag.c_str())
                    << QString::fromStdString(it.key()) << qint64(b) << qint64(s) << qint64(saved) << qint64(peak);
            }
        }
    }
    void corpus()
    {
        QFETCH(QString, name);
        QFETCH(qint64, batch);
        QFETCH(qint64, seq);
        QFETCH(qint64, saved);
        QFETCH(qint64, peak);
        const Model& m = model(name.toStdString());
        const Evaluation e = evaluate(m, configFor(m, batch, seq));
        const int64_t gotSaved = e.memory.activationsSaved;
        const int64_t gotPeak = e.memory.peak - e.memory.weights;
        const double es = errPct(gotSaved, saved), ep = errPct(gotPeak, peak);
        if (std::getenv("HEADROOM_ACCURACY_TABLE"))
            std::printf("| %s | %lld | %s | %lld | %lld | %+.2f %% | %lld | %lld | %+.2f %% |\n",
                        name.toStdString().c_str(), static_cast<long long>(batch),
                        seq ? std::to_string(seq).c_str() : "-", static_cast<long long>(saved),
                        static_cast<long long>(gotSaved), es, static_cast<long long>(peak),
                        static_cast<long long>(gotPeak), ep);
        QVERIFY2(
            std::abs(es) <= 3.0,
            qPrintable(
                QStringLiteral("activations_saved %1 vs truth %2 (%3 %)").arg(gotSaved).arg(saved).arg(es, 0, 'f', 2)));
        QVERIFY2(std::abs(ep) <= 10.0,
                 qPrintable(
                     QStringLiteral("peak - weights %1 vs truth %2 (%3 %)").arg(gotPeak).arg(peak).arg(ep, 0, 'f', 2)));
    }
};

QTEST_APPLESS_MAIN(TestAccuracy)
#include "tst_accuracy.moc"
