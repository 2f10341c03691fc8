// bitsandbytes storage, byte-exact: 4-bit weights (functional.py quantize_4bit, blocksize 64, optional
// double quantization of the absmax with blocksize 256), LLM.int8 weights, the modules quantized (every
// Linear but the output layer) on a Llama-3-8B config, and 8-bit Adam's blockwise state.
#include "headroom/load/loader.h"
#include "headroom/memory/engine.h"
#include "headroom/memory/finetune_summary.h"

#include <QTest>

using namespace headroom;

namespace {

const Model& tinyModel()
{
    static const Model m = [] {
        LoadOptions o;
        o.lora = LoraSpec{8, 16, 0, {"q_proj", "v_proj"}};
        return loadModel(std::string(HEADROOM_TEST_DATA) + "/lora/tiny_llama.onnx", o);
    }();
    return m;
}

Evaluation tinyQLora(bool kbitPrep, DtypePolicy dtype)
{
    const Model& m = tinyModel();
    Config c;
    c.dtype = dtype;
    c.optimizer = Optimizer::AdamW;
    c.allocator = AllocatorMode::Exact;
    c.symbols = m.defaultBindings();
    c.symbols[static_cast<size_t>(m.batchSymbol)] = 2;
    c.symbols[static_cast<size_t>(m.symbolIndex("seq"))] = 128;
    c.freeze = loraFreezePatterns();
    c.finetune.lora = LoraSpec{8, 16, 0, {"q_proj", "v_proj"}};
    c.finetune.quant = Quant::NF4;
    c.finetune.kbitPrep = kbitPrep;
    return evaluate(m, c);
}

} // namespace

class TestQuant : public QObject
{
    Q_OBJECT

private slots:
    void fourBit_data()
    {
        QTest::addColumn<qint64>("numel");
        QTest::addColumn<bool>("doubleQuant");
        QTest::addColumn<qint64>("bytes");
        // q_proj 4096 x 4096: 8,388,608 packed + 262,144 blocks x 4 B
        QTest::newRow("4096x4096") << qint64(4096 * 4096) << false << qint64(9437184);
        // + double quant: 262,144 x 1 B + 1,024 second-level blocks x 4 B
        QTest::newRow("4096x4096 dq") << qint64(4096 * 4096) << true << qint64(8388608 + 262144 + 4096);
        // gate_proj 4096 x 14336: 29,360,128 + 917,504 x 4
        QTest::newRow("4096x14336") << qint64(4096LL * 14336) << false << qint64(33030144);
        QTest::newRow("4096x14336 dq") << qint64(4096LL * 14336) << true << qint64(29360128 + 917504 + 3584 * 4);
        // odd sizes round up: 65 values -> 33 bytes, 2 blocks; dq: 2 + one second-level block
        QTest::newRow("65") << qint64(65) << false << qint64(33 + 8);
        QTest::newRow("65 dq") << qint64(65) << true << qint64(33 + 2 + 4);
    }
    void fourBit()
    {
        QFETCH(qint64, numel);
        QFETCH(bool, doubleQuant);
        QFETCH(qint64, bytes);
        QCOMPARE(quant4bitBytes(numel, doubleQuant), int64_t(bytes));
    }

