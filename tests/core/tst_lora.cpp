// LoRA (PEFT's lora.Linear) against PyTorch's own measurements (tests/data/lora/truth.json, the `pytorch2`
// figures) and hand-computed adapter sizes:
//  trainable parameters exact; activations_saved within 3 %; the forward + backward peak above the level
//  before it (weights, optimizer state and input excluded) within 10 %.
#include "headroom/base/error.h"
#include "headroom/import/hfconfig.h"
#include "headroom/load/loader.h"
#include "headroom/memory/engine.h"
#include "headroom/memory/finetune_summary.h"

#include <QTest>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <map>

using namespace headroom;

namespace {

const nlohmann::json& truth()
{
    static const nlohmann::json j = [] {
        std::ifstream in(std::string(HEADROOM_TEST_DATA) + "/lora/truth.json");
        return nlohmann::json::parse(in);
    }();
    return j;
}

LoraSpec specFor(const std::string& config)
{
    if (config == "lora_r8_attn")
        return LoraSpec{8, 16, 0, {"q_proj", "v_proj"}};
    if (config == "lora_r64_all")
        return LoraSpec{64, 128, 0, {"all-linear"}};
    return {};
}

const Model& model(const LoraSpec& spec)
{
    static std::map<int, Model> cache;
    auto it = cache.find(spec.r);
    if (it == cache.end()) {
        LoadOptions o;
        o.lora = spec;
        it = cache.emplace(spec.r, loadModel(std::string(HEADROOM_TEST_DATA) + "/lora/tiny_llama.onnx", o)).first;
    }
    return it->second;
}

Config configFor(const Model& m, const LoraSpec& spec, int64_t batch, int64_t seq)
{
    Config c;
    c.optimizer = Optimizer::AdamW;
    c.allocator = AllocatorMode::Exact;
    c.finetune.lora = spec;
    if (spec.r > 0)
        c.freeze = loraFreezePatterns();
    c.symbols = m.defaultBindings();
    c.symbols[static_cast<size_t>(m.batchSymbol)] = batch;
    c.symbols[static_cast<size_t>(m.symbolIndex("seq"))] = seq;
    return c;
}

double errPct(int64_t got, int64_t want)
{
    return 100.0 * (static_cast<double>(got) - static_cast<double>(want)) / static_cast<double>(want);
}

// Highest allocated bytes over forward, loss and backward (the optimizer step excluded, like peak_fwd_bwd).
int64_t fwdBwdPeak(const Evaluation& e)
{
    int64_t peak = 0;
    for (const TimelinePoint& p : e.timeline)
        if (p.phase != Phase::Optimizer)
            peak = std::max({peak, p.allocated, p.high});
    return peak;
}

} // namespace

