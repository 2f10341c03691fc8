#include "mainwindow.h"

#include "batchsweepchart.h"
#include "breakdownchart.h"
#include "checkpointchart.h"
#include "controlspanel.h"
#include "layerfiltermodel.h"
#include "layerspage.h"
#include "layertreemodel.h"
#include "modelinfopanel.h"
#include "modelloader.h"
#include "overviewpage.h"
#include "samples.h"
#include "scalingpage.h"
#include "session.h"
#include "timelinechart.h"
#include "timelinepage.h"
#include "toplayerschart.h"
#include "verdict.h"

#if __has_include("probepage.h")
#include "probepage.h"
#define HEADROOM_HAVE_PROBE_PAGE 1
#else
#define HEADROOM_HAVE_PROBE_PAGE 0
#endif
#if __has_include("pdfreport.h")
#include "pdfreport.h"
#define HEADROOM_HAVE_PDF_REPORT 1
#else
#define HEADROOM_HAVE_PDF_REPORT 0
#endif

#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

namespace gui {

namespace {
const QString RecentKey = QStringLiteral("recentFiles");
constexpr int MaxRecent = 8;

QString localOnnxFile(const QMimeData* mime)
{
    if (!mime || !mime->hasUrls())
        return {};
    for (const QUrl& url : mime->urls())
        if (url.isLocalFile() && (url.toLocalFile().endsWith(QLatin1String(".onnx"), Qt::CaseInsensitive)
                                   || url.toLocalFile().endsWith(QLatin1String(".json"), Qt::CaseInsensitive)))
            return url.toLocalFile();
    return {};
}
} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
    , m_loader(new ModelLoader(this))
    , m_session(new AnalysisSession(this))
    , m_controls(new ControlsPanel(this))
    , m_info(new ModelInfoPanel(this))
    , m_verdict(new VerdictBanner(this))
    , m_tabs(new QTabWidget(this))
    , m_layers(new LayersPage(this))
    , m_overview(new OverviewPage(this))
    , m_timeline(new TimelinePage(this))
    , m_scaling(new ScalingPage(this))
{
    setWindowTitle(tr("Headroom"));
    setAcceptDrops(true);

    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(4, 4, 4, 0);
    layout->addWidget(m_verdict);
    layout->addWidget(m_tabs, 1);
    setCentralWidget(central);
    m_tabs->addTab(m_layers, tr("Layers"));
    m_tabs->addTab(m_overview, tr("Breakdown"));
    m_tabs->addTab(m_timeline, tr("Timeline"));
    m_tabs->addTab(m_scaling, tr("Batch && checkpoints"));
#if HEADROOM_HAVE_PROBE_PAGE
    auto* probe = new ProbePage(this);
    m_probe = probe;
    m_tabs->addTab(probe, tr("GPU probe"));
#endif

    auto* controlsDock = new QDockWidget(tr("Configuration"), this);
    controlsDock->setObjectName(QStringLiteral("configurationDock"));
    auto* scroll = new QScrollArea(controlsDock);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* left = new QWidget(scroll);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(m_controls);
    scroll->setWidget(left);
    // The panel scrolls vertically only: as wide as the controls plus a vertical scroll bar, so one
    // appearing (small screens, many symbols) never hides the right edge behind a horizontal one.
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setMinimumWidth(left->sizeHint().width() + scroll->style()->pixelMetric(QStyle::PM_ScrollBarExtent)
                            + 2 * scroll->frameWidth());
    controlsDock->setWidget(scroll);
    controlsDock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, controlsDock);
    auto* infoDock = new QDockWidget(tr("Model"), this);
    infoDock->setObjectName(QStringLiteral("modelDock"));
    infoDock->setWidget(m_info);
    infoDock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    addDockWidget(Qt::LeftDockWidgetArea, infoDock);
    splitDockWidget(infoDock, controlsDock, Qt::Vertical);

