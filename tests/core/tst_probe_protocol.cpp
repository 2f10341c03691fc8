// The probe protocol: plan and result JSON round trips, one-line errors on malformed documents, the
// theory-side helpers against hand-computed values, and makeProbePlan on corpus models.
#include "headroom/base/error.h"
#include "headroom/load/loader.h"
#include "headroom/probe/probe_protocol.h"

#include <QTest>

#include <map>
#include <set>

using namespace headroom;
using json = nlohmann::json;

namespace {

// Qt's QCOMPARE would find headroom::toString(Status) by ADL, which returns a string_view.
QString st(ProbeResult::Status s) { return QString::fromLatin1(toString(s).data(), qsizetype(toString(s).size())); }

using K = AllocEvent::Kind;

std::vector<AllocEvent> toyEvents()
{
    // weights 100 (kept), act A 40, act B 60, free A, grad 100, free B, free grad
    return {{K::Alloc, 1, 100, Category::Weights, 0, 0},    {K::Alloc, 2, 40, Category::Activations, 1, 1},
            {K::Alloc, 3, 60, Category::Activations, 2, 2}, {K::Free, 2, 40, Category::Activations, 3, 1},
            {K::Alloc, 4, 100, Category::Gradients, 4, 0},  {K::Free, 3, 60, Category::Activations, 5, 2},
            {K::Free, 4, 100, Category::Gradients, 6, 0}};
}

bool sameEvents(const std::vector<AllocEvent>& a, const std::vector<AllocEvent>& b)
{
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].kind != b[i].kind || a[i].id != b[i].id || a[i].bytes != b[i].bytes ||
            a[i].category != b[i].category || a[i].step != b[i].step || a[i].tensor != b[i].tensor)
            return false;
    return true;
}

// Every alloc has a unique id and is freed exactly once, after it was allocated.
QString balanceProblem(const std::vector<AllocEvent>& events)
{
    std::set<int64_t> live, seen;
    for (const AllocEvent& e : events) {
        if (e.kind == K::Alloc) {
            if (!seen.insert(e.id).second)
                return QStringLiteral("id %1 allocated twice").arg(e.id);
            live.insert(e.id);
        } else if (live.erase(e.id) != 1) {
            return QStringLiteral("id %1 freed while not live").arg(e.id);
        }
    }
    return live.empty() ? QString() : QStringLiteral("%1 allocations never freed").arg(live.size());
}

json validPlanJson()
{
    ProbePlan p;
    p.events = toyEvents();
    return toJson(p);
}

} // namespace

class TestProbeProtocol : public QObject
{
    Q_OBJECT

private slots:
    void planRoundTrip()
    {
        ProbePlan p;
        p.model = "resnet50.onnx";
        p.mode = "caching";
        p.batch = 32;
        p.device = 1;
        p.timeLimitSeconds = 90;
        p.dtype = "bf16";
        p.train = false;
        p.events = toyEvents();
        const auto toy = toyEvents();
        p.batchPlans = {{16, toy}, {64, {toy.begin(), toy.begin() + 2}}};
        p.convs = {{32, 3, 224, 224, 64, 7, 7, 3, 3, 2, 2, 1, 1, 1}, {32, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 32}};
        p.gemms = {{32, 1000, 2048, 1}, {128, 256, 64, 4}};

        // Through text, as over the pipe.
        const ProbePlan q = planFromJson(json::parse(toJson(p).dump()));
        QCOMPARE(q.model, p.model);
        QCOMPARE(q.mode, p.mode);
        QCOMPARE(q.batch, p.batch);
        QCOMPARE(q.device, p.device);
        QCOMPARE(q.timeLimitSeconds, p.timeLimitSeconds);
        QCOMPARE(q.dtype, p.dtype);
        QCOMPARE(q.train, false);
        QVERIFY(sameEvents(q.events, p.events));
        QCOMPARE(q.batchPlans.size(), size_t(2));
        QCOMPARE(q.batchPlans[1].first, int64_t(64));
        QVERIFY(sameEvents(q.batchPlans[1].second, p.batchPlans[1].second));
        QVERIFY(q.convs == p.convs);
        QVERIFY(q.gemms == p.gemms);
        QCOMPARE(toJson(q).dump(), toJson(p).dump());
        QCOMPARE(toJson(p)["schema"].get<std::string>(), std::string("headroom.plan/1"));
        // Events are compact rows: [kind, id, bytes, category, step, tensor].
        QCOMPARE(toJson(p)["events"][1].dump(), std::string(R"(["alloc",2,40,"activations",1,1])"));
    }

