#pragma once
// The main window wires the pages together; the pages do the work. Loading runs on ModelLoader's
// thread, figures come from AnalysisSession, every page listens to the session.
#include "guiutil.h"

#include "headroom/base/task.h"

#include <QMainWindow>

#include <functional>
#include <optional>

class QDialog;
class QDockWidget;
class QLabel;
class QMenu;
class QScrollArea;
class QUndoStack;
class QProgressBar;
class QTabWidget;
class QToolButton;

namespace gui {

class AnalysisSession;
class ConfigUndo;
class ControlsPanel;
class LayersPage;
class ModelInfoPanel;
class ModelLoader;
class OverviewPage;
class ProbePage;
class ScalingPage;
class ServingPage;
class TimelinePage;
class TaskBar;
class VerdictBanner;

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // Starts loading `path`; the current model stays until the new one has loaded.
    void openFile(const QString& path);
    void openSample();
    // Errors go to a non-modal message box by default; tests inject their own handler.
    void setErrorHandler(std::function<void(const QString&)> handler) { m_errorHandler = std::move(handler); }
    QString currentFile() const { return m_currentFile; }

    AnalysisSession* session() const { return m_session; }
    ModelLoader* loader() const { return m_loader; }
    ControlsPanel* controls() const { return m_controls; }
    LayersPage* layersPage() const { return m_layers; }
    OverviewPage* overviewPage() const { return m_overview; }
    TimelinePage* timelinePage() const { return m_timeline; }
    ScalingPage* scalingPage() const { return m_scaling; }
    ServingPage* servingPage() const { return m_serving; }
    VerdictBanner* verdict() const { return m_verdict; }
    TaskBar* taskBar() const { return m_taskBar; }
    // The task shown (the controls' task): Train, Fine-tune, Generate, Serve.
    headroom::Task task() const;
    void setTask(headroom::Task task);
    // Generate or Serve on a config.json: ServingState answers, not the training session.
    bool servingTask() const;
    ModelInfoPanel* modelInfo() const { return m_info; }
    QTabWidget* tabs() const { return m_tabs; }
    QScrollArea* controlsScroll() const { return m_controlsScroll; }
    QUndoStack* undoStack() const { return m_undo; }

    // First start (no saved geometry): 80 % of the available screen area, centred, at least `minimum`.
    static QRect firstStartGeometry(const QRect& available, const QSize& minimum);

    // Help > Documentation (F1): the user guide shipped with the package, shown in a window of its own.
    static QString userGuidePath();
    void showUserGuide();
    QDialog* userGuideWindow() const { return m_guide; }

    // File > Export: what the CLI writes, for the current configuration.
    enum class ExportKind { Pdf, Csv, Json, Netron };
    // The model's folder when it is writable (a bundled sample's is not: then the home folder).
    QString defaultExportPath(ExportKind kind) const;
    bool exportTo(ExportKind kind, const QString& file, QString* error, bool pdfAllNodes = false);
    // The task is served (servingTask) and the Serving tab has a plan: the exports are that plan's report.
    bool servingShown() const;

signals:
    void modelLoaded(const QString& path);
    void loadFailed(const QString& message);
    // The full report (sweep, checkpoint curve, advice) for the current configuration is shown.
    void reportComplete();
    // Help > Language: the user picked a language ("en_US", "zh_CN"); main() rebuilds the window in it.
    void languageChangeRequested(const QString& language);

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    // mainwindow.cpp: the window's parts and their wiring
    void createTabs();
    QDockWidget* createDocks(); // returns the Configuration dock
    void connectLoader();
    void connectPages();
    void restoreWindow(QDockWidget* controlsDock);
    void createStatusBar();
    // mainwindowmenus.cpp
    void createMenus();
    void createFileMenu();
    void createEditMenu();
    void createViewMenu();
    void createHelpMenu();
    void onModelAvailable(ModelPtr model, const QString& path);
    void onLoadFailed(const QString& message);
    void onReportChanged();
    void onDetailsChanged();
    // Hands the current report to the shown tab's views if they have not had it (staleViews).
    void refreshShownPage();
    void onTimelineStep(int step);
    // The task's tabs, panel, banner and Serving engine (after a task switch or a new model).
    void applyTask();
    void onServingChanged();
    void saveServingChoices();
    void refreshUnits();
    void addRecentFile(const QString& path);
    void updateRecentMenu();
    void exportReport();
    void exportFile(ExportKind kind);
    void showAbout();
    void announceConfigChange(bool announce = true);
    void reloadWithLora(const headroom::LoraSpec& lora);

    ModelLoader* m_loader;
    AnalysisSession* m_session;
    ControlsPanel* m_controls;
    ModelInfoPanel* m_info;
    VerdictBanner* m_verdict;
    TaskBar* m_taskBar;
    QTabWidget* m_tabs;
    LayersPage* m_layers;
    OverviewPage* m_overview;
    TimelinePage* m_timeline;
    ScalingPage* m_scaling;
    ServingPage* m_serving = nullptr; // the Serving mode: a config.json served by vLLM or generate()
    // Tabs whose views still show an older report: a hidden tab's tree or chart is brought up to date when
    // it is shown, not on every tick (the layer tree costs ~25 ms a tick on a 100k-node graph).
    enum StaleView { LayersView = 1, OverviewView = 2, TimelineView = 4 };
    int m_staleViews = 0;
    ProbePage* m_probe = nullptr;
    QMenu* m_recentMenu = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_progressLabel = nullptr;
    QToolButton* m_cancel = nullptr;
    QString m_currentFile;
    // LoRA is applied at load: the spec of the shown model, of the last load asked for, and of a load
    // that failed (not retried until the spec changes again).
    QString m_requestedFile;
    headroom::LoraSpec m_modelLora;
    headroom::LoraSpec m_requestedLora;
    std::optional<headroom::LoraSpec> m_failedLora;
    std::function<void(const QString&)> m_errorHandler;
    QScrollArea* m_controlsScroll = nullptr;
    QUndoStack* m_undo = nullptr;
    ConfigUndo* m_configUndo = nullptr;
    QDialog* m_guide = nullptr;
    QString m_lastConfigText; // GPU, precision, optimizer as last announced
};

} // namespace gui
