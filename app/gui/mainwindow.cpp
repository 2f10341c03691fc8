// MainWindow: the tabs, the docks and the status bar, and how the loader, the session and the pages are wired.
// Its menus and Help windows are in mainwindowmenus.cpp, File > Export in mainwindowexport.cpp.
#include "mainwindow.h"

#include "batchsweepchart.h"
#include "breakdownchart.h"
#include "checkpointchart.h"
#include "configundo.h"
#include "controlspanel.h"
#include "finetunepanel.h"
#include "headroom/memory/finetune_summary.h"
#include "layerfiltermodel.h"
#include "layerspage.h"
#include "layertreemodel.h"
#include "modelinfopanel.h"
#include "modelloader.h"
#include "overviewpage.h"
#include "probepage.h"
#include "samples.h"
#include "scalingpage.h"
#include "servingpage.h"
#include "session.h"
#include "timelinechart.h"
#include "timelinepage.h"
#include "toplayerschart.h"
#include "verdict.h"
#include "wheelguard.h"

#include "headroom/base/model_name.h"
#include "headroom/import/hfconfig.h"
#include "headroom/report/report.h"
#include "taskbar.h"

#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileInfo>
#include <QLabel>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTimer>
#include <QToolButton>
#include <QUndoStack>
#include <QVBoxLayout>

namespace gui {

namespace {
QString localOnnxFile(const QMimeData* mime)
{
    if (!mime || !mime->hasUrls())
        return {};
    for (const QUrl& url : mime->urls())
        if (url.isLocalFile() && (url.toLocalFile().endsWith(QLatin1String(".onnx"), Qt::CaseInsensitive) ||
                                  url.toLocalFile().endsWith(QLatin1String(".json"), Qt::CaseInsensitive)))
            return url.toLocalFile();
    return {};
}
// The Configuration panel scrolls vertically only, so it may never be narrower than its content's
// minimum, which grows once polished and with each model's size sliders.
void fitControlsWidth(QScrollArea* scroll)
{
    QWidget* content = scroll->widget();
    content->ensurePolished();
    scroll->setMinimumWidth(content->minimumSizeHint().width() +
                            scroll->style()->pixelMetric(QStyle::PM_ScrollBarExtent) + 2 * scroll->frameWidth());
}

// Re-fits whenever the panel's layout changes (a model's sliders, another engineer's controls).
class FitOnLayoutChange : public QObject
{
public:
    explicit FitOnLayoutChange(QScrollArea* scroll) : QObject(scroll), m_scroll(scroll)
    {
        for (QWidget* w : scroll->widget()->findChildren<QWidget*>(Qt::FindDirectChildrenOnly))
            w->installEventFilter(this);
        scroll->widget()->installEventFilter(this);
    }
    bool eventFilter(QObject*, QEvent* event) override
    {
        if (event->type() == QEvent::LayoutRequest && !m_pending) {
            m_pending = true;
            QTimer::singleShot(0, this, [this] {
                m_pending = false;
                fitControlsWidth(m_scroll);
            });
        }
        return false;
    }

private:
    QScrollArea* m_scroll;
    bool m_pending = false;
};
} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_loader(new ModelLoader(this)), m_session(new AnalysisSession(this)),
      m_controls(new ControlsPanel(this)), m_info(new ModelInfoPanel(this)), m_verdict(new VerdictBanner(this)),
      m_taskBar(new TaskBar(this)), m_tabs(new QTabWidget(this)), m_layers(new LayersPage(this)),
      m_overview(new OverviewPage(this)), m_timeline(new TimelinePage(this)), m_scaling(new ScalingPage(this))
{
    setWindowTitle(tr("Headroom"));
    setAcceptDrops(true);
    createTabs();
    QDockWidget* controlsDock = createDocks();

    m_undo = new QUndoStack(this);
    createMenus();
    createStatusBar();
    m_controls->restoreSettings();
    m_configUndo = new ConfigUndo(m_controls, m_undo);
    refreshUnits();

    connectLoader();
    connectPages();
    restoreWindow(controlsDock);
}

// The pages, one per tab, under the verdict banner.
void MainWindow::createTabs()
{
    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(4, 4, 4, 0);
    layout->addWidget(m_taskBar);
    layout->addWidget(m_verdict);
    layout->addWidget(m_tabs, 1);
    setCentralWidget(central);
    // Tabs elide and scroll rather than widen the window (small screens, 200 % scaling, Chinese labels).
    m_tabs->setElideMode(Qt::ElideRight);
    m_tabs->setUsesScrollButtons(true);
    m_tabs->setDocumentMode(true);
    m_tabs->addTab(m_layers, tr("Layers"));
    m_tabs->addTab(m_overview, tr("Breakdown"));
    m_tabs->addTab(m_timeline, tr("Timeline"));
    m_tabs->addTab(m_scaling, tr("Batch && checkpoints"));
    m_probe = new ProbePage(this);
    m_tabs->addTab(m_probe, tr("GPU probe"));
    m_serving = new ServingPage(this);
    m_tabs->addTab(m_serving, tr("Serving"));
}

// Configuration above Model on the left; both scroll vertically only.
QDockWidget* MainWindow::createDocks()
{
    auto* controlsDock = new QDockWidget(tr("Configuration"), this);
    controlsDock->setObjectName(QStringLiteral("configurationDock"));
    // Combos may shrink and elide (the list still shows whole names): long presets and policy names
    // must not set the window's minimum width.
    for (QComboBox* combo : m_controls->findChildren<QComboBox*>()) {
        combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        combo->setMinimumContentsLength(10);
    }
    auto* scroll = new QScrollArea(controlsDock);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* left = new QWidget(scroll);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(m_controls);
    // The Generate and Serve tasks of a config: the Serving tab's engine knobs, here where the task's knobs are.
    leftLayout->addWidget(m_serving->form());
    leftLayout->addStretch(1);
    scroll->setWidget(left);
    // The panel scrolls vertically only: as wide as the controls plus a vertical scroll bar, so one
    // appearing (small screens, many symbols) never hides the right edge behind a horizontal one.
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    // Its minimum is the controls' minimum (combos elide), not their preferred width: at 200 % on a small
    // screen the window must still fit; the dock opens at the preferred width where there is room.
    scroll->setMinimumWidth(left->minimumSizeHint().width() + scroll->style()->pixelMetric(QStyle::PM_ScrollBarExtent) +
                            2 * scroll->frameWidth());
    scroll->setMinimumHeight(80);
    m_controlsScroll = scroll;
    new WheelGuard(scroll);
    controlsDock->setWidget(scroll);
    controlsDock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, controlsDock);
    auto* infoDock = new QDockWidget(tr("Model"), this);
    infoDock->setObjectName(QStringLiteral("modelDock"));
    auto* infoScroll = new QScrollArea(infoDock);
    infoScroll->setWidgetResizable(true);
    infoScroll->setFrameShape(QFrame::NoFrame);
    infoScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    infoScroll->setWidget(m_info);
    infoScroll->setMinimumHeight(60);
    infoDock->setWidget(infoScroll);
    infoDock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, infoDock);
    splitDockWidget(infoDock, controlsDock, Qt::Vertical);
    return controlsDock;
}

