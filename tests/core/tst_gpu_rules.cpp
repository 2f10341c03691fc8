// The saved-for-backward and peak rules against PyTorch 2.11 on an H100 (tests/data/gpu, tests/data/hf: the
// allocated peak `torch.cuda.max_memory_allocated()` against `memory.peak`) and against the tiny_llama full
// fine-tuning truth (tests/data/lora, its `pytorch2` figures, CPU autograd).
//  - checkpoint_sequential steps (h100-extra.jsonl): peak within 5 %, module count exact;
//  - inference peaks under torch.inference_mode() (h100-extra.jsonl): within 10 %;
//  - training steps (h100-points.jsonl, fp32 and amp-bf16) and the Hugging Face dynamo exports
//    (hf/h100-hf-points.jsonl: sdpa = fused attention, eager = math): within 5 %;
//  - tiny_llama full fine-tuning: trainable parameters exact, saved within 3 %, peak within 10 %.
// How the GPU points were measured (tests/data/gpu/README.md): input on the GPU, one warm-up step, then
// zero_grad(set_to_none) -> forward -> cross-entropy on logits.float() -> backward -> foreach step;
// torchvision's ReLUs are inplace=True except in the checkpoint runs. HEADROOM_GPU_TABLE=1 prints the
// Markdown table of docs/ACCURACY.md.
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

std::string dataPath(const std::string& rel) { return std::string(HEADROOM_TEST_DATA) + "/" + rel; }

std::vector<nlohmann::json> jsonLines(const std::string& rel)
{
    std::vector<nlohmann::json> out;
    std::ifstream in(dataPath(rel));
    std::string line;
    while (std::getline(in, line))
        if (!line.empty())
            out.push_back(nlohmann::json::parse(line));
    return out;
}

// nullptr when the file does not import (said once on stderr)
const Model* model(const std::string& rel)
{
    static std::map<std::string, std::unique_ptr<Model>> cache;
    auto it = cache.find(rel);
    if (it == cache.end()) {
        std::unique_ptr<Model> m;
        try {
            m = std::make_unique<Model>(loadModel(dataPath(rel)));
        } catch (const std::exception& e) {
            std::fprintf(stderr, "%s: %s\n", rel.c_str(), e.what());
        }
        it = cache.emplace(rel, std::move(m)).first;
    }
    return it->second.get();
}

// Points outside tolerance, with what the truth shows: marked QEXPECT_FAIL so that they stay visible (an
// unexpected pass fails the test and asks for this list to shrink).
const std::map<std::string, const char*>& knownMisses()
{
    static const std::map<std::string, const char*> known{
        {"checkpoint/vgg16 b64 k4",
         "-6.4 %: the recomputation transients of vgg16's 10-module segments are not all modelled"},
        {"inference/bert_like b64 s512 fp32",
         "+11.6 %: inference_mode runs nn.TransformerEncoderLayer's native fast path (one kernel per layer), whose "
         "internal buffers are not the exported graph's"},
        {"training/resnet18 b8 sgd fp32", "-25.8 %: cuDNN convolution workspaces go through the caching allocator "
                                          "(workspace category, not modelled per op)"},
        {"training/resnet18 b8 adam fp32", "-6.3 %: cuDNN convolution workspaces (as above)"},
        {"training/squeezenet1_1 b8 sgd fp32", "-6.5 %: cuDNN convolution workspaces (fp32 only: amp-bf16 is -1.4 %)"},
        {"training/squeezenet1_1 b8 adam fp32", "-6.6 %: cuDNN convolution workspaces (fp32 only)"},
        {"training/squeezenet1_1 b64 sgd fp32", "-5.3 %: cuDNN convolution workspaces (fp32 only)"},
        {"training/squeezenet1_1 b64 adam fp32", "-5.2 %: cuDNN convolution workspaces (fp32 only)"},
        {"training/lstm_tagger b8 s128 sgd fp32", "-44 %: cuDNN RNN workspace (allocated through the caching "
                                                  "allocator, about 18 MB here) is not modelled"},
        {"training/lstm_tagger b8 s128 adam fp32", "-33 %: cuDNN RNN workspace (as above)"},
        {"training/bert_like b32 s512 adam amp-bf16",
         "-6.2 %: the saved set is autocast's (126 MB per layer); a backward transient of about 40 MB is not found"},
    };
    return known;
}