class TestLora : public QObject
{
    Q_OBJECT

private slots:
    // --framework presets (config.cpp kPresets) against the frameworks' own recipes: torchtune's
    // recipes/configs/llama2/7B_lora_single_device.yaml and 7B_qlora_single_device.yaml (dtype: bf16,
    // torch.optim.AdamW, CEWithChunkedOutputLoss, enable_activation_checkpointing: True; torchao NF4 with
    // scaler_block_size 256), litgpt's finetune/lora.py (bf16-true, torch.optim.AdamW or bnb.optim.PagedAdamW
    // under BitsandbytesPrecision, no checkpointing on one device, chunked_cross_entropy without the upcast). `set`
    // names the switches a user's flag set (PresetSwitch bits): those keep the user's value, the column's expectation
    // then being the user's.
    void frameworkPresets_data()
    {
        QTest::addColumn<QString>("framework");
        QTest::addColumn<bool>("quantized");
        QTest::addColumn<uint>("set");
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<QString>("optimizer");
        QTest::addColumn<QString>("loss");
        QTest::addColumn<bool>("layerCheckpoint");
        QTest::addColumn<bool>("kbitPrep");
        QTest::addColumn<QString>("adapterDtype");
        QTest::addColumn<bool>("doubleQuant");
        // hf sets nothing: Config's defaults stay (fp32, adam, ce, PEFT's fp32 adapters, k-bit prep)
        QTest::newRow("hf") << "hf" << false << 0u << "fp32"
                            << "adam"
                            << "ce" << false << true << "fp32" << false;
        QTest::newRow("hf qlora") << "hf" << true << 0u << "fp32"
                                  << "adam"
                                  << "ce" << false << true << "fp32" << false;
        QTest::newRow("torchtune lora") << "torchtune" << false << 0u << "bf16"
                                        << "adamw"
                                        << "chunked-ce" << true << false << "bf16" << false;
        QTest::newRow("torchtune qlora") << "torchtune" << true << 0u << "bf16"
                                         << "adamw"
                                         << "chunked-ce" << true << false << "bf16" << true;
        QTest::newRow("litgpt lora") << "litgpt" << false << 0u << "bf16"
                                     << "adamw"
                                     << "chunked-ce-16" << false << false << "bf16" << false;
        QTest::newRow("litgpt qlora") << "litgpt" << true << 0u << "bf16"
                                      << "paged-adamw"
                                      << "chunked-ce-16" << false << false << "bf16" << false;
        // a flag the user gave wins over the preset (the user's values: the test's starting config below)
        QTest::newRow("torchtune, user dtype+loss")
            << "torchtune" << false << uint(kPresetDtype | kPresetLoss) << "amp-fp16"
            << "adamw"
            << "fused-linear-ce" << true << false << "bf16" << false;
        QTest::newRow("torchtune, user checkpoint off")
            << "torchtune" << false << uint(kPresetLayerCheckpoint) << "bf16"
            << "adamw"
            << "chunked-ce" << false << false << "bf16" << false;
        QTest::newRow("litgpt qlora, user optimizer+dq")
            << "litgpt" << true << uint(kPresetOptimizer | kPresetDoubleQuant) << "bf16"
            << "adam8bit"
            << "chunked-ce-16" << false << false << "bf16" << true;
        QTest::newRow("litgpt, user adapters+kbit")
            << "litgpt" << true << uint(kPresetAdapterDtype | kPresetKbitPrep) << "bf16"
            << "paged-adamw"
            << "chunked-ce-16" << false << true << "fp32" << false;
    }
    void frameworkPresets()
    {
        QFETCH(QString, framework);
        QFETCH(bool, quantized);
        QFETCH(uint, set);
        QFETCH(QString, dtype);
        QFETCH(QString, optimizer);
        QFETCH(QString, loss);
        QFETCH(bool, layerCheckpoint);
        QFETCH(bool, kbitPrep);
        QFETCH(QString, adapterDtype);
        QFETCH(bool, doubleQuant);
        const std::optional<Framework> f = parseFramework(framework.toStdString());
        QVERIFY(f);
        QCOMPARE(QString::fromLatin1(toString(*f)), framework);
        Config c;
        c.finetune.lora.r = 8;
        if (quantized)
            c.finetune.quant = Quant::NF4;
        // what the user's flags gave, for the switches `set` names
        if (set & kPresetDtype)
            c.dtype = DtypePolicy::AmpFP16;
        if (set & kPresetLoss)
            c.loss = Loss::FusedLinearCE;
        if (set & kPresetOptimizer)
            c.optimizer = Optimizer::Adam8bit;
        if (set & kPresetDoubleQuant)
            c.finetune.doubleQuant = true;
        applyFramework(*f, c, set);
        QVERIFY(c.framework == *f);
        QCOMPARE(QString::fromLatin1(toString(c.dtype)), dtype);
        QCOMPARE(QString::fromLatin1(toString(c.optimizer)), optimizer);
        QCOMPARE(QString::fromLatin1(toString(c.loss)), loss);
        QCOMPARE(c.finetune.layerCheckpoint, layerCheckpoint);
        QCOMPARE(c.finetune.kbitPrep, kbitPrep);
        QCOMPARE(QString::fromStdString(c.finetune.lora.dtype), adapterDtype);
        QCOMPARE(c.finetune.doubleQuant, doubleQuant);
        QVERIFY(!parseFramework("deepspeed"));
    }

    void trainableParams_data()
    {
        QTest::addColumn<QString>("config");
        for (const char* c : {"full", "lora_r8_attn", "lora_r64_all"})
            QTest::newRow(c) << QString(c);
    }
    void trainableParams()
    {
        QFETCH(QString, config);
        const nlohmann::json& t = truth()["tiny_llama"]["configs"][config.toStdString()];
        const LoraSpec spec = specFor(config.toStdString());
        const Model& m = model(spec);
        const Config c = configFor(m, spec, 2, 128);
        const Evaluation e = evaluate(m, c);
        const FineTuneSummary s = summarizeFineTune(m, c, e);
        if (spec.r > 0) {
            QCOMPARE(s.trainableParams, t["trainable_params"].get<int64_t>());
            QCOMPARE(s.adapterParams, t["adapter_params"].get<int64_t>());
            QCOMPARE(s.frozenParams, t["base_params"].get<int64_t>());
            // fp32 gradients of exactly the adapters (grad_bytes_after_step)
            QCOMPARE(e.memory.gradients, t["points"][0]["grad_bytes_after_step"].get<int64_t>());
        } else {
            QCOMPARE(m.params.trainable, t["trainable_params"].get<int64_t>());
        }
    }

