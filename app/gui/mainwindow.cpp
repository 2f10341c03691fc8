#include "mainwindow.h"

#include "batchsweepchart.h"
#include "breakdownchart.h"
#include "checkpointchart.h"
#include "configundo.h"
#include "controlspanel.h"
#include "finetunepanel.h"
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
#include "wheelguard.h"

#include "headroom/headroom_config.h"
#include "headroom/report/report.h"

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

#include <QActionGroup>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QCloseEvent>
#include <QDialog>
#include <QDialogButtonBox>
#include <QGridLayout>
#include <QSaveFile>
#include <QScreen>
#include <QTextBrowser>
#include <QUndoStack>
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
#include <QTimer>
#include <QToolButton>
#include <QWhatsThis>
#include <QVBoxLayout>

#include "languageservice.h"

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
// The Configuration panel scrolls vertically only, so it may never be narrower than its content's
// minimum, which grows once polished and with each model's size sliders.
void fitControlsWidth(QScrollArea* scroll)
{
    QWidget* content = scroll->widget();
    content->ensurePolished();
    scroll->setMinimumWidth(content->minimumSizeHint().width() + scroll->style()->pixelMetric(QStyle::PM_ScrollBarExtent)
                            + 2 * scroll->frameWidth());
}

// Re-fits whenever the panel's layout changes (a model's sliders, another engineer's controls).
class FitOnLayoutChange : public QObject
{
public:
    explicit FitOnLayoutChange(QScrollArea* scroll)
        : QObject(scroll)
        , m_scroll(scroll)
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
    // Tabs elide and scroll rather than widen the window (small screens, 200 % scaling, Chinese labels).
    m_tabs->setElideMode(Qt::ElideRight);
    m_tabs->setUsesScrollButtons(true);
    m_tabs->setDocumentMode(true);
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
    scroll->setWidget(left);
    // The panel scrolls vertically only: as wide as the controls plus a vertical scroll bar, so one
    // appearing (small screens, many symbols) never hides the right edge behind a horizontal one.
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    // Its minimum is the controls' minimum (combos elide), not their preferred width: at 200 % on a small
    // screen the window must still fit; the dock opens at the preferred width where there is room.
    scroll->setMinimumWidth(left->minimumSizeHint().width() + scroll->style()->pixelMetric(QStyle::PM_ScrollBarExtent)
                            + 2 * scroll->frameWidth());
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

