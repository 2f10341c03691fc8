// Mixture-of-experts config.json files (docs/MOE.md): parameter totals against the published figures (exact
// counts by MOE.md section 3's formulas, written out below), and fine-tuning memory against PyTorch's own
// measurements of a tiny Mixtral-style decoder (tests/data/moe/truth.json): saved activations within 3 %, the
// forward + backward peak within 10 %, full fine-tuning and LoRA.
#include "headroom/hardware/gpus.h"
#include "headroom/import/hfconfig.h"
#include "headroom/load/loader.h"
#include "headroom/memory/engine.h"
#include "headroom/memory/finetune_summary.h"
#include "headroom/report/layer_tree.h"
#include "headroom/serving/vllm.h"

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

    // Trainable adapter counts as PEFT prints them ("trainable params: N"). lora.Linear: r (in + out) per
    // targeted Linear; lora.ParamWrapper on a 3D expert tensor (peft/tuners/lora/layer.py @ 5d602fd): lora_A =
    // Linear(in, r E), lora_B = Linear(r E, out), r E (in + out).
    void peftTrainable_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("lora");
        QTest::addColumn<qint64>("adapters");
        // PEFT's default targets for mixtral (q_proj, v_proj), r 8: 32 x 8 x ((4096 + 4096) + (4096 + 1024));
        // the figure PEFT prints for Mixtral-8x7B in its users' logs
        QTest::newRow("Mixtral default targets") << "Mixtral-8x7B-v0.1"
                                                 << "r=8,alpha=16" << qint64(3'407'872);
        // the OpenAI cookbook's gpt-oss-20b LoraConfig(r=8, target_modules="all-linear", target_parameters on the
        // experts of layers 7, 15, 23): "trainable params: 15,040,512 || all params: 20,929,797,696". all-linear:
        // q 2880->4096, k/v 2880->512, o 4096->2880 in 24 layers (the router is an nn.Parameter, not a Linear):
        // 24 x 8 x (6976 + 3392 + 3392 + 6976); experts 3 x 8 x 32 x ((2880 + 5760) + (2880 + 2880))
        QTest::newRow("gpt-oss-20b cookbook")
            << "gpt-oss-20b"
            << "r=8,alpha=16,targets=all-linear,target_parameters=7.mlp.experts.gate_up_proj,7.mlp.experts.down_proj,"
               "15.mlp.experts.gate_up_proj,15.mlp.experts.down_proj,23.mlp.experts.gate_up_proj,"
               "23.mlp.experts.down_proj"
            << qint64(24 * 8 * (6976 + 3392 + 3392 + 6976) + 3 * 8 * 32 * (8640 + 5760));
        // every layer's 3D experts, r 16: 48 x 16 x 128 x ((2048 + 1536) + (768 + 2048))
        QTest::newRow("Qwen3-30B-A3B experts")
            << "Qwen3-30B-A3B"
            << "r=16,target_parameters=mlp.experts.gate_up_proj,mlp.experts.down_proj"
            << qint64(48LL * 16 * 128 * (3584 + 2816));
        // attention and the shared experts of the 26 MoE layers (2 x 1408 wide): 26 x 16 x 3 x (2048 + 2816)
        QTest::newRow("DeepSeek-V2-Lite shared experts")
            << "DeepSeek-V2-Lite"
            << "r=16,targets=shared_experts.gate_proj,shared_experts.up_proj,shared_experts.down_proj"
            << qint64(26 * 16 * 3 * (2048 + 2816));
    }
    void peftTrainable()
    {
        QFETCH(QString, file);
        QFETCH(QString, lora);
        QFETCH(qint64, adapters);
        const std::string path = data(file.toStdString() + ".config.json");
        LoadOptions o;
        const auto err = parseLoraSpec(lora.toStdString(), o.lora);
        QVERIFY2(!err, err ? err->c_str() : "");
        const int64_t base = loadModel(path).params.trainable;
        const Model m = loadModel(path, o);
        QCOMPARE(m.params.trainable - base, adapters);
        if (file == "gpt-oss-20b") // PEFT's "all params" (base + adapters), and so the base total too
            QCOMPARE(m.params.trainable, qint64(20'929'797'696));
    }

    // target_parameters: the whole delta W + B A per targeted expert tensor is kept for backward (the experts'
    // matmul needs its weight for the input's gradient): 2 layers x (8 x 128 x 192 + 8 x 96 x 128) fp32 more than
    // LoRA on q_proj, v_proj alone.
    void targetParametersKeepTheSum()
    {
        QTemporaryDir dir;
        const std::string path = tinyConfig(dir, false, false);
        auto saved = [&](const std::string& spec) {
            LoadOptions o;
            if (parseLoraSpec(spec, o.lora))
                return int64_t{-1};
            const Model m = loadModel(path, o);
            Config c;
            c.optimizer = Optimizer::AdamW;
            c.finetune.lora = o.lora;
            c.freeze = loraFreezePatterns();
            c.symbols = m.defaultBindings();
            return evaluate(m, c).memory.activationsSaved;
        };
        const int64_t qv = saved("r=8,alpha=16,targets=q_proj,v_proj");
        const int64_t experts = saved(
            "r=8,alpha=16,targets=q_proj,v_proj,target_parameters=experts.gate_up_proj,experts.down_proj");
        qInfo("saved: q,v %lld, + experts %lld", static_cast<long long>(qv), static_cast<long long>(experts));
        QCOMPARE(experts - qv, int64_t{2 * (8 * 128 * 192 + 8 * 96 * 128) * 4});
    }

    // gpt-oss's MXFP4 experts for inference: 17 bytes per 32 weights (e2m1 pairs + one e8m0 scale), the rest
    // bf16: experts 24 x 32 x (2880 x 5760 + 2880 x 2880) = 19,110,297,600 weights.
    void mxfp4Inference()
    {
        const Model m = loadModel(data("gpt-oss-20b.config.json"));
        Config c;
        c.mode = Mode::Infer;
        c.dtype = DtypePolicy::BF16;
        c.symbols = m.defaultBindings();
        const Evaluation e = evaluate(m, c);
        const int64_t experts = 24LL * 32 * (2880 * 5760 + 2880 * 2880);
        QCOMPARE(e.memory.weights, experts / 32 * 17 + (m.params.trainable - experts) * 2);
        // training dequantizes (Mxfp4Config(dequantize=True)): every weight bf16 again
        c.mode = Mode::Train;
        QCOMPARE(evaluate(m, c).memory.weights, m.params.trainable * 2);
    }

    // QLoRA: bitsandbytes quantizes every Linear but lm_head, the router and each expert included (4.x per-expert
    // Linear4bit): per Mixtral layer 2 x 4096^2 + 2 x 4096 x 1024 + 4096 x 8 + 8 x 3 x 4096 x 14336 weights, nf4
    // at 0.5 byte + one fp32 absmax per 64.
    void qloraExperts()
    {
        LoadOptions o;
        o.lora = LoraSpec{16, 32, 0, {"q_proj", "v_proj"}};
        const Model m = loadModel(data("Mixtral-8x7B-v0.1.config.json"), o);
        Config c;
        c.dtype = DtypePolicy::BF16;
        c.finetune.lora = o.lora;
        c.finetune.quant = Quant::NF4;
        c.freeze = loraFreezePatterns();
        c.symbols = m.defaultBindings();
        const Evaluation e = evaluate(m, c);
        const FineTuneSummary f = summarizeFineTune(m, c, e);
        const int64_t layer = 2LL * 4096 * 4096 + 2LL * 4096 * 1024 + 4096 * 8 + 8LL * 3 * 4096 * 14336;
        QCOMPARE(f.quantizedParams, 32 * layer);
        QCOMPARE(f.quantizedBytes, 32 * layer / 2 + 32 * layer / 64 * 4);
        // one expert's matrix dequantized at a time (bf16), not all eight: the fused gate_up [4096, 2 x 14336]
        QCOMPARE(f.dequantTransientBytes, int64_t{4096} * 2 * 14336 * 2);
    }

    // The routing balance setting: balanced is k/E of the tokens for the hottest expert; a skewed share is
    // taken as given (Qwen3-30B-A3B, 8 of 128, 4096 tokens).
    void hotExpert()
    {
        const Model m = loadModel(data("Qwen3-30B-A3B.config.json"));
        const HfMoeSummary moe = hfMoeSummary(m.info.file, m.params.trainable);
        HfHotExpert h = hfHotExpert(moe, 0, 4096);
        QVERIFY(h.balanced);
        QCOMPARE(h.tokens, int64_t{256});
        QCOMPARE(h.savedElements, int64_t{256} * (2 * 2048 + 4 * 768) * 48);
        h = hfHotExpert(moe, 0.25, 4096);
        QVERIFY(!h.balanced);
        QCOMPARE(h.tokens, int64_t{1024});
    }

    // vLLM on one H100 against the llm-d planner's measured startups (measured.jsonl "ld-gpt-oss-20b": MXFP4
    // experts, max_model_len 16000, block 128, utilization 0.9): weights within 3 %, KV cache within 10 % or 1 GiB.
    void servingGptOss()
    {
        const ServeModel sm = loadServeModel(data("gpt-oss-20b.config.json"));
        VllmSettings s;
        s.version = VllmVersion::V0_19;
        s.maxModelLen = 16000;
        s.blockSize = 128;
        s.gpuMemoryUtilization = 0.9;
        const VllmPlan p = planVllm(sm, s, *findGpu("h100"));
        QVERIFY(p.starts && *p.starts);
        const double gib = 1024.0 * 1024 * 1024, w = static_cast<double>(p.weights) / gib,
                     kv = static_cast<double>(p.kvCache) / gib;
        qInfo("gpt-oss-20b: weights %.2f GiB (measured 13.47), KV %.2f GiB (measured 50.28)", w, kv);
        QVERIFY(std::abs(w / 13.47 - 1) <= 0.03);
        QVERIFY(std::abs(kv - 50.28) <= std::max(1.0, 0.10 * 50.28));
    }

    // Expert parallel beside TP 2 (Mixtral-8x7B): whole experts, 4 per rank, the same weight bytes as splitting
    // every expert's width; the fused-MoE caches use the whole width 14336 instead of 7168.
    void expertParallel()
    {
        const ServeModel sm = loadServeModel(std::string(HEADROOM_TEST_DATA) +
                                             "/external/mistralai--Mixtral-8x7B-Instruct-v0.1.json");
        VllmSettings s;
        s.tp = 2;
        s.maxModelLen = 8192;
        const GpuSpec h100 = *findGpu("h100");
        const VllmPlan tp = planVllm(sm, s, h100);
        s.expertParallel = true;
        const VllmPlan ep = planVllm(sm, s, h100);
        QCOMPARE(ep.weights, tp.weights);
        const int64_t tokens = std::min<int64_t>(*ep.settings.maxNumBatchedTokens, 32768);
        QCOMPARE(ep.activationPeak - tp.activationPeak, tokens * 2 * 3 * (14336 - 7168) * 2);
    }

    // The layer tree's MoE row: the block (router, shared and routed experts beneath) says how many experts
    // and how many a token runs through; no other layer says anything.
    void layerTreeRow()
    {
        const Model m = loadModel(data("Qwen3-30B-A3B.config.json"));
        int blocks = 0, others = 0;
        for (size_t l = 0; l < m.layers.size(); ++l) {
            const std::string note = layerNote(m, static_cast<int>(l));
            if (note.empty())
                continue;
            ++(m.layers[l].name == "mlp" ? blocks : others);
            QCOMPARE(note, std::string("128 experts, 8 active per token"));
        }
        QCOMPARE(blocks, 48);
        QCOMPARE(others, 0);
    }
};

QTEST_GUILESS_MAIN(TestMoe)
#include "tst_moe.moc"