    // Every Linear of Llama-3.1-8B's config but lm_head is quantized; embeddings and norms are not.
    void llama3Linears_data()
    {
        QTest::addColumn<int>("quant");
        QTest::addColumn<bool>("doubleQuant");
        QTest::newRow("nf4") << int(Quant::NF4) << false;
        QTest::newRow("nf4 dq") << int(Quant::NF4) << true;
        QTest::newRow("fp4") << int(Quant::FP4) << false;
        QTest::newRow("int8") << int(Quant::Int8) << false;
    }
    void llama3Linears()
    {
        QFETCH(int, quant);
        QFETCH(bool, doubleQuant);
        LoadOptions o;
        o.lora = LoraSpec{8, 8, 0, {"q_proj", "v_proj"}};
        const Model m = loadModel(std::string(HEADROOM_SOURCE_DIR) + "/resources/samples/Llama-3.1-8B.json", o);
        Config c;
        c.dtype = DtypePolicy::BF16;
        c.symbols = m.defaultBindings();
        c.freeze = loraFreezePatterns();
        c.finetune.lora = o.lora;
        c.finetune.quant = Quant(quant);
        c.finetune.doubleQuant = doubleQuant;
        const Evaluation e = evaluate(m, c);
        const FineTuneSummary s = summarizeFineTune(m, c, e);
        // the formula per Linear weight, summed by hand from the model's own tensors
        int64_t want = 0, params = 0, largest = 0;
        for (const Tensor& t : m.tensors) {
            if (!t.name.ends_with("_proj.weight") || t.name.find("lora_") != std::string::npos)
                continue;
            const int64_t rows = t.shape.dims[0].constantValue().value_or(0),
                          cols = t.shape.dims[1].constantValue().value_or(0);
            const int64_t n = rows * cols;
            want += Quant(quant) == Quant::Int8 ? n + 4 * cols : quant4bitBytes(n, doubleQuant);
            params += n;
            largest = std::max(largest, n);
        }
        QCOMPARE(params, int64_t(6979321856)); // 8,030,261,248 - embed_tokens - lm_head - 65 norms
        QCOMPARE(s.quantizedParams, params);
        QCOMPARE(s.quantizedBytes, want);
        QCOMPARE(s.dequantTransientBytes, largest * 2); // bf16 compute dtype
        // frozen: the quantized Linears, then embed_tokens, lm_head and the norms in fp32 (kbit prep)
        QCOMPARE(s.frozenBytes, want + (2 * 128256LL * 4096 + 65 * 4096) * 4);
        QCOMPARE(s.trainableParams, int64_t(3407872));
    }

    // The allocated timeline is the same whichever allocator model replays it: the per-block replay must
    // hold the weights at their stored size (4-bit, kbit-prep fp32, fp32 adapters), as `memory.weights`
    // does, or a QLoRA step looks as big as an fp32 full model's.
    void allocatorModelsAgree_data()
    {
        QTest::addColumn<int>("quant");
        QTest::addColumn<bool>("kbitPrep");
        QTest::addColumn<int>("dtype");
        QTest::newRow("lora bf16") << int(Quant::None) << false << int(DtypePolicy::BF16);
        QTest::newRow("qlora nf4 kbit") << int(Quant::NF4) << true << int(DtypePolicy::FP32);
        QTest::newRow("qlora nf4 no kbit") << int(Quant::NF4) << false << int(DtypePolicy::BF16);
        QTest::newRow("int8 kbit") << int(Quant::Int8) << true << int(DtypePolicy::FP32);
    }
    void allocatorModelsAgree()
    {
        QFETCH(int, quant);
        QFETCH(bool, kbitPrep);
        QFETCH(int, dtype);
        LoadOptions o;
        o.lora = LoraSpec{16, 32, 0, {"all-linear"}};
        const Model m = loadModel(std::string(HEADROOM_TEST_DATA) + "/hf/llama_small.config.json", o);
        Config c;
        c.dtype = DtypePolicy(dtype);
        c.optimizer = Optimizer::AdamW;
        c.symbols = m.defaultBindings();
        c.symbols[static_cast<size_t>(m.batchSymbol)] = 2;
        c.symbols[static_cast<size_t>(m.symbolIndex("seq"))] = 256;
        c.freeze = loraFreezePatterns();
        c.finetune.lora = o.lora;
        c.finetune.quant = Quant(quant);
        c.finetune.doubleQuant = true;
        c.finetune.kbitPrep = kbitPrep;
        c.allocator = AllocatorMode::Exact;
        const Evaluation exact = evaluate(m, c);
        c.allocator = AllocatorMode::Caching;
        const Evaluation caching = evaluate(m, c);
        QCOMPARE(caching.memory.weights, exact.memory.weights);
        QCOMPARE(caching.memory.peak, exact.memory.peak);
        QVERIFY(caching.memory.reservedPeak >= caching.memory.peak);
        // weights + adapter gradients + optimizer state + what the step keeps: never more than the
        // step's own categories add up to
        QVERIFY(exact.memory.peak < exact.memory.weights + exact.memory.dequantTransient + exact.memory.gradients +
                                        exact.memory.optimizer + exact.memory.activationsPeak + (16 << 20));
    }