    void againstTruth_data()
    {
        QTest::addColumn<QString>("config");
        QTest::addColumn<int>("point");
        QTest::addColumn<bool>("small");
        for (const char* c : {"full", "lora_r8_attn", "lora_r64_all"}) {
            QTest::newRow(qPrintable(QString("%1 b2 s128").arg(c))) << QString(c) << 0 << false;
            QTest::newRow(qPrintable(QString("%1 b8 s256").arg(c))) << QString(c) << 1 << false;
            QTest::newRow(qPrintable(QString("%1 b1 s16").arg(c))) << QString(c) << 0 << true;
        }
    }
    void againstTruth()
    {
        QFETCH(QString, config);
        QFETCH(int, point);
        QFETCH(bool, small);
        const nlohmann::json& p =
            truth()["tiny_llama"]["configs"][config.toStdString()][small ? "small_points" : "points"][point];
        const LoraSpec spec = specFor(config.toStdString());
        const Model& m = model(spec);
        const Config c = configFor(m, spec, p["batch"].get<int64_t>(), p["seq"].get<int64_t>());
        const Evaluation e = evaluate(m, c);
        const int64_t wantSaved = p["pytorch2"]["activation_bytes"].get<int64_t>() +
                                  p["saved_for_backward"]["input_bytes"].get<int64_t>();
        const int64_t wantPeak = p["pytorch2"]["peak_fwd_bwd"].get<int64_t>();
        const int64_t gotPeak = fwdBwdPeak(e) - e.memory.weights - e.memory.optimizer - e.memory.input;
        const double es = errPct(e.memory.activationsSaved, wantSaved), ep = errPct(gotPeak, wantPeak);
        qInfo("%s: saved %lld vs %lld (%+.1f %%), fwd+bwd peak %lld vs %lld (%+.1f %%)",
              qPrintable(QTest::currentDataTag()), static_cast<long long>(e.memory.activationsSaved),
              static_cast<long long>(wantSaved), es, static_cast<long long>(gotPeak), static_cast<long long>(wantPeak),
              ep);
        QVERIFY2(std::abs(es) <= 3.0, qPrintable(QString("saved %1 %").arg(es, 0, 'f', 2)));
        QVERIFY2(std::abs(ep) <= 10.0, qPrintable(QString("peak %1 %").arg(ep, 0, 'f', 2)));
    }

    // DoRA (use_dora=True) against PyTorch's autograd on the same tiny Llama (tests/data/lora/make_dora.py,
    // dora_truth.json): what DoRA keeps beyond LoRA on the same adapters (each adapted Linear's base output and
    // lora_B's output, for the magnitude's gradient), and the magnitude vectors as trainable parameters.
    void doraAgainstTruth_data()
    {
        QTest::addColumn<QString>("config");
        QTest::addColumn<int>("point");
        for (const char* c : {"r8_attn", "r16_all", "r8_attn_p0.05"})
            for (int i = 0; i < 2; ++i)
                QTest::newRow(qPrintable(QString("%1 #%2").arg(c).arg(i))) << QString(c) << i;
    }
    void doraAgainstTruth()
    {
        QFETCH(QString, config);
        QFETCH(int, point);
        static const nlohmann::json dora = [] {
            std::ifstream in(std::string(HEADROOM_TEST_DATA) + "/lora/dora_truth.json");
            return nlohmann::json::parse(in);
        }();
        const nlohmann::json& c = dora["configs"][config.toStdString()];
        const nlohmann::json& p = c["points"][point];
        LoraSpec spec{c["spec"]["r"].get<int>(), c["spec"]["alpha"].get<double>(), c["spec"]["dropout"].get<double>(),
                      c["spec"]["targets"].get<std::vector<std::string>>()};
        int64_t saved[2] = {0, 0}, trainable[2] = {0, 0};
        for (int d = 0; d < 2; ++d) {
            spec.dora = d == 1;
            LoadOptions o;
            o.lora = spec;
            const Model m = loadModel(std::string(HEADROOM_TEST_DATA) + "/lora/tiny_llama.onnx", o);
            Config cfg = configFor(m, spec, p["batch"].get<int64_t>(), p["seq"].get<int64_t>());
            cfg.freeze = loraFreezePatterns(spec.dora);
            saved[d] = evaluate(m, cfg).memory.activationsSaved;
            trainable[d] = countParams(m, cfg).trainable;
        }
        const int64_t want = p["dora_minus_lora"].get<int64_t>();
        const double err = errPct(saved[1] - saved[0], want);
        qInfo("%s: DoRA - LoRA saved %lld vs %lld (%+.2f %%)", qPrintable(QTest::currentDataTag()),
              static_cast<long long>(saved[1] - saved[0]), static_cast<long long>(want), err);
        // the [out]-sized scales autograd also keeps (magnitude / norm, and less one) are weight-side here
        QVERIFY2(std::abs(err) <= 1.0, qPrintable(QString("DoRA - LoRA saved %1 %").arg(err, 0, 'f', 2)));
        QCOMPARE(trainable[1] - trainable[0], p["magnitude_params"].get<int64_t>());
    }

