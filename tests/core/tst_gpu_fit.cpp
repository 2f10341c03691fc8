// The engine, the allocator model and the fit against PyTorch 2.11 on an H100 80GB (tests/data/gpu):
//  - every training step's allocated peak (memory.peak vs max_allocated) within 10 %, their median within 5 %;
//  - the reserved peak (memory.reserved_peak vs max_reserved): median error within 5 %;
//  - the optimizer state's share of it (Adam's max_reserved less SGD's): median within 1 % (expected failure);
//  - the four max batches: not above the first batch that ran out of memory, within [-5 %, +1 %] of the
//    largest batch that ran;
//  - the H100 preset: PyTorch's capacity and the memory outside the allocator as measured.
// Points that only a saved-for-backward / attention / autocast rule can fix are listed in kRuleGaps with
// the reason: QEXPECT_FAIL, so that a rule landing shows up as XPASS and its row is deleted.
// HEADROOM_GPU_TABLE=1 prints the Markdown tables of docs/ACCURACY.md's GPU section.
#include "headroom/hardware/gpus.h"
#include "headroom/load/loader.h"
#include "headroom/memory/engine.h"

#include <QTest>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

using namespace headroom;

namespace {

// "model bBATCH dtype" (optimizer-independent) or "model maxbatch" -> why the figure is off today.
const std::map<std::string, const char*> kRuleGaps = {
    {"lstm_tagger b8 fp32", "cuDNN RNN workspace / reserve space (gpurules)"},
    {"resnet18 b8 fp32 sgd", "first point of the truth run: its max_allocated also holds the library handles' "
                             "first-use allocations that every later point's baseline subtracts"},
    {"vgg16 maxbatch", "allocated peak ~2 % low: one tensor the size of a ReLU output that feeds a MaxPool is "
                       "missing at that ReLU's backward (the CPU truth lacks it too, so not cuDNN; op not found in "
                       "PyTorch's source), and even with it the bound would be 1095: >= ~1 GiB more is missing "
                       "at the boundary (docs/ACCURACY.md, Max batch)"},
};

const char* gapFor(const std::string& key)
{
    auto it = kRuleGaps.find(key);
    return it == kRuleGaps.end() ? nullptr : it->second;
}

std::vector<nlohmann::json> lines(const char* file)
{
    std::ifstream in(std::string(HEADROOM_TEST_DATA) + "/gpu/" + file);
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

// gpu_truth.py's conventions: torchvision models have ReLU(inplace=True); the foreach optimizers;
// cross-entropy on the logits.
bool torchvisionModel(const std::string& name)
{
    return name == "resnet18" || name == "resnet50" || name == "vgg16" || name == "mobilenet_v2" ||
           name == "squeezenet1_1";
}

Config configFor(const nlohmann::json& p, int64_t batch)
{
    const std::string name = p["model"].get<std::string>();
    const Model& m = model(name);
    Config c;
    c.mode = Mode::Train;
    c.dtype = *parseDtype(p.value("dtype", std::string("fp32")));
    c.optimizer = *parseOptimizer(p["optimizer"].get<std::string>());
    c.loss = Loss::CrossEntropy;
    c.allocator = AllocatorMode::Caching;
    c.inplace = torchvisionModel(name);
    // tiny_gpt writes its attention out with matmul + softmax (corpus make_corpus.py), so PyTorch keeps the
    // scores: `math`. bert_like's nn.TransformerEncoderLayer runs fused SDPA: the default.
    c.attention = name == "tiny_gpt" ? Attention::Math : Attention::Fused;
    c.gpu = *findGpu("h100");
    c.symbols = m.defaultBindings();
    if (m.batchSymbol >= 0)
        c.symbols[static_cast<size_t>(m.batchSymbol)] = batch;
    const int s = m.symbolIndex("seq");
    if (s >= 0 && p.contains("seq") && p["seq"].is_number())
        c.symbols[static_cast<size_t>(s)] = p["seq"].get<int64_t>();
    return c;
}

double errPct(int64_t got, int64_t want)
{
    return want == 0 ? 0.0 : 100.0 * (static_cast<double>(got) - static_cast<double>(want)) / static_cast<double>(want);
}

std::string pointKey(const nlohmann::json& p, bool withOptimizer)
{
    std::string k = p["model"].get<std::string>() + " b" + std::to_string(p["batch"].get<int64_t>()) + " " +
                    p["dtype"].get<std::string>();
    return withOptimizer ? k + " " + p["optimizer"].get<std::string>() : k;
}

const char* pointGap(const nlohmann::json& p)
{
    if (const char* g = gapFor(pointKey(p, true)))
        return g;
    return gapFor(pointKey(p, false));
}

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool printTable() { return std::getenv("HEADROOM_GPU_TABLE") != nullptr; }

} // namespace

class TestGpuFit : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QVERIFY2(lines("h100-points.jsonl").size() == 40, "tests/data/gpu/h100-points.jsonl: 40 points expected");
        QVERIFY2(lines("h100-maxbatch.jsonl").size() == 4, "tests/data/gpu/h100-maxbatch.jsonl: 4 lines expected");
    }

    void allocatedPeak_data()
    {
        QTest::addColumn<int>("index");
        const auto pts = lines("h100-points.jsonl");
        for (size_t i = 0; i < pts.size(); ++i)
            QTest::newRow((pointKey(pts[i], true)).c_str()) << static_cast<int>(i);
    }

    void allocatedPeak()
    {
        QFETCH(int, index);
        const nlohmann::json p = lines("h100-points.jsonl")[static_cast<size_t>(index)];
        const Evaluation e = evaluate(model(p["model"].get<std::string>()), configFor(p, p["batch"].get<int64_t>()));
        const double err = errPct(e.memory.peak, p["max_allocated"].get<int64_t>());
        if (const char* gap = pointGap(p))
            QEXPECT_FAIL("", gap, Continue);
        QVERIFY2(std::fabs(err) <= 10.0, qPrintable(QStringLiteral("allocated peak off by %1 %").arg(err, 0, 'f', 1)));
    }

    // The acceptance over the points no rule gap excuses: median within 5 %.
    void allocatedMedian()
    {
        std::vector<double> errs;
        for (const nlohmann::json& p : lines("h100-points.jsonl")) {
            if (pointGap(p))
                continue;
            const Evaluation e = evaluate(model(p["model"].get<std::string>()),
                                          configFor(p, p["batch"].get<int64_t>()));
            errs.push_back(std::fabs(errPct(e.memory.peak, p["max_allocated"].get<int64_t>())));
        }
        QVERIFY(errs.size() >= 25);
        QVERIFY2(median(errs) <= 5.0, qPrintable(QStringLiteral("median |error| %1 %").arg(median(errs), 0, 'f', 1)));
    }

    void reservedMedian()
    {
        std::vector<double> errs;
        if (printTable())
            std::printf(
                "| model | batch | seq | optimizer | dtype | allocated PyTorch | Headroom | error | reserved PyTorch | Headroom | error |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (const nlohmann::json& p : lines("h100-points.jsonl")) {
            const Evaluation e = evaluate(model(p["model"].get<std::string>()),
                                          configFor(p, p["batch"].get<int64_t>()));
            const int64_t ta = p["max_allocated"].get<int64_t>(), tr = p["max_reserved"].get<int64_t>();
            const double er = errPct(e.memory.reservedPeak, tr);
            // A reserved figure is at least the allocated one (segments hold blocks).
            QVERIFY(e.memory.reservedPeak >= e.memory.peak);
            if (!pointGap(p))
                errs.push_back(std::fabs(er));
            if (printTable())
                std::printf(
                    "| %s | %lld | %s | %s | %s | %.1f MiB | %.1f MiB | %+.1f %%%s | %.1f MiB | %.1f MiB | %+.1f %% |\n",
                    p["model"].get<std::string>().c_str(), static_cast<long long>(p["batch"].get<int64_t>()),
                    p["seq"].is_number() ? std::to_string(p["seq"].get<int64_t>()).c_str() : "-",
                    p["optimizer"].get<std::string>().c_str(), p["dtype"].get<std::string>().c_str(),
                    static_cast<double>(ta) / 1048576.0, static_cast<double>(e.memory.peak) / 1048576.0,
                    errPct(e.memory.peak, ta), pointGap(p) ? " (rule gap)" : "", static_cast<double>(tr) / 1048576.0,
                    static_cast<double>(e.memory.reservedPeak) / 1048576.0, er);
        }
        QVERIFY2(median(errs) <= 5.0,
                 qPrintable(QStringLiteral("reserved median |error| %1 %").arg(median(errs), 0, 'f', 1)));
    }

    // What the optimizer's state adds to the reserved figure: max_reserved with Adam less max_reserved with
    // SGD at the same model, batch, sequence and dtype (the truth has 16 such pairs). The difference cancels
    // what both runs share (the cuDNN workspaces, the activations' own cache), so it isolates the state:
    // created by the first step() in the blocks backward freed, then the second step's new segments. Median
    // within 1 % of the Adam run's figure: 2.8 % today, with the state one block allocated before one steady
    // step; 0.1 % with the first step replayed (commit 42ad655, not adopted: docs/ACCURACY.md, "The
    // optimizer's first step").
    void reservedOptimizerShare()
    {
        std::map<std::string, std::pair<const nlohmann::json*, const nlohmann::json*>> pairs; // sgd, adam
        const auto pts = lines("h100-points.jsonl");
        for (const nlohmann::json& p : pts) {
            const std::string opt = p["optimizer"].get<std::string>();
            if (opt != "sgd" && opt != "adam")
                continue;
            const std::string key = p["model"].get<std::string>() + "/" + std::to_string(p["batch"].get<int64_t>()) +
                                    "/" + p["seq"].dump() + "/" + p["dtype"].get<std::string>();
            (opt == "sgd" ? pairs[key].first : pairs[key].second) = &p;
        }
        std::vector<double> errs;
        for (const auto& [key, pr] : pairs) {
            if (!pr.first || !pr.second)
                continue;
            const nlohmann::json& sgd = *pr.first;
            const nlohmann::json& adam = *pr.second;
            const int64_t hSgd = evaluate(model(sgd["model"].get<std::string>()),
                                          configFor(sgd, sgd["batch"].get<int64_t>()))
                                     .memory.reservedPeak;
            const int64_t hAdam = evaluate(model(adam["model"].get<std::string>()),
                                           configFor(adam, adam["batch"].get<int64_t>()))
                                      .memory.reservedPeak;
            const int64_t truth = adam["max_reserved"].get<int64_t>() - sgd["max_reserved"].get<int64_t>();
            errs.push_back(std::fabs(100.0 * static_cast<double>((hAdam - hSgd) - truth) /
                                     static_cast<double>(adam["max_reserved"].get<int64_t>())));
        }
        QVERIFY(errs.size() >= 16);
        QEXPECT_FAIL("",
                     "the optimizer state is one block allocated before one steady step; PyTorch creates it at the "
                     "first step() in the blocks backward freed (docs/ACCURACY.md, \"The optimizer's first step\")",
                     Continue);
        QVERIFY2(
            median(errs) <= 1.0,
            qPrintable(QStringLiteral("state's reserved share: median |error| %1 %").arg(median(errs), 0, 'f', 2)));
    }

    void maxBatch_data()
    {
        QTest::addColumn<int>("index");
        const auto rows = lines("h100-maxbatch.jsonl");
        for (size_t i = 0; i < rows.size(); ++i)
            QTest::newRow(rows[i]["model"].get<std::string>().c_str()) << static_cast<int>(i);
    }

    // PyTorch's search stopped at 1 %: the real boundary lies in [max_batch_fits, first_oom - 1].
    void maxBatch()
    {
        QFETCH(int, index);
        const nlohmann::json r = lines("h100-maxbatch.jsonl")[static_cast<size_t>(index)];
        const std::string name = r["model"].get<std::string>();
        const Config c = configFor(r, 1);
        const int64_t got = headroom::maxBatch(model(name), c);
        const int64_t ran = r["max_batch_fits"].get<int64_t>(), oom = r["first_oom"].get<int64_t>();
        if (printTable())
            std::printf("| %s | %s | %s | %lld (first OOM %lld) | %lld | %+.1f %% |\n", name.c_str(),
                        r["seq"].is_number() ? std::to_string(r["seq"].get<int64_t>()).c_str() : "-",
                        r["optimizer"].get<std::string>().c_str(), static_cast<long long>(ran),
                        static_cast<long long>(oom), static_cast<long long>(got), errPct(got, ran));
        const char* gap = gapFor(name + " maxbatch");
        if (gap)
            QEXPECT_FAIL("", gap, Continue);
        const bool below = got < oom;
        const bool near = got >= static_cast<int64_t>(std::ceil(0.95 * static_cast<double>(ran))) &&
                          got <= static_cast<int64_t>(std::floor(1.01 * static_cast<double>(ran)));
        QVERIFY2(below && near, qPrintable(QStringLiteral("max batch %1: PyTorch ran %2, first OOM %3 (never at or "
                                                          "above the OOM, within [-5 %, +1 %] of the run)")
                                               .arg(got)
                                               .arg(ran)
                                               .arg(oom)));
    }

    // The capacity PyTorch reports on this H100 and the memory outside its allocator.
    void h100Preset()
    {
        const GpuSpec g = *findGpu("h100");
        for (const nlohmann::json& r : lines("h100-maxbatch.jsonl"))
            QCOMPARE(g.capacity, r["total_bytes"].get<int64_t>());
        int64_t lo = INT64_MAX, hi = 0;
        for (const nlohmann::json& p : lines("h100-points.jsonl")) {
            lo = std::min(lo, p["non_torch_bytes"].get<int64_t>());
            hi = std::max(hi, p["non_torch_bytes"].get<int64_t>());
        }
        // Never below what was measured: the fit must not promise bytes the stack keeps.
        QCOMPARE(g.context, hi);
        QVERIFY(lo > 700LL << 20);
    }

    // At capacity PyTorch frees its cached segments and retries before it gives up: a batch whose
    // unconstrained reserved need is over the budget can still fit.
    void fitIsDecidedUnderCapacity()
    {
        const nlohmann::json r = lines("h100-maxbatch.jsonl")[0]; // resnet50, Adam
        Config c = configFor(r, 1);
        const Model& m = model("resnet50");
        const int64_t b = headroom::maxBatch(m, c);
        QVERIFY(b > 1);
        c.symbols[static_cast<size_t>(m.batchSymbol)] = b;
        const EnginePlan plan = makePlan(m);
        const Evaluation e = evaluate(plan, c);
        const Fit f = computeFit(plan, c, e);
        QVERIFY(f.fits);
        QVERIFY(f.headroom >= 0);
        QVERIFY2(neededBytes(c, e) > c.gpu.capacity,
                 "this batch is meant to fit only because the allocator releases its cache at capacity");
        c.symbols[static_cast<size_t>(m.batchSymbol)] = b + 1;
        QVERIFY(!fitsOnGpu(plan, c));
        // the exact allocator gives an upper bound: no replay can hold fewer bytes than are allocated
        Config exact = c;
        exact.allocator = AllocatorMode::Exact;
        QVERIFY(headroom::maxBatch(m, exact) >= b);
    }
};

QTEST_APPLESS_MAIN(TestGpuFit)
#include "tst_gpu_fit.moc"