    // bitsandbytes Optimizer2State: tensors under 4096 elements keep fp32 state, larger ones one byte per
    // moment element plus an fp32 absmax per 256-element block.
    void adam8bit_data()
    {
        QTest::addColumn<qint64>("numel");
        QTest::addColumn<qint64>("bytes");
        QTest::newRow("4095 (32-bit)") << qint64(4095) << qint64(4095 * 8);
        QTest::newRow("4096") << qint64(4096) << qint64(2 * (4096 + 16 * 4));
        QTest::newRow("4097") << qint64(4097) << qint64(2 * (4097 + 17 * 4));
        QTest::newRow("lora_A 4096x64") << qint64(262144) << qint64(2 * (262144 + 1024 * 4));
    }
    void adam8bit()
    {
        QFETCH(qint64, numel);
        QFETCH(qint64, bytes);
        Config c;
        c.optimizer = Optimizer::Adam8bit;
        QCOMPARE(optimizerStateBytes(c, {numel}), int64_t(bytes));
    }

    // bitsandbytes optim/optimizer.py Optimizer8bit.get_state_buffer: with is_paged, the state1/state2 of a
    // parameter of >= 1e5 elements live in unified memory (F.get_paged); the 8-bit absmax never does.
    void pagedState_data()
    {
        QTest::addColumn<int>("optimizer");
        QTest::addColumn<qint64>("numel");
        QTest::addColumn<qint64>("total");
        QTest::addColumn<qint64>("paged");
        QTest::newRow("32-bit 99999") << int(Optimizer::PagedAdamW) << qint64(99999) << qint64(99999 * 8) << qint64(0);
        QTest::newRow("32-bit 100000") << int(Optimizer::PagedAdamW) << qint64(100000) << qint64(800000)
                                       << qint64(800000);
        // lora_B of k_proj on Llama-3-8B (1024 x 64): stays in the allocator
        QTest::newRow("32-bit 65536") << int(Optimizer::PagedAdamW) << qint64(65536) << qint64(65536 * 8) << qint64(0);
        // 8-bit: two uint8 moments paged, two fp32 absmax (ceil(n / 256) blocks) not
        QTest::newRow("8-bit 262144") << int(Optimizer::PagedAdamW8bit) << qint64(262144)
                                      << qint64(2 * (262144 + 1024 * 4)) << qint64(2 * 262144);
        QTest::newRow("8-bit 99999") << int(Optimizer::PagedAdamW8bit) << qint64(99999) << qint64(2 * (99999 + 391 * 4))
                                     << qint64(0);
        QTest::newRow("8-bit 4095 (32-bit)")
            << int(Optimizer::PagedAdamW8bit) << qint64(4095) << qint64(4095 * 8) << qint64(0);
        QTest::newRow("AdamW never") << int(Optimizer::AdamW) << qint64(1000000) << qint64(8000000) << qint64(0);
        QTest::newRow("8-bit Adam never")
            << int(Optimizer::Adam8bit) << qint64(262144) << qint64(2 * (262144 + 1024 * 4)) << qint64(0);
    }
    void pagedState()
    {
        QFETCH(int, optimizer);
        QFETCH(qint64, numel);
        QFETCH(qint64, total);
        QFETCH(qint64, paged);
        Config c;
        c.optimizer = Optimizer(optimizer);
        c.dtype = DtypePolicy::BF16; // bitsandbytes' 32-bit state is fp32 whatever the parameter's dtype
        if (c.optimizer == Optimizer::AdamW)
            c.dtype = DtypePolicy::FP32;
        QCOMPARE(optimizerStateBytes(c, {numel}), int64_t(total));
        QCOMPARE(pagedOptimizerBytes(c, {numel}), int64_t(paged));
    }

