// Chart helpers: the bytes ticker, and painting onto any device (what the PDF report relies on).
#include "batchsweepchart.h"
#include "breakdownchart.h"
#include "checkpointchart.h"
#include "timelinechart.h"
#include "toplayerschart.h"

#include "headroom/hardware/gpus.h"
#include "headroom/load/loader.h"
#include "headroom/report/report.h"

#include <QApplication>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QLocale>
#include <QPainter>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

using namespace gui;

namespace {
class Ticker : public BytesTicker
{
public:
    using BytesTicker::BytesTicker;
    using BytesTicker::getTickLabel;
    using BytesTicker::getTickStep;
};

// Pixels that differ from the background: something was drawn.
int inkPixels(const QImage& image)
{
    int n = 0;
    const QRgb bg = image.pixel(0, 0);
    for (int y = 0; y < image.height(); y += 2)
        for (int x = 0; x < image.width(); x += 2)
            n += image.pixel(x, y) != bg;
    return n;
}
} // namespace

class TestCharts : public QObject
{
    Q_OBJECT
private slots:
    void bytesTicker_data()
    {
        QTest::addColumn<int>("units");
        QTest::addColumn<double>("rangeBytes");
        QTest::addColumn<double>("step");
        QTest::newRow("iec GiB") << int(headroom::Units::IEC) << 24.0 * (1 << 30) << 5.0 * (1 << 30);
        QTest::newRow("iec MiB") << int(headroom::Units::IEC) << 240.0 * (1 << 20) << 50.0 * (1 << 20);
        QTest::newRow("si GB") << int(headroom::Units::SI) << 24e9 << 5e9;
    }
    void bytesTicker()
    {
        QFETCH(int, units);
        QFETCH(double, rangeBytes);
        QFETCH(double, step);
        Ticker t(static_cast<headroom::Units>(units));
        t.setTickCount(5);
        QCOMPARE(t.getTickStep(QCPRange(0, rangeBytes)), step);
        QCOMPARE(t.getTickLabel(step, QLocale(), QLatin1Char('g'), 2),
                 bytesText(static_cast<int64_t>(step), static_cast<headroom::Units>(units)));
    }

    void paintOnAnyDevice_data()
    {
        QTest::addColumn<int>("which");
        QTest::newRow("breakdown") << 0;
        QTest::newRow("timeline") << 1;
        QTest::newRow("sweep") << 2;
        QTest::newRow("checkpoint") << 3;
        QTest::newRow("top layers") << 4;
    }
    void paintOnAnyDevice()
    {
        QFETCH(int, which);
        const headroom::Model m = headroom::loadModel(HEADROOM_TEST_DATA "/resnet18.onnx");
        headroom::Config c;
        c.symbols = m.defaultBindings();
        c.gpu = *headroom::findGpu("4090");
        const headroom::Report r = headroom::buildReport(m, c);
        std::unique_ptr<Chart> chart;
        switch (which) {
        case 0: chart = std::make_unique<BreakdownChart>(); break;
        case 1: chart = std::make_unique<TimelineChart>(); break;
        case 2: chart = std::make_unique<BatchSweepChart>(); break;
        case 3: chart = std::make_unique<CheckpointChart>(); break;
        default: chart = std::make_unique<TopLayersChart>(); break;
        }
        chart->setReport(m, r);
        QImage image(800, 500, QImage::Format_ARGB32);
        image.fill(Qt::white);
        QPainter painter(&image);
        chart->paintChart(&painter, QRectF(0, 0, 800, 500), QSize(640, 400));
        painter.end();
        QVERIFY(inkPixels(image) > 500);
        const QPicture picture = chart->picture(QSize(400, 300));
        QVERIFY(picture.size() > 0);
    }