void expectKnownMiss(const char* function)
{
    const auto& known = knownMisses();
    const auto it = known.find(std::string(function) + "/" + QTest::currentDataTag());
    if (it != known.end())
        QEXPECT_FAIL("", it->second, Continue);
}

bool table() { return std::getenv("HEADROOM_GPU_TABLE") != nullptr; }

double errPct(int64_t got, int64_t want)
{
    return want == 0 ? 0.0 : 100.0 * (static_cast<double>(got) - static_cast<double>(want)) / static_cast<double>(want);
}

bool torchvision(const std::string& name)
{
    return name == "resnet18" || name == "resnet50" || name == "vgg16" || name == "mobilenet_v2" ||
           name == "squeezenet1_1";
}

// The model's own symbols at (batch, seq); the sequence symbol is whichever non-batch symbol the model has.
Config bound(const Model& m, int64_t batch, int64_t seq)
{
    Config c;
    c.loss = Loss::CrossEntropy;
    c.allocator = AllocatorMode::Exact;
    c.symbols = m.defaultBindings();
    if (m.batchSymbol >= 0)
        c.symbols[static_cast<size_t>(m.batchSymbol)] = batch;
    if (seq > 0)
        for (size_t i = 0; i < m.symbols.size(); ++i)
            if (static_cast<int>(i) != m.batchSymbol)
                c.symbols[i] = seq;
    return c;
}

void addPointColumns()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("name");
    QTest::addColumn<qint64>("batch");
    QTest::addColumn<qint64>("seq");
    QTest::addColumn<QString>("optimizer");
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<QString>("attention");
    QTest::addColumn<qint64>("truth");
}

struct Row
{
    std::string what;
    int64_t truth = 0, got = 0;
};

void report(const char* kind, const QString& tag, int64_t truth, int64_t got, double tol)
{
    const double e = errPct(got, truth);
    if (table())
        std::printf("| %s | %s | %lld | %lld | %+.1f %% | %s |\n", kind, qPrintable(tag), static_cast<long long>(truth),
                    static_cast<long long>(got), e, std::abs(e) <= tol ? "ok" : "FAIL");
}

} // namespace

class TestGpuRules : public QObject
{
    Q_OBJECT

    void runPoint(int segments, bool infer, double tol)
    {
        QFETCH(QString, file);
        QFETCH(QString, name);
        QFETCH(qint64, batch);
        QFETCH(qint64, seq);
        QFETCH(QString, optimizer);
        QFETCH(QString, dtype);
        QFETCH(QString, attention);
        QFETCH(qint64, truth);
        const Model* m = model(file.toStdString());
        if (!m)
            QSKIP("the export does not import yet (see stderr)");
        Config c = bound(*m, batch, seq);
        c.mode = infer ? Mode::Infer : Mode::Train;
        c.optimizer = parseOptimizer(optimizer.toStdString()).value_or(Optimizer::Adam);
        c.dtype = parseDtype(dtype.toStdString()).value_or(DtypePolicy::FP32);
        c.attention = parseAttention(attention.toStdString()).value_or(Attention::Fused);
        c.checkpointSegments = segments;
        c.inplace = torchvision(name.toStdString()) && segments == 0 && !infer;
        const Evaluation e = evaluate(*m, c);
        const int64_t got = e.memory.peak;
        report(infer      ? "inference"
               : segments ? "checkpoint"
                          : QTest::currentTestFunction(),
               QString::fromUtf8(QTest::currentDataTag()), truth, got, tol);
        const double err = errPct(got, truth);
        expectKnownMiss(infer ? "inference" : segments ? "checkpoint" : QTest::currentTestFunction());
        QVERIFY2(
            std::abs(err) <= tol,
            qPrintable(QStringLiteral("peak %1 vs max_allocated %2 (%3 %)").arg(got).arg(truth).arg(err, 0, 'f', 2)));
    }

private slots:
    void initTestCase()
    {
        if (table()) {
            std::printf("| kind | point | PyTorch (H100) | Headroom | error | |\n");
            std::printf("|---|---|---|---|---|---|\n");
        }
    }

