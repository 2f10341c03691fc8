// Hugging Face per-decoder-layer gradient checkpointing (--grad-checkpoint layers): every decoder layer
// is recomputed once before its backward, nothing after the layers is; the saved set collapses to the layer
// inputs plus what the final norm, lm_head and loss keep.
#include "headroom/engine.h"
#include "headroom/loader.h"

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
        QTest::newRow("tiny_llama onnx b2 s128") << QString(HEADROOM_TEST_DATA "/lora/tiny_llama.onnx") << "model/norm" << qint64(2) << qint64(128);
        QTest::newRow("tiny_llama onnx b8 s256") << QString(HEADROOM_TEST_DATA "/lora/tiny_llama.onnx") << "model/norm" << qint64(8) << qint64(256);
        QTest::newRow("llama_small config") << QString(HEADROOM_TEST_DATA "/hf/llama_small.config.json") << "model/norm" << qint64(2) << qint64(256);
        QTest::newRow("gpt2 config") << QString(HEADROOM_SOURCE_DIR "/resources/samples/gpt2.json") << "transformer/ln_f" << qint64(2) << qint64(128);
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
        QVERIFY2(ck.memory.peak <= plain.memory.peak, qPrintable(QString("%1 vs %2").arg(ck.memory.peak).arg(plain.memory.peak)));
        for (const std::string& w : ck.warnings)
            QVERIFY2(w.find("--grad-checkpoint") == std::string::npos, w.c_str());
    }

    // A graph with no decoder-layer list says so instead of silently checkpointing nothing.
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