    // prepare_model_for_kbit_training (peft/utils/other.py) casts every fp16/bf16 parameter that is not
    // Params4bit to fp32: the embedding's output is fp32, each norm's `weight * x` promotes to fp32, and
    // bitsandbytes' Linear4bit returns its input's dtype (matmul_4bit(...).to(inp_dtype)), so on a bf16 model
    // the residual stream, the 4-bit layers' outputs and the logits are fp32 (4 bytes); without kbit
    // preparation they stay bf16 (2 bytes). tiny_llama (hidden 256, vocab 8000), QLoRA NF4 r8 on q,v, b2 s128.
    void kbitStream_data()
    {
        QTest::addColumn<bool>("kbitPrep");
        QTest::addColumn<QString>("node");
        QTest::addColumn<int>("elem");
        const char* nodes[] = {"model/embed_tokens/Gather",           "model/layers.1/Add",
                               "model/layers.1/input_layernorm/Mul",  "model/layers.1/self_attn/q_proj/MatMul",
                               "model/layers.1/mlp/down_proj/MatMul", "lm_head/MatMul"};
        for (const char* n : nodes) {
            QTest::newRow(qPrintable(QString("kbit %1").arg(n))) << true << QString(n) << 4;
            QTest::newRow(qPrintable(QString("no kbit %1").arg(n))) << false << QString(n) << 2;
        }
    }
    void kbitStream()
    {
        QFETCH(bool, kbitPrep);
        QFETCH(QString, node);
        QFETCH(int, elem);
        const Evaluation e = tinyQLora(kbitPrep, DtypePolicy::BF16);
        const Model& m = tinyModel();
        bool found = false;
        for (size_t n = 0; n < m.nodes.size() && !found; ++n) {
            if (m.nodePath(static_cast<int>(n)) != node.toStdString())
                continue;
            found = true;
            const int64_t numel = e.shapes.numel[static_cast<size_t>(m.nodes[n].outputs[0])];
            QCOMPARE(e.nodes[n].outputBytes, numel * elem);
        }
        QVERIFY(found);
    }

    // With kbit preparation every activation is fp32 whatever --dtype says, so a bf16 model keeps what the
    // fp32 one keeps.
    void kbitSavesAsFp32()
    {
        const Evaluation bf16 = tinyQLora(true, DtypePolicy::BF16);
        const Evaluation fp32 = tinyQLora(true, DtypePolicy::FP32);
        QCOMPARE(bf16.memory.activationsSaved, fp32.memory.activationsSaved);
        QVERIFY(tinyQLora(false, DtypePolicy::BF16).memory.activationsSaved < bf16.memory.activationsSaved);
    }

    // prepare_model_for_kbit_training calls enable_input_require_grads(): the embedding's output requires
    // grad, so layer 0's input_layernorm records what layer 1's does; without kbit preparation nothing is
    // recorded before the first adapter (q_proj's lora_A).
    void inputRequiresGrad_data()
    {
        QTest::addColumn<bool>("kbitPrep");
        QTest::newRow("kbit") << true;
        QTest::newRow("no kbit") << false;
    }
    void inputRequiresGrad()
    {
        QFETCH(bool, kbitPrep);
        const Evaluation e = tinyQLora(kbitPrep, DtypePolicy::BF16);
        const Model& m = tinyModel();
        int64_t layer0 = 0, layer1 = 0;
        for (size_t n = 0; n < m.nodes.size(); ++n) {
            const std::string path = m.nodePath(static_cast<int>(n));
            if (path.starts_with("model/layers.0/input_layernorm/"))
                layer0 += e.nodes[n].savedBytes;
            else if (path.starts_with("model/layers.1/input_layernorm/"))
                layer1 += e.nodes[n].savedBytes;
        }
        QVERIFY(layer1 > 0);
        QCOMPARE(layer0, kbitPrep ? layer1 : int64_t(0));
    }