    // checkpoint_sequential over 23 (resnet50) / 40 (vgg16) modules, k = 1, 2, 4.
    void checkpoint_data()
    {
        addPointColumns();
        QTest::addColumn<int>("segments");
        QTest::addColumn<int>("modules");
        for (const auto& j : jsonLines("gpu/h100-extra.jsonl")) {
            if (!j.contains("checkpoint"))
                continue;
            const std::string name = j["model"];
            const int k = j["checkpoint"];
            const std::string tag = name + " b" + std::to_string(j["batch"].get<int>()) + " k" + std::to_string(k);
            QTest::newRow(tag.c_str()) << QString::fromStdString(name + ".onnx") << QString::fromStdString(name)
                                       << qint64(j["batch"].get<int64_t>()) << qint64(0)
                                       << QString::fromStdString(j["optimizer"]) << QString::fromStdString(j["dtype"])
                                       << QStringLiteral("fused") << qint64(j["max_allocated"].get<int64_t>()) << k
                                       << j["modules"].get<int>();
        }
    }
    void checkpoint()
    {
        QFETCH(QString, file);
        QFETCH(int, segments);
        QFETCH(int, modules);
        const Model* m = model(file.toStdString());
        QVERIFY(m);
        QCOMPARE(checkpointModuleCount(makePlan(*m)), modules);
        runPoint(segments, false, 5.0);
    }

    // torch.inference_mode() peaks: resnet50 fp32, bert_like fp32 (nn.TransformerEncoderLayer: fused),
    // tiny_gpt bf16 (attention written out: math).
    void inference_data()
    {
        addPointColumns();
        for (const auto& j : jsonLines("gpu/h100-extra.jsonl")) {
            if (!j.contains("mode"))
                continue;
            const std::string name = j["model"];
            const int64_t seq = j["seq"].is_null() ? 0 : j["seq"].get<int64_t>();
            const std::string tag = name + " b" + std::to_string(j["batch"].get<int>()) +
                                    (seq ? " s" + std::to_string(seq) : std::string()) + " " +
                                    j["dtype"].get<std::string>();
            QTest::newRow(tag.c_str()) << QString::fromStdString(name + ".onnx") << QString::fromStdString(name)
                                       << qint64(j["batch"].get<int64_t>()) << qint64(seq) << QStringLiteral("sgd")
                                       << QString::fromStdString(j["dtype"])
                                       << (name == "tiny_gpt" ? QStringLiteral("math") : QStringLiteral("fused"))
                                       << qint64(j["max_allocated"].get<int64_t>());
        }
    }
    void inference() { runPoint(0, true, 10.0); }

    // Training steps of the corpus on the H100: fp32 SGD/Adam at two sizes, Adam amp-bf16 at the larger.
    // bert_like runs nn.TransformerEncoderLayer (scaled_dot_product_attention inside nn.MultiheadAttention):
    // fused; tiny_gpt writes matmul/softmax itself: math.
    void training_data()
    {
        addPointColumns();
        for (const auto& j : jsonLines("gpu/h100-points.jsonl")) {
            if (j.value("oom", false))
                continue;
            const std::string name = j["model"];
            const int64_t seq = j["seq"].is_null() ? 0 : j["seq"].get<int64_t>();
            const std::string tag = name + " b" + std::to_string(j["batch"].get<int>()) +
                                    (seq ? " s" + std::to_string(seq) : std::string()) + " " +
                                    j["optimizer"].get<std::string>() + " " + j["dtype"].get<std::string>();
            QTest::newRow(tag.c_str()) << QString::fromStdString(name + ".onnx") << QString::fromStdString(name)
                                       << qint64(j["batch"].get<int64_t>()) << qint64(seq)
                                       << QString::fromStdString(j["optimizer"]) << QString::fromStdString(j["dtype"])
                                       << (name == "tiny_gpt" ? QStringLiteral("math") : QStringLiteral("fused"))
                                       << qint64(j["max_allocated"].get<int64_t>());
        }
    }
    void training() { runPoint(0, false, 5.0); }