    // IA3 against PyTorch's autograd on the same tiny Llama (tests/data/lora/make_ia3.py, ia3_truth.json): all
    // that one forward keeps once the first scaled Linear records, the feedforward inputs and the scaled
    // outputs among it, and the vectors as the only trainable parameters.
    void ia3AgainstTruth_data()
    {
        QTest::addColumn<QString>("config");
        QTest::addColumn<int>("point");
        for (const char* c : {"default", "all", "attn"})
            for (int i = 0; i < 2; ++i)
                QTest::newRow(qPrintable(QString("%1 #%2").arg(c).arg(i))) << QString(c) << i;
    }
    void ia3AgainstTruth()
    {
        QFETCH(QString, config);
        QFETCH(int, point);
        static const nlohmann::json truth = [] {
            std::ifstream in(std::string(HEADROOM_TEST_DATA) + "/lora/ia3_truth.json");
            return nlohmann::json::parse(in);
        }();
        const nlohmann::json& c = truth["configs"][config.toStdString()];
        const nlohmann::json& p = c["points"][point];
        LoraSpec spec;
        spec.method = PeftMethod::IA3;
        spec.targets = c["spec"]["targets"].get<std::vector<std::string>>();
        spec.feedforward = c["spec"]["feedforward"].get<std::vector<std::string>>();
        LoadOptions o;
        o.lora = spec;
        const Model m = loadModel(std::string(HEADROOM_TEST_DATA) + "/lora/tiny_llama.onnx", o);
        Config cfg = configFor(m, spec, p["batch"].get<int64_t>(), p["seq"].get<int64_t>());
        cfg.freeze = adapterFreezePatterns(spec);
        // the truth's own autograd: torch 1.13 on the CPU (its mean keeps the RMSNorm's x^2, README)
        cfg.torch = TorchVersion::V1_13;
        cfg.device = Device::CPU;
        const int64_t got = evaluate(m, cfg).memory.activationsSaved;
        const int64_t want = p["saved_activation_bytes"].get<int64_t>();
        const double err = errPct(got, want);
        qInfo("%s: IA3 saved %lld vs %lld (%+.2f %%)", qPrintable(QTest::currentDataTag()), static_cast<long long>(got),
              static_cast<long long>(want), err);
        QVERIFY2(std::abs(err) <= 1.0, qPrintable(QString("IA3 saved %1 %").arg(err, 0, 'f', 2)));
        QCOMPARE(countParams(m, cfg).trainable, p["ia3_params"].get<int64_t>());
    }

    // What the adapters themselves keep, by hand (README "What the measurements show"): each wrapped Linear
    // keeps its input once per distinct input (q and v share it) and lora_A's output N x r; the frozen base
    // keeps nothing.
    void adapterSaves_data()
    {
        QTest::addColumn<int>("r");
        QTest::addColumn<double>("dropout");
        QTest::addColumn<qint64>("batch");
        QTest::addColumn<qint64>("seq");
        QTest::newRow("r8 p0 b2 s128") << 8 << 0.0 << qint64(2) << qint64(128);
        QTest::newRow("r16 p0 b8 s256") << 16 << 0.0 << qint64(8) << qint64(256);
        QTest::newRow("r8 p0.05 b2 s128") << 8 << 0.05 << qint64(2) << qint64(128);
    }
    void adapterSaves()
    {
        QFETCH(int, r);
        QFETCH(double, dropout);
        QFETCH(qint64, batch);
        QFETCH(qint64, seq);
        const LoraSpec spec{r, 2.0 * r, dropout, {"q_proj", "v_proj"}};
        LoadOptions o;
        o.lora = spec;
        const Model m = loadModel(std::string(HEADROOM_TEST_DATA) + "/lora/tiny_llama.onnx", o);
        const Config c = configFor(m, spec, batch, seq);
        const Evaluation e = evaluate(m, c);
        int64_t adapters = 0, base = 0;
        for (size_t n = 0; n < m.nodes.size(); ++n) {
            const std::string path = m.nodePath(static_cast<int>(n));
            if (path.find("/lora_") != std::string::npos)
                adapters += e.nodes[n].savedBytes;
            else if (path.find("_proj/MatMul") != std::string::npos)
                base += e.nodes[n].savedBytes;
        }
        const int64_t N = batch * seq, layers = 4, in = 256;
        int64_t want = layers * (N * in * 4 + 2 * N * r * 4); // shared input + lora_A outputs of q and v
        // per adapter: the dropped copy instead of the shared input, and the 1-byte mask, which layer 0 does
        // not keep (its input requires no grad: nothing is recorded before the first adapter)
        if (dropout > 0)
            want = layers * (2 * N * in * 4 + 2 * N * r * 4) + (layers - 1) * 2 * N * in * 1;
        QCOMPARE(adapters, want);
        QCOMPARE(base, int64_t(0));
    }

