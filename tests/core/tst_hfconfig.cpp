// A Hugging Face config.json opened as a model: parameter counts against the published totals, the
// llama_small config against its dynamo export (same engine) and against the H100 measurement, bad input.
#include "headroom/base/error.h"
#include "headroom/import/hfconfig.h"
#include "headroom/load/loader.h"
#include "headroom/memory/engine.h"

#include <QTemporaryDir>
#include <QTest>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>

using namespace headroom;

namespace {

std::string sample(const QString& name)
{
    return std::string(HEADROOM_SOURCE_DIR) + "/resources/samples/" + name.toStdString();
}

Config configFor(const Model& m, DtypePolicy dtype, int64_t batch, int64_t seq)
{
    Config c;
    c.dtype = dtype;
    c.optimizer = Optimizer::AdamW;
    c.allocator = AllocatorMode::Exact;
    c.symbols = m.defaultBindings();
    c.symbols[static_cast<size_t>(m.batchSymbol)] = batch;
    c.symbols[static_cast<size_t>(m.symbolIndex("seq"))] = seq;
    return c;
}

// BertConfig(hidden_dropout_prob=0, attention_probs_dropout_prob=0, num_labels=2), as export_encoders.py builds
// bert_base (tests/data/hf/README.md), written as config.json in `dir`.
std::string bertBase(const QTemporaryDir& dir)
{
    const std::string json = dir.filePath("config.json").toStdString();
    std::ofstream(json) << R"({"model_type": "bert", "hidden_size": 768, "intermediate_size": 3072,
        "num_hidden_layers": 12, "num_attention_heads": 12, "vocab_size": 30522, "max_position_embeddings": 512,
        "type_vocab_size": 2, "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0})";
    return json;
}

double errPct(int64_t got, int64_t want)
{
    return 100.0 * (static_cast<double>(got) - static_cast<double>(want)) / static_cast<double>(want);
}

} // namespace