    m_undo = new QUndoStack(this);
    createMenus();
    createStatusBar();
    m_controls->restoreSettings();
    m_configUndo = new ConfigUndo(m_controls, m_undo);
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
        const QString file = m_requestedFile;
        const bool loraRefused = m_requestedLora.r > 0 && message.contains(QLatin1String(": LoRA: "));
        if (loraRefused && file == m_currentFile)
            m_failedLora = m_requestedLora; // targets that match nothing: said once, not on every change
        m_requestedLora = m_modelLora;
        m_requestedFile = m_currentFile;
        onLoadFailed(message);
        if (loraRefused && file != m_currentFile) {
            // A new file the adapters do not fit (an ONNX export without module names, a CNN): open it
            // for full fine-tuning rather than not at all; the message above says why.
            m_controls->fineTunePanel()->setMethod(FineTunePanel::Method::Full);
            openFile(file);
        }
    });
    connect(m_loader, &ModelLoader::cancelled, this, [this, hideProgress](int) {
        // The model shown stays; so do the adapters it was loaded with (a newer load sets its own after).
        m_requestedLora = m_modelLora;
        m_requestedFile = m_currentFile;
        hideProgress();
        statusBar()->showMessage(tr("Loading cancelled"), 4000);
    });
    connect(m_cancel, &QToolButton::clicked, m_loader, &ModelLoader::cancel);

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

    QSettings settings;
    if (!restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray())) {
        const QScreen* screen = this->screen() ? this->screen() : QGuiApplication::primaryScreen();
        if (screen)
            setGeometry(firstStartGeometry(screen->availableGeometry(), minimumSizeHint()));
    }
    if (!restoreState(settings.value(QStringLiteral("window/state")).toByteArray())) {
        // First start: the Configuration dock at its preferred width (its minimum is smaller).
        resizeDocks({controlsDock}, {m_controlsScroll->widget()->sizeHint().width()
                                         + m_controlsScroll->style()->pixelMetric(QStyle::PM_ScrollBarExtent)},
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
    QMenu* exportMenu = file->addMenu(tr("&Export"));
    QAction* exportAction = exportMenu->addAction(tr("PDF &Report…"), QKeySequence(Qt::CTRL | Qt::Key_E), this, &MainWindow::exportReport);
    exportAction->setEnabled(HEADROOM_HAVE_PDF_REPORT);
    exportMenu->addAction(tr("Layer Table as &CSV…"), this, [this] { exportFile(ExportKind::Csv); });
    exportMenu->addAction(tr("Report as &JSON…"), this, [this] { exportFile(ExportKind::Json); });
    exportMenu->addAction(tr("&Netron Attachment…"), this, [this] { exportFile(ExportKind::Netron); });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    updateRecentMenu();

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = m_undo->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    undo->setToolTip(tr("Take back the last change of the configuration"));
    QAction* redo = m_undo->createRedoAction(this, tr("&Redo"));
    redo->setShortcut(QKeySequence::Redo);
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    edit->addAction(tr("&Find Layer"), QKeySequence::Find, this, [this] {
        m_tabs->setCurrentWidget(m_layers);
        m_layers->filterEdit()->setFocus(Qt::ShortcutFocusReason);
        m_layers->filterEdit()->selectAll();
    });

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(tr("Expand All Layers"), this, [this] { m_layers->view()->expandAll(); });
    view->addAction(tr("Collapse All Layers"), this, [this] { m_layers->view()->collapseAll(); });
    QAction* shapes = view->addAction(tr("Show Shape Computations"));
    shapes->setCheckable(true);
    connect(shapes, &QAction::toggled, m_layers->shapeToggle(), &QCheckBox::setChecked);
    connect(m_layers->shapeToggle(), &QCheckBox::toggled, shapes, &QAction::setChecked);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    QAction* guide = help->addAction(tr("&Documentation"), this, &MainWindow::showUserGuide);
    guide->setShortcut(QKeySequence::HelpContents);
    guide->setObjectName(QStringLiteral("helpDocumentation"));
    help->addAction(tr("What's &This?"), QKeySequence::WhatsThis, this, [] { QWhatsThis::enterWhatsThisMode(); });
    QMenu* language = help->addMenu(tr("&Language"));
    auto* languages = new QActionGroup(language);
    const QString active = QLocale().name();
    for (const QString& l : LanguageService::availableLanguages()) {
        QAction* a = language->addAction(LanguageService::nativeName(l));
        a->setCheckable(true);
        a->setChecked(active.startsWith(l.left(2)));
        a->setData(l);
        languages->addAction(a);
        connect(a, &QAction::triggered, this, [this, l] {
            LanguageService::setSavedLanguage(l);
            emit languageChangeRequested(l);
        });
    }
    help->addSeparator();
    help->addAction(tr("&About Headroom"), this, &MainWindow::showAbout);
    help->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

void MainWindow::showAbout()
{
    const QString guide = userGuidePath();
    const QString home = QStringLiteral(HEADROOM_HOMEPAGE);
    QMessageBox box(this);
    box.setWindowTitle(tr("About Headroom"));
    box.setIconPixmap(windowIcon().pixmap(64, 64));
    box.setTextFormat(Qt::RichText);
    box.setText(tr("<h3>Headroom %1</h3><p>Will this model fit on my GPU, and where does the memory go? Headroom "
                   "accounts for the memory an ONNX model needs for training or inference, as PyTorch would use it: "
                   "weights, gradients, optimizer states, the activations autograd keeps, the caching allocator and "
                   "the CUDA context, layer by layer.</p>")
                    .arg(QStringLiteral(HEADROOM_VERSION)));
    box.setInformativeText(
        tr("<p>Built with Qt %1 and QCustomPlot.</p><p>Licence: see the LICENSE file of the source distribution.</p>"
           "<p>User guide: %2 (F1)<br>Project and issues: <a href=\"%3\">%3</a> (<a href=\"%3/issues\">report a problem</a>)</p>")
            .arg(QString::fromLatin1(qVersion()),
                 guide.isEmpty() ? tr("not installed") : QStringLiteral("<a href=\"%1\">%2</a>").arg(QUrl::fromLocalFile(guide).toString(), tr("open")),
                 home));
    box.setStandardButtons(QMessageBox::Ok);
    box.exec();
}

QString MainWindow::userGuidePath()
{
    const QString name = QStringLiteral("USER_GUIDE.md");
    const QDir app(QCoreApplication::applicationDirPath());
    const QStringList candidates = {
        app.filePath(QStringLiteral("../") + QStringLiteral(HEADROOM_INSTALL_DATADIR) + QStringLiteral("/doc/headroom/") + name),
        QStringLiteral(HEADROOM_INSTALL_PREFIX "/" HEADROOM_INSTALL_DATADIR "/doc/headroom/") + name,
        QStringLiteral("/usr/share/doc/headroom/") + name,
        QStringLiteral(HEADROOM_SOURCE_DIR "/docs/") + name,
    };
    for (const QString& c : candidates)
        if (QFileInfo::exists(c))
            return QFileInfo(c).canonicalFilePath();
    return {};
}

void MainWindow::showUserGuide()
{
    const QString path = userGuidePath();
    QFile f(path);
    if (path.isEmpty() || !f.open(QIODevice::ReadOnly)) {
        onLoadFailed(tr("The user guide (USER_GUIDE.md) is not installed; reinstall the headroom package."));
        return;
    }
    if (!m_guide) {
        m_guide = new QDialog(this);
        m_guide->setObjectName(QStringLiteral("userGuide"));
        m_guide->setWindowTitle(tr("Headroom user guide"));
        auto* layout = new QVBoxLayout(m_guide);
        auto* browser = new QTextBrowser(m_guide);
        browser->setOpenExternalLinks(true);
        layout->addWidget(browser);
        auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, m_guide);
        connect(buttons, &QDialogButtonBox::rejected, m_guide, &QDialog::hide);
        layout->addWidget(buttons);
        m_guide->resize(720, 640);
    }
    auto* browser = m_guide->findChild<QTextBrowser*>();
    browser->setMarkdown(QString::fromUtf8(f.readAll()));
    browser->document()->setMetaInformation(QTextDocument::DocumentUrl, QUrl::fromLocalFile(path).toString());
    m_guide->show();
    m_guide->raise();
}

void MainWindow::announceConfigChange(bool announce)
{
    // An accidental change must be visible: the banner names the precision and optimizer, the status bar
    // says what changed and how to take it back.
    const headroom::Config c = m_controls->config();
    const QString text = tr("GPU %1, %2, %3")
                             .arg(c.gpu.capacity > 0 ? gpuDisplayName(c.gpu.name) : tr("none"), dtypeName(c.dtype),
                                  c.mode == headroom::Mode::Train ? optimizerName(c.optimizer) : modeName(c.mode));
    if (announce && !m_lastConfigText.isEmpty() && text != m_lastConfigText)
        statusBar()->showMessage(tr("Configuration: %1 (Ctrl+Z undoes)").arg(text), 8000);
    m_lastConfigText = text;
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
    const headroom::LoraSpec lora = m_controls->config().finetune.lora;
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
    m_currentFile = path;
    m_modelLora = m_requestedLora;
    m_controls->setModel(*model);
    m_controls->setFreeze({});
    m_layers->model()->setModel(model);
    m_info->setModel(*model, {});
    m_session->setModel(model, m_controls->config());
    m_configUndo->reset();
    announceConfigChange(false); // the baseline the next change is told against
    fitControlsWidth(m_controlsScroll);
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

QString MainWindow::defaultExportPath(ExportKind kind) const
{
    static const char* const suffixes[] = {"-memory.pdf", "-layers.csv", "-report.json", ".onnx.netron.json"};
    const QFileInfo model(m_currentFile);
    QString folder = model.absolutePath();
    if (m_currentFile.isEmpty() || !QFileInfo(folder).isWritable() || m_currentFile == findSampleModel())
        folder = QDir::homePath();
    return QDir(folder).filePath(model.completeBaseName() + QLatin1String(suffixes[static_cast<int>(kind)]));
}

bool MainWindow::exportTo(ExportKind kind, const QString& file, QString* error, bool pdfAllNodes)
{
    const ModelPtr model = m_session->model();
    if (!model) {
        if (error)
            *error = tr("Open a model first.");
        return false;
    }
    if (kind == ExportKind::Pdf) {
#if HEADROOM_HAVE_PDF_REPORT
        PdfReportOptions options;
        options.units = m_controls->units();
        options.allNodes = pdfAllNodes;
        return m_session->isComplete() ? writePdfReport(file, *model, m_session->report(), error, options)
                                       : writePdfReport(file, *model, m_session->config(), error, options);
#else
        if (error)
            *error = tr("This build cannot write PDF reports.");
        return false;
#endif
    }
    // The same bytes as headroom-cli --csv / --json / --netron for this configuration.
    headroom::ReportOptions ro;
    const headroom::Report report = m_session->isComplete() ? m_session->report() : headroom::buildReport(*model, m_session->config(), ro);
    std::string text;
    switch (kind) {
    case ExportKind::Csv: text = headroom::toCsv(*model, report); break;
    case ExportKind::Json: text = headroom::toJson(*model, report, ro).dump(1) + "\n"; break;
    case ExportKind::Netron: text = headroom::toNetronAttachment(*model, report).dump(1) + "\n"; break;
    case ExportKind::Pdf: break;
    }
    QSaveFile out(file);
    if (!out.open(QIODevice::WriteOnly) || out.write(text.data(), static_cast<qint64>(text.size())) != static_cast<qint64>(text.size())
        || !out.commit()) {
        if (error)
            *error = tr("%1: cannot write: %2").arg(QDir::toNativeSeparators(file), out.errorString());
        return false;
    }
    return true;
}

void MainWindow::exportFile(ExportKind kind)
{
    if (!m_session->model())
        return;
    const QStringList filters = {tr("PDF files (*.pdf)"), tr("CSV files (*.csv)"), tr("JSON files (*.json)"),
                                 tr("Netron attachments (*.json)")};
    QFileDialog dialog(this, tr("Export"), defaultExportPath(kind), filters[static_cast<int>(kind)]);
    dialog.setAcceptMode(QFileDialog::AcceptSave);
    dialog.setFileMode(QFileDialog::AnyFile);
    QCheckBox* allNodes = nullptr;
    if (kind == ExportKind::Pdf) {
        // Qt's own dialog, so the option sits inside it.
        dialog.setOption(QFileDialog::DontUseNativeDialog);
        allNodes = new QCheckBox(tr("List every graph node (long: one row per node, shape computations included)"), &dialog);
        allNodes->setObjectName(QStringLiteral("pdfAllNodes"));
        if (auto* grid = qobject_cast<QGridLayout*>(dialog.layout()))
            grid->addWidget(allNodes, grid->rowCount(), 0, 1, -1);
    }
    if (dialog.exec() != QDialog::Accepted || dialog.selectedFiles().isEmpty())
        return;
    const QString file = dialog.selectedFiles().front();
    QString error;
    if (exportTo(kind, file, &error, allNodes && allNodes->isChecked()))
        statusBar()->showMessage(tr("Wrote %1").arg(QDir::toNativeSeparators(file)), 6000);
    else if (m_errorHandler)
        m_errorHandler(error);
    else
        QMessageBox::warning(this, tr("Cannot export"), error);
}

void MainWindow::exportReport()
{
    exportFile(ExportKind::Pdf);
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
