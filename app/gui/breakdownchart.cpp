// The breakdown chart: the bars' segments from the report (one bar, or one per GPU), then the stacked plot.
#include "breakdownchart.h"

#include <algorithm>

namespace gui {

BreakdownChart::BreakdownChart(QWidget* parent) : Chart(parent)
{
    QCustomPlot* p = plot();
    placeLegendBelow(p);
    setBytesAxis(p->xAxis);
    p->xAxis->setLabel(tr("GPU memory"));
    applyPalette();
}

void BreakdownChart::setReport(const headroom::Model&, const headroom::Report& report)
{
    showData();
    m_bars.clear();
    m_capacity = report.fit.capacity;
    m_allocated.clear();
    if (report.cluster.gpus.size() > 1)
        addClusterBars(report);
    else
        addSingleBar(report);
    plotBars(report);
}

void BreakdownChart::addClusterBars(const headroom::Report& report)
{
    const headroom::Config& c = report.config;
    const headroom::Breakdown& one = report.evaluation.memory;
    for (const headroom::GpuShare& g : report.cluster.gpus) {
        // The share's figures are taken at different moments (state for the whole step, the most
        // gradient bytes live at once, activations at the peak), so they can add up to more than the
        // peak: the allocated part of the bar is the peak, filled by the figures in order of certainty
        // (state, then what is live at the peak, then gradients), whatever is left being "other".
        int64_t left = g.peak;
        auto take = [&left](int64_t bytes) {
            const int64_t b = std::clamp<int64_t>(bytes, 0, left);
            left -= b;
            return b;
        };
        const int64_t weights = take(g.weights);
        const int64_t optimizer = take(g.optimizer);
        const int64_t activations = take(g.activations);
        const int64_t communication = take(g.communication);
        const int64_t gradients = take(g.gradients);
        const int64_t used = c.allocator == headroom::AllocatorMode::Exact ? g.peak : std::max(g.peak, g.reservedPeak);
        // Context and workspace as the share counted them, so the bar ends at GpuShare::needed.
        const int64_t fixed = std::max<int64_t>(0, g.needed - used);
        const int64_t workspace = std::min(one.workspace, fixed);
        m_bars.push_back({{tr("Weights"), weights},
                          {tr("Gradients"), gradients},
                          {tr("Optimizer states"), optimizer},
                          {tr("Activations"), activations},
                          {tr("Communication"), communication},
                          {tr("Other"), left},
                          {tr("Allocator cache"), used - g.peak},
                          {tr("Workspace"), workspace},
                          {tr("CUDA context"), fixed - workspace}});
        m_allocated.push_back(g.peak);
    }
}

void BreakdownChart::addSingleBar(const headroom::Report& report)
{
    const headroom::Breakdown& m = report.evaluation.memory;
    const int64_t stored = m.weights + m.gradients + m.optimizer + m.masterWeights;
    const int64_t cache = std::max<int64_t>(0, report.fit.needed - m.peak - m.workspace - m.context);
    m_bars.push_back({{tr("Weights"), m.weights},
                      {tr("Gradients"), m.gradients},
                      {tr("Optimizer states"), m.optimizer},
                      {tr("Master weights"), m.masterWeights},
                      {tr("Activations"), std::max<int64_t>(0, m.peak - stored)},
                      {tr("Allocator cache"), cache},
                      {tr("Workspace"), m.workspace},
                      {tr("CUDA context"), m.context}});
    m_allocated.push_back(m.peak);
}

// One stacked QCPBars per category across the bars, the capacity as a dashed line.
void BreakdownChart::plotBars(const headroom::Report& report)
{
    QCustomPlot* p = plot();
    p->clearPlottables();
    p->clearItems();
    const size_t categories = m_bars.empty() ? 0 : m_bars.front().size();
    QCPBars* below = nullptr;
    int64_t widest = m_capacity;
    for (const auto& bar : m_bars) {
        int64_t total = 0;
        for (const Segment& s : bar)
            total += s.bytes;
        widest = std::max(widest, total);
    }
    for (size_t k = 0; k < categories; ++k) {
        auto* bars = new QCPBars(p->yAxis, p->xAxis);
        bars->setName(m_bars.front()[k].label);
        bars->setWidth(0.6);
        const QColor color = categoryColor(static_cast<int>(k));
        bars->setBrush(color);
        bars->setPen(QPen(color.darker(130)));
        for (size_t g = 0; g < m_bars.size(); ++g)
            bars->addData(static_cast<double>(g), static_cast<double>(m_bars[g][k].bytes));
        if (below)
            bars->moveAbove(below);
        below = bars;
        // Empty categories stay out of the legend.
        bool any = false;
        for (const auto& bar : m_bars)
            any = any || bar[k].bytes > 0;
        if (!any)
            bars->removeFromLegend();
    }
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (size_t g = 0; g < m_bars.size(); ++g)
        ticker->addTick(static_cast<double>(g), m_bars.size() > 1 ? tr("GPU %1").arg(g) : tr("Need"));
    p->yAxis->setTicker(ticker);
    p->yAxis->setRange(-0.6, static_cast<double>(m_bars.size()) - 0.4 + 0.8);
    p->xAxis->setRange(0, static_cast<double>(widest) * 1.08 + 1);
    if (m_capacity > 0) {
        auto* line = new QCPItemStraightLine(p);
        line->point1->setCoords(static_cast<double>(m_capacity), 0);
        line->point2->setCoords(static_cast<double>(m_capacity), 1);
        line->setPen(QPen(palette().color(QPalette::WindowText), 2, Qt::DashLine));
        auto* label = new QCPItemText(p);
        label->position->setCoords(static_cast<double>(m_capacity), static_cast<double>(m_bars.size()) - 0.4 + 0.6);
        label->setPositionAlignment(Qt::AlignRight | Qt::AlignVCenter);
        label->setPadding(QMargins(0, 0, 6, 0));
        label->setText(tr("%1: %2").arg(gpuDisplayName(report.fit.gpu), bytesText(m_capacity, m_units)));
    }
    applyPalette();
    queueReplot();
}

} // namespace gui