// ModelLoader runs on its own thread: progress in the status bar, the model or one line saying why not.
void MainWindow::connectLoader()
{
    connect(m_loader, &ModelLoader::started, this, [this](int, const QString& path) {
        m_progressLabel->setText(tr("Loading %1…").arg(QFileInfo(path).fileName()));
        m_progress->setValue(0);
        for (QWidget* w : {static_cast<QWidget*>(m_progress), static_cast<QWidget*>(m_progressLabel),
                           static_cast<QWidget*>(m_cancel)})
            w->show();
    });
    connect(m_loader, &ModelLoader::progressChanged, this, [this](int, double fraction, const QString& stage) {
        m_progress->setValue(static_cast<int>(fraction * 100));
        if (!stage.isEmpty())
            m_progress->setFormat(stage + QStringLiteral(" %p%"));
    });
    auto hideProgress = [this] {
        for (QWidget* w : {static_cast<QWidget*>(m_progress), static_cast<QWidget*>(m_progressLabel),
                           static_cast<QWidget*>(m_cancel)})
            w->hide();
    };
    connect(m_loader, &ModelLoader::modelAvailable, this,
            [this, hideProgress](int, ModelPtr model, const QString& path) {
                hideProgress();
                onModelAvailable(std::move(model), path);
            });
    connect(m_loader, &ModelLoader::failed, this, [this, hideProgress](int, const QString& message) {
        hideProgress();
        const QString file = m_requestedFile;
        const bool loraRefused = m_requestedLora.active() && (message.contains(QLatin1String(": LoRA: ")) ||
                                                              message.contains(QLatin1String(": IA3: ")));
        if (loraRefused && file == m_currentFile)
            m_failedLora = m_requestedLora; // targets that match nothing: said once, not on every change
        m_requestedLora = m_modelLora;
        m_requestedFile = m_currentFile;
        if (loraRefused && file == m_currentFile) {
            // The model is open and stays so: PEFT refusing the adapters is the verdict on the asked configuration
            // (the banner, in the task's place), not "Cannot open the model". Its error handler hears it too.
            const QString why = message.section(QStringLiteral(": "), 1);
            m_verdict->setRefused(why.isEmpty() ? message : why);
            statusBar()->showMessage(message, 8000);
            if (m_errorHandler)
                m_errorHandler(message);
            emit loadFailed(message);
            return;
        }
        if (loraRefused && file != m_currentFile) {
            // A new file the saved adapters do not fit (settings of another model at start-up): it opens for
            // full fine-tuning, and a model that loads never shows "Cannot open".
            m_controls->fineTunePanel()->setMethod(FineTunePanel::Method::Full);
            openFile(file);
            return;
        }
        onLoadFailed(message);
    });
    connect(m_loader, &ModelLoader::cancelled, this, [this, hideProgress](int) {
        // The model shown stays; so do the adapters it was loaded with (a newer load sets its own after).
        m_requestedLora = m_modelLora;
        m_requestedFile = m_currentFile;
        hideProgress();
        statusBar()->showMessage(tr("Loading cancelled"), 4000);
    });
    connect(m_cancel, &QToolButton::clicked, m_loader, &ModelLoader::cancel);
}

