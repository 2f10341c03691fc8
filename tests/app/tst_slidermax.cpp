// The symbol sliders mark the largest value that fits ("max 3252" beside the seq slider): the figure is
// core's maxSymbolValue for that symbol with the others as configured, and no mark while sizes are unknown.
#include "controlspanel.h"
#include "logslider.h"

#include "headroom/hardware/gpus.h"
#include "headroom/load/loader.h"
#include "headroom/report/report.h"

#include <QApplication>
#include <QLabel>
#include <QTest>

class TestSliderMax : public QObject
{
    Q_OBJECT

private slots:
    void marks_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<bool>("marked");
        QTest::newRow("llama_small (batch, seq)") << "hf/llama_small.onnx" << true;
        QTest::newRow("absent reshape target: sizes unknown") << "exports/reshape_absent.onnx" << false;
    }
    void marks()
    {
        QFETCH(QString, file);
        QFETCH(bool, marked);
        const headroom::Model m = headroom::loadModel(std::string(HEADROOM_TEST_DATA "/") + file.toStdString());
        headroom::Config c;
        c.symbols = m.defaultBindings();
        if (m.batchSymbol >= 0)
            c.symbols[size_t(m.batchSymbol)] = 8;
        c.gpu.name = "test";
        c.gpu.capacity = int64_t(80) << 30;
        c.allocator = headroom::AllocatorMode::Exact;
        headroom::ReportOptions ro;
        ro.symbolMaxima = true;
        ro.sweep = false;
        const headroom::EnginePlan plan = headroom::makePlan(m);
        const headroom::Report r = headroom::buildReport(plan, c, ro);
        QCOMPARE(r.symbolMax.empty(), !marked);

        gui::ControlsPanel panel;
        panel.setModel(m);
        panel.show();
        panel.setSymbolMaxima(r.symbolMax);
        for (size_t i = 0; i < m.symbols.size(); ++i) {
            QLabel* mark = panel.symbolSlider(static_cast<int>(i))->maxMark();
            QCOMPARE(mark->isVisible(), marked);
            if (!marked)
                continue;
            const int64_t expected = static_cast<int>(i) == m.batchSymbol
                                         ? r.fit.maxBatch
                                         : headroom::maxSymbolValue(plan, c, static_cast<int>(i));
            QVERIFY(expected > 0);
            QCOMPARE(r.symbolMax[i], expected);
            QCOMPARE(mark->text(), QStringLiteral("max %1").arg(expected));
        }
    }
};

QTEST_MAIN(TestSliderMax)
#include "tst_slidermax.moc"
