// The Probe tab's controls and its run: headroom-probe on a worker thread, theory computed beside it.
// The results (table, charts, a loaded measurement) are shown by probepageresults.cpp.
#include "probepage.h"

#include "chart.h"
#include "guiutil.h"

#include "headroom/memory/allocator.h"
#include "headroom/memory/engine.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QFileDialog>
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

ProbePage::ProbePage(QWidget* parent)
    : QWidget(parent), m_device(new QComboBox(this)), m_detect(new QPushButton(tr("Detect devices"), this)),
      m_timeLimit(new QSpinBox(this)), m_run(new QPushButton(tr("Run probe"), this)),
      m_cancelButton(new QPushButton(tr("Cancel"), this)), m_progress(new QProgressBar(this)),
      m_message(new QLabel(this)), m_maxBatch(new QLabel(this)), m_table(new QTableWidget(this)),
      m_categoryPlot(new QCustomPlot(this)), m_timelinePlot(new QCustomPlot(this))
{
    describeControls();
    setupTable();
    layoutPage();
    connect(m_run, &QPushButton::clicked, this, &ProbePage::run);
    connect(m_cancelButton, &QPushButton::clicked, this, &ProbePage::cancel);
    connect(m_detect, &QPushButton::clicked, this, &ProbePage::detectDevices);
    setRunning(false);
}

void ProbePage::describeControls()
{
    // Nothing is known about the machine's devices until Detect asks: no "Device 0" that may not exist.
    m_device->addItem(tr("Default (not detected yet)"), 0);
    m_device->setObjectName(QStringLiteral("probeDevice"));
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
}

void ProbePage::setupTable()
{
    m_table->setColumnCount(NUM_COLUMNS);
    m_table->setHorizontalHeaderLabels({tr("Quantity"), tr("Theory"), tr("Measured"), tr("Difference")});
    m_table->horizontalHeaderItem(TheoryColumn)->setToolTip(tr("Headroom's estimate for this configuration"));
    m_table->horizontalHeaderItem(MeasuredColumn)
        ->setToolTip(tr("What the GPU reported (cudaMemGetInfo) while the probe replayed the plan"));
    m_table->horizontalHeaderItem(DifferenceColumn)->setToolTip(tr("Measured minus theory"));
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(NameColumn, QHeaderView::Stretch);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
}

// Controls above the table, the charts below it (an empty-state line until a run has measured).
void ProbePage::layoutPage()
{
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

    // Two rows, the device and then the run: on one row they set the window's minimum width (~820 px, the
    // 1280x720-at-200 % screen overflowed), though the page is a tab most users never open.
    auto* deviceRow = new QHBoxLayout;
    deviceRow->addWidget(new QLabel(tr("Device:"), this));
    m_device->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_device->setMinimumContentsLength(12);
    deviceRow->addWidget(m_device, 1);
    deviceRow->addWidget(m_detect);
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Time limit:"), this));
    controls->addWidget(m_timeLimit);
    controls->addWidget(m_run);
    controls->addWidget(m_cancelButton);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_table);
    // No empty axes before a run: say what the charts will show and how to get them.
    m_chartStack = new QStackedWidget(this);
    auto* empty = new QLabel(
        tr("Run the probe to measure the CUDA context, the peak per category and the "
           "allocation timeline on this GPU; theory and measurement are then plotted side by side."),
        this);
    empty->setObjectName(QStringLiteral("probeEmptyState"));
    empty->setWordWrap(true);
    empty->setAlignment(Qt::AlignCenter);
    m_chartStack->addWidget(empty);
    m_chartStack->addWidget(charts);
    split->addWidget(m_chartStack);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(deviceRow);
    layout->addLayout(controls);
    layout->addWidget(m_progress);
    layout->addWidget(m_message);
    layout->addWidget(m_maxBatch);
    layout->addWidget(split, 1);
    addMeasurementTable(controls, split);
}

void ProbePage::addMeasurementTable(QHBoxLayout* controls, QSplitter* split)
{
    // A real run's figures (gpu_truth.py JSON lines, or torch.cuda.memory._snapshot() saved as JSON) beside
    // the theory: what headroom-cli --compare prints.
    auto* loadButton = new QPushButton(tr("Load measurement…"), this);
    loadButton->setObjectName(QStringLiteral("probeLoadMeasurement"));
    loadButton->setToolTip(tr("Set a real run's figures beside the theory: gpu_truth.py JSON lines or a "
                              "PyTorch memory snapshot saved as JSON"));
    controls->addWidget(loadButton);
    controls->addStretch(1);
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
}

ProbePage::~ProbePage()
{
    // The runner polls the flag every 50 ms and kills the probe; waiting is therefore short.
    if (m_thread) {
        m_cancel->store(true);
        m_thread->wait();
    }
}

void ProbePage::setProbePath(const QString& path) { m_probePath = path; }

void ProbePage::setTimeLimit(int seconds) { m_timeLimit->setValue(seconds); }

void ProbePage::setUnits(headroom::Units units)
{
    m_units = units;
    for (QCustomPlot* plot : {m_categoryPlot, m_timelinePlot})
        plot->yAxis->setTicker(QSharedPointer<BytesTicker>::create(m_units));
    showResult();
}

QString ProbePage::message() const { return m_message->text(); }

void ProbePage::setContext(std::shared_ptr<const headroom::Model> model, const headroom::Config& config)
{
    m_model = std::move(model);
    m_config = config;
}

void ProbePage::run() { start(false); }

void ProbePage::detectDevices() { start(true); }

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
                    const int64_t batch = model->batchSymbol >= 0 &&
                                                  static_cast<size_t>(model->batchSymbol) < config.symbols.size()
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
                    QMetaObject::invokeMethod(
                        this, [this, f, s = qs(stage)] { onProgress(f, s); }, Qt::QueuedConnection);
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
    // Full only for a run that finished; a failure or a cancel leaves it empty, not looking done.
    const bool ok = result.status == headroom::ProbeResult::Status::Ok;
    m_progress->setValue(ok && !listOnly ? 1000 : 0);
    // The driver's own words stay one hover away; the line says what it means.
    m_message->setToolTip(result.message.empty() ? QString() : qs(result.message));
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
    case S::NoDevice:
        return tr("No CUDA device on this machine: the probe needs an NVIDIA GPU and its driver. The prediction "
                  "does not need one.");
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

} // namespace gui