    // PEFT's published counts (print_trainable_parameters) on configs built from config.json.
    void peftCounts_data()
    {
        QTest::addColumn<QString>("config");
        QTest::addColumn<int>("r");
        QTest::addColumn<QString>("targets");
        QTest::addColumn<qint64>("trainable");
        // Llama-3.2-3B, r=32 on q,v: 28 layers x 32 x ((3072 + 3072) + (3072 + 1024)) (issue 15)
        QTest::newRow("Llama-3.2-3B r32 q,v") << "Llama-3.2-3B.json" << 32 << "q_proj,v_proj" << qint64(9175040);
        // Llama-2-7B-like (Llama-3.1-8B dims) r=8 q,v: 32 x 8 x ((4096 + 4096) + (4096 + 1024)) = 3,407,872
        QTest::newRow("Llama-3.1-8B r8 q,v") << "Llama-3.1-8B.json" << 8 << "q_proj,v_proj" << qint64(3407872);
        // Mistral-7B r=16 all-linear: 32 x 16 x (q 8192 + k 5120 + v 5120 + o 8192 + gate 18432 + up 18432 + down
        // 18432)
        QTest::newRow("Mistral-7B r16 all-linear") << "Mistral-7B-v0.1.json" << 16 << "all-linear" << qint64(41943040);
        // gpt2 with PEFT's default target c_attn, r=8: 12 x 8 x (768 + 2304) = 294,912
        QTest::newRow("gpt2 r8 default") << "gpt2.json" << 8 << "" << qint64(294912);
    }
    void peftCounts()
    {
        QFETCH(QString, config);
        QFETCH(int, r);
        QFETCH(QString, targets);
        QFETCH(qint64, trainable);
        LoraSpec spec{r, double(r), 0, {}};
        for (const QString& t : targets.split(',', Qt::SkipEmptyParts))
            spec.targets.push_back(t.toStdString());
        LoadOptions o;
        o.lora = spec;
        const Model m = loadModel(std::string(HEADROOM_SOURCE_DIR) + "/resources/samples/" + config.toStdString(), o);
        Config c;
        c.finetune.lora = spec;
        c.freeze = loraFreezePatterns();
        c.symbols = m.defaultBindings();
        const Evaluation e = evaluate(m, c);
        QCOMPARE(summarizeFineTune(m, c, e).trainableParams, int64_t(trainable));
    }

    // PEFT keeps adapters in fp32 on a 16-bit model: 4-byte weights and gradients, 8 bytes of AdamW state;
    // under fp32 and autocast they are fp32 anyway.
    void adapterDtype_data()
    {
        QTest::addColumn<int>("dtype");
        QTest::newRow("fp32") << int(DtypePolicy::FP32);
        QTest::newRow("bf16") << int(DtypePolicy::BF16);
        QTest::newRow("fp16") << int(DtypePolicy::FP16);
        QTest::newRow("amp-bf16") << int(DtypePolicy::AmpBF16);
    }
    void adapterDtype()
    {
        QFETCH(int, dtype);
        const LoraSpec spec = specFor("lora_r8_attn");
        const Model& m = model(spec);
        Config c = configFor(m, spec, 2, 128);
        c.dtype = DtypePolicy(dtype);
        const Evaluation e = evaluate(m, c);
        const FineTuneSummary s = summarizeFineTune(m, c, e);
        const int64_t n = 26624;
        QCOMPARE(s.adapterBytes, n * 4);
        QCOMPARE(s.adapterGradientBytes, n * 4);
        QCOMPARE(s.adapterOptimizerBytes, n * 8);
        QCOMPARE(e.memory.gradients, n * 4);
        QCOMPARE(e.memory.optimizer, n * 8);
    }