    // What a 4-bit Linear's forward step allocates (N = 256 tokens, bf16 compute dtype): its output in the
    // input's dtype; with an fp32 input, Linear4bit.forward's x.to(bf16) (N x in x 2) and matmul_4bit's bf16
    // output (N x out x 2), alive together until .to(inp_dtype); with an adapter, bnb.py's result.clone()
    // (N x out in the output's dtype) after them. The dequantized weight is counted separately.
    void linear4bitStep_data()
    {
        QTest::addColumn<bool>("kbitPrep");
        QTest::addColumn<QString>("node");
        QTest::addColumn<qint64>("bytes");
        const qint64 N = 256;
        // 4N x 256 output + max(2N x (256 + 256) copies, 4N x 256 clone)
        QTest::newRow("kbit q_proj") << true << "model/layers.1/self_attn/q_proj/MatMul" << 4 * N * 256 + 4 * N * 256;
        // 4N x 688 output + 2N x (256 + 688) copies, no adapter
        QTest::newRow("kbit gate_proj") << true << "model/layers.1/mlp/gate_proj/MatMul"
                                        << 4 * N * 688 + 2 * N * (256 + 688);
        // bf16 in, bf16 out: no copies; the clone of q_proj's bf16 output
        QTest::newRow("no kbit q_proj") << false << "model/layers.1/self_attn/q_proj/MatMul"
                                        << 2 * N * 256 + 2 * N * 256;
        QTest::newRow("no kbit gate_proj") << false << "model/layers.1/mlp/gate_proj/MatMul" << 2 * N * 688;
    }
    void linear4bitStep()
    {
        QFETCH(bool, kbitPrep);
        QFETCH(QString, node);
        QFETCH(qint64, bytes);
        const Evaluation e = tinyQLora(kbitPrep, DtypePolicy::BF16);
        const Model& m = tinyModel();
        int64_t before = -1, got = -1;
        for (const TimelinePoint& p : e.timeline) {
            if (p.phase != Phase::Forward)
                continue;
            if (p.node >= 0 && m.nodePath(p.node) == node.toStdString()) {
                got = p.high - before;
                break;
            }
            before = p.allocated;
        }
        QCOMPARE(got, int64_t(bytes));
    }

    // The QLoRA recipe on Llama-3.1-8B with paged AdamW: the adapters' state leaves the peak for the
    // report's paged_optimizer, except the lora_B of k_proj and v_proj (1024 x 64 < 1e5 elements).
    void pagedQLoraLlama()
    {
        LoadOptions o;
        o.lora = LoraSpec{64, 16, 0.1, {"all-linear"}};
        const Model m = loadModel(std::string(HEADROOM_SOURCE_DIR) + "/resources/samples/Llama-3.1-8B.json", o);
        Config c;
        c.dtype = DtypePolicy::BF16;
        c.symbols = m.defaultBindings();
        c.freeze = loraFreezePatterns();
        c.finetune.lora = o.lora;
        c.finetune.quant = Quant::NF4;
        c.finetune.doubleQuant = true;
        c.finetune.layerCheckpoint = true;
        c.optimizer = Optimizer::AdamW;
        const Evaluation adamw = evaluate(m, c);
        c.optimizer = Optimizer::PagedAdamW;
        const Evaluation paged = evaluate(m, c);
        // per layer, elements of adapters >= 1e5: q and o (A and B: 64 x 4096 each), k and v (A only),
        // gate, up, down (64 x 4096 + 64 x 14336)
        const int64_t pagedPerLayer = 2 * 2 * 262144 + 2 * 262144 + 3 * (262144 + 917504);
        QCOMPARE(paged.memory.pagedOptimizer, 32 * pagedPerLayer * 8);
        QCOMPARE(paged.memory.optimizer, 32 * 2 * 65536 * int64_t(8));
        QCOMPARE(adamw.memory.pagedOptimizer, int64_t(0));
        QCOMPARE(adamw.memory.optimizer, paged.memory.optimizer + paged.memory.pagedOptimizer);
        // the state is allocated before the first step, so every point of the timeline drops by the paged
        // bytes; the optimizer step drops further: bitsandbytes updates each parameter with one fused kernel
        // (F.optimizer_update_32bit), without torch's foreach fp32 temporaries
        QVERIFY(paged.memory.peak <= adamw.memory.peak - paged.memory.pagedOptimizer);
        QVERIFY(paged.memory.peak > adamw.memory.peak - paged.memory.pagedOptimizer - 4 * 167772160LL);
    }
};

QTEST_GUILESS_MAIN(TestQuant)
#include "tst_quant.moc"
