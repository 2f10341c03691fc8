#include "probepage.h"

#include "chart.h"
#include "guiutil.h"

#include "headroom/hardware/allocator.h"
#include "headroom/memory/engine.h"
#include "headroom/error.h"
#include "headroom/probe/measurement.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableWidget>
#include <QThread>
#include <QVBoxLayout>

namespace gui {

// What the engine predicts for the same plan, computed on the worker with the plan.
struct ProbePage::Theory {
    bool valid = false;
    std::vector<std::pair<std::string, int64_t>> peakByCategory;
    std::vector<int64_t> liveAfterEvent;
    int64_t peak = 0, reservedPeak = 0, context = 0, workspace = 0, maxBatch = -1;
};

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
        table->setItem(row, 2, item(r["measured"].is_number()
                                        ? qs(headroom::formatBytes(r["measured"].get<int64_t>(), units))
                                        : QStringLiteral("–")));
        table->setItem(row, 3, item(r["error_pct"].is_number()
                                        ? QStringLiteral("%1 %").arg(r["error_pct"].get<double>(), 0, 'f', 1)
                                        : QStringLiteral("–")));
    }
}

} // namespace

ProbePage::ProbePage(QWidget* parent)
    : QWidget(parent)
    , m_device(new QComboBox(this))
    , m_detect(new QPushButton(tr("Detect devices"), this))
    , m_timeLimit(new QSpinBox(this))
    , m_run(new QPushButton(tr("Run probe"), this))
    , m_cancelButton(new QPushButton(tr("Cancel"), this))
    , m_progress(new QProgressBar(this))
    , m_message(new QLabel(this))
    , m_maxBatch(new QLabel(this))
    , m_table(new QTableWidget(this))
    , m_categoryPlot(new QCustomPlot(this))
    , m_timelinePlot(new QCustomPlot(this))
{
    m_device->addItem(tr("Device %1").arg(0), 0);
    m_device->setToolTip(tr("The CUDA device the probe replays the plan on"));
    m_detect->setToolTip(tr("Ask headroom-probe which CUDA devices this machine has"));
    m_timeLimit->setRange(1, 3600);
    m_timeLimit->setValue(120);
    m_timeLimit->setSuffix(tr(" s"));
    m_timeLimit->setToolTip(tr("The probe is stopped after this long"));
    m_run->setToolTip(tr("Replay this configuration's allocations on the GPU with real cudaMalloc calls"));
    m_progress->setRange(0, 1000);
    m_progress->setTextVisible(false);
    m_message->setObjectName(QStringLiteral("probeMessage"));
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_message->setText(tr("Run the probe to measure this configuration on a real GPU."));
    m_maxBatch->setObjectName(QStringLiteral("probeMaxBatch"));

    m_table->setColumnCount(NUM_COLUMNS);
    m_table->setHorizontalHeaderLabels({tr("Quantity"), tr("Theory"), tr("Measured"), tr("Difference")});
    m_table->horizontalHeaderItem(TheoryColumn)->setToolTip(tr("Headroom's estimate for this configuration"));
    m_table->horizontalHeaderItem(MeasuredColumn)
        ->setToolTip(tr("What the GPU reported (cudaMemGetInfo) while the probe replayed the plan"));
    m_table->horizontalHeaderItem(DifferenceColumn)->setToolTip(tr("Measured minus theory"));
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(NameColumn, QHeaderView::Stretch);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);

    for (QCustomPlot* plot : {m_categoryPlot, m_timelinePlot}) {
        plot->setMinimumHeight(160);
        placeLegendBelow(plot, 3);
        addSaveMenu(plot);
        plot->yAxis->setTicker(QSharedPointer<BytesTicker>::create(m_units));
    }
    m_timelinePlot->xAxis->setLabel(tr("Allocation event"));
    auto* charts = new QTabWidget(this);
    charts->addTab(m_categoryPlot, tr("Per category"));
    charts->addTab(m_timelinePlot, tr("Timeline"));

    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Device:"), this));
    controls->addWidget(m_device, 1);
    controls->addWidget(m_detect);
    controls->addWidget(new QLabel(tr("Time limit:"), this));
    controls->addWidget(m_timeLimit);
    controls->addWidget(m_run);
    controls->addWidget(m_cancelButton);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_table);
    // No empty axes before a run: say what the charts will show and how to get them.
    m_chartStack = new QStackedWidget(this);
    auto* empty = new QLabel(tr("Run the probe to measure the CUDA context, the peak per category and the "
                                "allocation timeline on this GPU; theory and measurement are then plotted side by side."),
                             this);
    empty->setObjectName(QStringLiteral("probeEmptyState"));
    empty->setWordWrap(true);
    empty->setAlignment(Qt::AlignCenter);
    m_chartStack->addWidget(empty);
    m_chartStack->addWidget(charts);
    split->addWidget(m_chartStack);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(m_progress);
    layout->addWidget(m_message);
    layout->addWidget(m_maxBatch);
    layout->addWidget(split, 1);

    // A real run's figures (gpu_truth.py JSON lines, or torch.cuda.memory._snapshot() saved as JSON) beside
    // the theory: what headroom-cli --compare prints.
    auto* loadButton = new QPushButton(tr("Load measurement…"), this);
    loadButton->setObjectName(QStringLiteral("probeLoadMeasurement"));
    loadButton->setToolTip(tr("Set a real run's figures beside the theory: gpu_truth.py JSON lines or a "
                                   "PyTorch memory snapshot saved as JSON"));
    controls->addWidget(loadButton);
    auto* measured = new QTableWidget(0, 4, this);
    measured->setObjectName(QStringLiteral("probeMeasurementTable"));
    measured->setHorizontalHeaderLabels({tr("Quantity"), tr("Theory"), tr("Measured"), tr("Error")});
    measured->verticalHeader()->hide();
    measured->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    measured->setEditTriggers(QAbstractItemView::NoEditTriggers);
    measured->hide();
    split->insertWidget(1, measured);
    connect(loadButton, &QPushButton::clicked, this, [this] {
        if (!m_model) {
            m_message->setText(tr("Open a model first."));
            return;
        }
        const QString path = QFileDialog::getOpenFileName(this, tr("Load measurement"), QString(),
                                                          tr("Measurements (*.jsonl *.json);;All files (*)"));
        if (!path.isEmpty())
            loadMeasurement(path);
    });

    connect(m_run, &QPushButton::clicked, this, &ProbePage::run);
    connect(m_cancelButton, &QPushButton::clicked, this, &ProbePage::cancel);
    connect(m_detect, &QPushButton::clicked, this, &ProbePage::detectDevices);
    setRunning(false);
}

