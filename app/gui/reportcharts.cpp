#include "reportcharts.h"

#include "batchsweepchart.h"
#include "breakdownchart.h"
#include "checkpointchart.h"
#include "reportdocument.h"
#include "timelinechart.h"
#include "toplayerschart.h"

#include <QPainter>

namespace gui {
namespace {

// The chart's texts in the report's font families (sizes kept), so CJK glyphs come from the same font as
// the page text instead of a fallback.
void useReportFont(QCustomPlot& plot)
{
    const QStringList families = reportFont().families();
    auto fix = [&families](QFont f) {
        f.setFamilies(families);
        return f;
    };
    for (QCPAxisRect* rect : plot.axisRects())
        for (QCPAxis* axis : rect->axes()) {
            axis->setLabelFont(fix(axis->labelFont()));
            axis->setTickLabelFont(fix(axis->tickLabelFont()));
        }
    if (plot.legend) {
        plot.legend->setFont(fix(plot.legend->font()));
        for (int i = 0; i < plot.legend->itemCount(); ++i)
            if (QCPAbstractLegendItem* item = plot.legend->item(i))
                item->setFont(fix(item->font()));
    }
    for (int i = 0; i < plot.itemCount(); ++i)
        if (auto* text = qobject_cast<QCPItemText*>(plot.item(i)))
            text->setFont(fix(text->font()));
    for (QCPLayoutElement* element : plot.plotLayout()->elements(true))
        if (auto* text = qobject_cast<QCPTextElement*>(element))
            text->setFont(fix(text->font()));
}

// Charts are drawn on white paper whatever the desktop theme: a light palette, black text.
void paint(Chart& chart, QPainter& painter, const QRectF& box, const headroom::Model& model,
           const headroom::Report& report, headroom::Units units)
{
    QPalette palette;
    palette.setColor(QPalette::Base, Qt::white);
    palette.setColor(QPalette::Window, Qt::white);
    palette.setColor(QPalette::WindowText, Qt::black);
    palette.setColor(QPalette::Text, Qt::black);
    chart.setPalette(palette);
    chart.setUnits(units);
    chart.resize(box.size().toSize());
    chart.setReport(model, report);
    useReportFont(*chart.plot());
    chart.replotNow();
    chart.paintChart(&painter, box);
}

} // namespace

void paintBreakdownChart(QPainter& painter, const QRectF& box, const headroom::Model& model,
                         const headroom::Report& report, headroom::Units units)
{
    BreakdownChart chart;
    paint(chart, painter, box, model, report, units);
}

void paintTimelineChart(QPainter& painter, const QRectF& box, const headroom::Model& model,
                        const headroom::Report& report, headroom::Units units)
{
    TimelineChart chart;
    paint(chart, painter, box, model, report, units);
}

void paintBatchSweepChart(QPainter& painter, const QRectF& box, const headroom::Model& model,
                          const headroom::Report& report, headroom::Units units)
{
    BatchSweepChart chart;
    paint(chart, painter, box, model, report, units);
}

void paintCheckpointChart(QPainter& painter, const QRectF& box, const headroom::Model& model,
                          const headroom::Report& report, headroom::Units units)
{
    CheckpointChart chart;
    paint(chart, painter, box, model, report, units);
}

void paintTopLayersChart(QPainter& painter, const QRectF& box, const headroom::Model& model,
                         const headroom::Report& report, headroom::Units units)
{
    TopLayersChart chart(nullptr, 15);
    paint(chart, painter, box, model, report, units);
}

} // namespace gui