    void resultRoundTrip()
    {
        ProbeResult r;
        r.status = ProbeResult::Status::Ok;
        r.message = "fits";
        r.deviceName = "NVIDIA H100 80GB HBM3";
        r.deviceIndex = 0;
        r.deviceCount = 1;
        r.devices = {"NVIDIA H100 80GB HBM3"};
        r.driverVersion = 13000;
        r.runtimeVersion = 13000;
        r.totalBytes = 85'520'809'984;
        r.freeBytes = 84'960'000'000;
        r.contextBytes = 530'579'456;
        r.contextMethod = "nvml";
        r.baselineBytes = 600'000'000;
        r.exactPeak = 12'345'678'912;
        r.cachingPeak = 13'000'000'000;
        r.cachingSegments = 42;
        r.usedAfterEvent = {2097152, 4194304, 0};
        r.reservedAfterEvent = {20971520, 20971520, 20971520};
        r.peakByCategory = peakByCategory(toyEvents());
        r.cublasWorkspace = 33554432;
        r.cudnnWorkspace = -1;
        r.cublasHandleBytes = 1048576;
        r.measuredMaxBatch = 192;
        r.maxBatchIsLowerBound = true;
        r.batchTrials = {{128, true, 10}, {256, false, 0}};
        r.oom = true;
        r.oomAtEvent = 17;
        r.seconds = 3.5;
        r.warnings = {"cuDNN not found"};
        r.exitCode = 0;
        const ProbeResult q = probeResultFromJson(json::parse(toJson(r).dump()));
        QCOMPARE(toJson(q).dump(), toJson(r).dump());
        QCOMPARE(q.totalBytes, r.totalBytes);
        QCOMPARE(q.peakByCategory, r.peakByCategory);
        QCOMPARE(q.batchTrials.size(), size_t(2));
        QVERIFY(q.batchTrials[0].fits && !q.batchTrials[1].fits);
        QCOMPARE(toJson(r)["schema"].get<std::string>(), std::string("headroom.probe/1"));
        // Every status survives.
        for (int s = 0; s <= int(ProbeResult::Status::Cancelled); ++s) {
            r.status = static_cast<ProbeResult::Status>(s);
            QCOMPARE(st(probeResultFromJson(toJson(r)).status), st(r.status));
        }
    }

    void minimalResult()
    {
        // A no-device answer carries only status and message; everything else takes "not measured".
        const ProbeResult r = probeResultFromJson(
            json::parse(R"({"schema":"headroom.probe/1","status":"no_device","message":"no CUDA device found"})"));
        QCOMPARE(st(r.status), st(ProbeResult::Status::NoDevice));
        QCOMPARE(r.measuredMaxBatch, int64_t(-1));
        QCOMPARE(r.cublasWorkspace, int64_t(-1));
        QVERIFY(r.usedAfterEvent.empty());
    }