    // PEFT's dtype casts (tuners/lora/layer.py Linear.forward, _cast_input_dtype): with fp32 adapters on a
    // 16-bit model without autocast each wrapped Linear makes its own fp32 copy of x, which lora_A saves
    // (mm saves self for mat2's gradient; _to_copy saves nothing), and lora_A's output is fp32. tiny_llama:
    // 4 layers, hidden 256, q_proj and v_proj (256 -> 256) adapted, r 8; N = b x s tokens.
    void castCopies_data()
    {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<QString>("adapters");
        QTest::addColumn<double>("dropout");
        QTest::addColumn<qint64>("perLayer");   // bytes per layer per token (N), from the rule below
        QTest::addColumn<qint64>("maskLayers"); // layers whose dropout keeps its 1-byte masks
        // two fp32 copies of x (2 x 256 x 4) + two fp32 lora_A outputs (2 x 8 x 4)
        QTest::newRow("bf16 model, fp32 adapters")
            << int(DtypePolicy::BF16) << "fp32" << 0.0 << qint64(2 * 256 * 4 + 2 * 8 * 4) << qint64(0);
        QTest::newRow("fp16 model, fp32 adapters")
            << int(DtypePolicy::FP16) << "fp32" << 0.0 << qint64(2 * 256 * 4 + 2 * 8 * 4) << qint64(0);
        // no cast: q and v share the bf16 x (256 x 2); two bf16 lora_A outputs (2 x 8 x 2)
        QTest::newRow("bf16 model, bf16 adapters")
            << int(DtypePolicy::BF16) << "bf16" << 0.0 << qint64(256 * 2 + 2 * 8 * 2) << qint64(0);
        // an fp32 model with bf16 adapters: a bf16 copy of x per adapter (2 x 256 x 2) + bf16 outputs (2 x 8 x 2)
        QTest::newRow("fp32 model, bf16 adapters")
            << int(DtypePolicy::FP32) << "bf16" << 0.0 << qint64(2 * 256 * 2 + 2 * 8 * 2) << qint64(0);
        // autocast decides: lora_A's F.linear casts the fp32 x to bf16 per call and saves that copy
        QTest::newRow("amp-bf16, fp32 adapters")
            << int(DtypePolicy::AmpBF16) << "fp32" << 0.0 << qint64(2 * 256 * 2 + 2 * 8 * 2) << qint64(0);
        // dropout runs on the fp32 copy: per adapter the fp32 dropped copy (256 x 4) and, where x requires
        // grad (layers 1-3), a 1-byte mask (256)
        QTest::newRow("bf16 model, fp32 adapters, dropout")
            << int(DtypePolicy::BF16) << "fp32" << 0.05 << qint64(2 * 256 * 4 + 2 * 8 * 4) << qint64(3);
    }
    void castCopies()
    {
        QFETCH(int, dtype);
        QFETCH(QString, adapters);
        QFETCH(double, dropout);
        QFETCH(qint64, perLayer);
        QFETCH(qint64, maskLayers);
        LoraSpec spec{8, 16, dropout, {"q_proj", "v_proj"}};
        spec.dtype = adapters.toStdString();
        LoadOptions o;
        o.lora = spec;
        const Model m = loadModel(std::string(HEADROOM_TEST_DATA) + "/lora/tiny_llama.onnx", o);
        Config c = configFor(m, spec, 2, 128);
        c.dtype = DtypePolicy(dtype);
        const Evaluation e = evaluate(m, c);
        int64_t saved = 0, base = 0;
        for (size_t n = 0; n < m.nodes.size(); ++n) {
            const std::string path = m.nodePath(static_cast<int>(n));
            if (path.find("/lora_") != std::string::npos)
                saved += e.nodes[n].savedBytes;
            else if (path.find("_proj/MatMul") != std::string::npos)
                base += e.nodes[n].savedBytes;
        }
        const int64_t N = 2 * 128;
        QCOMPARE(saved, 4 * perLayer * N + maskLayers * 2 * N * 256);
        QCOMPARE(base, int64_t(0));
    }

    // What each step of layer 1's q_proj allocates in forward (bf16 model, r 8, N = 256 tokens): the cast
    // copy of x, then fp32 adapter outputs, the add promoted to fp32 (bf16 + fp32) and the cast back
    // (result.to(torch_result_dtype)); with bf16 adapters every cast is x itself.
    void castSteps_data()
    {
        QTest::addColumn<QString>("adapters");
        QTest::addColumn<QString>("node");
        QTest::addColumn<qint64>("bytes");
        const qint64 N = 256;
        QTest::newRow("fp32 cast_in") << "fp32"
                                      << "lora_cast_in/Cast" << N * 256 * 4;
        QTest::newRow("fp32 lora_A") << "fp32"
                                     << "lora_A/default/MatMul" << N * 8 * 4;
        QTest::newRow("fp32 lora_B") << "fp32"
                                     << "lora_B/default/MatMul" << N * 256 * 4;
        QTest::newRow("fp32 cast_out") << "fp32"
                                       << "lora_cast_out/Cast" << qint64(0);
        QTest::newRow("fp32 add") << "fp32"
                                  << "lora_add/Add" << N * 256 * 4;
        QTest::newRow("fp32 cast_result") << "fp32"
                                          << "lora_cast_result/Cast" << N * 256 * 2;
        QTest::newRow("bf16 cast_in") << "bf16"
                                      << "lora_cast_in/Cast" << qint64(0);
        QTest::newRow("bf16 lora_B") << "bf16"
                                     << "lora_B/default/MatMul" << N * 256 * 2;
        QTest::newRow("bf16 add") << "bf16"
                                  << "lora_add/Add" << N * 256 * 2;
        QTest::newRow("bf16 cast_result") << "bf16"
                                          << "lora_cast_result/Cast" << qint64(0);
    }
    void castSteps()
    {
        QFETCH(QString, adapters);
        QFETCH(QString, node);
        QFETCH(qint64, bytes);
        LoraSpec spec = specFor("lora_r8_attn");
        spec.dtype = adapters.toStdString();
        LoadOptions o;
        o.lora = spec;
        const Model m = loadModel(std::string(HEADROOM_TEST_DATA) + "/lora/tiny_llama.onnx", o);
        Config c = configFor(m, spec, 2, 128);
        c.dtype = DtypePolicy::BF16;
        const Evaluation e = evaluate(m, c);
        const std::string want = "layers.1/self_attn/q_proj/" + node.toStdString();
        int64_t before = -1, got = -1;
        for (const TimelinePoint& p : e.timeline) {
            if (p.phase != Phase::Forward)
                continue;
            if (p.node >= 0 && m.nodePath(p.node).ends_with(want)) {
                got = p.high - before;
                break;
            }
            before = p.allocated;
        }
        QCOMPARE(got, int64_t(bytes));
    }