    createMenus();
    createStatusBar();
    m_controls->restoreSettings();
    refreshUnits();

    connect(m_loader, &ModelLoader::started, this, [this](int, const QString& path) {
        m_progressLabel->setText(tr("Loading %1…").arg(QFileInfo(path).fileName()));
        m_progress->setValue(0);
        for (QWidget* w : {static_cast<QWidget*>(m_progress), static_cast<QWidget*>(m_progressLabel), static_cast<QWidget*>(m_cancel)})
            w->show();
    });
    connect(m_loader, &ModelLoader::progressChanged, this, [this](int, double fraction, const QString& stage) {
        m_progress->setValue(static_cast<int>(fraction * 100));
        if (!stage.isEmpty())
            m_progress->setFormat(stage + QStringLiteral(" %p%"));
    });
    auto hideProgress = [this] {
        for (QWidget* w : {static_cast<QWidget*>(m_progress), static_cast<QWidget*>(m_progressLabel), static_cast<QWidget*>(m_cancel)})
            w->hide();
    };
    connect(m_loader, &ModelLoader::modelAvailable, this, [this, hideProgress](int, ModelPtr model, const QString& path) {
        hideProgress();
        onModelAvailable(std::move(model), path);
    });
    connect(m_loader, &ModelLoader::failed, this, [this, hideProgress](int, const QString& message) {
        hideProgress();
        onLoadFailed(message);
    });
    connect(m_loader, &ModelLoader::cancelled, this, [this, hideProgress](int) {
        hideProgress();
        statusBar()->showMessage(tr("Loading cancelled"), 4000);
    });
    connect(m_cancel, &QToolButton::clicked, m_loader, &ModelLoader::cancel);

    connect(m_controls, &ControlsPanel::configChanged, this, [this] {
        if (m_session->model())
            m_session->setConfig(m_controls->config());
    });
    connect(m_controls, &ControlsPanel::unitsChanged, this, &MainWindow::refreshUnits);
    connect(m_layers->model(), &LayerTreeModel::freezeChanged, this, [this](const std::vector<std::string>& patterns) {
        m_controls->setFreeze(patterns);
        m_session->setConfig(m_controls->config());
    });
    connect(m_session, &AnalysisSession::reportChanged, this, &MainWindow::onReportChanged);
    connect(m_session, &AnalysisSession::detailsChanged, this, &MainWindow::onDetailsChanged);
    connect(m_timeline->chart(), &TimelineChart::stepClicked, this, &MainWindow::onTimelineStep);

    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
}

MainWindow::~MainWindow() = default;

void MainWindow::createMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open…"), QKeySequence::Open, this, [this] {
        const QString dir = m_currentFile.isEmpty() ? QString() : QFileInfo(m_currentFile).absolutePath();
        const QString path = QFileDialog::getOpenFileName(this, tr("Open ONNX model"), dir, tr("Models (*.onnx config.json *.json);;ONNX models (*.onnx);;Hugging Face configs (config.json *.json);;All files (*)"));
        if (!path.isEmpty())
            openFile(path);
    });
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    file->addAction(tr("Open &Sample Model"), this, &MainWindow::openSample);
    file->addSeparator();
    QAction* exportAction = file->addAction(tr("&Export Report…"), this, &MainWindow::exportReport);
    exportAction->setEnabled(HEADROOM_HAVE_PDF_REPORT);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    updateRecentMenu();

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(tr("Expand All Layers"), this, [this] { m_layers->view()->expandAll(); });
    view->addAction(tr("Collapse All Layers"), this, [this] { m_layers->view()->collapseAll(); });

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Headroom"), this, [this] {
        QMessageBox::about(this, tr("About Headroom"),
                           tr("Headroom predicts the GPU memory an ONNX model needs for training or inference, "
                              "layer by layer, and says whether it fits."));
    });
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
    m_loader->load(path, std::move(values));
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
    m_currentFile = path;
    m_controls->setModel(*model);
    m_controls->setFreeze({});
    m_layers->model()->setModel(model);
    m_info->setModel(*model, {});
    m_session->setModel(model, m_controls->config());
    setWindowTitle(tr("%1 — Headroom").arg(QFileInfo(path).fileName()));
    addRecentFile(path);
    statusBar()->showMessage(tr("Loaded %1").arg(QDir::toNativeSeparators(path)), 4000);
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
    m_layers->model()->setReport(report);
    m_overview->breakdown()->setReport(*model, report);
    m_overview->topLayers()->setReport(*model, report);
    m_timeline->chart()->setReport(*model, report);
    m_verdict->setReport(*model, report, m_controls->units());
