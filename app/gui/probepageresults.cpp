// The Probe tab's results: theory beside measurement in the table and the two charts, and a measurement
// loaded from a file (what headroom-cli --compare prints).
#include "probepage.h"

#include "chart.h"
#include "guiutil.h"

#include "headroom/base/error.h"
#include "headroom/memory/engine.h"
#include "headroom/probe/measurement.h"

#include <qcustomplot.h>

#include <QFileInfo>
#include <QLabel>
#include <QStackedWidget>
#include <QTableWidget>

#include <algorithm>

namespace gui {

namespace {

QString categoryTitle(const std::string& wire)
{
    const auto c = headroom::parseProbeCategory(wire);
    if (!c)
        return qs(wire);
    switch (*c) {
    case headroom::Category::Weights: return ProbePage::tr("Weights");
    case headroom::Category::Buffers: return ProbePage::tr("Buffers");
    case headroom::Category::Gradients: return ProbePage::tr("Gradients");
    case headroom::Category::Optimizer: return ProbePage::tr("Optimizer states");
    case headroom::Category::MasterWeights: return ProbePage::tr("Master weights");
    case headroom::Category::Activations: return ProbePage::tr("Activations");
    case headroom::Category::Workspace: return ProbePage::tr("Workspace");
    case headroom::Category::Context: return ProbePage::tr("CUDA context");
    case headroom::Category::Input: return ProbePage::tr("Input batch");
    case headroom::Category::Loss: return ProbePage::tr("Loss");
    case headroom::Category::Count: break;
    }
    return qs(wire);
}

QTableWidgetItem* item(const QString& text, const QString& tip = {})
{
    auto* it = new QTableWidgetItem(text);
    it->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    if (!tip.isEmpty())
        it->setToolTip(tip);
    return it;
}

// --compare's figures (headroom::compareJson) in a table: theory, measurement, error.
void fillMeasurement(QTableWidget* table, const nlohmann::json& compare, headroom::Units units)
{
    const std::pair<const char*, QString> rows[] = {
        {"allocated_peak", ProbePage::tr("Allocated peak")},
        {"reserved_peak", ProbePage::tr("Reserved peak")},
        {"weights", ProbePage::tr("Weights")},
        {"steady_state", ProbePage::tr("Between steps")},
        {"outside_allocator", ProbePage::tr("Outside the allocator")},
    };
    table->setRowCount(0);
    for (const auto& [key, title] : rows) {
        if (!compare.contains(key))
            continue;
        const nlohmann::json& r = compare[key];
        const int row = table->rowCount();
        table->insertRow(row);
        table->setItem(row, 0, item(title));
        table->setItem(row, 1, item(qs(headroom::formatBytes(r["theory"].get<int64_t>(), units))));
        table->setItem(row, 2,
                       item(r["measured"].is_number() ? qs(headroom::formatBytes(r["measured"].get<int64_t>(), units))
                                                      : QStringLiteral("–")));
        table->setItem(row, 3,
                       item(r["error_pct"].is_number()
                                ? QStringLiteral("%1 %").arg(r["error_pct"].get<double>(), 0, 'f', 1)
                                : QStringLiteral("–")));
    }
}

} // namespace

void ProbePage::loadMeasurement(const QString& path)
{
    auto* measured = findChild<QTableWidget*>(QStringLiteral("probeMeasurementTable"));
    if (!m_model || !measured) {
        m_message->setText(tr("Open a model first."));
        return;
    }
    headroom::MeasurementKey key;
    key.model = QFileInfo(qs(m_model->info.file)).completeBaseName().toStdString();
    key.batch = m_model->batchSymbol >= 0 && static_cast<size_t>(m_model->batchSymbol) < m_config.symbols.size()
                    ? m_config.symbols[static_cast<size_t>(m_model->batchSymbol)]
                    : 1;
    if (const int s = m_model->symbolIndex("seq"); s >= 0 && static_cast<size_t>(s) < m_config.symbols.size())
        key.seq = m_config.symbols[static_cast<size_t>(s)];
    key.config = m_config;
    try {
        const headroom::Measurement m = headroom::loadMeasurement(path.toStdString(), key);
        fillMeasurement(measured, headroom::compareJson(m, headroom::evaluate(*m_model, m_config).memory), m_units);
        measured->show();
        m_message->setText(tr("Measured (%1): %2").arg(qs(m.source), QFileInfo(path).fileName()));
    } catch (const headroom::Error& e) {
        m_message->setText(tr("Could not use the measurement: %1").arg(qs(e.what())));
    }
}

void ProbePage::showResult()
{
    const bool measured = m_result.status == headroom::ProbeResult::Status::Ok;
    const Theory theory = m_theory ? *m_theory : Theory{};
    m_table->clearContents();
    m_table->setRowCount(0);
    auto addRow = [&](const QString& name, int64_t theoryBytes, int64_t measuredBytes, const QString& tip,
                      bool bytes = true) {
        const int row = m_table->rowCount();
        m_table->insertRow(row);
        auto text = [&](int64_t v) { return v < 0 ? tr("—") : bytes ? bytesText(v, m_units) : QString::number(v); };
        m_table->setItem(row, NameColumn, item(name, tip));
        m_table->setItem(row, TheoryColumn, item(theory.valid ? text(theoryBytes) : tr("—")));
        m_table->setItem(row, MeasuredColumn, item(measured ? text(measuredBytes) : tr("—")));
        QString diff = tr("—");
        QString diffTip;
        if (theory.valid && measured && theoryBytes >= 0 && measuredBytes >= 0) {
            const int64_t d = measuredBytes - theoryBytes;
            diff = (d > 0 ? QStringLiteral("+") : QString()) + (bytes ? bytesText(d, m_units) : QString::number(d));
            if (theoryBytes > 0)
                diffTip = tr("%1 % of theory")
                              .arg(100.0 * static_cast<double>(d) / static_cast<double>(theoryBytes), 0, 'f', 1);
        }
        m_table->setItem(row, DifferenceColumn, item(diff, diffTip));
    };
    const int64_t workspace = m_result.cublasWorkspace < 0 && m_result.cudnnWorkspace < 0
                                  ? -1
                                  : std::max<int64_t>(0, m_result.cublasWorkspace) +
                                        std::max<int64_t>(0, m_result.cudnnWorkspace);
    addRow(tr("CUDA context"), theory.context, m_result.contextBytes,
           tr("Measured as device memory used before and after the context was created (%1)")
               .arg(qs(m_result.contextMethod)));
    addRow(tr("Workspace (cuBLAS + cuDNN)"), theory.workspace, workspace,
           tr("cuBLAS: handle and workspace after the model's largest GEMMs; cuDNN: the preferred algorithms' "
              "workspace for the model's convolutions"));
    addRow(tr("Peak, exact allocations"), theory.peak, m_result.exactPeak,
           tr("One cudaMalloc per tensor; measured: device memory above the baseline"));
    addRow(tr("Peak, caching allocator"), theory.reservedPeak, m_result.cachingPeak,
           tr("Segments as PyTorch's caching allocator would reserve them"));
    addRow(tr("Max batch"), theory.maxBatch, measured ? m_result.measuredMaxBatch : -1,
           tr("Theory: largest batch that fits the selected GPU; measured: bisection on this device"), false);
    std::vector<std::pair<std::string, int64_t>> measuredCats = m_result.peakByCategory;
    for (const auto& [name, bytes] : theory.peakByCategory) {
        int64_t m = -1;
        for (const auto& [n, b] : measuredCats)
            if (n == name)
                m = b;
        if (bytes > 0 || m > 0)
            addRow(categoryTitle(name), bytes, m, tr("Most bytes of this category live at once"));
    }
    if (!theory.valid)
        for (const auto& [name, bytes] : measuredCats)
            if (bytes > 0)
                addRow(categoryTitle(name), -1, bytes, tr("Most bytes of this category live at once"));

    if (measured && m_result.measuredMaxBatch >= 0) {
        const QString m =
            (m_result.maxBatchIsLowerBound ? tr("at least %1") : QStringLiteral("%1")).arg(m_result.measuredMaxBatch);
        m_maxBatch->setText(theory.maxBatch >= 0
                                ? tr("Max batch: measured %1, predicted %2").arg(m).arg(theory.maxBatch)
                                : tr("Max batch: measured %1").arg(m));
    } else {
        m_maxBatch->setText(theory.maxBatch >= 0 ? tr("Max batch: predicted %1").arg(theory.maxBatch) : QString());
    }
    plotCategories();
    plotTimeline();
    m_chartStack->setCurrentIndex(measured ? 1 : 0);
}

void ProbePage::plotCategories()
{
    QCustomPlot* plot = m_categoryPlot;
    plot->clearPlottables();
    const Theory theory = m_theory ? *m_theory : Theory{};
    QVector<double> ticks, theoryValues, measuredValues;
    QVector<QString> labels;
    const auto& names = theory.valid ? theory.peakByCategory : m_result.peakByCategory;
    for (size_t i = 0; i < names.size(); ++i) {
        int64_t m = 0;
        for (const auto& [n, b] : m_result.peakByCategory)
            if (n == names[i].first)
                m = b;
        const int64_t t = theory.valid ? names[i].second : 0;
        if (t == 0 && m == 0)
            continue;
        ticks << static_cast<double>(ticks.size() + 1);
        labels << categoryTitle(names[i].first);
        theoryValues << static_cast<double>(t);
        measuredValues << static_cast<double>(m);
    }
    auto textTicker = QSharedPointer<QCPAxisTickerText>::create();
    textTicker->addTicks(ticks, labels);
    plot->xAxis->setTicker(textTicker);
    plot->xAxis->setRange(0, ticks.size() + 1);
    auto* bt = new QCPBars(plot->xAxis, plot->yAxis);
    bt->setName(tr("Theory"));
    bt->setWidth(0.35);
    bt->setBrush(categoryColor(0));
    auto* bm = new QCPBars(plot->xAxis, plot->yAxis);
    bm->setName(tr("Measured"));
    bm->setWidth(0.35);
    bm->setBrush(categoryColor(1));
    QVector<double> left, right;
    for (double t : ticks) {
        left << t - 0.18;
        right << t + 0.18;
    }
    bt->setData(left, theoryValues);
    bm->setData(right, measuredValues);
    double top = 1;
    for (double v : theoryValues + measuredValues)
        top = std::max(top, v);
    plot->yAxis->setRange(0, top * 1.1);
    plot->replot(QCustomPlot::rpQueuedReplot);
}

void ProbePage::plotTimeline()
{
    QCustomPlot* plot = m_timelinePlot;
    plot->clearGraphs();
    const Theory theory = m_theory ? *m_theory : Theory{};
    double top = 1, right = 1;
    auto addSeries = [&](const std::vector<int64_t>& ys, const QString& name, const QColor& color) {
        if (ys.empty())
            return;
        QVector<double> x, y;
        for (size_t i = 0; i < ys.size(); ++i) {
            x << static_cast<double>(i);
            y << static_cast<double>(ys[i]);
            top = std::max(top, y.back());
        }
        right = std::max(right, static_cast<double>(ys.size()));
        QCPGraph* g = plot->addGraph();
        g->setName(name);
        g->setPen(QPen(color, 1.5));
        g->setLineStyle(QCPGraph::lsStepLeft);
        g->setData(x, y, true);
    };
    if (theory.valid)
        addSeries(theory.liveAfterEvent, tr("Theory (allocated)"), categoryColor(0));
    addSeries(m_result.usedAfterEvent, tr("Measured, exact"), categoryColor(1));
    addSeries(m_result.reservedAfterEvent, tr("Measured, caching"), categoryColor(2));
    plot->xAxis->setRange(0, right);
    plot->yAxis->setRange(0, top * 1.1);
    plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace gui