    // Phase and peak labels stay inside the plot, wherever the peak is and however narrow the chart
    // (the optimizer step and a peak at the last step used to be cut at the right edge).
    void timelineLabelsInsidePlot_data()
    {
        QTest::addColumn<int>("peakStep");
        QTest::addColumn<int>("width");
        for (int width : {900, 420})
            for (int peak : {0, 11, 23})
                QTest::addRow("peak %d, %d px", peak, width) << peak << width;
    }
    void timelineLabelsInsidePlot()
    {
        QFETCH(int, peakStep);
        QFETCH(int, width);
        using P = headroom::Phase;
        headroom::Report r;
        for (int s = 0; s < 24; ++s) {
            const P phase = s < 11 ? P::Forward : s == 11 ? P::Loss : s < 23 ? P::Backward : P::Optimizer;
            const int64_t bytes = (s == peakStep ? 900 : 100 + 10 * s) * (int64_t{1} << 20);
            r.evaluation.timeline.push_back({s, -1, phase, bytes, bytes});
        }
        r.evaluation.peakStep = peakStep;
        r.evaluation.memory.peak = r.evaluation.timeline[static_cast<size_t>(peakStep)].allocated;
        TimelineChart chart;
        chart.setReport(headroom::Model{}, r);
        chart.resize(width, 320);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        chart.replotNow();
        const QRectF rect(chart.plot()->axisRect()->rect()); // right(): the axis' pixel edge, not QRect's last pixel
        int labels = 0;
        for (int i = 0; i < chart.plot()->itemCount(); ++i) {
            auto* text = qobject_cast<QCPItemText*>(chart.plot()->item(i));
            if (!text || !text->visible())
                continue;
            ++labels;
            const QPointF left = text->topLeft->pixelPosition(), right = text->bottomRight->pixelPosition();
            QVERIFY2(left.x() >= rect.left() - 0.5 && right.x() <= rect.right() + 0.5 && left.y() >= rect.top() - 0.5,
                     qPrintable(QStringLiteral("'%1' at %2..%3, plot %4..%5")
                                    .arg(text->text())
                                    .arg(left.x())
                                    .arg(right.x())
                                    .arg(rect.left())
                                    .arg(rect.right())));
        }
        QCOMPARE(labels, 5); // forward, loss, backward, optimizer, peak
    }

    // A long timeline (a 100k-node graph has ~200k steps) reaches the plot decimated, with its peak, its
    // first and last step and its full x range: what is drawn is the data's envelope.
    void longTimelineKeepsPeak_data()
    {
        QTest::addColumn<int>("steps");
        QTest::addColumn<int>("peakStep");
        QTest::newRow("24 steps, drawn whole") << 24 << 11;
        QTest::newRow("200k steps, peak inside") << 200000 << 123457;
        QTest::newRow("200k steps, peak last") << 200000 << 199999;
    }
    void longTimelineKeepsPeak()
    {
        QFETCH(int, steps);
        QFETCH(int, peakStep);
        using P = headroom::Phase;
        headroom::Report r;
        for (int s = 0; s < steps; ++s) {
            const int64_t bytes = s == peakStep ? int64_t{900} << 20 : (int64_t{100} << 20) + (s % 1000) * 4096;
            r.evaluation.timeline.push_back({s, -1, s < steps / 2 ? P::Forward : P::Backward, bytes, bytes});
        }
        r.evaluation.peakStep = peakStep;
        r.evaluation.memory.peak = int64_t{900} << 20;
        TimelineChart chart;
        chart.setReport(headroom::Model{}, r);
        const auto data = chart.plot()->graph(0)->data();
        if (steps <= 8192)
            QCOMPARE(data->size(), steps);
        else
            QVERIFY(data->size() <= 2 * 4096 + 2);
        double top = 0;
        for (auto it = data->constBegin(); it != data->constEnd(); ++it)
            top = std::max(top, it->value);
        QCOMPARE(top, static_cast<double>(r.evaluation.memory.peak));
        QCOMPARE(data->constBegin()->key, 0.0);
        QCOMPARE((data->constEnd() - 1)->key, static_cast<double>(steps - 1));
        QCOMPARE((data->constEnd() - 1)->value, static_cast<double>(r.evaluation.timeline.back().allocated));
        QCOMPARE(chart.plot()->xAxis->range().upper, steps - 0.5);
    }