// A configuration change reaches the session (or reloads with new adapters); results reach the pages.
void MainWindow::connectPages()
{
    connect(m_controls, &ControlsPanel::configChanged, this, [this] {
        const headroom::Config config = m_controls->config();
        if (m_session->model()) {
            if (config.finetune.lora != m_requestedLora && config.finetune.lora != m_failedLora)
                reloadWithLora(config.finetune.lora);
            else if (m_requestedLora == m_modelLora && config.finetune.lora == m_modelLora)
                m_session->setConfig(config);
            // else: a reload is under way; the model it brings gets the configuration of that moment
        }
        announceConfigChange();
    });
    connect(m_controls, &ControlsPanel::unitsChanged, this, &MainWindow::refreshUnits);
    connect(m_layers->model(), &LayerTreeModel::freezeChanged, this, [this](const std::vector<std::string>& patterns) {
        m_controls->setFreeze(patterns);
        m_session->setConfig(m_controls->config());
    });
    connect(m_session, &AnalysisSession::reportChanged, this, &MainWindow::onReportChanged);
    connect(m_session, &AnalysisSession::detailsChanged, this, &MainWindow::onDetailsChanged);
    connect(m_timeline->chart(), &TimelineChart::stepClicked, this, &MainWindow::onTimelineStep);
    // Only the "Batch & checkpoints" tab draws the batch sweep: computed while it is shown (exports compute
    // their own when it is missing).
    auto wantSweep = [this] {
        const bool shown = m_tabs->currentWidget() == m_scaling;
        m_session->setSweepWanted(shown);
        if (shown && m_session->model() && !m_session->hasSweep()) // seconds on a 100k-node graph
            statusBar()->showMessage(tr("Computing the batch sweep…"));
    };
    connect(m_tabs, &QTabWidget::currentChanged, this, wantSweep);
    wantSweep();
    connect(m_tabs, &QTabWidget::currentChanged, this, &MainWindow::refreshShownPage);
    connect(m_taskBar, &TaskBar::taskChanged, this, &MainWindow::setTask);
    connect(m_serving->state(), &ServingState::changed, this, &MainWindow::onServingChanged);
    applyTask();
}

headroom::Task MainWindow::task() const { return m_controls->task(); }

bool MainWindow::servingTask() const
{
    const headroom::TaskEngine e = headroom::routeTask(task(), m_serving->state()->hasModel()).engine;
    return e == headroom::TaskEngine::Vllm || e == headroom::TaskEngine::HfGenerate;
}

void MainWindow::setTask(headroom::Task task)
{
    m_controls->setTask(task); // its configChanged recomputes the session (or reloads without adapters)
    applyTask();
    announceConfigChange();
}

