// The breakdown chart: the bars' segments from the report (one bar, or one per GPU), then the stacked plot.
#include "breakdownchart.h"

#include "plantext.h"

#include <QHelpEvent>
#include <QLocale>
#include <QToolTip>

#include <algorithm>

namespace gui {

BreakdownChart::BreakdownChart(QWidget* parent) : Chart(parent)
{
    QCustomPlot* p = plot();
    placeLegendBelow(p);
    setBytesAxis(p->xAxis);
    p->xAxis->setLabel(tr("GPU memory"));
    p->installEventFilter(this);
    connect(p, &QCustomPlot::afterLayout, this, &BreakdownChart::fitValueLabels);
    applyPalette();
}

namespace {
int64_t barTotal(const std::vector<BreakdownChart::Segment>& bar)
{
    int64_t total = 0;
    for (const BreakdownChart::Segment& s : bar)
        total += s.bytes;
    return total;
}
} // namespace

QString BreakdownChart::segmentToolTip(size_t bar, size_t segment) const
{
    const Segment& s = m_bars.at(bar).at(segment);
    const int64_t total = barTotal(m_bars[bar]);
    const double share = total > 0 ? 100.0 * static_cast<double>(s.bytes) / static_cast<double>(total) : 0.0;
    //: %1 category, %2 bytes in units, %3 exact bytes, %4 share of the bar in percent
    return tr("%1: %2 (%3 bytes), %4% of the need")
        .arg(s.label, bytesText(s.bytes, m_units), QLocale().toString(static_cast<qlonglong>(s.bytes)),
             QLocale().toString(share, 'f', share < 10 ? 1 : 0));
}

QString BreakdownChart::legendText(size_t segment) const
{
    const Segment& s = m_bars.front().at(segment);
    if (m_bars.size() > 1)
        return s.label;
    //: legend entry of the breakdown: %1 category, %2 its bytes
    return tr("%1 %2").arg(s.label, bytesText(s.bytes, m_units));
}

std::pair<int, int> BreakdownChart::segmentAt(QPoint pos) const
{
    const QCustomPlot* p = plot();
    const double key = p->yAxis->pixelToCoord(pos.y());
    const int bar = static_cast<int>(std::lround(key));
    if (bar < 0 || static_cast<size_t>(bar) >= m_bars.size() || std::abs(key - bar) > 0.3)
        return {-1, -1};
    const double x = p->xAxis->pixelToCoord(pos.x());
    double at = 0;
    const auto& segments = m_bars[static_cast<size_t>(bar)];
    for (size_t k = 0; k < segments.size(); ++k) {
        at += static_cast<double>(segments[k].bytes);
        if (segments[k].bytes > 0 && x >= 0 && x < at)
            return {bar, static_cast<int>(k)};
    }
    return {-1, -1};
}

bool BreakdownChart::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == plot() && event->type() == QEvent::ToolTip) {
        const auto* help = static_cast<QHelpEvent*>(event);
        const auto [bar, segment] = segmentAt(help->pos());
        if (bar >= 0)
            QToolTip::showText(help->globalPos(), segmentToolTip(size_t(bar), size_t(segment)), plot());
        else
            QToolTip::hideText();
        return true;
    }
    return Chart::eventFilter(watched, event);
}

// Each segment's bytes written on it where the text fits inside, so the chart answers without hovering
// (the legend carries every figure of a single bar as well). Whether it fits is decided after each layout.
void BreakdownChart::addValueLabels()
{
    QCustomPlot* p = plot();
    m_valueLabels.clear();
    for (size_t g = 0; g < m_bars.size(); ++g) {
        double at = 0;
        for (const Segment& s : m_bars[g]) {
            if (s.bytes > 0) {
                auto* label = new QCPItemText(p);
                label->position->setCoords(at + static_cast<double>(s.bytes) / 2, static_cast<double>(g));
                label->setPositionAlignment(Qt::AlignCenter);
                label->setText(bytesText(s.bytes, m_units));
                label->setFont(p->xAxis->tickLabelFont());
                label->setColor(Qt::black); // on the category colours, all of medium lightness
                label->setProperty("onBar", true);
                label->setClipToAxisRect(true);
                m_valueLabels.emplace_back(label, s.bytes);
            }
            at += static_cast<double>(s.bytes);
        }
    }
    fitValueLabels();
}

void BreakdownChart::fitValueLabels()
{
    const QCustomPlot* p = plot();
    const QFontMetrics metrics(p->xAxis->tickLabelFont());
    const double pixelsPerByte = p->axisRect()->width() / std::max(1.0, p->xAxis->range().size());
    for (const auto& [label, bytes] : m_valueLabels)
        label->setVisible(static_cast<double>(bytes) * pixelsPerByte > metrics.horizontalAdvance(label->text()) + 6);
}

QStringList BreakdownChart::visibleValueLabels() const
{
    QStringList out;
    for (const auto& [label, bytes] : m_valueLabels)
        if (label->visible())
            out << label->text();
    return out;
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
    makeSummary(report);
}