    // The legend sits below the plotted area: it never covers the bar it explains, at any chart size.
    void breakdownLegendOutsideBar_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::addColumn<int>("gpus");
        QTest::newRow("wide, 1 GPU") << QSize(900, 320) << 1;
        QTest::newRow("narrow, 1 GPU") << QSize(420, 300) << 1;
        QTest::newRow("4 GPUs") << QSize(700, 360) << 4;
    }
    void breakdownLegendOutsideBar()
    {
        QFETCH(QSize, size);
        QFETCH(int, gpus);
        const headroom::Model m = headroom::loadModel(HEADROOM_TEST_DATA "/resnet18.onnx");
        headroom::Config c;
        c.symbols = m.defaultBindings();
        c.symbols[static_cast<size_t>(m.batchSymbol)] = 64;
        c.gpu = *headroom::findGpu("4090");
        if (gpus > 1) {
            c.gpus = gpus;
            c.strategy = headroom::Strategy::DP;
        }
        const headroom::Report r = headroom::buildReport(m, c);
        BreakdownChart chart;
        chart.setReport(m, r);
        chart.resize(size);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        chart.replotNow();
        QCustomPlot* p = chart.plot();
        QVERIFY(p->legend->visible() && p->legend->itemCount() >= 3);
        const QRect legend = p->legend->outerRect();
        QVERIFY(!legend.intersects(p->axisRect()->rect()));
        for (size_t g = 0; g < chart.bars().size(); ++g) {
            int64_t total = 0;
            for (const auto& segment : chart.bars()[g])
                total += segment.bytes;
            // The bar's pixels: bytes along x, the bar's 0.6 width around its key along y.
            const QRectF bar(QPointF(p->xAxis->coordToPixel(0), p->yAxis->coordToPixel(double(g) + 0.3)),
                             QPointF(p->xAxis->coordToPixel(double(total)), p->yAxis->coordToPixel(double(g) - 0.3)));
            QVERIFY(bar.width() > 10 && bar.height() > 2);
            QVERIFY2(!QRectF(legend).intersects(bar.normalized()), qPrintable(QStringLiteral("legend %1,%2 %3x%4")
                                                                                  .arg(legend.x())
                                                                                  .arg(legend.y())
                                                                                  .arg(legend.width())
                                                                                  .arg(legend.height())));
        }
    }

    // The breakdown answers in numbers without hovering: at 1000 px the big segments carry their bytes, the
    // legend names every category with its bytes, and a segment's tooltip gives exact bytes and the share of
    // the need (hand-computed from the report's memory figures, not from the chart).
    void breakdownSaysNumbers()
    {
        headroom::LoadOptions o;
        o.lora.r = 16;
        o.lora.targets = {"q_proj", "v_proj"};
        const headroom::Model m = headroom::loadModel(HEADROOM_SOURCE_DIR "/resources/samples/Llama-3.1-8B.json", o);
        headroom::Config c;
        c.symbols = m.defaultBindings();
        for (size_t i = 0; i < m.symbols.size(); ++i)
            if (m.symbols[i].name == "seq")
                c.symbols[i] = 2048;
        c.dtype = headroom::DtypePolicy::BF16;
        c.optimizer = headroom::Optimizer::AdamW;
        c.finetune.lora = o.lora;
        c.freeze = headroom::loraFreezePatterns();
        c.gpu = *headroom::findGpu("4090");
        headroom::ReportOptions ro;
        ro.sweep = false;
        const headroom::Report r = headroom::buildReport(m, c, ro);
        BreakdownChart chart;
        chart.setReport(m, r);
        chart.resize(1000, 320);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        chart.replotNow();
        const int64_t weights = r.evaluation.memory.weights;
        const QString weightsText = bytesText(weights, headroom::Units::IEC);
        QVERIFY2(chart.visibleValueLabels().contains(weightsText), qPrintable(chart.visibleValueLabels().join(u',')));
        QCOMPARE(chart.legendText(0), QStringLiteral("Weights ") + weightsText);
        const QString tip = chart.segmentToolTip(0, 0);
        QVERIFY2(tip.contains(QLocale().toString(static_cast<qlonglong>(weights))), qPrintable(tip));
        const double share = 100.0 * static_cast<double>(weights) / static_cast<double>(r.fit.needed);
        QVERIFY2(tip.contains(QLocale().toString(share, 'f', 0) + u'%'), qPrintable(tip));
        // The segment under the middle of the weights segment is the weights.
        QCustomPlot* p = chart.plot();
        const QPoint mid(static_cast<int>(p->xAxis->coordToPixel(static_cast<double>(weights) / 2)),
                         static_cast<int>(p->yAxis->coordToPixel(0)));
        QCOMPARE(chart.segmentAt(mid), std::make_pair(0, 0));
    }

    // A GPU of a cluster at its capacity (GpuShare::reservedAtCapacity: Answer.AI's Mistral-7B at 24,576 tokens,
    // which reserved two 4090s to 22.54 GiB each) draws what it holds once the cache is given back: each bar
    // ends at its need, under the card's capacity, and its allocator-cache segment is the at-capacity
    // reservation less the allocated peak.
    void clusterBarAtCapacity()
    {
        headroom::LoadOptions o;
        o.lora = {64, 16, 0.1, {"q_proj", "k_proj", "v_proj", "up_proj", "down_proj", "gate_proj"}, {}, "bf16"};
        const headroom::Model m = headroom::loadModel(
            HEADROOM_TEST_DATA "/external/mistral-community--Mistral-7B-v0.2.json", o);
        headroom::Config c;
        c.symbols = m.defaultBindings();
        c.symbols[static_cast<size_t>(m.batchSymbol)] = 2;
        c.symbols[static_cast<size_t>(m.symbolIndex("seq"))] = 24576;
        c.dtype = headroom::DtypePolicy::BF16;
        c.optimizer = headroom::Optimizer::AdamW;
        c.finetune.lora = o.lora;
        c.finetune.quant = headroom::Quant::NF4;
        c.finetune.doubleQuant = true;
        c.finetune.kbitPrep = false;
        c.finetune.layerCheckpoint = true;
        c.freeze = headroom::loraFreezePatterns();
        c.gpus = 2;
        c.strategy = headroom::Strategy::FSDP;
        c.offload = true;
        c.bnbKeepsMatmulInput = true;
        c.hfFp32Logits = true;
        c.loopKeepsOutput = true;
        c.gpu = *headroom::findGpu("RTX 4090");
        headroom::ReportOptions ro;
        ro.sweep = false;
        const headroom::Report r = headroom::buildReport(m, c, ro);
        QVERIFY(r.fit.fits);
        BreakdownChart chart;
        chart.setReport(m, r);
        QCOMPARE(chart.bars().size(), size_t{2});
        for (size_t i = 0; i < 2; ++i) {
            const headroom::GpuShare& g = r.cluster.gpus[i];
            QVERIFY(g.reservedAtCapacity > 0);
            QVERIFY(g.reservedPeak + r.evaluation.memory.context > c.gpu.capacity); // above the card unconstrained
            int64_t total = 0, cache = -1;
            for (const auto& segment : chart.bars()[i]) {
                total += segment.bytes;
                if (segment.category == BreakdownChart::AllocatorCache)
                    cache = segment.bytes;
            }
            QCOMPARE(total, g.needed);
            QVERIFY(total <= c.gpu.capacity);
            QCOMPARE(cache, g.reservedAtCapacity - g.peak);
        }
    }

    // An LLM's repeated decoder layers are one bar per kind: 32 layers' input_layernorm saves the same bytes
    // each, so the bar is 32 times one layer; per layer they come back one node per bar. Bars are in the
    // breakdown's Activations colour.
    void topLayersPerKind()
    {
        const headroom::Model m = headroom::loadModel(HEADROOM_SOURCE_DIR "/resources/samples/Llama-3.1-8B.json");
        headroom::Config c;
        c.symbols = m.defaultBindings();
        c.gpu = *headroom::findGpu("4090");
        headroom::ReportOptions ro;
        ro.sweep = false;
        const headroom::Report r = headroom::buildReport(m, c, ro);
        TopLayersChart chart;
        chart.setReport(m, r);
        QVERIFY(chart.perKind());
        const auto& kinds = chart.entries();
        QVERIFY(!kinds.empty());
        int repeated = 0;
        for (const TopLayersChart::Entry& e : kinds) {
            if (e.count == 32) {
                ++repeated;
                QVERIFY2(e.path.contains(QStringLiteral("layers.*")), qPrintable(e.path));
            }
        }
        QVERIFY(repeated > 0);
        const auto it = std::find_if(kinds.begin(), kinds.end(), [](const auto& e) {
            return e.path.contains(QStringLiteral("input_layernorm")) && e.count == 32;
        });
        QVERIFY(it != kinds.end());
        QCOMPARE(it->total, it->each * 32);
        const QString expect = QStringLiteral("%1 each, %2")
                                   .arg(bytesText(it->each, headroom::Units::IEC),
                                        bytesText(it->total, headroom::Units::IEC));
        QVERIFY(chart.valueTexts().contains(expect));
        QCOMPARE(chart.plot()->plottable(0)->brush().color(), BreakdownChart::color(BreakdownChart::Activations));
        chart.setPerKind(false);
        for (const TopLayersChart::Entry& e : chart.entries())
            QCOMPARE(e.count, 1);
        QCOMPARE(chart.entries().size(), size_t(10));
    }

    // Repeated blocks fold to one pattern; other numbered names stay as they are.
    void blockPatterns_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("pattern");
        QTest::newRow("llama") << QStringLiteral("model/layers.1/input_layernorm/Pow")
                               << QStringLiteral("model/layers.*/input_layernorm/Pow");
        QTest::newRow("gpt2") << QStringLiteral("transformer/h.11/attn/c_attn/MatMul")
                              << QStringLiteral("transformer/h.*/attn/c_attn/MatMul");
        QTest::newRow("resnet") << QStringLiteral("layer1/layer1.0/conv1/Conv")
                                << QStringLiteral("layer1/layer1.*/conv1/Conv");
        QTest::newRow("op suffix kept") << QStringLiteral("encoder/MatMul_1") << QStringLiteral("encoder/MatMul_1");
    }
    void blockPatterns()
    {
        QFETCH(QString, path);
        QFETCH(QString, pattern);
        QCOMPARE(blockPattern(path), pattern);
    }

    // Two layers with a long common prefix keep different labels (elided at the front, never equal),
    // and the full path stays available for the tooltip.
    void topLayerLabelsDistinct_data()
    {
        QTest::addColumn<QStringList>("paths");
        QTest::addColumn<int>("width");
        QTest::newRow("same module, two ops")
            << QStringList{QStringLiteral("encoder/layers/encoder_layer_10/self_attention/MatMul"),
                           QStringLiteral("encoder/layers/encoder_layer_10/self_attention/MatMul_1")}
            << 120;
        QTest::newRow("same op, two blocks")
            << QStringList{QStringLiteral("encoder/layers/encoder_layer_1/mlp/mlp.0/MatMul"),
                           QStringLiteral("encoder/layers/encoder_layer_11/mlp/mlp.0/MatMul")}
            << 90;
        QTest::newRow("same tail, different heads")
            << QStringList{QStringLiteral("model/decoder/layers.0/self_attn/q_proj/MatMul"),
                           QStringLiteral("model/decoder/layers.9/self_attn/q_proj/MatMul")}
            << 60;
    }
    void topLayerLabelsDistinct()
    {
        QFETCH(QStringList, paths);
        QFETCH(int, width);
        const QFontMetrics metrics(QApplication::font());
        const QStringList labels = distinctLabels(paths, metrics, width);
        QCOMPARE(labels.size(), paths.size());
        QVERIFY2(labels[0] != labels[1], qPrintable(labels.join(QStringLiteral(" | "))));
        // Elided at the front: the op (last component) survives whenever the label is shortened.
        for (int i = 0; i < labels.size(); ++i)
            QVERIFY2(labels[i].endsWith(paths[i].section(QLatin1Char('/'), -1)) || labels[i].contains(QChar(0x2026)),
                     qPrintable(labels[i]));
    }

    // On a real report: ResNet-50's top layers have distinct labels and their full paths.
    void topLayersChartLabels()
    {
        const headroom::Model m = headroom::loadModel(HEADROOM_TEST_DATA "/resnet50.onnx");
        headroom::Config c;
        c.symbols = m.defaultBindings();
        c.gpu = *headroom::findGpu("4090");
        TopLayersChart chart;
        chart.setReport(m, headroom::buildReport(m, c));
        const QStringList labels = chart.labels();
        QCOMPARE(labels.size(), 10);
        QCOMPARE(QSet<QString>(labels.begin(), labels.end()).size(), labels.size());
        QCOMPARE(chart.paths().size(), 10);
        QVERIFY(chart.paths().front().contains(QLatin1Char('/')));
    }

    // Before any report the chart says what to do instead of drawing empty axes.
    void emptyState()
    {
        BreakdownChart chart;
        chart.resize(500, 300);
        QVERIFY(!chart.hasData());
        auto* label = chart.findChild<QLabel*>(QStringLiteral("chartEmptyState"));
        QVERIFY(label);
        QVERIFY(!label->isHidden());
        QVERIFY(chart.plot()->isHidden());
        QVERIFY(label->text().contains(QStringLiteral("Open")));
    }

    // Save chart as PNG / PDF / SVG: each file is what its format's reader accepts.
    void saveChart_data()
    {
        QTest::addColumn<QString>("suffix");
        for (const QString& f : Chart::saveFormats())
            QTest::newRow(qPrintable(f)) << f;
    }
    void saveChart()
    {
        QFETCH(QString, suffix);
        const headroom::Model m = headroom::loadModel(HEADROOM_TEST_DATA "/resnet18.onnx");
        headroom::Config c;
        c.symbols = m.defaultBindings();
        c.gpu = *headroom::findGpu("4090");
        BreakdownChart chart;
        chart.setReport(m, headroom::buildReport(m, c));
        chart.resize(640, 320);
        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("chart.") + suffix);
        QString error;
        QVERIFY2(chart.saveChart(file, &error), qPrintable(error));
        QFile f(file);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray head = f.read(256);
        if (suffix == QLatin1String("png")) {
            QImage image(file);
            QVERIFY(!image.isNull() && image.width() >= 640 && inkPixels(image) > 500);
        } else if (suffix == QLatin1String("pdf")) {
            QVERIFY(head.startsWith("%PDF-"));
        } else {
            QVERIFY(head.contains("<svg") || f.readAll().contains("<svg"));
        }
        QVERIFY(!chart.saveChart(dir.filePath(QStringLiteral("chart.bmpx")), &error));
        QVERIFY(error.contains(QStringLiteral("chart.bmpx")));
    }
};

QTEST_MAIN(TestCharts)
#include "tst_charts.moc"
