// Mixture-of-experts config.json files (docs/MOE.md): parameter totals against the published figures (exact
// counts by MOE.md section 3's formulas, written out below), and fine-tuning memory against PyTorch's own
// measurements of a tiny Mixtral-style decoder (tests/data/moe/truth.json): saved activations within 3 %, the
// forward + backward peak within 10 %, full fine-tuning and LoRA.
#include "headroom/import/hfconfig.h"
#include "headroom/load/loader.h"
#include "headroom/memory/engine.h"

#include <QTemporaryDir>
#include <QTest>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

using namespace headroom;

namespace {

std::string data(const std::string& name) { return std::string(HEADROOM_TEST_DATA) + "/moe/" + name; }

const nlohmann::json& truth()
{
    static const nlohmann::json j = [] {
        std::ifstream in(data("truth.json"));
        return nlohmann::json::parse(in);
    }();
    return j;
}

// The tiny model's config.json with some fields changed, written to `dir`.
std::string tinyConfig(const QTemporaryDir& dir, bool aux, bool eager)
{
    std::ifstream in(data("tiny_moe.config.json"));
    nlohmann::json j = nlohmann::json::parse(in);
    j["output_router_logits"] = aux;
    if (eager)
        j["experts_implementation"] = "eager";
    const std::string path = dir.filePath(QString("tiny_%1_%2.json").arg(aux).arg(eager)).toStdString();
    std::ofstream(path) << j.dump();
    return path;
}

double errPct(int64_t got, int64_t want)
{
    return 100.0 * (static_cast<double>(got) - static_cast<double>(want)) / static_cast<double>(want);
}

int64_t fwdBwdPeak(const Evaluation& e)
{
    int64_t peak = 0;
    for (const TimelinePoint& p : e.timeline)
        if (p.phase != Phase::Optimizer)
            peak = std::max({peak, p.allocated, p.high});
    return peak;
}

} // namespace