    void malformedPlan_data()
    {
        QTest::addColumn<QString>("patch"); // JSON merge patch applied to a valid plan
        QTest::addColumn<QString>("error");
        QTest::newRow("wrong schema") << R"({"schema":"headroom.plan/2"})"
                                      << "plan: unsupported schema \"headroom.plan/2\"";
        QTest::newRow("schema type") << R"({"schema":3})"
                                     << "plan: field \"schema\" has the wrong type (number)";
        QTest::newRow("mode") << R"({"mode":"turbo"})"
                              << "plan: unknown mode \"turbo\"";
        QTest::newRow("batch type") << R"({"batch":"eight"})"
                                    << "plan: field \"batch\" has the wrong type (string)";
        QTest::newRow("negative batch") << R"({"batch":-1})"
                                        << "plan: field \"batch\" is negative";
        QTest::newRow("time limit") << R"({"time_limit_s":0})"
                                    << "plan: field \"time_limit_s\" must be positive";
        QTest::newRow("dtype") << R"({"dtype":"fp8"})"
                               << "plan: unknown dtype \"fp8\"";
        QTest::newRow("events type") << R"({"events":{}})"
                                     << "plan: \"events\" is not an array";
        QTest::newRow("event shape") << R"({"events":[["alloc",1]]})"
                                     << "plan: event 0 is not [";
        QTest::newRow("event kind") << R"({"events":[["grab",1,2,"weights",0,0]]})"
                                    << "plan: event 0 has unknown kind \"grab\"";
        QTest::newRow("event category") << R"({"events":[["alloc",1,2,"snacks",0,0]]})"
                                        << "plan: event 0 has unknown category \"snacks\"";
        QTest::newRow("event bytes") << R"({"events":[["alloc",1,-2,"weights",0,0]]})"
                                     << "plan: event 0 has negative bytes";
        QTest::newRow("batch plan batch") << R"({"batch_plans":[{"batch":0,"events":[]}]})"
                                          << "plan: a batch plan has batch 0";
        QTest::newRow("batch plan events") << R"({"batch_plans":[{"batch":4}]})"
                                           << "plan: the batch plan for batch 4 has no events";
        QTest::newRow("conv dims") << R"({"convs":[{"n":1,"c":3,"h":8,"w":8,"k":0,"r":3,"s":3}]})"
                                   << "plan: a conv has a non-positive dimension";
        QTest::newRow("conv missing") << R"({"convs":[{"n":1}]})"
                                      << "plan: missing field \"c\"";
        QTest::newRow("conv pad") << R"({"convs":[{"n":1,"c":3,"h":8,"w":8,"k":4,"r":3,"s":3,"pad":[1]}]})"
                                  << "plan: field \"pad\" is not [h, w]";
        QTest::newRow("gemm") << R"({"gemms":[{"m":1,"n":2,"k":-3}]})"
                              << "plan: a gemm has a non-positive dimension";
    }
    void malformedPlan()
    {
        QFETCH(QString, patch);
        QFETCH(QString, error);
        json j = validPlanJson();
        j.merge_patch(json::parse(patch.toStdString()));
        try {
            planFromJson(j);
            QFAIL("no error");
        } catch (const Error& e) {
            const std::string what = e.what();
            QVERIFY2(what.rfind(error.toStdString(), 0) == 0, what.c_str());
            QVERIFY(what.find('\n') == std::string::npos);
        }
    }

