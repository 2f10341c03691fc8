// Chart helpers: the bytes ticker, and painting onto any device (what the PDF report relies on).
#include "batchsweepchart.h"
#include "breakdownchart.h"
#include "checkpointchart.h"
#include "timelinechart.h"
#include "toplayerschart.h"

#include "headroom/gpus.h"
#include "headroom/loader.h"
#include "headroom/report.h"

#include <QImage>
#include <QPainter>
#include <QTest>

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
        QCOMPARE(t.getTickLabel(step, QLocale(), QLatin1Char('g'), 2), bytesText(static_cast<int64_t>(step), static_cast<headroom::Units>(units)));
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
                                    .arg(text->text()).arg(left.x()).arg(right.x()).arg(rect.left()).arg(rect.right())));
        }
        QCOMPARE(labels, 5); // forward, loss, backward, optimizer, peak
    }
};

QTEST_MAIN(TestCharts)
#include "tst_charts.moc"