// One task on screen: its switch checked, its knobs in the panel, its tabs, its verdict in the banner.
void MainWindow::applyTask()
{
    const headroom::Task task = this->task();
    const bool hfConfig = m_serving->state()->hasModel();
    m_taskBar->setModelKind(hfConfig);
    m_taskBar->setTask(task);
    const bool served = servingTask();
    if (served)
        m_serving->setTaskEngine(headroom::routeTask(task, hfConfig).engine == headroom::TaskEngine::Vllm
                                     ? ServingEngine::Vllm
                                     : ServingEngine::HfGenerate);
    m_serving->form()->setVisible(served);
    // The training step's views (breakdown, timeline, sweep, probe) answer the training and forward-pass tasks;
    // the served tasks keep the Layers tree (parameters per layer) beside their plan.
    for (QWidget* page : std::initializer_list<QWidget*>{m_overview, m_timeline, m_scaling, m_probe})
        m_tabs->setTabVisible(m_tabs->indexOf(page), !served);
    const int servingTab = m_tabs->indexOf(m_serving);
    m_tabs->setTabVisible(servingTab, served);
    m_tabs->setTabText(servingTab, task == headroom::Task::Generate ? tr("Generation") : tr("Serving"));
    if (served)
        m_tabs->setCurrentWidget(m_serving);
    else if (m_tabs->currentWidget() == m_serving)
        m_tabs->setCurrentWidget(m_layers);
    if (served)
        onServingChanged();
    else
        onReportChanged();
}

void MainWindow::onServingChanged()
{
    if (servingTask())
        m_verdict->setServing(*m_serving->state(), m_controls->units());
}

// The saved geometry and dock layout, or a first-start size that fits the screen.
void MainWindow::restoreWindow(QDockWidget* controlsDock)
{
    QSettings settings;
    fitControlsWidth(m_controlsScroll); // the shown task's panel (createDocks measured every task's knobs)
    if (!restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray())) {
        const QScreen* screen = this->screen() ? this->screen() : QGuiApplication::primaryScreen();
        if (screen)
            setGeometry(firstStartGeometry(screen->availableGeometry(), minimumSizeHint()));
    }
    if (!restoreState(settings.value(QStringLiteral("window/state")).toByteArray())) {
        // First start: the Configuration dock at its preferred width (its minimum is smaller).
        resizeDocks({controlsDock},
                    {m_controlsScroll->widget()->sizeHint().width() +
                     m_controlsScroll->style()->pixelMetric(QStyle::PM_ScrollBarExtent)},
                    Qt::Horizontal);
    }
    fitControlsWidth(m_controlsScroll);
    new FitOnLayoutChange(m_controlsScroll);
}

QRect MainWindow::firstStartGeometry(const QRect& available, const QSize& minimum)
{
    QSize size(available.width() * 4 / 5, available.height() * 4 / 5);
    size = size.expandedTo(minimum).boundedTo(available.size());
    QRect r(QPoint(0, 0), size);
    r.moveCenter(available.center());
    return r;
}

MainWindow::~MainWindow() = default;

void MainWindow::announceConfigChange(bool announce)
{
    // An accidental change must be visible: the banner names the precision and optimizer, the status bar
    // says what changed and how to take it back.
    const headroom::Config c = m_controls->config();
    const QStringList parts = {
        tr("GPU %1").arg(c.gpu.capacity > 0 ? gpuDisplayName(c.gpu.name) : tr("none")), dtypeName(c.dtype),
        c.mode == headroom::Mode::Train ? optimizerName(c.optimizer) : TaskBar::taskName(task())};
    // Only the parts that changed: listing the unchanged ones read as if they had changed too.
    const QStringList before = m_lastConfigText.split(QChar(0x1f));
    QStringList changed;
    for (qsizetype i = 0; i < parts.size(); ++i)
        if (before.size() == parts.size() && before[i] != parts[i])
            changed << parts[i];
    if (announce && !changed.isEmpty())
        statusBar()->showMessage(tr("Configuration: %1 (Ctrl+Z undoes)").arg(changed.join(QStringLiteral(", "))), 8000);
    m_lastConfigText = parts.join(QChar(0x1f));
}

void MainWindow::createStatusBar()
{
    m_progressLabel = new QLabel(this);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 100);
    m_progress->setMaximumWidth(240);
    m_cancel = new QToolButton(this);
    m_cancel->setText(tr("Cancel"));
    statusBar()->addPermanentWidget(m_progressLabel);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);
    m_progressLabel->hide();
    m_progress->hide();
    m_cancel->hide();
}