class TestHfConfig : public QObject
{
    Q_OBJECT

private slots:
    // What one RMSNorm keeps for backward, against PyTorch's autograd running transformers' LlamaRMSNorm and
    // GemmaRMSNorm (tests/data/hf/rmsnorm_truth.json, rmsnorm_truth.py; the `pytorch2` figures): layer 1's
    // input_layernorm at batch 2, 16 tokens, full fine-tuning (the weight trains) or LoRA on q_proj (frozen).
    // In bf16 the statistics run on an fp32 copy of x (x.to(torch.float32)), which pow and mul keep instead of
    // x. Two differences are allowed: torch.rsqrt keeps its [N, 1] result, where the graph writes rsqrt as Sqrt
    // and Reciprocal, each keeping one (N x 4 bytes more); Gemma's (1 + weight.float()) is a weight-sized fp32
    // copy that the graph writes as n * w + n, so the weight stays a parameter (hidden x 4 bytes fewer).
    void rmsNormSaves_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("module");
        QTest::addColumn<int>("dtype");
        QTest::addColumn<bool>("weightTrains");
        const QString llama = "hf/llama_small.config.json", gemma = "external/google--gemma-3-1b-it.json";
        for (const bool trains : {true, false}) {
            const char* how = trains ? "full" : "lora";
            QTest::addRow("llama bf16 %s", how) << llama << "LlamaRMSNorm" << int(DtypePolicy::BF16) << trains;
            QTest::addRow("llama fp32 %s", how) << llama << "LlamaRMSNorm" << int(DtypePolicy::FP32) << trains;
            QTest::addRow("gemma bf16 %s", how) << gemma << "GemmaRMSNorm" << int(DtypePolicy::BF16) << trains;
            QTest::addRow("gemma fp32 %s", how) << gemma << "GemmaRMSNorm" << int(DtypePolicy::FP32) << trains;
        }
    }
    void rmsNormSaves()
    {
        QFETCH(QString, file);
        QFETCH(QString, module);
        QFETCH(int, dtype);
        QFETCH(bool, weightTrains);
        std::ifstream in(std::string(HEADROOM_TEST_DATA) + "/hf/rmsnorm_truth.json");
        const nlohmann::json truth = nlohmann::json::parse(in);
        const std::string dt = DtypePolicy(dtype) == DtypePolicy::BF16 ? "bfloat16" : "float32";
        const nlohmann::json* point = nullptr;
        for (const auto& p : truth["points"])
            if (p["module"] == module.toStdString() && p["dtype"] == dt && p["weight_trains"] == weightTrains)
                point = &p;
        QVERIFY(point);
        const int64_t want = (*point)["pytorch2"]["saved_activation_bytes"].get<int64_t>();
        const int64_t hidden = (*point)["hidden"].get<int64_t>();

        LoadOptions o;
        if (!weightTrains)
            o.lora = LoraSpec{8, 16, 0, {"q_proj"}};
        const Model m = loadModel(std::string(HEADROOM_TEST_DATA) + "/" + file.toStdString(), o);
        Config c = configFor(m, DtypePolicy(dtype), (*point)["batch"].get<int64_t>(), (*point)["seq"].get<int64_t>());
        if (!weightTrains) {
            c.finetune.lora = o.lora;
            c.freeze = loraFreezePatterns();
        }
        const Evaluation e = evaluate(m, c);
        int64_t got = 0;
        for (size_t n = 0; n < m.nodes.size(); ++n)
            if (m.nodePath(static_cast<int>(n)).find("/layers.1/input_layernorm/") != std::string::npos)
                got += e.nodes[n].savedBytes;
        const int64_t tokens = (*point)["batch"].get<int64_t>() * (*point)["seq"].get<int64_t>();
        const int64_t low = module == "GemmaRMSNorm" ? hidden * 4 : 0;
        if (got > want + tokens * 4 || got < want - low)
            QFAIL(qPrintable(QString("saved %1 bytes, PyTorch %2").arg(got).arg(want)));
    }

    // Totals as the model cards and `sum(p.numel() for p in model.parameters())` give them.
    void publishedParams_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<qint64>("params");
        QTest::newRow("Llama-3.1-8B") << "Llama-3.1-8B.json" << qint64(8030261248);
        QTest::newRow("Llama-3.2-3B (tied)") << "Llama-3.2-3B.json" << qint64(3212749824);
        QTest::newRow("Mistral-7B-v0.1") << "Mistral-7B-v0.1.json" << qint64(7241732096);
        QTest::newRow("Qwen2.5-7B (qkv bias)") << "Qwen2.5-7B.json" << qint64(7615616512);
        QTest::newRow("gemma-2-9b (4 norms, tied)") << "gemma-2-9b.json" << qint64(9241705984);
        QTest::newRow("Phi-3-mini (fused qkv)") << "Phi-3-mini-4k-instruct.json" << qint64(3821079552);
        QTest::newRow("gpt2 (tied, wpe)") << "gpt2.json" << qint64(124439808);
    }
    void publishedParams()
    {
        QFETCH(QString, file);
        QFETCH(qint64, params);
        const Model m = loadModel(sample(file));
        QCOMPARE(m.params.trainable, int64_t(params));
        QCOMPARE(m.params.buffers, int64_t(0));
        QCOMPARE(m.warnings.size(), size_t(1));
        QVERIFY(m.warnings[0].find("built from a Hugging Face config.json") != std::string::npos);
        QVERIFY(m.batchSymbol >= 0 && m.symbolIndex("seq") >= 0);
        const Evaluation e = evaluate(m, configFor(m, DtypePolicy::BF16, 1, 64));
        QCOMPARE(e.shapes.unknown, int64_t(0));
    }

    // The families of issue 22 item 6 (tests/data/external/README.md: where each config and total comes from).
    void familyParams_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<qint64>("params");
        // BertModel 335,141,888 (KerasNLP's bert_large_en_uncased preset metadata, equal to transformers'
        // BertModel.from_pretrained) + BertForSequenceClassification's 2-label classifier (1024 x 2 + 2)
        QTest::newRow("bert-large-uncased (SequenceClassification)")
            << "google-bert--bert-large-uncased.json" << qint64(335141888 + 2050);
        QTest::newRow("phi-1_5 (Hub safetensors total)") << "microsoft--phi-1_5.json" << qint64(1418270720);
        QTest::newRow("stablelm-3b-4e1t (model card)") << "stabilityai--stablelm-3b-4e1t.json" << qint64(2795443200);
        QTest::newRow("pythia-160m (Pythia model card)") << "EleutherAI--pythia-160m.json" << qint64(162322944);
        // StarCoder's architecture; WizardCoder-15B (the same with vocab 49153) is listed at 15,517,462,528
        // parameters: one 6144-wide row fewer
        QTest::newRow("octocoder (gpt_bigcode, MQA)") << "bigcode--octocoder.json" << qint64(15517462528 - 6144);
        // 65024 x 4544 embedding tied to lm_head + 32 x 207,070,080 + ln_f: the Hub page's 7.22 B also counts
        // lm_head.weight, stored apart in the checkpoint (+ 295,469,056 = 7,217,189,760); no exact figure was
        // in the stored sources (tests/data/external/README.md)
        QTest::newRow("falcon-7b (MQA, parallel, tied)") << "tiiuae--falcon-7b.json" << qint64(6921720704);
        // new_decoder_architecture: ln_attn + ln_mlp, 8 KV heads. The Hub total 179,522,565,120 (safetensors)
        // stores lm_head.weight apart from the tied word_embeddings (65024 x 14848); parameters() counts it once
        QTest::newRow("falcon-180B (new_decoder_architecture)")
            << "tiiuae--falcon-180B.json" << qint64(179522565120 - 65024LL * 14848);
        QTest::newRow("gemma-3-1b-it (gemma3_text, Hub safetensors total)")
            << "google--gemma-3-1b-it.json" << qint64(999885952);
        QTest::newRow("OLMo-2-1124-7B (Hub safetensors total)") << "allenai--OLMo-2-1124-7B.json" << qint64(7298617344);
        // RobertaForSequenceClassification, 2 labels (a published table of fine-tuning parameter counts)
        QTest::newRow("roberta-large (SequenceClassification)")
            << "FacebookAI--roberta-large.json" << qint64(355361794);
        // DebertaV2ForSequenceClassification, 2 labels (the same table): rel_embeddings 512 x 1024, no positions
        QTest::newRow("deberta-v3-large (SequenceClassification)")
            << "microsoft--deberta-v3-large.json" << qint64(435063810);
    }
    void familyParams()
    {
        QFETCH(QString, file);
        QFETCH(qint64, params);
        const Model m = loadModel(std::string(HEADROOM_TEST_DATA) + "/external/" + file.toStdString());
        QCOMPARE(m.params.trainable, int64_t(params));
        QVERIFY(m.batchSymbol >= 0 && m.symbolIndex("seq") >= 0);
        const Evaluation e = evaluate(m, configFor(m, DtypePolicy::BF16, 1, 64));
        QCOMPARE(e.shapes.unknown, int64_t(0));
    }

    // The same BERT-base built from its config against the H100 (tests/data/hf/h100-hf-points.jsonl: batch 32,
    // seq 512, AdamW, 2-class loss; sdpa and eager): max_allocated within 5 %, as for llama_small.
    void bertAgainstH100_data()
    {
        QTest::addColumn<QString>("attn");
        QTest::addColumn<QString>("dtype");
        for (const char* attn : {"sdpa", "eager"})
            for (const char* dtype : {"fp32", "amp-bf16"})
                QTest::addRow("%s %s b32 s512", attn, dtype) << attn << dtype;
    }
    void bertAgainstH100()
    {
        QFETCH(QString, attn);
        QFETCH(QString, dtype);
        std::ifstream in(std::string(HEADROOM_TEST_DATA) + "/hf/h100-hf-points.jsonl");
        int64_t want = 0;
        for (std::string line; std::getline(in, line);) {
            const auto j = nlohmann::json::parse(line);
            if (j.value("model", "") == "bert_base" && j.value("attn", "") == attn.toStdString() &&
                j.value("dtype", "") == dtype.toStdString() && j.value("batch", 0) == 32 && j.value("seq", 0) == 512)
                want = j["max_allocated"].get<int64_t>();
        }
        QVERIFY(want > 0);
        QTemporaryDir dir;
        const Model m = loadModel(bertBase(dir));
        Config c = configFor(m, *parseDtype(dtype.toStdString()), 32, 512);
        c.attention = attn == QLatin1String("eager") ? Attention::Math : Attention::Fused;
        const Evaluation e = evaluate(m, c);
        const double err = errPct(e.memory.peak, want);
        qInfo("bert peak %lld vs H100 %lld (%+.1f %%)", static_cast<long long>(e.memory.peak),
              static_cast<long long>(want), err);
        QVERIFY2(std::abs(err) <= 5.0, qPrintable(QString::number(err)));
    }

    // Gemma 3 with a vision tower (Gemma3ForConditionalGeneration): the text decoder under
    // model.language_model; the tower is left out. Non-embedding parameters 3,209 M (the Gemma 3 report,
    // table 1, 4B).
    void gemma3TextPart()
    {
        const Model m = loadModel(std::string(HEADROOM_TEST_DATA) + "/external/google--gemma-3-4b-it.json");
        QCOMPARE(std::llround((m.params.trainable - 262208LL * 2560) / 1e6), 3209LL);
        bool found = false;
        for (const LayerNode& l : m.layers)
            found = found || l.path == "model/language_model/layers.33/self_attn/q_norm";
        QVERIFY(found);
    }

    // BertForSequenceClassification(BertConfig(dropout 0, num_labels=2)) as built from its config against the
    // same model exported by PyTorch (tests/data/hf/bert_base.onnx; sum(p.numel()) 109,483,778 in its README: the
    // export folds some small parameters into constants, so its own count is lower): same engine, so
    // the saved activations and the peak within 1 % say the graph keeps what the export keeps.
    void bertAgainstExport()
    {
        QTemporaryDir dir;
        const Model built = loadModel(bertBase(dir));
        const Model exported = loadModel(std::string(HEADROOM_TEST_DATA) + "/hf/bert_base.onnx");
        QCOMPARE(built.params.trainable, int64_t(109483778));
        for (DtypePolicy d : {DtypePolicy::FP32, DtypePolicy::AmpBF16}) {
            const Evaluation a = evaluate(built, configFor(built, d, 32, 512));
            const Evaluation b = evaluate(exported, configFor(exported, d, 32, 512));
            const double saved = errPct(a.memory.activationsSaved, b.memory.activationsSaved);
            qInfo("bert saved %+.2f %%, peak %+.2f %%", saved, errPct(a.memory.peak, b.memory.peak));
            QVERIFY2(std::abs(saved) <= 1.0, qPrintable(QString::number(saved)));
            QVERIFY(std::abs(errPct(a.memory.peak, b.memory.peak)) <= 1.0);
        }
    }

    // tests/data/hf/README.md: LlamaConfig(hidden 768, intermediate 2048, 12 layers, 12 heads, 4 KV heads,
    // vocab 32000, untied) has 124,668,672 parameters.
    void llamaSmallParams()
    {
        const Model m = loadModel(std::string(HEADROOM_TEST_DATA) + "/hf/llama_small.config.json");
        QCOMPARE(m.params.trainable, int64_t(124668672));
        // the layer tree follows named_modules()
        bool found = false;
        for (const LayerNode& l : m.layers)
            found = found || (l.path == "model/layers.11/self_attn/q_proj" && l.params == 768 * 768);
        QVERIFY(found);
    }

    // The model's identity is the file the user opened: `sha256sum` and `stat -c %s` of the config.json, not of
    // the ONNX graph built from it (whose bytes change with the builder), for the report and the settings' key.
    void identityIsTheConfigFile_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("sha256");
        QTest::addColumn<qint64>("size");
        QTest::newRow("Llama-2-7B") << "external/meta-llama--Llama-2-7b-hf.json"
                                    << "1e727c3deb44ee2c0ccace5412f6e559cd86285c00f608dd4ba48c1136e72f94"
                                    << qint64(554);
    }
    void identityIsTheConfigFile()
    {
        QFETCH(QString, path);
        QFETCH(QString, sha256);
        QFETCH(qint64, size);
        const Model m = loadModel(std::string(HEADROOM_TEST_DATA) + "/" + path.toStdString());
        QCOMPARE(QString::fromStdString(m.info.sha256), sha256);
        QCOMPARE(m.info.fileSize, int64_t(size));
    }

    void llamaSmallAgainstExport_data()
    {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<qint64>("batch");
        QTest::addColumn<qint64>("seq");
        QTest::newRow("fp32 b8 s512") << int(DtypePolicy::FP32) << qint64(8) << qint64(512);
        QTest::newRow("amp-bf16 b8 s512") << int(DtypePolicy::AmpBF16) << qint64(8) << qint64(512);
        QTest::newRow("fp32 b4 s1024") << int(DtypePolicy::FP32) << qint64(4) << qint64(1024);
        QTest::newRow("amp-bf16 b4 s1024") << int(DtypePolicy::AmpBF16) << qint64(4) << qint64(1024);
    }
    void llamaSmallAgainstExport()
    {
        QFETCH(int, dtype);
        QFETCH(qint64, batch);
        QFETCH(qint64, seq);
        const Model built = loadModel(std::string(HEADROOM_TEST_DATA) + "/hf/llama_small.config.json");
        const Model exported = loadModel(std::string(HEADROOM_TEST_DATA) + "/hf/llama_small.onnx");
        const Evaluation a = evaluate(built, configFor(built, DtypePolicy(dtype), batch, seq));
        const Evaluation b = evaluate(exported, configFor(exported, DtypePolicy(dtype), batch, seq));
        const double saved = errPct(a.memory.activationsSaved, b.memory.activationsSaved);
        qInfo("saved %+.2f %%, peak %lld vs export %lld (%+.2f %%)", saved, static_cast<long long>(a.memory.peak),
              static_cast<long long>(b.memory.peak), errPct(a.memory.peak, b.memory.peak));
        QVERIFY2(std::abs(saved) <= 1.0, qPrintable(QString::number(saved)));
        QVERIFY(std::abs(errPct(a.memory.peak, b.memory.peak)) <= 1.0);
    }

    // The H100 measurement of the same model (tests/data/hf/h100-hf-points.jsonl, AdamW): Hugging Face's
    // `sdpa` runs fused attention, `eager` writes it out (`--attention math`); max_allocated within 5 %
    // (issue 11's acceptance for today's exports).
    void llamaSmallAgainstH100_data()
    {
        QTest::addColumn<QString>("attn");
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<qint64>("batch");
        QTest::addColumn<qint64>("seq");
        for (const char* attn : {"sdpa", "eager"}) {
            QTest::addRow("%s fp32 b8 s512", attn) << attn << "fp32" << qint64(8) << qint64(512);
            QTest::addRow("%s fp32 b4 s1024", attn) << attn << "fp32" << qint64(4) << qint64(1024);
            QTest::addRow("%s amp-bf16 b8 s512", attn) << attn << "amp-bf16" << qint64(8) << qint64(512);
            QTest::addRow("%s amp-bf16 b4 s1024", attn) << attn << "amp-bf16" << qint64(4) << qint64(1024);
        }
    }
    void llamaSmallAgainstH100()
    {
        QFETCH(QString, attn);
        QFETCH(QString, dtype);
        QFETCH(qint64, batch);
        QFETCH(qint64, seq);
        std::ifstream in(std::string(HEADROOM_TEST_DATA) + "/hf/h100-hf-points.jsonl");
        int64_t want = 0;
        for (std::string line; std::getline(in, line);) {
            const auto j = nlohmann::json::parse(line);
            if (j.value("model", "") == "llama_small" && j.value("attn", "") == attn.toStdString() &&
                j.value("dtype", "") == dtype.toStdString() && j.value("batch", 0) == batch && j.value("seq", 0) == seq)
                want = j["max_allocated"].get<int64_t>();
        }
        QVERIFY(want > 0);
        const Model m = loadModel(std::string(HEADROOM_TEST_DATA) + "/hf/llama_small.config.json");
        Config c = configFor(m, *parseDtype(dtype.toStdString()), batch, seq);
        c.attention = attn == QLatin1String("eager") ? Attention::Math : Attention::Fused;
        const Evaluation e = evaluate(m, c);
        const double err = errPct(e.memory.peak, want);
        qInfo("peak %lld vs H100 %lld (%+.1f %%)", static_cast<long long>(e.memory.peak), static_cast<long long>(want),
              err);
        QVERIFY2(std::abs(err) <= 5.0, qPrintable(QString::number(err)));
    }

    // transformers' ForCausalLMLoss runs `logits = logits.float()` before cross_entropy whatever the dtype
    // (transformers/loss/loss_utils.py). A 1-layer llama, vocab V = 1000, batch 2, seq 16: the logits hold
    // N = 2 * 16 * 1000 = 32,000 elements. The Loss-category buffers in allocation order, by hand:
    // - fp32: log_softmax's result 4N, nll_loss's gradient 4N, the logits' gradient 4N; 12N live at most.
    // - bf16 / fp16 (no autocast): the fp32 copy 4N, log_softmax's fp32 result 4N (the copy freed), nll_loss's
    //   fp32 gradient 4N, log_softmax's backward = the copy's fp32 gradient 4N (result + both gradients live:
    //   12N), then ToCopyBackward's 16-bit gradient of the logits 2N.
    // - amp-bf16: the same as bf16 (unchanged: autocast already lifted the output).
    // - the same graph not marked as built from a config.json (any ONNX file, a dynamo export included) in
    //   bf16: the loss on the 16-bit logits, 2N each, 6N at most (unchanged).
    void lossUpcast_data()
    {
        const qint64 n = 2 * 16 * 1000;
        QTest::addColumn<int>("dtype");
        QTest::addColumn<bool>("config");
        QTest::addColumn<QList<qint64>>("allocs");
        QTest::addColumn<qint64>("maxLive");
        QTest::newRow("fp32") << int(DtypePolicy::FP32) << true << QList<qint64>{4 * n, 4 * n, 4 * n} << 12 * n;
        QTest::newRow("bf16 upcast") << int(DtypePolicy::BF16) << true
                                     << QList<qint64>{4 * n, 4 * n, 4 * n, 4 * n, 2 * n} << 12 * n;
        QTest::newRow("fp16 upcast") << int(DtypePolicy::FP16) << true
                                     << QList<qint64>{4 * n, 4 * n, 4 * n, 4 * n, 2 * n} << 12 * n;
        QTest::newRow("amp-bf16") << int(DtypePolicy::AmpBF16) << true
                                  << QList<qint64>{4 * n, 4 * n, 4 * n, 4 * n, 2 * n} << 12 * n;
        QTest::newRow("bf16 not from config.json")
            << int(DtypePolicy::BF16) << false << QList<qint64>{2 * n, 2 * n, 2 * n} << 6 * n;
    }
    void lossUpcast()
    {
        QFETCH(int, dtype);
        QFETCH(bool, config);
        QFETCH(QList<qint64>, allocs);
        QFETCH(qint64, maxLive);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string json = dir.filePath("config.json").toStdString();
        std::ofstream(json) << R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
            "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000,
            "max_position_embeddings": 128, "rms_norm_eps": 1e-5, "tie_word_embeddings": false})";
        Model m = loadModel(json);
        QVERIFY(m.hfCausalLm);
        if (!config)
            m.hfCausalLm = false;
        const Evaluation e = evaluate(m, configFor(m, DtypePolicy(dtype), 2, 16));
        QList<qint64> got;
        int64_t live = 0, most = 0;
        for (const AllocEvent& ev : e.events) {
            if (ev.category != Category::Loss)
                continue;
            if (ev.kind == AllocEvent::Kind::Alloc) {
                got.append(ev.bytes);
                live += ev.bytes;
            } else {
                live -= ev.bytes;
            }
            most = std::max(most, live);
        }
        QCOMPARE(got, allocs);
        QCOMPARE(qint64(most), maxLive);
    }

    void badConfigs_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("error");
        QTest::newRow("moe without layers") << R"({"model_type": "mixtral", "hidden_size": 8})"
                                            << "x.json: config.json has no 'num_hidden_layers'";
        QTest::newRow("unknown") << R"({"model_type": "mamba"})"
                                 << "x.json: not supported yet: mamba";
        QTest::newRow("no model_type") << R"({"hidden_size": 8})"
                                       << "x.json: not a Hugging Face config.json (no 'model_type')";
        QTest::newRow("missing field") << R"({"model_type": "llama", "hidden_size": 64})"
                                       << "x.json: config.json has no 'intermediate_size'";
        QTest::newRow("not json") << "{model_type"
                                  << "x.json: not a valid JSON file";
        QTest::newRow("bad gqa")
            << R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 3, "vocab_size": 10})"
            << "x.json: 4 attention heads are not a multiple of 3 key/value heads";
    }
    void badConfigs()
    {
        QFETCH(QString, json);
        QFETCH(QString, error);
        try {
            parseHfConfig(json.toStdString(), "x.json");
            QFAIL("expected an error");
        } catch (const Error& e) {
            QVERIFY2(QString(e.what()).startsWith(error), e.what());
        }
    }

    // LoRA adapters hang under their Linear in the layer tree, as PEFT's modules do.
    void adaptersInTree()
    {
        LoadOptions o;
        o.lora = LoraSpec{8, 16, 0, {}};
        const Model m = loadModel(sample("Llama-3.2-3B.json"), o);
        int qproj = -1, loraA = -1;
        for (size_t i = 0; i < m.layers.size(); ++i) {
            if (m.layers[i].path == "model/layers.0/self_attn/q_proj")
                qproj = static_cast<int>(i);
            if (m.layers[i].path == "model/layers.0/self_attn/q_proj/lora_A")
                loraA = static_cast<int>(i);
        }
        QVERIFY(qproj > 0 && loraA > 0);
        QCOMPARE(m.layers[static_cast<size_t>(m.layers[static_cast<size_t>(loraA)].parent)].path,
                 std::string("model/layers.0/self_attn/q_proj"));
    }
};

QTEST_GUILESS_MAIN(TestHfConfig)
#include "tst_hfconfig.moc"
