#include "toplayerschart.h"

#include <algorithm>

namespace gui {

TopLayersChart::TopLayersChart(QWidget* parent, int count)
    : Chart(parent)
    , m_count(count)
{
    QCustomPlot* p = plot();
    m_bars = new QCPBars(p->yAxis, p->xAxis);
    m_bars->setBrush(categoryColor(2));
    m_bars->setPen(Qt::NoPen);
    m_bars->setWidth(0.7);
    setBytesAxis(p->xAxis);
    applyPalette();
}

void TopLayersChart::setReport(const headroom::Model& model, const headroom::Report& report)
{
    const bool training = report.config.mode == headroom::Mode::Train;
    const auto& nodes = report.evaluation.nodes;
    m_top.clear();
    for (size_t n = 0; n < nodes.size(); ++n) {
        const int64_t bytes = training ? nodes[n].savedBytes : nodes[n].outputBytes;
        if (bytes > 0)
            m_top.emplace_back(static_cast<int>(n), bytes);
    }
    const size_t keep = std::min(m_top.size(), static_cast<size_t>(m_count));
    std::partial_sort(m_top.begin(), m_top.begin() + static_cast<std::ptrdiff_t>(keep), m_top.end(),
                      [](const auto& a, const auto& b) { return a.second > b.second || (a.second == b.second && a.first < b.first); });
    m_top.resize(keep);

    QCustomPlot* p = plot();
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    QVector<double> keys, values;
    const QFontMetrics metrics(p->yAxis->tickLabelFont());
    double top = 1;
    for (size_t i = 0; i < m_top.size(); ++i) {
        const double key = static_cast<double>(m_top.size() - i); // biggest at the top
        keys << key;
        values << static_cast<double>(m_top[i].second);
        top = std::max(top, values.back());
        ticker->addTick(key, metrics.elidedText(qs(model.nodePath(m_top[i].first)), Qt::ElideMiddle, 260));
    }
    m_bars->setData(keys, values);
    p->yAxis->setTicker(ticker);
    p->yAxis->setRange(0.4, static_cast<double>(std::max<size_t>(m_top.size(), 1)) + 0.6);
    p->xAxis->setRange(0, top * 1.1);
    p->xAxis->setLabel(training ? tr("Saved for backward") : tr("Output bytes"));
    queueReplot();
}

} // namespace gui