void MainWindow::openFile(const QString& path)
{
    std::vector<std::pair<std::string, int64_t>> values;
    // Settings belong to the model they were set on: another file opens without this one's adapters (the
    // panel gives it the defaults when it arrives); the same file keeps them.
    const headroom::LoraSpec lora = m_currentFile.isEmpty() || path == m_currentFile
                                        ? m_controls->config().finetune.lora
                                        : headroom::LoraSpec{};
    m_loader->load(path, std::move(values), lora); // cancels a load in flight first (its handler resets these)
    m_requestedFile = path;
    m_requestedLora = lora;
    m_failedLora.reset();
}

void MainWindow::reloadWithLora(const headroom::LoraSpec& lora)
{
    // Adapters are part of the graph (LoadOptions::lora): the same file again, on the background
    // loader. The sliders keep their values: setModel() reads them back from the settings.
    m_controls->saveSettings();
    const QString file = m_requestedFile;
    m_loader->load(file, {}, lora);
    m_requestedFile = file;
    m_requestedLora = lora;
    m_failedLora.reset();
}

void MainWindow::openSample()
{
    const QString sample = findSampleModel();
    if (sample.isEmpty())
        onLoadFailed(tr("The bundled sample model (resnet18.onnx) was not found; open a model with File > Open."));
    else
        openFile(sample);
}

void MainWindow::onModelAvailable(ModelPtr model, const QString& path)
{
    const bool newFile = path != m_currentFile;
    saveServingChoices(); // the model shown until now keeps its serving settings
    m_currentFile = path;
    m_modelLora = m_requestedLora;
    m_controls->setModel(*model); // this model's task and settings as last left, or the defaults
    // A filter typed for the last model would show this one as an empty table: cleared, and said.
    if (newFile && !m_layers->filterEdit()->text().isEmpty()) {
        m_layers->filterEdit()->clear();
        statusBar()->showMessage(tr("Layer filter cleared for the new model"), 6000);
    }
    m_controls->setFreeze({});
    m_layers->model()->setModel(model);
    m_info->setModel(*model, {});
    m_session->setModel(model, m_controls->config());
    // This model's saved task may have adapters it was not loaded with (another file opens without the shown
    // one's): loaded again with them, as a change in the panel would.
    if (const headroom::LoraSpec lora = m_controls->config().finetune.lora;
        lora != m_modelLora && lora != m_failedLora && !m_loader->isBusy())
        reloadWithLora(lora);
    m_configUndo->reset();
    announceConfigChange(false); // the baseline the next change is told against
    fitControlsWidth(m_controlsScroll);
    setWindowTitle(tr("%1 — Headroom").arg(qs(headroom::modelDisplayName(path.toStdString()))));
    addRecentFile(path);
    if (!newFile || m_layers->filterEdit()->text().isEmpty())
        statusBar()->showMessage(tr("Loaded %1").arg(QDir::toNativeSeparators(path)), 4000);
    // The Serving tab plans a Hugging Face config.json; an ONNX file has nothing for it
    if (!headroom::isHfConfigPath(path.toStdString()) || !m_serving->openConfig(path, nullptr)) {
        m_serving->state()->clearModel();
    } else if (const QString group = m_controls->settingsGroup(); !group.isEmpty()) {
        QSettings s; // this model's serving settings as last left, or the engines' defaults
        s.beginGroup(group + QStringLiteral("/serving"));
        m_serving->state()->restoreChoices(s);
    }
    applyTask();
    emit modelLoaded(path);
}

void MainWindow::onLoadFailed(const QString& message)
{
    statusBar()->showMessage(message, 8000);
    if (m_errorHandler) {
        m_errorHandler(message);
    } else {
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot open the model"), message, QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open(); // window-modal, non-blocking: the previous model stays usable behind it
    }
    emit loadFailed(message);
}

void MainWindow::onReportChanged()
{
    const ModelPtr model = m_session->model();
    if (!model)
        return;
    const headroom::Report& report = m_session->report();
    if (!servingTask()) // a served task's banner is the serving plan's
        m_verdict->setReport(*model, report, m_controls->units());
    // The answer first: the banner is on screen before the shown tab's views update (the layer tree takes
    // ~25 ms on a 100k-node graph; its repaint would otherwise wait for that too).
    if (m_verdict->isVisible())
        m_verdict->repaint();
    m_staleViews = LayersView | OverviewView | TimelineView;
    refreshShownPage();
    m_probe->setContext(model, report.config);
}