    // What layer 1's q_proj dropout allocates in forward (fp32, r 8, p 0.05, N = 256 tokens, 256 wide). On CUDA
    // F.dropout is native_dropout whether or not autograd records (Dropout.cpp dropout:
    // is_fused_kernel_acceptable), and dropout_cuda makes the 1-byte mask before the output (Dropout.cu), so a
    // checkpointed layer's forward, which records nothing, still has the mask beside the output until at::dropout
    // drops it; where autograd records, the mask is kept for backward.
    void dropoutMask_data()
    {
        QTest::addColumn<bool>("layerCheckpoint");
        QTest::addColumn<qint64>("bytes");
        const qint64 N = 256, in = 256;
        QTest::newRow("recorded (mask kept)") << false << N * in * (4 + 1);
        QTest::newRow("checkpointed forward (mask dropped)") << true << N * in * (4 + 1);
    }
    void dropoutMask()
    {
        QFETCH(bool, layerCheckpoint);
        QFETCH(qint64, bytes);
        const LoraSpec spec{8, 16, 0.05, {"q_proj", "v_proj"}};
        LoadOptions o;
        o.lora = spec;
        const Model m = loadModel(std::string(HEADROOM_TEST_DATA) + "/lora/tiny_llama.onnx", o);
        Config c = configFor(m, spec, 2, 128);
        c.finetune.layerCheckpoint = layerCheckpoint;
        const Evaluation e = evaluate(m, c);
        const std::string want = "layers.1/self_attn/q_proj/lora_dropout/default/Dropout";
        int64_t before = -1, got = -1, after = -1;
        int step = -1;
        for (size_t i = 0; i < e.timeline.size(); ++i) {
            const TimelinePoint& p = e.timeline[i];
            if (p.phase != Phase::Forward)
                continue;
            if (got < 0 && p.node >= 0 && m.nodePath(p.node).ends_with(want)) {
                got = p.high - before;
                after = p.allocated - before;
                step = int(i);
                break;
            }
            before = p.allocated;
        }
        QCOMPARE(got, int64_t(bytes));
        // the mask outlives the step only where autograd keeps it
        QCOMPARE(after, layerCheckpoint ? bytes / 5 * 4 : bytes);
        // and is made first either way (dropout_cuda: mask, then the output), which decides where each lands
        std::vector<int64_t> allocs;
        for (const AllocEvent& ev : e.events)
            if (ev.step == step && ev.kind == AllocEvent::Kind::Alloc)
                allocs.push_back(ev.bytes);
        QCOMPARE(allocs, (std::vector<int64_t>{bytes / 5, bytes / 5 * 4}));
    }