ProbePage::~ProbePage()
{
    // The runner polls the flag every 50 ms and kills the probe; waiting is therefore short.
    if (m_thread) {
        m_cancel->store(true);
        m_thread->wait();
    }
}

void ProbePage::setProbePath(const QString& path)
{
    m_probePath = path;
}

void ProbePage::setTimeLimit(int seconds)
{
    m_timeLimit->setValue(seconds);
}

void ProbePage::setUnits(headroom::Units units)
{
    m_units = units;
    for (QCustomPlot* plot : {m_categoryPlot, m_timelinePlot})
        plot->yAxis->setTicker(QSharedPointer<BytesTicker>::create(m_units));
    showResult();
}

QString ProbePage::message() const
{
    return m_message->text();
}

void ProbePage::setContext(std::shared_ptr<const headroom::Model> model, const headroom::Config& config)
{
    m_model = std::move(model);
    m_config = config;
}

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
        ? m_config.symbols[static_cast<size_t>(m_model->batchSymbol)] : 1;
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

void ProbePage::run()
{
    start(false);
}

void ProbePage::detectDevices()
{
    start(true);
}

void ProbePage::cancel()
{
    if (m_cancel)
        m_cancel->store(true);
}

void ProbePage::start(bool listOnly)
{
    if (m_thread)
        return;
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    const auto cancelFlag = m_cancel;
    const auto model = m_model;
    headroom::Config config = m_config;
    const std::string probe = m_probePath.toStdString();
    const int limit = m_timeLimit->value();
    const int device = m_device->currentData().toInt();
    setRunning(true);
    m_progress->setValue(0);
    m_message->setText(listOnly ? tr("Looking for CUDA devices…") : tr("Preparing the plan…"));

    m_thread = QThread::create([this, cancelFlag, model, config, probe, limit, device, listOnly] {
        auto theory = std::make_shared<Theory>();
        headroom::ProbeResult result;
        try {
            if (listOnly) {
                result = headroom::listProbeDevices(probe, limit);
            } else {
                headroom::ProbePlan plan;
                if (model) {
                    theory->maxBatch = headroom::maxBatch(*model, config);
                    const int64_t batch = model->batchSymbol >= 0
                            && static_cast<size_t>(model->batchSymbol) < config.symbols.size()
                        ? config.symbols[static_cast<size_t>(model->batchSymbol)]
                        : 1;
                    plan = headroom::makeProbePlan(*model, config, headroom::bisectionBatches(theory->maxBatch, batch));
                    theory->valid = true;
                    theory->peakByCategory = headroom::peakByCategory(plan.events);
                    theory->liveAfterEvent = headroom::liveAfterEvent(plan.events);
                    for (int64_t v : theory->liveAfterEvent)
                        theory->peak = std::max(theory->peak, v);
                    theory->reservedPeak = headroom::replay(plan.events, headroom::AllocatorMode::Caching).reservedPeak;
                    theory->context = config.gpu.context;
                    theory->workspace = config.gpu.workspace;
                }
                plan.device = device;
                plan.timeLimitSeconds = limit;
                headroom::ProbeRunOptions options;
                options.cancel = cancelFlag.get();
                options.progress = [this](double f, const std::string& stage) {
                    QMetaObject::invokeMethod(this, [this, f, s = qs(stage)] { onProgress(f, s); }, Qt::QueuedConnection);
                };
                if (cancelFlag->load())
                    result.status = headroom::ProbeResult::Status::Cancelled;
                else
                    result = headroom::runProbe(plan, probe, limit, options);
            }
        } catch (const std::exception& e) {
            result = {};
            result.status = headroom::ProbeResult::Status::Failed;
            result.message = e.what();
        }
        QMetaObject::invokeMethod(
            this, [this, result, theory, listOnly] { onDone(result, theory, listOnly); }, Qt::QueuedConnection);
    });
    connect(m_thread, &QThread::finished, m_thread, &QObject::deleteLater);
    m_thread->start();
}

