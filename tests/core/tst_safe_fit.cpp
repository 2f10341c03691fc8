// The safety margin (docs/ACCURACY.md "Safe max batch") against the real OOM boundaries measured on an H100
// (tests/data/gpu/h100-maxbatch.jsonl, PyTorch 2.11): the safe max batch is never above the largest batch
// that ran and within 5 % below it, and the verdict at the first batch that ran out of memory is never
// "fits". The margin is one rule for every model (a share of the step's largest allocation).
#include "headroom/hardware/gpus.h"
#include "headroom/hardware/multigpu.h"
#include "headroom/load/loader.h"
#include "headroom/memory/engine.h"

#include <QTest>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

using namespace headroom;

namespace {

std::vector<nlohmann::json> boundaries()
{
    std::ifstream in(std::string(HEADROOM_TEST_DATA) + "/gpu/h100-maxbatch.jsonl");
    std::vector<nlohmann::json> out;
    for (std::string line; std::getline(in, line);)
        if (!line.empty())
            out.push_back(nlohmann::json::parse(line));
    return out;
}

const Model& model(const std::string& name)
{
    static std::map<std::string, Model> cache;
    auto it = cache.find(name);
    if (it == cache.end())
        it = cache.emplace(name, loadModel(std::string(HEADROOM_TEST_DATA) + "/" + name + ".onnx")).first;
    return it->second;
}

// gpu_truth.py's settings (tests/data/gpu/README.md): torchvision's inplace ReLUs, cross-entropy, tiny_gpt's
// attention written out (math), bert_like's fused SDPA.
Config configFor(const nlohmann::json& r, int64_t batch)
{
    const std::string name = r["model"].get<std::string>();
    const Model& m = model(name);
    Config c;
    c.mode = Mode::Train;
    c.dtype = *parseDtype(r["dtype"].get<std::string>());
    c.optimizer = *parseOptimizer(r["optimizer"].get<std::string>());
    c.loss = Loss::CrossEntropy;
    c.allocator = AllocatorMode::Caching;
    c.inplace = name == "resnet50" || name == "vgg16";
    c.attention = name == "tiny_gpt" ? Attention::Math : Attention::Fused;
    c.gpu = *findGpu("h100");
    c.symbols = m.defaultBindings();
    c.symbols[static_cast<size_t>(m.batchSymbol)] = batch;
    const int s = m.symbolIndex("seq");
    if (s >= 0 && r["seq"].is_number())
        c.symbols[static_cast<size_t>(s)] = r["seq"].get<int64_t>();
    return c;
}

} // namespace

class TestSafeFit : public QObject
{
    Q_OBJECT

private slots:
    void safeMaxBatch_data()
    {
        QTest::addColumn<int>("index");
        const auto rows = boundaries();
        for (size_t i = 0; i < rows.size(); ++i)
            QTest::newRow(rows[i]["model"].get<std::string>().c_str()) << static_cast<int>(i);
    }
    void safeMaxBatch()
    {
        QFETCH(int, index);
        const nlohmann::json r = boundaries()[static_cast<size_t>(index)];
        const std::string name = r["model"].get<std::string>();
        const Config c = configFor(r, 1);
        const EnginePlan plan = makePlan(model(name), c);
        const int64_t safe = headroom::safeMaxBatch(plan, c);
        const int64_t expected = headroom::maxBatch(plan, c);
        const int64_t ran = r["max_batch_fits"].get<int64_t>();
        if (std::getenv("HEADROOM_GPU_TABLE"))
            std::printf("| %s | %lld (first OOM %lld) | %lld | %+.1f %% | %lld | %+.1f %% |\n", name.c_str(),
                        static_cast<long long>(ran), static_cast<long long>(r["first_oom"].get<int64_t>()),
                        static_cast<long long>(expected), 100.0 * double(expected - ran) / double(ran),
                        static_cast<long long>(safe), 100.0 * double(safe - ran) / double(ran));
        QVERIFY(safe <= expected);
        QVERIFY2(safe <= ran, qPrintable(QStringLiteral("safe max batch %1 above the %2 that ran").arg(safe).arg(ran)));
        QVERIFY2(
            safe >= static_cast<int64_t>(std::ceil(0.95 * static_cast<double>(ran))),
            qPrintable(QStringLiteral("safe max batch %1 more than 5 % below the %2 that ran").arg(safe).arg(ran)));
    }

    // The verdict the outputs give: at the first batch that ran out of memory it is never "fits", at the
    // safe max batch it is "fits", and the report's max batch is the safe one with the model's own beside it.
    void verdictAtBoundary_data() { safeMaxBatch_data(); }
    void verdictAtBoundary()
    {
        QFETCH(int, index);
        const nlohmann::json r = boundaries()[static_cast<size_t>(index)];
        const std::string name = r["model"].get<std::string>();
        const Model& m = model(name);
        const Config oom = configFor(r, r["first_oom"].get<int64_t>());
        const EnginePlan plan = makePlan(m, oom);
        QVERIFY(!computeFitOnly(plan, oom, evaluate(plan, oom)).fitsSafely);
        const Config at = configFor(r, headroom::safeMaxBatch(plan, oom));
        const Evaluation e = evaluate(plan, at);
        const Fit f = computeClusterFit(plan, at, e, ClusterEvaluation{});
        QVERIFY(f.fitsSafely && f.fits);
        QCOMPARE(f.maxBatch, headroom::safeMaxBatch(plan, at));
        QCOMPARE(f.expectedMaxBatch, headroom::maxBatch(plan, at));
    }

    // The margin is a quarter of the largest allocation (hand-made events).
    void marginIsLargestBlockShare()
    {
        std::vector<AllocEvent> ev = {{AllocEvent::Kind::Alloc, 1, 4000},
                                      {AllocEvent::Kind::Alloc, 2, 10000},
                                      {AllocEvent::Kind::Free, 2, 10000},
                                      {AllocEvent::Kind::Alloc, 3, 6000}};
        QCOMPARE(safetyMargin(ev), int64_t(2500));
        QCOMPARE(safetyMargin({}), int64_t(0));
    }
};

QTEST_APPLESS_MAIN(TestSafeFit)
#include "tst_safe_fit.moc"
