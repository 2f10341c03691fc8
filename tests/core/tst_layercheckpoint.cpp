// Hugging Face per-decoder-layer gradient checkpointing (--grad-checkpoint layers): every decoder layer
// is recomputed once before its backward, nothing after the layers is; the saved set collapses to the layer
// inputs plus what the final norm, lm_head and loss keep.
#include "headroom/load/loader.h"
#include "headroom/memory/engine.h"

#include <QTest>

using namespace headroom;

class TestLayerCheckpoint : public QObject
{
    Q_OBJECT

private slots:
    void recomputeIsTheLayers_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("after"); // first module after the decoder layers
        QTest::addColumn<qint64>("batch");
        QTest::addColumn<qint64>("seq");
        QTest::newRow("tiny_llama onnx b2 s128")
            << QString(HEADROOM_TEST_DATA "/lora/tiny_llama.onnx") << "model/norm" << qint64(2) << qint64(128);
        QTest::newRow("tiny_llama onnx b8 s256")
            << QString(HEADROOM_TEST_DATA "/lora/tiny_llama.onnx") << "model/norm" << qint64(8) << qint64(256);
        QTest::newRow("llama_small config")
            << QString(HEADROOM_TEST_DATA "/hf/llama_small.config.json") << "model/norm" << qint64(2) << qint64(256);
        QTest::newRow("gpt2 config") << QString(HEADROOM_SOURCE_DIR "/resources/samples/gpt2.json")
                                     << "transformer/ln_f" << qint64(2) << qint64(128);
    }
    void recomputeIsTheLayers()
    {
        QFETCH(QString, file);
        QFETCH(QString, after);
        QFETCH(qint64, batch);
        QFETCH(qint64, seq);
        const Model m = loadModel(file.toStdString());
        Config c;
        c.allocator = AllocatorMode::Exact;
        c.symbols = m.defaultBindings();
        c.symbols[static_cast<size_t>(m.batchSymbol)] = batch;
        c.symbols[static_cast<size_t>(m.symbolIndex("seq"))] = seq;
        const Evaluation plain = evaluate(m, c);
        c.finetune.layerCheckpoint = true;
        const Evaluation ck = evaluate(m, c);
        // forward MACs of everything before the first node after the layers: recomputed exactly once
        int64_t want = 0;
        for (size_t n = 0; n < m.nodes.size(); ++n) {
            if (m.nodePath(static_cast<int>(n)).starts_with(after.toStdString()))
                break;
            want += plain.nodes[n].recomputeMacs;
        }
        QVERIFY(want > 0);
        QCOMPARE(ck.recomputeMacs, want);
        QCOMPARE(plain.recomputeMacs, int64_t(0));
        QVERIFY(ck.memory.activationsSaved < plain.memory.activationsSaved / 4);
        QVERIFY2(ck.memory.peak <= plain.memory.peak,
                 qPrintable(QString("%1 vs %2").arg(ck.memory.peak).arg(plain.memory.peak)));
        for (const std::string& w : ck.warnings)
            QVERIFY2(w.find("--grad-checkpoint") == std::string::npos, w.c_str());
    }

    // A graph with no decoder-layer list says so instead of silently checkpointing nothing.
    // Max batch searches the same step the verdict judges: at the answer the step fits, one more does not
    // (checkpointing, per-layer checkpointing and QLoRA change the step; the search must see the change).
    void maxBatchIsTheBoundary_data()
    {
        QTest::addColumn<bool>("layers");
        QTest::addColumn<int>("segments");
        QTest::addColumn<bool>("qlora");
        QTest::newRow("plain") << false << 0 << false;
        QTest::newRow("per-layer checkpoint") << true << 0 << false;
        QTest::newRow("checkpoint_sequential 4") << false << 4 << false;
        QTest::newRow("qlora + per-layer checkpoint") << true << 0 << true;
    }
    void maxBatchIsTheBoundary()
    {
        QFETCH(bool, layers);
        QFETCH(int, segments);
        QFETCH(bool, qlora);
        LoadOptions o;
        if (qlora)
            o.lora = LoraSpec{16, 32, 0, {"all-linear"}};
        const Model m = loadModel(HEADROOM_TEST_DATA "/hf/llama_small.config.json", o);
        Config c;
        c.optimizer = Optimizer::AdamW;
        c.symbols = m.defaultBindings();
        c.symbols[static_cast<size_t>(m.symbolIndex("seq"))] = 512;
        c.gpu = GpuSpec{"8 GiB", int64_t(8) << 30, 0, 0};
        c.finetune.layerCheckpoint = layers;
        c.checkpointSegments = segments;
        if (qlora) {
            c.freeze = loraFreezePatterns();
            c.finetune.lora = o.lora;
            c.finetune.quant = Quant::NF4;
        }
        const EnginePlan plan = makePlan(m, c);
        const int64_t best = maxBatch(plan, c);
        QVERIFY2(best >= 1, qPrintable(QString::number(best)));
        const auto fitsAt = [&](int64_t b) {
            Config at = c;
            at.symbols[static_cast<size_t>(m.batchSymbol)] = b;
            return computeFitOnly(plan, at, evaluate(plan, at)).fits;
        };
        QVERIFY(fitsAt(best));
        QVERIFY(!fitsAt(best + 1));
    }

    void noLayerList()
    {
        const Model m = loadModel(HEADROOM_TEST_DATA "/resnet18.onnx");
        Config c;
        c.symbols = m.defaultBindings();
        c.finetune.layerCheckpoint = true;
        const Evaluation e = evaluate(m, c);
        bool warned = false;
        for (const std::string& w : e.warnings)
            warned = warned || w.find("--grad-checkpoint layers: no decoder-layer list") != std::string::npos;
        QCOMPARE(e.recomputeMacs, int64_t(0));
        QVERIFY(warned);
    }
};

QTEST_GUILESS_MAIN(TestLayerCheckpoint)
#include "tst_layercheckpoint.moc"
