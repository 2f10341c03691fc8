// The culprits of the peak (Evaluation::peakLive / peakLiveBytes, the tree's "Of peak" column, the CLI's
// "Live at the peak", JSON peak_culprits.live_bytes) are the buffers really held at the peak: views,
// aliases and fused units are not counted again, so they add up to at most the peak and every layer's
// share stays at or under 100 %.
#include "headroom/load/loader.h"
#include "headroom/memory/engine.h"

#include <QTest>

#include <numeric>

using namespace headroom;

class TestPeakCulprits : public QObject
{
    Q_OBJECT

private slots:
    void addUpToAtMostThePeak_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<QString>("attention");
        QTest::addColumn<bool>("inplace");
        QTest::newRow("resnet50 inplace") << "resnet50.onnx"
                                          << "fp32"
                                          << "fused" << true;
        QTest::newRow("bert_like fused") << "bert_like.onnx"
                                         << "fp32"
                                         << "fused" << false;
        QTest::newRow("bert_like amp") << "bert_like.onnx"
                                       << "amp-bf16"
                                       << "fused" << false;
        QTest::newRow("tiny_gpt math") << "tiny_gpt.onnx"
                                       << "fp32"
                                       << "math" << false;
        QTest::newRow("llama_small fused amp") << "hf/llama_small.onnx"
                                               << "amp-bf16"
                                               << "fused" << false;
        QTest::newRow("bert_base eager") << "hf/bert_base.onnx"
                                         << "fp32"
                                         << "math" << false;
    }
    void addUpToAtMostThePeak()
    {
        QFETCH(QString, file);
        QFETCH(QString, dtype);
        QFETCH(QString, attention);
        QFETCH(bool, inplace);
        const Model m = loadModel(std::string(HEADROOM_TEST_DATA) + "/" + file.toStdString());
        Config c;
        c.dtype = *parseDtype(dtype.toStdString());
        c.attention = *parseAttention(attention.toStdString());
        c.inplace = inplace;
        c.symbols = m.defaultBindings();
        c.symbols[static_cast<size_t>(m.batchSymbol)] = 8;
        if (const int s = m.symbolIndex("seq"); s >= 0)
            c.symbols[static_cast<size_t>(s)] = 256;
        const Evaluation e = evaluate(m, c);
        QCOMPARE(e.peakLiveBytes.size(), e.peakLive.size());
        QVERIFY(!e.peakLive.empty());
        const int64_t sum = std::accumulate(e.peakLiveBytes.begin(), e.peakLiveBytes.end(), int64_t(0));
        QVERIFY2(sum <= e.memory.peak, qPrintable(QString("%1 > %2").arg(sum).arg(e.memory.peak)));
        // the culprits are what the peak is made of: with the weights, optimizer state and input they
        // account for it (parameters and their gradients are culprits too)
        QVERIFY2(sum + e.memory.optimizer + e.memory.input >= e.memory.peak * 9 / 10,
                 qPrintable(QString("%1 of %2").arg(sum).arg(e.memory.peak)));
        for (size_t i = 1; i < e.peakLiveBytes.size(); ++i)
            QVERIFY(e.peakLiveBytes[i - 1] >= e.peakLiveBytes[i]);
    }
};

QTEST_APPLESS_MAIN(TestPeakCulprits)
#include "tst_peakculprits.moc"
