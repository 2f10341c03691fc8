// The batch of a configuration (headroom/import/batch.h): read, set, and "the same but for the batch", on
// which the GUI's max-batch reuse rests. Every field of Config is flipped in turn; each one but the batch
// makes the configurations differ, so a field the comparison forgets fails here.
#include "headroom/import/batch.h"

#include <QTest>

#include <functional>

using namespace headroom;

namespace {

// Two symbols, the batch first: batch (default 1) and seq (default 128).
Model twoSymbols(bool withBatchSymbol)
{
    Model m;
    m.symbols.push_back({"batch", 1, withBatchSymbol, "x[0]", "batch default"});
    m.symbols.push_back({"seq", 128, false, "x[1]", "model hint"});
    m.batchSymbol = withBatchSymbol ? 0 : -1;
    return m;
}

Config configAt(int64_t batch, int64_t seq)
{
    Config c;
    c.symbols = {batch, seq};
    return c;
}

// Does not compile when Config, GpuSpec, FineTune or LoraSpec gain or lose a field: give the new field a
// row in sameButBatch_data() below, then the count here.
[[maybe_unused]] void fieldCounts(const Config& c)
{
    [[maybe_unused]] const auto& [symbols, mode, dtype, optimizer, customOptimizerBytes, rmspropMomentum,
                                  rmspropCentered, loss, checkpointSegments, accumulate, inplace, freeze, gpu,
                                  marginBytes, gpus, strategy, gpu0Batch, offload, fsdpOrigParams, fsdpNoSync,
                                  offloadActivations, allocator, attention, device, torch, framework, modelCode,
                                  bnbKeepsMatmulInput, hfFp32Logits, loopKeepsOutput, finetune, hotExpertShare,
                                  varySymbol] = c;
    [[maybe_unused]] const auto& [name, capacity, context, workspace] = c.gpu;
    [[maybe_unused]] const auto& [lora, quant, doubleQuant, computeBytes, computeDtype, kbitPrep,
                                  layerCheckpoint] = c.finetune;
    [[maybe_unused]] const auto& [r, alpha, dropout, targets, parameters, adapterDtype, dora, method, init,
                                  feedforward] = c.finetune.lora;
}

using Flip = std::function<void(Config&)>;

} // namespace

Q_DECLARE_METATYPE(Flip)

class TestBatch : public QObject
{
    Q_OBJECT

private slots:
    void batchOfReadsTheBatchSymbol()
    {
        QCOMPARE(batchOf(twoSymbols(true), configAt(24, 512)), int64_t{24});
        QCOMPARE(batchOf(twoSymbols(false), configAt(24, 512)), int64_t{1}); // no batch symbol
        QCOMPARE(batchOf(twoSymbols(true), Config{}), int64_t{1});           // the config binds nothing
    }

    void withBatchSetsOnlyTheBatch()
    {
        const Model m = twoSymbols(true);
        QCOMPARE(withBatch(m, configAt(24, 512), 7).symbols, (Bindings{7, 512}));
        // Symbols not indexed like the model's read as its defaults (as evaluate() reads them).
        QCOMPARE(withBatch(m, Config{}, 7).symbols, (Bindings{7, 128}));
        // Without a batch symbol there is nothing to set.
        QCOMPARE(withBatch(twoSymbols(false), configAt(24, 512), 7).symbols, (Bindings{24, 512}));
    }

