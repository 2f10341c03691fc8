#pragma once
// The PDF report's charts: the GUI's own chart classes (chart.h), filled from the report and painted as
// vectors into a box of the page.
#include "headroom/base/format.h"

#include <QRectF>

class QPainter;

namespace headroom {
struct Model;
struct Report;
} // namespace headroom

namespace gui {

void paintBreakdownChart(QPainter& painter, const QRectF& box, const headroom::Model& model,
                         const headroom::Report& report, headroom::Units units);
void paintTimelineChart(QPainter& painter, const QRectF& box, const headroom::Model& model,
                        const headroom::Report& report, headroom::Units units);
void paintBatchSweepChart(QPainter& painter, const QRectF& box, const headroom::Model& model,
                          const headroom::Report& report, headroom::Units units);
void paintTopLayersChart(QPainter& painter, const QRectF& box, const headroom::Model& model,
                         const headroom::Report& report, headroom::Units units);
void paintCheckpointChart(QPainter& painter, const QRectF& box, const headroom::Model& model,
                          const headroom::Report& report, headroom::Units units);

} // namespace gui
