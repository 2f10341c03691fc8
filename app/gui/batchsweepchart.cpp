#include "batchsweepchart.h"

#include <algorithm>

namespace gui {

BatchSweepChart::BatchSweepChart(QWidget* parent) : Chart(parent)
{
    QCustomPlot* p = plot();
    m_graph = p->addGraph();
    m_graph->setName(tr("Needed"));
    m_graph->setPen(QPen(categoryColor(0), 2));
    m_graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
    m_current = p->addGraph();
    m_current->setName(tr("Current batch"));
    m_current->setLineStyle(QCPGraph::lsNone);
    m_current->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(categoryColor(1), 2), Qt::NoBrush, 11));
    p->xAxis->setScaleType(QCPAxis::stLogarithmic);
    auto log = QSharedPointer<QCPAxisTickerLog>::create();
    log->setLogBase(2);
    p->xAxis->setTicker(log);
    p->xAxis->setNumberFormat(QStringLiteral("f"));
    p->xAxis->setNumberPrecision(0);
    p->xAxis->setLabel(tr("Batch size"));
    setBytesAxis(p->yAxis);
    p->yAxis->setLabel(tr("GPU memory needed"));
    applyPalette();
}

void BatchSweepChart::setReport(const headroom::Model& model, const headroom::Report& report)
{
    showData();
    m_points = report.batchSweep;
    m_maxBatch = report.fit.maxBatch;
    QCustomPlot* p = plot();
    p->clearItems();
    QVector<double> keys, values;
    double top = static_cast<double>(report.fit.capacity);
    for (const auto& [batch, need] : m_points) {
        keys << static_cast<double>(batch);
        values << static_cast<double>(need);
        top = std::max(top, static_cast<double>(need));
    }
    m_graph->setData(keys, values, true);
    const int64_t batch = model.batchSymbol >= 0 &&
                                  static_cast<size_t>(model.batchSymbol) < report.config.symbols.size()
                              ? report.config.symbols[static_cast<size_t>(model.batchSymbol)]
                              : 1;
    m_current->setData({static_cast<double>(batch)}, {static_cast<double>(report.fit.needed)});
    const double xmax = keys.isEmpty() ? 2.0 : std::max(2.0, keys.back());
    p->xAxis->setRange(1, xmax * 1.1);
    p->yAxis->setRange(0, top * 1.1);

    const QColor fg = palette().color(QPalette::WindowText);
    if (report.fit.capacity > 0) {
        QColor fitColor = categoryColor(4);
        fitColor.setAlphaF(0.15f);
        if (m_maxBatch > 0) {
            auto* region = new QCPItemRect(p);
            region->topLeft->setCoords(1, static_cast<double>(report.fit.capacity));
            region->bottomRight->setCoords(static_cast<double>(m_maxBatch), 0);
            region->setBrush(fitColor);
            region->setPen(Qt::NoPen);
            region->setLayer(QStringLiteral("background"));
            auto* line = new QCPItemStraightLine(p);
            line->point1->setCoords(static_cast<double>(m_maxBatch), 0);
            line->point2->setCoords(static_cast<double>(m_maxBatch), 1);
            line->setPen(QPen(categoryColor(4).darker(120), 1.5, Qt::DashLine));
            auto* label = new QCPItemText(p);
            label->position->setCoords(static_cast<double>(m_maxBatch), static_cast<double>(report.fit.capacity) * 0.5);
            label->setPositionAlignment(Qt::AlignRight | Qt::AlignVCenter);
            label->setPadding(QMargins(0, 0, 6, 0));
            label->setText(tr("max batch %1").arg(m_maxBatch));
        }
        auto* capacity = new QCPItemStraightLine(p);
        capacity->point1->setCoords(1, static_cast<double>(report.fit.capacity));
        capacity->point2->setCoords(2, static_cast<double>(report.fit.capacity));
        capacity->setPen(QPen(fg, 1.5, Qt::DashLine));
        auto* label = new QCPItemText(p);
        label->position->setCoords(1, static_cast<double>(report.fit.capacity));
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        label->setPadding(QMargins(6, 0, 0, 2));
        label->setText(tr("%1: %2").arg(gpuDisplayName(report.fit.gpu), bytesText(report.fit.capacity, m_units)));
    }
    applyPalette();
    queueReplot();
}

} // namespace gui
