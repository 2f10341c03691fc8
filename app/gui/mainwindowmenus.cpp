// MainWindow's menu bar, recent files and Help windows (About, the user guide); the window itself is
// wired in mainwindow.cpp, File > Export in mainwindowexport.cpp.
#include "mainwindow.h"

#include "languageservice.h"
#include "layerspage.h"

#include "headroom/headroom_config.h"

#include <QActionGroup>
#include <QApplication>
#include <QCheckBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QTabWidget>
#include <QTextBrowser>
#include <QTreeView>
#include <QUndoStack>
#include <QVBoxLayout>
#include <QWhatsThis>

namespace gui {

namespace {
const QString RecentKey = QStringLiteral("recentFiles");
constexpr int MaxRecent = 8;
} // namespace

void MainWindow::createMenus()
{
    createFileMenu();
    createEditMenu();
    createViewMenu();
    createHelpMenu();
}

void MainWindow::createFileMenu()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open…"), QKeySequence::Open, this, [this] {
        const QString dir = m_currentFile.isEmpty() ? QString() : QFileInfo(m_currentFile).absolutePath();
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Open a model (ONNX or config.json)"), dir,
            tr("Models (*.onnx *.json);;ONNX (*.onnx);;config.json (*.json);;All files (*)"));
        if (!path.isEmpty())
            openFile(path);
    });
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    file->addAction(tr("Open &Sample Model"), this, &MainWindow::openSample);
    file->addSeparator();
    QMenu* exportMenu = file->addMenu(tr("&Export"));
    exportMenu->addAction(tr("PDF &Report…"), QKeySequence(Qt::CTRL | Qt::Key_E), this, &MainWindow::exportReport);
    exportMenu->addAction(tr("Layer Table as &CSV…"), this, [this] { exportFile(ExportKind::Csv); });
    exportMenu->addAction(tr("Report as &JSON…"), this, [this] { exportFile(ExportKind::Json); });
    exportMenu->addAction(tr("&Netron Attachment…"), this, [this] { exportFile(ExportKind::Netron); });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    updateRecentMenu();
}

void MainWindow::createEditMenu()
{
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
}

void MainWindow::createViewMenu()
{
    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(tr("Expand All Layers"), this, [this] { m_layers->view()->expandAll(); });
    view->addAction(tr("Collapse All Layers"), this, [this] { m_layers->view()->collapseAll(); });
    QAction* shapes = view->addAction(tr("Show Shape Computations"));
    shapes->setCheckable(true);
    connect(shapes, &QAction::toggled, m_layers->shapeToggle(), &QCheckBox::setChecked);
    connect(m_layers->shapeToggle(), &QCheckBox::toggled, shapes, &QAction::setChecked);
}

void MainWindow::createHelpMenu()
{
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
        tr("<p>Built with Qt %1 and QCustomPlot.</p><p>User guide: %2 (F1)</p>")
            .arg(QString::fromLatin1(qVersion()),
                 guide.isEmpty()
                     ? tr("not installed")
                     : QStringLiteral("<a href=\"%1\">%2</a>").arg(QUrl::fromLocalFile(guide).toString(), tr("open"))) +
        // The project's page only where the build names one (HEADROOM_HOMEPAGE): no placeholder link.
        (home.isEmpty()
             ? QString()
             : tr("<p>Project and issues: <a href=\"%1\">%1</a> (<a href=\"%1/issues\">report a problem</a>)</p>")
                   .arg(home)));
    box.setStandardButtons(QMessageBox::Ok);
    box.exec();
}

QString MainWindow::userGuidePath()
{
    const QString name = QStringLiteral("USER_GUIDE.md");
    const QDir app(QCoreApplication::applicationDirPath());
    const QStringList candidates = {
        app.filePath(QStringLiteral("../") + QStringLiteral(HEADROOM_INSTALL_DATADIR) +
                     QStringLiteral("/doc/headroom/") + name),
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

} // namespace gui
