#include "toplayerschart.h"

#include <QHelpEvent>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace gui {

QStringList distinctLabels(const QStringList& paths, const QFontMetrics& metrics, int width)
{
    QStringList labels;
    for (const QString& p : paths)
        labels << metrics.elidedText(p, Qt::ElideLeft, width);
    for (int i = 0; i < labels.size(); ++i) {
        for (int j = i + 1; j < labels.size(); ++j) {
            if (labels[i] != labels[j] || paths[i] == paths[j])
                continue;
            // Same tail: show "first differing component/…/last component" for both.
            const QStringList a = paths[i].split(QLatin1Char('/')), b = paths[j].split(QLatin1Char('/'));
            int k = 0;
            while (k < a.size() && k < b.size() && a[k] == b[k])
                ++k;
            auto shorten = [&](const QStringList& parts) {
                if (k >= parts.size())
                    return metrics.elidedText(parts.join(QLatin1Char('/')), Qt::ElideLeft, width);
                const QString head = parts[k] +
                                     (k + 1 < parts.size() ? QStringLiteral("/…/") + parts.last() : QString());
                return metrics.elidedText(head, Qt::ElideMiddle, width);
            };
            labels[i] = shorten(a);
            labels[j] = shorten(b);
        }
    }
    // Too narrow to tell them apart by name: number the repeats (the tooltip has the full path).
    for (int i = 0; i < labels.size(); ++i)
        for (int j = i + 1, n = 2; j < labels.size(); ++j)
            if (labels[j] == labels[i] && paths[j] != paths[i])
                labels[j] += QStringLiteral(" #%1").arg(n++);
    return labels;
}

TopLayersChart::TopLayersChart(QWidget* parent, int count) : Chart(parent), m_count(count)
{
    QCustomPlot* p = plot();
    m_bars = new QCPBars(p->yAxis, p->xAxis);
    m_bars->setBrush(categoryColor(2));
    m_bars->setPen(Qt::NoPen);
    m_bars->setWidth(0.7);
    setBytesAxis(p->xAxis);
    p->installEventFilter(this);
    applyPalette();
}

bool TopLayersChart::eventFilter(QObject* watched, QEvent* event)
{
    // The full layer path of the bar under the mouse: the axis label may be elided.
    if (watched == plot() && event->type() == QEvent::ToolTip) {
        const auto* help = static_cast<QHelpEvent*>(event);
        const double key = plot()->yAxis->pixelToCoord(help->pos().y());
        const int i = static_cast<int>(m_paths.size()) - static_cast<int>(std::lround(key));
        if (i >= 0 && i < m_paths.size())
            QToolTip::showText(help->globalPos(), m_paths[i], plot());
        else
            QToolTip::hideText();
        return true;
    }
    return Chart::eventFilter(watched, event);
}

void TopLayersChart::setReport(const headroom::Model& model, const headroom::Report& report)
{
    showData();
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
                      [](const auto& a, const auto& b) {
                          return a.second > b.second || (a.second == b.second && a.first < b.first);
                      });
    m_top.resize(keep);

    QCustomPlot* p = plot();
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    QVector<double> keys, values;
    const QFontMetrics metrics(p->yAxis->tickLabelFont());
    double top = 1;
    m_paths.clear();
    for (const auto& [node, bytes] : m_top)
        m_paths << qs(model.nodePath(node));
    m_labels = distinctLabels(m_paths, metrics, 260);
    for (size_t i = 0; i < m_top.size(); ++i) {
        const double key = static_cast<double>(m_top.size() - i); // biggest at the top
        keys << key;
        values << static_cast<double>(m_top[i].second);
        top = std::max(top, values.back());
        ticker->addTick(key, m_labels[static_cast<qsizetype>(i)]);
    }
    m_bars->setData(keys, values);
    p->yAxis->setTicker(ticker);
    p->yAxis->setRange(0.4, static_cast<double>(std::max<size_t>(m_top.size(), 1)) + 0.6);
    p->xAxis->setRange(0, top * 1.1);
    p->xAxis->setLabel(training ? tr("Saved for backward") : tr("Output bytes"));
    queueReplot();
}

} // namespace gui