    void malformedDocuments_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("isPlan");
        QTest::addColumn<QString>("error");
        QTest::newRow("plan array") << "[]" << true << "plan: expected a JSON object, got array";
        QTest::newRow("plan no schema") << "{}" << true << "plan: missing field \"schema\"";
        QTest::newRow("result schema") << R"({"schema":"headroom.plan/1","status":"ok"})" << false
                                       << "probe result: unsupported schema";
        QTest::newRow("result status") << R"({"schema":"headroom.probe/1","status":"great"})" << false
                                       << "probe result: unknown status \"great\"";
        QTest::newRow("result no status")
            << R"({"schema":"headroom.probe/1"})" << false << "probe result: missing field \"status\"";
        QTest::newRow("result series") << R"({"schema":"headroom.probe/1","status":"ok","used_after_event":[1,"x"]})"
                                       << false << "probe result: field \"used_after_event\" holds a non-integer";
        QTest::newRow("result categories")
            << R"({"schema":"headroom.probe/1","status":"ok","peak_by_category":[[1,2]]})" << false
            << "probe result: \"peak_by_category\" rows must be";
    }
    void malformedDocuments()
    {
        QFETCH(QString, text);
        QFETCH(bool, isPlan);
        QFETCH(QString, error);
        const json j = json::parse(text.toStdString());
        try {
            if (isPlan)
                planFromJson(j);
            else
                probeResultFromJson(j);
            QFAIL("no error");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).rfind(error.toStdString(), 0) == 0, e.what());
        }
    }

    void names()
    {
        for (int c = 0; c < int(Category::Count); ++c) {
            const auto cat = static_cast<Category>(c);
            QCOMPARE(parseProbeCategory(probeCategoryName(cat)), std::optional<Category>(cat));
        }
        QCOMPARE(probeCategoryName(Category::MasterWeights), std::string_view("master_weights"));
        QCOMPARE(toString(ProbeResult::Status::TimedOut), std::string_view("timed_out"));
        QVERIFY(!parseProbeStatus("fine"));
    }

    void theoryFromEvents()
    {
        // Hand-computed from toyEvents(): 100, 140, 200, 160, 260, 200, 100.
        QCOMPARE(liveAfterEvent(toyEvents()), (std::vector<int64_t>{100, 140, 200, 160, 260, 200, 100}));
        const auto peaks = peakByCategory(toyEvents());
        QCOMPARE(peaks.size(), size_t(Category::Count));
        std::map<std::string, int64_t> m(peaks.begin(), peaks.end());
        QCOMPARE(m["weights"], int64_t(100));
        QCOMPARE(m["activations"], int64_t(100)); // A and B live together
        QCOMPARE(m["gradients"], int64_t(100));
        QCOMPARE(m["optimizer"], int64_t(0));
        QCOMPARE(peaks.front().first, std::string("weights")); // enum order
    }

    void bisectionGrid()
    {
        const auto b = bisectionBatches(100, 32);
        QVERIFY(std::is_sorted(b.begin(), b.end()));
        QVERIFY(std::adjacent_find(b.begin(), b.end()) == b.end());
        QCOMPARE(b.front(), int64_t(1));
        QVERIFY(std::binary_search(b.begin(), b.end(), int64_t(32)));
        QVERIFY(std::binary_search(b.begin(), b.end(), int64_t(100)));
        QVERIFY(std::binary_search(b.begin(), b.end(), int64_t(101)));
        QVERIFY(std::binary_search(b.begin(), b.end(), int64_t(256)));
        QVERIFY(b.back() <= 400);
        // Neighbourhood steps are at most ~10 %.
        for (size_t i = 1; i < b.size(); ++i)
            if (b[i] > 55 && b[i] <= 200)
                QVERIFY2(b[i] <= b[i - 1] * 1.11 + 1, qPrintable(QString::number(b[i])));
        QCOMPARE(bisectionBatches(0, 0, 16), (std::vector<int64_t>{1, 2, 4, 8, 16}));
    }

    void makePlan_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("mode");
        QTest::newRow("resnet18 train") << "resnet18.onnx"
                                        << "train";
        QTest::newRow("bert_like train") << "bert_like.onnx"
                                         << "train";
        QTest::newRow("resnet18 infer") << "resnet18.onnx"
                                        << "infer";
    }
    void makePlan()
    {
        QFETCH(QString, file);
        QFETCH(QString, mode);
        const Model model = loadModel(std::string(HEADROOM_TEST_DATA) + "/" + file.toStdString());
        QVERIFY(model.batchSymbol >= 0);
        Config config;
        config.symbols = model.defaultBindings();
        config.symbols[size_t(model.batchSymbol)] = 4;
        config.mode = *parseMode(mode.toStdString());
        const ProbePlan plan = makeProbePlan(model, config, {1, 2, 8});

        QCOMPARE(plan.batch, int64_t(4));
        QVERIFY(!plan.events.empty());
        QCOMPARE(balanceProblem(plan.events), QString());
        QCOMPARE(liveAfterEvent(plan.events).back(), int64_t(0));
        QCOMPARE(plan.batchPlans.size(), size_t(3));
        int64_t previousPeak = 0;
        for (const auto& [batch, events] : plan.batchPlans) {
            QCOMPARE(balanceProblem(events), QString());
            const auto live = liveAfterEvent(events);
            const int64_t peak = *std::max_element(live.begin(), live.end());
            QVERIFY2(peak > previousPeak, qPrintable(QStringLiteral("batch %1").arg(batch)));
            previousPeak = peak;
            // The plan at a batch is exactly the engine's timeline at that batch (plus the final frees).
            Config at = config;
            at.symbols[size_t(model.batchSymbol)] = batch;
            const auto engineLive = liveAfterEvent(evaluate(model, at).events);
            QCOMPARE(peak, *std::max_element(engineLive.begin(), engineLive.end()));
        }
        // The theory peak of the plan is the engine's peak.
        const Evaluation main = evaluate(model, config);
        const auto live = liveAfterEvent(plan.events);
        QCOMPARE(*std::max_element(live.begin(), live.end()), main.memory.peak);

        if (file.startsWith(QLatin1String("resnet18"))) {
            QVERIFY(!plan.convs.empty());
            // conv1: 4x3x224x224 input, 64 7x7 filters, stride 2, pad 3.
            const ProbePlan::Conv conv1{4, 3, 224, 224, 64, 7, 7, 3, 3, 2, 2, 1, 1, 1};
            QVERIFY(std::find(plan.convs.begin(), plan.convs.end(), conv1) != plan.convs.end());
            // fc: [4,512] x [512,1000] (Gemm, transB).
            const ProbePlan::Gemm fc{4, 1000, 512, 1};
            QVERIFY(std::find(plan.gemms.begin(), plan.gemms.end(), fc) != plan.gemms.end());
        } else {
            QVERIFY(plan.convs.empty());
            QVERIFY(!plan.gemms.empty());
        }
        // And the plan survives the wire.
        QVERIFY(sameEvents(planFromJson(json::parse(toJson(plan).dump())).events, plan.events));
    }
};

QTEST_GUILESS_MAIN(TestProbeProtocol)
#include "tst_probe_protocol.moc"