    void badSpecs_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("error");
        QTest::newRow("no value") << "r"
                                  << "expected KEY=VALUE, got 'r'";
        QTest::newRow("bad r") << "r=0"
                               << "r must be a positive integer";
        QTest::newRow("bad dropout") << "dropout=1"
                                     << "dropout must lie in [0, 1)";
        QTest::newRow("unknown key")
            << "rank=8"
            << "unknown key 'rank' (r, alpha, dropout, dtype, dora, init_lora_weights, targets)";
        QTest::newRow("unknown non-numeric key")
            << "scheme=gaussian"
            << "unknown key 'scheme' (r, alpha, dropout, dtype, dora, init_lora_weights, targets)";
        QTest::newRow("unknown init") << "init_lora_weights=xavier"
                                      << "init_lora_weights=xavier: expected true, false, gaussian, eva, olora, pissa, "
                                         "pissa_niter_N, corda, loftq, orthogonal or mica";
        QTest::newRow("mica with dora") << "init_lora_weights=mica,dora=true"
                                        << "dora cannot take init_lora_weights=mica (PEFT applies one LoRA variant "
                                           "per layer)";
        QTest::newRow("bad alpha") << "alpha=big"
                                   << "'alpha' needs a number, got 'big'";
        QTest::newRow("bad adapter dtype") << "r=8,dtype=int8"
                                           << "dtype=int8: expected fp32, bf16 or fp16";
        QTest::newRow("empty targets") << "targets="
                                       << "targets= needs module names (q_proj,v_proj) or all-linear";
    }
    void badSpecs()
    {
        QFETCH(QString, text);
        QFETCH(QString, error);
        LoraSpec s;
        const auto e = parseLoraSpec(text.toStdString(), s);
        QVERIFY(e.has_value());
        QCOMPARE(QString::fromStdString(*e), error);
    }

    void ia3Specs_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QStringList>("targets");
        QTest::addColumn<QString>("feedforward"); // "-": unset (PEFT's list for the model_type)
        QTest::addColumn<QString>("dtype");
        QTest::newRow("default") << "default" << QStringList{} << "-"
                                 << "fp32";
        QTest::newRow("targets only") << "targets=k_proj,v_proj" << QStringList{"k_proj", "v_proj"} << "-"
                                      << "fp32";
        QTest::newRow("with feedforward") << "dtype=bf16,targets=k_proj,v_proj,down_proj,feedforward=down_proj"
                                          << QStringList{"k_proj", "v_proj", "down_proj"} << "down_proj"
                                          << "bf16";
        QTest::newRow("feedforward none") << "targets=q_proj,feedforward=none" << QStringList{"q_proj"} << ""
                                          << "fp32";
    }
    void ia3Specs()
    {
        QFETCH(QString, text);
        QFETCH(QStringList, targets);
        QFETCH(QString, feedforward);
        QFETCH(QString, dtype);
        LoraSpec s;
        const auto e = parseIa3Spec(text.toStdString(), s);
        QVERIFY2(!e, e ? e->c_str() : "");
        QVERIFY(s.method == PeftMethod::IA3 && s.active() && s.r == 0);
        QStringList got;
        for (const std::string& t : s.targets)
            got << QString::fromStdString(t);
        QCOMPARE(got, targets);
        QCOMPARE(s.feedforward.has_value(), feedforward != "-");
        if (s.feedforward) {
            QStringList ff;
            for (const std::string& t : *s.feedforward)
                ff << QString::fromStdString(t);
            QCOMPARE(ff.join(','), feedforward);
        }
        QCOMPARE(QString::fromStdString(s.dtype), dtype);
    }

    void badIa3Specs_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("error");
        QTest::newRow("no value") << "ia3"
                                  << "expected default or KEY=VALUE, got 'ia3'";
        QTest::newRow("a LoRA key") << "r=8"
                                    << "unknown key 'r' (dtype, targets, feedforward)";
        QTest::newRow("feedforward not targeted")
            << "targets=k_proj,v_proj,feedforward=down_proj"
            << "feedforward module 'down_proj' is not among the targets (IA3Config: feedforward_modules should be a "
               "subset of target_modules)";
        QTest::newRow("empty targets") << "targets="
                                       << "targets= needs module names (k_proj,v_proj,down_proj)";
    }
    void badIa3Specs()
    {
        QFETCH(QString, text);
        QFETCH(QString, error);
        LoraSpec s;
        const auto e = parseIa3Spec(text.toStdString(), s);
        QVERIFY(e.has_value());
        QCOMPARE(QString::fromStdString(*e), error);
    }

    // PEFT's llama defaults (k_proj, v_proj, down_proj; down_proj feedforward) through a config.json's model_type:
    // 286,720 vectors on Llama-3.2-3B, the count PEFT's method comparison printed (num_trainable_params). A file
    // without a model_type needs targets=, and targets that match nothing are refused by name.
    void ia3Defaults()
    {
        LoadOptions o;
        o.lora.method = PeftMethod::IA3;
        const Model llama = loadModel(std::string(HEADROOM_TEST_DATA) + "/external/meta-llama--Llama-3.2-3B.json", o);
        Config c;
        c.finetune.lora = o.lora;
        c.freeze = adapterFreezePatterns(o.lora);
        c.symbols = llama.defaultBindings();
        QCOMPARE(countParams(llama, c).trainable, int64_t(286720));
        for (const char* t : {"", "c_attn"}) {
            o.lora.targets = t[0] ? std::vector<std::string>{t} : std::vector<std::string>{};
            try {
                loadModel(std::string(HEADROOM_TEST_DATA) + "/lora/tiny_llama.onnx", o);
                QFAIL("expected an error");
            } catch (const Error& e) {
                const std::string want = t[0] ? "IA3: no Linear matches targets=c_attn"
                                              : "IA3: no targets= given and PEFT has no default IA3 targets";
                QVERIFY2(std::string(e.what()).find(want) != std::string::npos, e.what());
            }
        }
    }

    void fp32AdaptersAreTheDefault()
    {
        LoraSpec a, b;
        QVERIFY(!parseLoraSpec("r=16,alpha=32,dtype=fp32,targets=q_proj,v_proj", a));
        QVERIFY(!parseLoraSpec("r=16,alpha=32,targets=q_proj,v_proj", b));
        QCOMPARE(a, b);
        QCOMPARE(a.targets.size(), size_t(2));
    }

    void noMatchingTarget()
    {
        LoadOptions o;
        o.lora = LoraSpec{8, 8, 0, {"c_attn"}};
        try {
            loadModel(std::string(HEADROOM_TEST_DATA) + "/lora/tiny_llama.onnx", o);
            QFAIL("expected an error");
        } catch (const Error& e) {
            QVERIFY(std::string(e.what()).find("LoRA: no Linear matches targets=c_attn") != std::string::npos);
        }
    }
};

QTEST_GUILESS_MAIN(TestLora)
#include "tst_lora.moc"