void ProbePage::onProgress(double fraction, const QString& stage)
{
    if (!m_thread)
        return;
    m_progress->setValue(static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 1000));
    m_message->setText(tr("Probe: %1").arg(stage));
}

void ProbePage::onDone(const headroom::ProbeResult& result, const std::shared_ptr<Theory>& theory, bool listOnly)
{
    if (m_thread) {
        m_thread->wait();
        m_thread = nullptr;
    }
    setRunning(false);
    m_progress->setValue(1000);
    if (listOnly) {
        if (result.status == headroom::ProbeResult::Status::Ok && !result.devices.empty()) {
            const int current = m_device->currentData().toInt();
            m_device->clear();
            for (size_t i = 0; i < result.devices.size(); ++i)
                m_device->addItem(tr("%1: %2").arg(i).arg(qs(result.devices[i])), static_cast<int>(i));
            m_device->setCurrentIndex(std::clamp(current, 0, m_device->count() - 1));
            m_message->setText(tr("%n CUDA device(s) found.", nullptr, static_cast<int>(result.devices.size())));
        } else {
            m_message->setText(statusLine(result));
        }
        emit finished();
        return;
    }
    m_result = result;
    m_theory = theory;
    m_message->setText(statusLine(result));
    showResult();
    emit finished();
}

QString ProbePage::statusLine(const headroom::ProbeResult& r) const
{
    using S = headroom::ProbeResult::Status;
    const QString detail = qs(r.message);
    switch (r.status) {
    case S::Ok:
        return r.oom ? tr("Does not fit on %1: out of memory during the replay (%2).").arg(qs(r.deviceName), detail)
                     : tr("Measured on %1 in %2 s (%3).").arg(qs(r.deviceName)).arg(r.seconds, 0, 'f', 1).arg(detail);
    case S::NoDevice: return tr("No CUDA device: %1").arg(detail);
    case S::BuiltWithoutCuda: return tr("Probe unavailable: %1").arg(detail);
    case S::Crashed: return tr("The probe crashed; the application is unaffected: %1").arg(detail);
    case S::TimedOut: return tr("The probe was stopped at the time limit: %1").arg(detail);
    case S::Cancelled: return tr("Probe cancelled.");
    case S::Failed: break;
    }
    return tr("The probe failed: %1").arg(detail);
}

void ProbePage::setRunning(bool running)
{
    m_run->setEnabled(!running);
    m_detect->setEnabled(!running);
    m_device->setEnabled(!running);
    m_timeLimit->setEnabled(!running);
    m_cancelButton->setEnabled(running);
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
                diffTip = tr("%1 % of theory").arg(100.0 * static_cast<double>(d) / static_cast<double>(theoryBytes), 0, 'f', 1);
        }
        m_table->setItem(row, DifferenceColumn, item(diff, diffTip));
    };
    const int64_t workspace = m_result.cublasWorkspace < 0 && m_result.cudnnWorkspace < 0
        ? -1
        : std::max<int64_t>(0, m_result.cublasWorkspace) + std::max<int64_t>(0, m_result.cudnnWorkspace);
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
        const QString m = (m_result.maxBatchIsLowerBound ? tr("at least %1") : QStringLiteral("%1"))
                              .arg(m_result.measuredMaxBatch);
        m_maxBatch->setText(theory.maxBatch >= 0 ? tr("Max batch: measured %1, predicted %2").arg(m).arg(theory.maxBatch)
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