void BreakdownChart::makeSummary(const headroom::Report& report)
{
    // The heaviest GPU's bar (the one the verdict is about), its categories largest first.
    size_t heaviest = 0;
    for (size_t g = 1; g < m_bars.size(); ++g)
        if (barTotal(m_bars[g]) > barTotal(m_bars[heaviest]))
            heaviest = g;
    std::vector<Segment> parts = m_bars.empty() ? std::vector<Segment>{} : m_bars[heaviest];
    std::stable_sort(parts.begin(), parts.end(), [](const Segment& a, const Segment& b) { return a.bytes > b.bytes; });
    QStringList items;
    for (const Segment& s : parts)
        if (s.bytes > 0)
            //: one part of the need: %1 category, %2 its bytes
            items << tr("%1 %2").arg(s.label, bytesText(s.bytes, m_units));
    const int64_t need = m_bars.empty() ? 0 : barTotal(m_bars[heaviest]);
    QString text = m_capacity > 0
                       //: %1 the need, %2 the GPU's capacity, %3 the parts of the need
                       ? tr("Needs %1 of %2: %3.")
                             .arg(bytesText(need, m_units), bytesText(m_capacity, m_units), items.join(tr(", ")))
                       //: %1 the need, %2 the parts of the need
                       : tr("Needs %1: %2.").arg(bytesText(need, m_units), items.join(tr(", ")));
    if (const QString plan = gui::planText(report.fitPlan, m_units); !plan.isEmpty())
        text += QLatin1Char(' ') + plan;
    m_summary = text;
    emit summaryChanged(m_summary);
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
        // At capacity (GpuShare::reservedAtCapacity) the need is what the allocator holds once it has given its
        // cache back: the bar shows that, not the unconstrained reservation above the capacity line.
        const bool capped = g.reservedAtCapacity > 0 && g.needed <= g.reservedAtCapacity + one.context;
        const int64_t used = c.allocator == headroom::AllocatorMode::Exact ? g.peak
                             : capped                                      ? std::max(g.peak, g.reservedAtCapacity)
                                                                           : std::max(g.peak, g.reservedPeak);
        // Context and workspace as the share counted them, so the bar ends at GpuShare::needed.
        const int64_t fixed = std::max<int64_t>(0, g.needed - used);
        const int64_t workspace = std::min(one.workspace, fixed);
        m_bars.push_back({{tr("Weights"), weights, Weights},
                          {tr("Gradients"), gradients, Gradients},
                          {tr("Optimizer states"), optimizer, Optimizer},
                          {tr("Activations"), activations, Activations},
                          {tr("Communication"), communication, Communication},
                          {tr("Other"), left, Other},
                          {tr("Allocator cache"), used - g.peak, AllocatorCache},
                          {tr("Workspace"), workspace, Workspace},
                          {tr("CUDA context"), fixed - workspace, Context}});
        m_allocated.push_back(g.peak);
    }
}

void BreakdownChart::addSingleBar(const headroom::Report& report)
{
    const headroom::Breakdown& m = report.evaluation.memory;
    const int64_t cache = std::max<int64_t>(0, report.fit.needed - m.peak - m.workspace - m.context);
    // The peak's parts as core names them (headroom::peakParts), the CLI's and the JSON's figures.
    using K = headroom::PeakPart::Kind;
    int64_t part[8] = {};
    for (const headroom::PeakPart& p : headroom::peakParts(report.evaluation))
        part[static_cast<size_t>(p.kind)] = p.bytes;
    const auto of = [&part](K k) { return part[static_cast<size_t>(k)]; };
    m_bars.push_back({{tr("Weights"), of(K::Weights), Weights},
                      {tr("Gradients"), of(K::Gradients), Gradients},
                      {tr("Optimizer states"), of(K::Optimizer), Optimizer},
                      {tr("Master weights"), of(K::MasterWeights), MasterWeights},
                      // QLoRA: the 4-bit weight a matmul unpacks, held at the peak beside the stored weights
                      {tr("Dequantized weight"), of(K::DequantizedWeight), Weights},
                      {tr("Activations"), of(K::Activations) + of(K::Input), Activations},
                      // An optimizer-step peak's foreach/fused temporaries: not activations
                      {tr("Optimizer-step temporaries"), of(K::OptimizerStep), Other},
                      {tr("Allocator cache"), cache, AllocatorCache},
                      {tr("Workspace"), m.workspace, Workspace},
                      {tr("CUDA context"), m.context, Context}});
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
        bars->setName(legendText(k));
        bars->setWidth(0.6);
        const QColor color = BreakdownChart::color(m_bars.front()[k].category);
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
        // Left of the line, unless the line is near the axis's start (a need far beyond the GPU): then right
        // of it, so the GPU's name is not cut by the axis.
        const bool nearStart = static_cast<double>(m_capacity) < 0.3 * static_cast<double>(widest);
        label->setPositionAlignment((nearStart ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter);
        label->setPadding(nearStart ? QMargins(6, 0, 0, 0) : QMargins(0, 0, 6, 0));
        label->setText(tr("%1: %2").arg(gpuDisplayName(report.fit.gpu), bytesText(m_capacity, m_units)));
    }
    addValueLabels();
    applyPalette();
    queueReplot();
}

} // namespace gui
