#include "checkpointchart.h"

#include <algorithm>

namespace gui {

CheckpointChart::CheckpointChart(QWidget* parent) : Chart(parent)
{
    QCustomPlot* p = plot();
    m_peaks = new QCPBars(p->xAxis, p->yAxis);
    m_peaks->setName(tr("Peak"));
    m_peaks->setBrush(categoryColor(0));
    m_peaks->setPen(Qt::NoPen);
    m_peaks->setWidth(0.7);
    m_best = new QCPBars(p->xAxis, p->yAxis);
    m_best->setName(tr("Best"));
    m_best->setBrush(categoryColor(4));
    m_best->setPen(Qt::NoPen);
    m_best->setWidth(0.7);
    p->yAxis2->setVisible(true);
    p->yAxis2->setTicker(QSharedPointer<CountTicker>::create());
    p->yAxis2->setLabel(tr("Extra forward MACs"));
    m_recompute = p->addGraph(p->xAxis, p->yAxis2);
    m_recompute->setName(tr("Recompute"));
    m_recompute->setPen(QPen(categoryColor(1), 2));
    m_recompute->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
    setBytesAxis(p->yAxis);
    p->yAxis->setLabel(tr("Peak"));
    p->xAxis->setLabel(tr("Checkpoint segments"));
    auto integers = QSharedPointer<QCPAxisTickerFixed>::create();
    integers->setTickStep(1);
    integers->setScaleStrategy(QCPAxisTickerFixed::ssMultiples); // 1, 2, 3 ... or 2, 4, 6 when crowded
    p->xAxis->setTicker(integers);
    placeLegendBelow(p);
    applyPalette();
}

void CheckpointChart::setReport(const headroom::Model&, const headroom::Report& report)
{
    showData();
    m_points = report.checkpointCurve;
    QVector<double> ks, peaks, macs;
    double topPeak = 1, topMacs = 1;
    for (const headroom::CheckpointPoint& c : m_points) {
        ks << c.k;
        peaks << static_cast<double>(c.peak);
        macs << static_cast<double>(c.recomputeMacs);
        topPeak = std::max(topPeak, static_cast<double>(c.peak));
        topMacs = std::max(topMacs, static_cast<double>(c.recomputeMacs));
    }
    m_peaks->setData(ks, peaks, true);
    m_best->data()->clear();
    for (const headroom::CheckpointPoint& c : m_points)
        if (c.k == report.bestCheckpoint)
            m_best->addData(c.k, static_cast<double>(c.peak));
    m_best->setName(tr("Best: %n segment(s)", nullptr, report.bestCheckpoint));
    m_recompute->setData(ks, macs, true);
    QCustomPlot* p = plot();
    p->xAxis->setRange(0.4, std::max<double>(2, static_cast<double>(m_points.size())) + 0.6);
    p->yAxis->setRange(0, topPeak * 1.25);
    // No recomputation at any k (a frozen model, one segment): a count axis over 0 .. 1 would label its
    // fractional ticks "1, 1, 1, 1, 0"; the flat line at zero says it, with no tick labels.
    const bool recomputes = std::any_of(m_points.begin(), m_points.end(),
                                        [](const headroom::CheckpointPoint& c) { return c.recomputeMacs > 0; });
    p->yAxis2->setTickLabels(recomputes);
    p->yAxis2->setRange(0, recomputes ? topMacs * 1.25 : 1.0);
    queueReplot();
}

} // namespace gui
