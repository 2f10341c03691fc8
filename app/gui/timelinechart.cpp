#include "timelinechart.h"

#include "decimate.h"

#include <algorithm>
#include <map>

namespace gui {

namespace {
QString phaseName(headroom::Phase p)
{
    switch (p) {
    case headroom::Phase::Forward: return TimelineChart::tr("forward");
    case headroom::Phase::Loss: return TimelineChart::tr("loss");
    case headroom::Phase::Backward: return TimelineChart::tr("backward");
    case headroom::Phase::Optimizer: return TimelineChart::tr("optimizer");
    case headroom::Phase::Recompute: return TimelineChart::tr("recompute");
    }
    return {};
}
} // namespace

TimelineChart::TimelineChart(QWidget* parent) : Chart(parent)
{
    QCustomPlot* p = plot();
    m_graph = p->addGraph();
    m_graph->setName(tr("Allocated"));
    m_graph->setPen(QPen(categoryColor(0), 1.5));
    QColor fill = categoryColor(0);
    fill.setAlphaF(0.2f);
    m_graph->setBrush(fill);
    m_graph->setLineStyle(QCPGraph::lsStepLeft);
    // Within a step, outputs are allocated before inputs are freed: the step's high is what peaks.
    m_high = p->addGraph();
    m_high->setName(tr("Highest within step"));
    m_high->setPen(QPen(categoryColor(2), 1));
    m_high->setLineStyle(QCPGraph::lsStepLeft);
    placeLegendBelow(p);
    setBytesAxis(p->yAxis);
    p->xAxis->setLabel(tr("Step of one training iteration"));
    p->yAxis->setLabel(tr("Allocated"));

    m_peak = new QCPItemTracer(p);
    m_peak->setStyle(QCPItemTracer::tsCircle);
    m_peak->setSize(9);
    m_peak->setPen(QPen(categoryColor(2), 2));
    m_peakLabel = new QCPItemText(p);
    m_peakLabel->position->setParentAnchor(m_peak->position);
    m_peakLabel->position->setCoords(0, 0);
    m_peakLabel->setPositionAlignment(Qt::AlignBottom | Qt::AlignHCenter);
    m_peakLabel->setClipToAxisRect(true);
    m_cursor = new QCPItemStraightLine(p);
    m_cursor->setPen(QPen(categoryColor(1), 1, Qt::DashLine));
    m_cursor->setVisible(false);

    connect(p, &QCustomPlot::mousePress, this, [this](QMouseEvent* event) {
        if (m_steps == 0)
            return;
        const double x = plot()->xAxis->pixelToCoord(event->position().x());
        const int step = std::clamp(static_cast<int>(std::lround(x)), 0, m_steps - 1);
        selectStep(step);
        emit stepClicked(step);
    });
    applyPalette();
}

void TimelineChart::setReport(const headroom::Model&, const headroom::Report& report)
{
    showData();
    const headroom::Evaluation& e = report.evaluation;
    std::vector<double> values, highs;
    values.reserve(e.timeline.size());
    highs.reserve(e.timeline.size());
    double top = static_cast<double>(std::max<int64_t>(1, e.memory.peak));
    for (const headroom::TimelinePoint& t : e.timeline) {
        values.push_back(static_cast<double>(t.allocated));
        highs.push_back(static_cast<double>(std::max(t.allocated, t.high)));
        top = std::max(top, highs.back());
    }
    // At least one bucket per pixel column of a 4K-wide plot: a 100k-node graph's ~200k steps reach
    // QCustomPlot as at most ~8k points with every column's extremes, so the peak is always drawn (its
    // replot of all the steps took ~8 ms a tick, perf; docs/BENCHMARKS.md "GUI").
    constexpr size_t Buckets = 4096;
    const auto draw = [&](QCPGraph* graph, const std::vector<double>& series) {
        const std::vector<size_t> kept = minMaxPoints(series, Buckets);
        QVector<double> keys, shown;
        keys.reserve(static_cast<qsizetype>(kept.size()));
        shown.reserve(static_cast<qsizetype>(kept.size()));
        for (size_t i : kept) {
            keys << e.timeline[i].step;
            shown << series[i];
        }
        graph->setData(keys, shown, true);
    };
    draw(m_graph, values);
    draw(m_high, highs);
    m_steps = static_cast<int>(e.timeline.size());
    QCustomPlot* p = plot();

    // Phase bands: one translucent rectangle and label per contiguous phase.
    for (QCPAbstractItem* item : m_phaseItems)
        p->removeItem(item);
    m_phaseItems.clear();
    // Each phase is named once, on its widest band: per-layer checkpointing alternates recompute and backward
    // once per layer, and a label on every band overdrew the next ones.
    std::map<headroom::Phase, double> widest;
    for (size_t begin = 0, i = 1; i <= e.timeline.size(); ++i) {
        if (i < e.timeline.size() && e.timeline[i].phase == e.timeline[begin].phase)
            continue;
        double& w = widest[e.timeline[begin].phase];
        w = std::max(w, static_cast<double>(e.timeline[i - 1].step - e.timeline[begin].step + 1));
        begin = i;
    }
    size_t begin = 0;
    for (size_t i = 1; i <= e.timeline.size(); ++i) {
        if (i < e.timeline.size() && e.timeline[i].phase == e.timeline[begin].phase)
            continue;
        const headroom::Phase phase = e.timeline[begin].phase;
        const auto width = static_cast<double>(e.timeline[i - 1].step - e.timeline[begin].step + 1);
        const bool named = widest[phase] == width && widest[phase] >= 0;
        widest[phase] = named ? -1 : widest[phase]; // one label per phase, the first of equally wide bands
        if (phase != headroom::Phase::Forward) {
            auto* band = new QCPItemRect(p);
            band->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
            band->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
            band->topLeft->setCoords(e.timeline[begin].step - 0.5, 0);
            band->bottomRight->setCoords(e.timeline[i - 1].step + 0.5, 1);
            QColor c = categoryColor(3 + static_cast<int>(phase));
            c.setAlphaF(0.12f);
            band->setBrush(c);
            band->setPen(Qt::NoPen);
            band->setLayer(QStringLiteral("background"));
            m_phaseItems.push_back(band);
        }
        if (!named) {
            begin = i;
            continue;
        }
        auto* label = new QCPItemText(p);
        label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        const bool first = begin == 0;
        const bool last = i == e.timeline.size();
        // A band's label is centred on it, except at the plot's edges, where it is anchored to the edge
        // (with padding) so it stays inside the plot whatever the band's width or the chart's size.
        const double x = last    ? e.timeline[i - 1].step + 0.5
                         : first ? e.timeline[begin].step - 0.5
                                 : (e.timeline[begin].step + e.timeline[i - 1].step) / 2.0;
        label->position->setCoords(x, 0.02);
        label->setPositionAlignment(Qt::AlignTop | (last ? Qt::AlignRight : first ? Qt::AlignLeft : Qt::AlignHCenter));
        label->setPadding(QMargins(4, 0, 4, 0));
        label->setText(phaseName(phase));
        label->setColor(palette().color(QPalette::WindowText));
        label->setClipToAxisRect(true);
        m_phaseItems.push_back(label);
        begin = i;
    }

    const bool hasPeak = e.peakStep >= 0 && static_cast<size_t>(e.peakStep) < e.timeline.size();
    m_peak->setVisible(hasPeak);
    m_peakLabel->setVisible(hasPeak);
    if (hasPeak) {
        const double step = e.timeline[static_cast<size_t>(e.peakStep)].step;
        m_peak->position->setCoords(step, static_cast<double>(e.memory.peak));
        m_peakLabel->setText(tr("peak %1").arg(bytesText(e.memory.peak, m_units)));
        // Beside the marker, on the side towards the middle of the plot, at the marker's height: above it
        // the label ran into the phase names along the top of a short chart (the PDF's "optimizer").
        const double where = (step + 0.5) / std::max(1.0, static_cast<double>(e.timeline.size()));
        m_peakLabel->setPositionAlignment(Qt::AlignVCenter | (where > 0.5 ? Qt::AlignRight : Qt::AlignLeft));
        m_peakLabel->setPadding(where > 0.5 ? QMargins(0, 0, 10, 0) : QMargins(10, 0, 0, 0));
    }
    p->xAxis->setRange(-0.5, std::max(1, m_steps) - 0.5);
    p->yAxis->setRange(0, top * 1.2); // room above the peak for its label, below the phase labels
    if (m_selected >= m_steps)
        selectStep(-1);
    queueReplot();
}

void TimelineChart::selectStep(int step)
{
    m_selected = step;
    m_cursor->setVisible(step >= 0);
    if (step >= 0) {
        m_cursor->point1->setCoords(step, 0);
        m_cursor->point2->setCoords(step, 1);
    }
    queueReplot();
}

} // namespace gui