void MainWindow::refreshShownPage()
{
    const ModelPtr model = m_session->model();
    if (!model)
        return;
    const headroom::Report& report = m_session->report();
    QWidget* shown = m_tabs->currentWidget();
    if (shown == m_layers && (m_staleViews & LayersView)) {
        m_staleViews &= ~LayersView;
        m_layers->model()->setReport(report);
        if (m_session->isComplete()) // a drag's ticks keep the order; complete figures are sorted again
            m_layers->proxy()->resortIfSorted();
    } else if (shown == m_overview && (m_staleViews & OverviewView)) {
        m_staleViews &= ~OverviewView;
        m_overview->breakdown()->setReport(*model, report);
        m_overview->topLayers()->setReport(*model, report);
    } else if (shown == m_timeline && (m_staleViews & TimelineView)) {
        m_staleViews &= ~TimelineView;
        m_timeline->chart()->setReport(*model, report);
    }
}

void MainWindow::onDetailsChanged()
{
    const ModelPtr model = m_session->model();
    if (!model)
        return;
    const headroom::Report& report = m_session->report();
    m_scaling->sweep()->setReport(*model, report);
    m_scaling->checkpoints()->setReport(*model, report);
    if (!servingTask())
        m_verdict->setReport(*model, report, m_controls->units());
    m_controls->setBestCheckpoint(report.checkpointCurve.empty() ? 0 : report.bestCheckpoint);
    m_controls->setSymbolMaxima(report.symbolMax);
    if (!(m_staleViews & LayersView)) // a hidden tree is sorted when it is shown (refreshShownPage)
        m_layers->proxy()->resortIfSorted();
    m_info->setModel(*model, report.evaluation.warnings);
    // the bytes held as the Breakdown's weights (the dtype policy's), not the file's
    const headroom::Breakdown& held = report.evaluation.memory;
    m_info->setParamCounts(headroom::countParams(*model, report.config), held.weights - held.buffers, held.buffers);
    // The Breakdown's summary line carries the plan, which the detail pass brings.
    m_staleViews |= OverviewView;
    refreshShownPage();
    if (m_session->hasSweep() && statusBar()->currentMessage() == tr("Computing the batch sweep…"))
        statusBar()->clearMessage();
    emit reportComplete();
}

void MainWindow::onTimelineStep(int step)
{
    const ModelPtr model = m_session->model();
    if (!model)
        return;
    const headroom::Evaluation& e = m_session->report().evaluation;
    const std::vector<int> tensors = liveTensorsAt(*model, e.events, step);
    std::vector<int> nodes;
    int64_t bytes = 0;
    for (int t : tensors) {
        const int producer = model->tensors[static_cast<size_t>(t)].producer;
        if (producer >= 0)
            nodes.push_back(producer);
        if (static_cast<size_t>(t) < e.shapes.bytes.size())
            bytes += std::max<int64_t>(0, e.shapes.bytes[static_cast<size_t>(t)]);
    }
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    m_layers->selectNodes(nodes);
    QString where;
    if (step >= 0 && static_cast<size_t>(step) < e.timeline.size() && e.timeline[static_cast<size_t>(step)].node >= 0)
        where = qs(model->nodePath(e.timeline[static_cast<size_t>(step)].node));
    m_timeline->setStepInfo(
        tr("Step %1 %2: %n activation tensor(s) live (%3), from %4 layer(s); selected in the Layers tab.", nullptr,
           static_cast<int>(tensors.size()))
            .arg(step)
            .arg(where, bytesText(bytes, m_controls->units()))
            .arg(nodes.size()));
}

void MainWindow::refreshUnits()
{
    const headroom::Units units = m_controls->units();
    m_layers->model()->setUnits(units);
    m_info->setUnits(units);
    m_serving->setUnits(units);
    for (Chart* chart :
         std::initializer_list<Chart*>{m_overview->breakdown(), m_overview->topLayers(), m_timeline->chart(),
                                       m_scaling->sweep(), m_scaling->checkpoints()})
        chart->setUnits(units);
    if (m_session->model()) {
        onReportChanged();
        if (m_session->isComplete())
            onDetailsChanged();
    }
}

void MainWindow::saveServingChoices()
{
    const QString group = m_controls->settingsGroup();
    if (group.isEmpty() || !m_serving->state()->hasModel())
        return;
    QSettings s;
    s.beginGroup(group + QStringLiteral("/serving"));
    m_serving->state()->saveChoices(s);
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    saveServingChoices();
    m_controls->saveSettings();
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (!localOnnxFile(event->mimeData()).isEmpty())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    const QString path = localOnnxFile(event->mimeData());
    if (path.isEmpty())
        return;
    event->acceptProposedAction();
    openFile(path);
}

} // namespace gui
