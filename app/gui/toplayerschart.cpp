#include "toplayerschart.h"

#include "breakdownchart.h"

#include <QHelpEvent>
#include <QRegularExpression>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <map>

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

QString blockPattern(const QString& path)
{
    static const QRegularExpression numbered(QStringLiteral("^(.+)\\.\\d+$"));
    QStringList parts = path.split(QLatin1Char('/'));
    for (QString& part : parts)
        if (const QRegularExpressionMatch m = numbered.match(part); m.hasMatch())
            part = m.captured(1) + QStringLiteral(".*");
    return parts.join(QLatin1Char('/'));
}

TopLayersChart::TopLayersChart(QWidget* parent, int count) : Chart(parent), m_count(count)
{
    QCustomPlot* p = plot();
    m_bars = new QCPBars(p->yAxis, p->xAxis);
    m_bars->setBrush(BreakdownChart::color(BreakdownChart::Activations));
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
            QToolTip::showText(help->globalPos(),
                               m_paths[i] + QLatin1Char('\n') + valueText(entries()[static_cast<size_t>(i)]), plot());
        else
            QToolTip::hideText();
        return true;
    }
    return Chart::eventFilter(watched, event);
}

void TopLayersChart::setReport(const headroom::Model& model, const headroom::Report& report)
{
    showData();
    m_training = report.config.mode == headroom::Mode::Train;
    const auto& nodes = report.evaluation.nodes;
    m_top.clear();
    std::map<QString, Entry> kinds;
    for (size_t n = 0; n < nodes.size(); ++n) {
        const int64_t bytes = m_training ? nodes[n].savedBytes : nodes[n].outputBytes;
        if (bytes <= 0)
            continue;
        m_top.emplace_back(static_cast<int>(n), bytes);
        const QString path = qs(model.nodePath(static_cast<int>(n)));
        Entry& k = kinds[blockPattern(path)];
        k.total += bytes;
        k.each = std::max(k.each, bytes);
        k.count = k.path.isEmpty() ? 1 : k.count + 1;
        k.path = blockPattern(path);
    }
    const auto byBytes = [](const auto& a, const auto& b) {
        return a.second > b.second || (a.second == b.second && a.first < b.first);
    };
    const size_t keep = std::min(m_top.size(), static_cast<size_t>(m_count));
    std::partial_sort(m_top.begin(), m_top.begin() + static_cast<std::ptrdiff_t>(keep), m_top.end(), byBytes);
    m_top.resize(keep);
    m_nodes.clear();
    for (const auto& [node, bytes] : m_top)
        m_nodes.push_back({qs(model.nodePath(node)), bytes, bytes, 1});
    m_kinds.clear();
    for (auto& [key, entry] : kinds)
        m_kinds.push_back(std::move(entry));
    std::stable_sort(m_kinds.begin(), m_kinds.end(), [](const Entry& a, const Entry& b) { return a.total > b.total; });
    if (m_kinds.size() > static_cast<size_t>(m_count))
        m_kinds.resize(static_cast<size_t>(m_count));
    plotEntries();
}

void TopLayersChart::setPerKind(bool perKind)
{
    if (perKind == m_perKind)
        return;
    m_perKind = perKind;
    if (hasData())
        plotEntries();
}

QString TopLayersChart::valueText(const Entry& e) const
{
    if (e.count == 1)
        return bytesText(e.total, m_units);
    //: beside a bar of repeated layers: %1 one layer's bytes, %2 all of them
    return e.each * e.count == e.total
               ? tr("%1 each, %2").arg(bytesText(e.each, m_units), bytesText(e.total, m_units))
               : tr("up to %1 each, %2").arg(bytesText(e.each, m_units), bytesText(e.total, m_units));
}

QStringList TopLayersChart::valueTexts() const
{
    QStringList out;
    for (const Entry& e : entries())
        out << valueText(e);
    return out;
}

void TopLayersChart::plotEntries()
{
    QCustomPlot* p = plot();
    p->clearItems();
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    QVector<double> keys, values;
    const QFontMetrics metrics(p->yAxis->tickLabelFont());
    double top = 1;
    m_paths.clear();
    QStringList shown;
    for (const Entry& e : entries()) {
        m_paths << e.path;
        //: a bar of repeated layers: %1 the path with each block number as "*", %2 how many blocks
        shown << (e.count > 1 ? tr("%1 × %2 layers").arg(e.path).arg(e.count) : e.path);
    }
    m_labels = distinctLabels(shown, metrics, 260);
    const std::vector<Entry>& list = entries();
    for (size_t i = 0; i < list.size(); ++i) {
        const double key = static_cast<double>(list.size() - i); // biggest at the top
        keys << key;
        values << static_cast<double>(list[i].total);
        top = std::max(top, values.back());
        ticker->addTick(key, m_labels[static_cast<qsizetype>(i)]);
        auto* label = new QCPItemText(p);
        label->position->setCoords(values.back(), key);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        label->setPadding(QMargins(4, 0, 0, 0));
        label->setText(valueText(list[i]));
        label->setFont(p->xAxis->tickLabelFont());
    }
    m_bars->setData(keys, values);
    p->yAxis->setTicker(ticker);
    p->yAxis->setRange(0.4, static_cast<double>(std::max<size_t>(list.size(), 1)) + 0.6);
    // Room on the right for the widest value text (about a third of the axis).
    p->xAxis->setRange(0, top * 1.45);
    p->xAxis->setLabel(m_training ? tr("Saved for backward") : tr("Output bytes"));
    applyPalette();
    queueReplot();
}

} // namespace gui