class TestMoe : public QObject
{
    Q_OBJECT

private slots:
    // MOE.md section 3, per layer: attention + 2 norms + E routed SwiGLU experts (3 H I each) + router E H
    // (+ shared experts, dense layers), plus embeddings and the final norm.
    void paramTotals_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<qint64>("total");
        QTest::addColumn<qint64>("active");
        QTest::addColumn<qint64>("activeNoEmbed");
        QTest::addColumn<double>("publishedTotal"); // model card, billions
        const int64_t mixAttn = 2 * 4096 * 4096 + 2 * 4096 * 1024,
                      mixLayer = mixAttn + 8192 + 8 * 3 * 4096 * 14336LL + 8 * 4096;
        QTest::newRow("Mixtral-8x7B") << "Mixtral-8x7B-v0.1" << qint64(32 * mixLayer + 2LL * 32000 * 4096 + 4096)
                                      << qint64(12879925248) << qint64(12748853248) << 46.7;
        // q/k/v biases and the shared expert with its sigmoid gate Linear(H, 1)
        const int64_t qwen2Layer = 4 * 2048 * 2048 + 3 * 2048 + 2 * 2048 + 60 * 3 * 2048 * 1408LL + 60 * 2048 +
                                   3 * 2048 * 5632 + 2048;
        QTest::newRow("Qwen1.5-MoE-A2.7B")
            << "Qwen1.5-MoE-A2.7B" << qint64(24 * qwen2Layer + 2LL * 151936 * 2048 + 2048) << qint64(2689173504)
            << qint64(2378008576) << 14.3;
        const int64_t qwen3Layer = 2048 * 4096 * 2 + 2 * 2048 * 512 + 2 * 128 + 2 * 2048 + 128 * 3 * 2048 * 768LL +
                                   128 * 2048;
        QTest::newRow("Qwen3-30B-A3B") << "Qwen3-30B-A3B" << qint64(48 * qwen3Layer + 2LL * 151936 * 2048 + 2048)
                                       << qint64(3353032704) << qint64(3041867776) << 30.5;
        // MLA without q_lora (q_proj 2048 -> 16 x 192), kv_a 2048 -> 576, kv_b 512 -> 16 x 256, o 2048 -> 2048;
        // layer 0 dense (10944), 26 MoE layers with 2 shared experts of 1408
        const int64_t v2Attn = 2048 * 16 * 192 + 2048 * 576 + 512 + 512 * 16 * 256 + 16 * 128 * 2048;
        const int64_t v2Moe = v2Attn + 4096 + 64 * 3 * 2048 * 1408LL + 64 * 2048 + 3 * 2048 * 2816;
        QTest::newRow("DeepSeek-V2-Lite")
            << "DeepSeek-V2-Lite" << qint64(v2Attn + 4096 + 3 * 2048 * 10944 + 26 * v2Moe + 2LL * 102400 * 2048 + 2048)
            << qint64(2661150208) << qint64(2451435008) << 15.7;
        const int64_t v3Attn = 7168LL * 1536 + 1536 + 1536LL * 128 * 192 + 7168LL * 576 + 512 + 512LL * 128 * 256 +
                               128LL * 128 * 7168;
        const int64_t v3Moe = v3Attn + 2 * 7168 + 256LL * 3 * 7168 * 2048 + 256 * 7168 + 3LL * 7168 * 2048;
        QTest::newRow("DeepSeek-V3") << "DeepSeek-V3"
                                     << qint64(3 * (v3Attn + 2 * 7168 + 3LL * 7168 * 18432) + 58 * v3Moe +
                                               2LL * 129280 * 7168 + 7168)
                                     << qint64(37552282624) << qint64(36625603584) << 671.0;
        // biases everywhere (q/k/v/o, router, experts) and one sink per head
        const int64_t ossAttn = 2880 * 4096 * 2 + 2 * 2880 * 512 + 4096 + 2 * 512 + 2880 + 64;
        const int64_t ossLayer = ossAttn + 2 * 2880 + 32 * (3 * 2880 * 2880LL + 2 * 2880 + 2880) + 32 * 2880 + 32;
        QTest::newRow("gpt-oss-20b") << "gpt-oss-20b" << qint64(24 * ossLayer + 2LL * 201088 * 2880 + 2880)
                                     << qint64(4187440704) << qint64(3608307264) << 20.9;
        const int64_t olmoeLayer = 4 * 2048 * 2048 + 2 * 2048 + 2 * 2048 + 64 * 3 * 2048 * 1024LL + 64 * 2048;
        QTest::newRow("OLMoE-1B-7B") << "OLMoE-1B-7B-0924" << qint64(16 * olmoeLayer + 2LL * 50304 * 2048 + 2048)
                                     << qint64(1282017280) << qint64(1178994688) << 6.9;
        const int64_t graniteLayer = 2 * 1024 * 1024 + 2 * 1024 * 512 + 2 * 1024 + 32 * 3 * 1024 * 512 + 32 * 1024;
        QTest::newRow("Granite-3.0-1B-A400M")
            << "granite-3.0-1b-a400m-base" << qint64(24 * graniteLayer + 49155LL * 1024 + 1024) << qint64(428658688)
            << qint64(428658688) << 1.33;
    }
    void paramTotals()
    {
        QFETCH(QString, file);
        QFETCH(qint64, total);
        QFETCH(qint64, active);
        QFETCH(qint64, activeNoEmbed);
        QFETCH(double, publishedTotal);
        const Model m = loadModel(data(file.toStdString() + ".config.json"));
        QCOMPARE(m.params.trainable, total);
        const HfMoeSummary moe = hfMoeSummary(m.info.file, m.params.trainable);
        QCOMPARE(moe.active.withEmbedding, active);
        QCOMPARE(moe.active.withoutEmbedding, activeNoEmbed);
        // the published figure is the exact count rounded (to 0.1 B; Granite's 1.3 B card to 0.01)
        QVERIFY(std::abs(static_cast<double>(total) / 1e9 - publishedTotal) < 0.05);
        QVERIFY(!moe.text.empty());
    }

    void againstTruth_data()
    {
        QTest::addColumn<QString>("layout");
        QTest::addColumn<QString>("mode");
        QTest::addColumn<bool>("aux");
        QTest::addColumn<int>("point");
        for (const char* layout : {"grouped", "loop"})
            for (const char* mode : {"full", "lora"})
                for (bool aux : {false, true})
                    for (int p : {0, 1})
                        QTest::newRow(qPrintable(QString("%1 %2%3 p%4").arg(layout, mode, aux ? " aux" : "").arg(p)))
                            << QString(layout) << QString(mode) << aux << p;
    }
    void againstTruth()
    {
        QFETCH(QString, layout);
        QFETCH(QString, mode);
        QFETCH(bool, aux);
        QFETCH(int, point);
        const nlohmann::json& cfg = truth()["layouts"][layout.toStdString()][mode.toStdString()];
        const nlohmann::json& p = cfg["points"][(aux ? 2 : 0) + point];
        QCOMPARE(p["aux_loss"].get<bool>(), aux);
        QTemporaryDir dir;
        LoadOptions o;
        const bool lora = mode == "lora";
        if (lora)
            o.lora = LoraSpec{8, 16, 0, {"q_proj", "v_proj"}};
        const Model m = loadModel(tinyConfig(dir, aux, layout == "loop"), o);
        if (!lora)
            QCOMPARE(m.params.trainable, cfg["params"].get<int64_t>());
        Config c;
        c.optimizer = Optimizer::AdamW;
        c.allocator = AllocatorMode::Exact;
        c.finetune.lora = o.lora;
        if (lora)
            c.freeze = loraFreezePatterns();
        c.symbols = m.defaultBindings();
        c.symbols[static_cast<size_t>(m.batchSymbol)] = p["batch"].get<int64_t>();
        c.symbols[static_cast<size_t>(m.symbolIndex("seq"))] = p["seq"].get<int64_t>();
        const Evaluation e = evaluate(m, c);
        const int64_t wantSaved = p["saved_for_backward"]["activation_bytes"].get<int64_t>() +
                                  p["saved_for_backward"]["input_bytes"].get<int64_t>();
        const int64_t wantPeak = p["peak_fwd_bwd"].get<int64_t>();
        const int64_t gotPeak = fwdBwdPeak(e) - e.memory.weights - e.memory.optimizer - e.memory.input;
        const double es = errPct(e.memory.activationsSaved, wantSaved), ep = errPct(gotPeak, wantPeak);
        qInfo("%s: saved %lld vs %lld (%+.1f %%), fwd+bwd peak %lld vs %lld (%+.1f %%)",
              qPrintable(QTest::currentDataTag()), static_cast<long long>(e.memory.activationsSaved),
              static_cast<long long>(wantSaved), es, static_cast<long long>(gotPeak), static_cast<long long>(wantPeak),
              ep);
        QVERIFY2(std::abs(es) <= 3.0, qPrintable(QString("saved %1 %").arg(es, 0, 'f', 2)));
        QVERIFY2(std::abs(ep) <= 10.0, qPrintable(QString("peak %1 %").arg(ep, 0, 'f', 2)));
        // every expert's gradient in full fine-tuning (grouped_mm's zeros_like(weight)); the adapters' in LoRA
        QCOMPARE(e.memory.gradients, p["grad_bytes_after_step"].get<int64_t>());
    }
};

QTEST_GUILESS_MAIN(TestMoe)
#include "tst_moe.moc"