    // Hugging Face dynamo exports: the same graph trained with sdpa (fused) or eager (math) attention.
    void hf_data()
    {
        addPointColumns();
        for (const auto& j : jsonLines("hf/h100-hf-points.jsonl")) {
            if (!j.contains("attn") || j.value("oom", false))
                continue;
            const std::string name = j["model"];
            const std::string attn = j["attn"];
            const std::string tag = name + " b" + std::to_string(j["batch"].get<int>()) + " s" +
                                    std::to_string(j["seq"].get<int>()) + " " + attn + " " +
                                    j["dtype"].get<std::string>();
            QTest::newRow(tag.c_str()) << QString::fromStdString("hf/" + name + ".onnx") << QString::fromStdString(name)
                                       << qint64(j["batch"].get<int64_t>()) << qint64(j["seq"].get<int64_t>())
                                       << QString::fromStdString(j["optimizer"]) << QString::fromStdString(j["dtype"])
                                       << (attn == "sdpa" ? QStringLiteral("fused") : QStringLiteral("math"))
                                       << qint64(j["max_allocated"].get<int64_t>());
        }
    }
    void hf() { runPoint(0, false, 5.0); }

    // tiny_llama full fine-tuning (CPU autograd, PyTorch 2 semantics via the `pytorch2` figures): eager
    // attention (math), SGD so that no optimizer state enters, peak of forward + loss + backward.
    void tinyLlamaFull_data()
    {
        QTest::addColumn<qint64>("batch");
        QTest::addColumn<qint64>("seq");
        QTest::addColumn<qint64>("saved");
        QTest::addColumn<qint64>("peak");
        QTest::addColumn<qint64>("trainable");
        std::ifstream in(dataPath("lora/truth.json"));
        const nlohmann::json t = nlohmann::json::parse(in);
        const auto& full = t["tiny_llama"]["configs"]["full"];
        for (const char* set : {"points", "small_points"})
            for (const auto& p : full[set]) {
                const int64_t b = p["batch"], s = p["seq"];
                const auto& p2 = p["pytorch2"];
                const std::string tag = "b" + std::to_string(b) + " s" + std::to_string(s);
                QTest::newRow(tag.c_str())
                    << qint64(b) << qint64(s)
                    << qint64(p2["activation_bytes"].get<int64_t>() +
                              p["saved_for_backward"]["input_bytes"].get<int64_t>())
                    << qint64(p2["peak_fwd_bwd"].get<int64_t>()) << qint64(full["trainable_params"].get<int64_t>());
            }
    }
    void tinyLlamaFull()
    {
        QFETCH(qint64, batch);
        QFETCH(qint64, seq);
        QFETCH(qint64, saved);
        QFETCH(qint64, peak);
        QFETCH(qint64, trainable);
        const Model* m = model("lora/tiny_llama.onnx");
        QVERIFY(m);
        QCOMPARE(qint64(m->params.trainable), trainable);
        Config c = bound(*m, batch, seq);
        c.optimizer = Optimizer::SGD;
        c.attention = Attention::Math;
        c.device = Device::CPU;
        const Evaluation e = evaluate(*m, c);
        const int64_t gotSaved = e.memory.activationsSaved;
        const int64_t gotPeak = e.memory.peak - e.memory.weights - e.memory.input;
        const QString tag = QStringLiteral("tiny_llama full ") + QString::fromUtf8(QTest::currentDataTag());
        report("saved", tag, saved, gotSaved, 3.0);
        report("peak fwd+bwd", tag, peak, gotPeak, 10.0);
        const double es = errPct(gotSaved, saved), ep = errPct(gotPeak, peak);
        QVERIFY2(std::abs(es) <= 3.0,
                 qPrintable(QStringLiteral("saved %1 vs %2 (%3 %)").arg(gotSaved).arg(saved).arg(es, 0, 'f', 2)));
        QVERIFY2(std::abs(ep) <= 10.0,
                 qPrintable(QStringLiteral("peak %1 vs %2 (%3 %)").arg(gotPeak).arg(peak).arg(ep, 0, 'f', 2)));
    }
};

QTEST_APPLESS_MAIN(TestGpuRules)
#include "tst_gpu_rules.moc"