#if HEADROOM_HAVE_PROBE_PAGE
    static_cast<ProbePage*>(m_probe)->setContext(model, report.config);
#endif
}

void MainWindow::onDetailsChanged()
{
    const ModelPtr model = m_session->model();
    if (!model)
        return;
    const headroom::Report& report = m_session->report();
    m_scaling->sweep()->setReport(*model, report);
    m_scaling->checkpoints()->setReport(*model, report);
    m_verdict->setReport(*model, report, m_controls->units());
    m_controls->setBestCheckpoint(report.checkpointCurve.empty() ? 0 : report.bestCheckpoint);
    m_controls->setSymbolMaxima(report.symbolMax);
    m_layers->proxy()->resortIfSorted();
    m_info->setModel(*model, report.evaluation.warnings);
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
    m_timeline->setStepInfo(tr("Step %1 %2: %n activation tensor(s) live (%3), from %4 layer(s); selected in the Layers tab.", nullptr,
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
    for (Chart* chart : std::initializer_list<Chart*>{m_overview->breakdown(), m_overview->topLayers(), m_timeline->chart(),
                                                      m_scaling->sweep(), m_scaling->checkpoints()})
        chart->setUnits(units);
    if (m_session->model()) {
        onReportChanged();
        if (m_session->isComplete())
            onDetailsChanged();
    }
}

void MainWindow::addRecentFile(const QString& path)
{
    const QString absolute = QFileInfo(path).absoluteFilePath();
    QSettings settings;
    QStringList recent = settings.value(RecentKey).toStringList();
    recent.removeAll(absolute);
    recent.prepend(absolute);
    while (recent.size() > MaxRecent)
        recent.removeLast();
    settings.setValue(RecentKey, recent);
    updateRecentMenu();
}

void MainWindow::updateRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = QSettings().value(RecentKey).toStringList();
    for (const QString& path : recent)
        m_recentMenu->addAction(QFileInfo(path).fileName(), this, [this, path] { openFile(path); })->setToolTip(path);
    m_recentMenu->setEnabled(!recent.isEmpty());
}

void MainWindow::exportReport()
{
#if HEADROOM_HAVE_PDF_REPORT
    const ModelPtr model = m_session->model();
    if (!model)
        return;
    const QString suggested = QFileInfo(m_currentFile).completeBaseName() + QStringLiteral("-memory.pdf");
    const QString file = QFileDialog::getSaveFileName(this, tr("Export report"), suggested, tr("PDF files (*.pdf)"));
    if (file.isEmpty())
        return;
    QString error;
    PdfReportOptions options;
    options.units = m_controls->units();
    const bool ok = m_session->isComplete() ? writePdfReport(file, *model, m_session->report(), &error, options)
                                            : writePdfReport(file, *model, m_session->config(), &error, options);
    if (ok)
        statusBar()->showMessage(tr("Report written to %1").arg(QDir::toNativeSeparators(file)), 6000);
    else if (m_errorHandler)
        m_errorHandler(error);
    else
        QMessageBox::warning(this, tr("Cannot write the report"), error);
#endif
}

void MainWindow::closeEvent(QCloseEvent* event)
{
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