    void sameButBatch_data()
    {
        QTest::addColumn<Flip>("flip");
        QTest::addColumn<bool>("same");
        QTest::newRow("batch") << Flip([](Config& c) { c.symbols[0] = 99; }) << true;
        QTest::newRow("nothing") << Flip([](Config&) {}) << true;
        QTest::newRow("symbols (seq)") << Flip([](Config& c) { c.symbols[1] = 99; }) << false;
        QTest::newRow("mode") << Flip([](Config& c) { c.mode = Mode::Infer; }) << false;
        QTest::newRow("dtype") << Flip([](Config& c) { c.dtype = DtypePolicy::BF16; }) << false;
        QTest::newRow("optimizer") << Flip([](Config& c) { c.optimizer = Optimizer::SGD; }) << false;
        QTest::newRow("customOptimizerBytes") << Flip([](Config& c) { c.customOptimizerBytes = 3; }) << false;
        QTest::newRow("rmspropMomentum") << Flip([](Config& c) { c.rmspropMomentum = true; }) << false;
        QTest::newRow("rmspropCentered") << Flip([](Config& c) { c.rmspropCentered = true; }) << false;
        QTest::newRow("loss") << Flip([](Config& c) { c.loss = Loss::MSE; }) << false;
        QTest::newRow("checkpointSegments") << Flip([](Config& c) { c.checkpointSegments = 4; }) << false;
        QTest::newRow("accumulate") << Flip([](Config& c) { c.accumulate = 2; }) << false;
        QTest::newRow("inplace") << Flip([](Config& c) { c.inplace = true; }) << false;
        QTest::newRow("freeze") << Flip([](Config& c) { c.freeze = {"layer1/*"}; }) << false;
        QTest::newRow("gpu.name") << Flip([](Config& c) { c.gpu.name = "other"; }) << false;
        QTest::newRow("gpu.capacity") << Flip([](Config& c) { c.gpu.capacity = 1; }) << false;
        QTest::newRow("gpu.context") << Flip([](Config& c) { c.gpu.context = 1; }) << false;
        QTest::newRow("gpu.workspace") << Flip([](Config& c) { c.gpu.workspace = 1; }) << false;
        QTest::newRow("marginBytes") << Flip([](Config& c) { c.marginBytes = 1; }) << false;
        QTest::newRow("gpus") << Flip([](Config& c) { c.gpus = 2; }) << false;
        QTest::newRow("strategy") << Flip([](Config& c) { c.strategy = Strategy::DDP; }) << false;
        QTest::newRow("gpu0Batch") << Flip([](Config& c) { c.gpu0Batch = 3; }) << false;
        QTest::newRow("offload") << Flip([](Config& c) { c.offload = true; }) << false;
        QTest::newRow("fsdpOrigParams") << Flip([](Config& c) { c.fsdpOrigParams = true; }) << false;
        QTest::newRow("fsdpNoSync") << Flip([](Config& c) { c.fsdpNoSync = true; }) << false;
        QTest::newRow("offloadActivations") << Flip([](Config& c) { c.offloadActivations = true; }) << false;
        QTest::newRow("allocator") << Flip([](Config& c) { c.allocator = AllocatorMode::Exact; }) << false;
        QTest::newRow("attention") << Flip([](Config& c) { c.attention = Attention::Math; }) << false;
        QTest::newRow("device") << Flip([](Config& c) { c.device = Device::CPU; }) << false;
        QTest::newRow("torch") << Flip([](Config& c) { c.torch = TorchVersion::V1_13; }) << false;
        // the preset's name is printed with the report (JSON config.framework)
        QTest::newRow("framework") << Flip([](Config& c) { c.framework = Framework::Litgpt; }) << false;
        QTest::newRow("modelCode") << Flip([](Config& c) { c.modelCode = ModelCode::Litgpt; }) << false;
        QTest::newRow("bnbKeepsMatmulInput") << Flip([](Config& c) { c.bnbKeepsMatmulInput = true; }) << false;
        QTest::newRow("finetune.lora.r") << Flip([](Config& c) { c.finetune.lora.r = 16; }) << false;
        QTest::newRow("finetune.lora.alpha") << Flip([](Config& c) { c.finetune.lora.alpha = 32; }) << false;
        QTest::newRow("finetune.lora.dropout") << Flip([](Config& c) { c.finetune.lora.dropout = 0.1; }) << false;
        QTest::newRow("finetune.lora.targets")
            << Flip([](Config& c) { c.finetune.lora.targets = {"q_proj"}; }) << false;
        QTest::newRow("finetune.lora.parameters")
            << Flip([](Config& c) { c.finetune.lora.parameters = {"mlp.experts.gate_up_proj"}; }) << false;
        QTest::newRow("finetune.lora.dtype") << Flip([](Config& c) { c.finetune.lora.dtype = "bf16"; }) << false;
        QTest::newRow("finetune.lora.dora") << Flip([](Config& c) { c.finetune.lora.dora = true; }) << false;
        QTest::newRow("finetune.lora.method")
            << Flip([](Config& c) { c.finetune.lora.method = PeftMethod::IA3; }) << false;
        QTest::newRow("finetune.lora.init") << Flip([](Config& c) { c.finetune.lora.init = "mica"; }) << false;
        QTest::newRow("finetune.lora.feedforward")
            << Flip([](Config& c) { c.finetune.lora.feedforward = std::vector<std::string>{}; }) << false;
        QTest::newRow("finetune.quant") << Flip([](Config& c) { c.finetune.quant = Quant::NF4; }) << false;
        QTest::newRow("finetune.doubleQuant") << Flip([](Config& c) { c.finetune.doubleQuant = true; }) << false;
        QTest::newRow("finetune.computeBytes") << Flip([](Config& c) { c.finetune.computeBytes = 4; }) << false;
        QTest::newRow("finetune.computeDtype") << Flip([](Config& c) { c.finetune.computeDtype = "fp32"; }) << false;
        QTest::newRow("finetune.kbitPrep") << Flip([](Config& c) { c.finetune.kbitPrep = false; }) << false;
        QTest::newRow("finetune.layerCheckpoint")
            << Flip([](Config& c) { c.finetune.layerCheckpoint = true; }) << false;
        QTest::newRow("hotExpertShare") << Flip([](Config& c) { c.hotExpertShare = 0.5; }) << false;
        QTest::newRow("varySymbol") << Flip([](Config& c) { c.varySymbol = 1; }) << false;
        QTest::newRow("hfFp32Logits") << Flip([](Config& c) { c.hfFp32Logits = true; }) << false;
        QTest::newRow("loopKeepsOutput") << Flip([](Config& c) { c.loopKeepsOutput = true; }) << false;
    }
    void sameButBatch()
    {
        QFETCH(Flip, flip);
        QFETCH(bool, same);
        const Model m = twoSymbols(true);
        const Config a = configAt(8, 512);
        Config b = a;
        flip(b);
        QCOMPARE(headroom::sameButBatch(m, a, b), same);
        QCOMPARE(headroom::sameButBatch(m, b, a), same);
    }

    // Without a batch symbol every symbol counts.
    void sameButBatchWithoutBatchSymbol()
    {
        const Model m = twoSymbols(false);
        QVERIFY(!headroom::sameButBatch(m, configAt(8, 512), configAt(9, 512)));
        QVERIFY(headroom::sameButBatch(m, configAt(8, 512), configAt(8, 512)));
    }
};

QTEST_MAIN(TestBatch)
#include "tst_batch.moc"
