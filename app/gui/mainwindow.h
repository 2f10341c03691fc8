#pragma once
// The main window wires the pages together; the pages do the work. Loading runs on ModelLoader's
// thread, figures come from AnalysisSession, every page listens to the session.
#include "guiutil.h"

#include <QMainWindow>

#include <functional>

class QLabel;
class QMenu;
class QProgressBar;
class QTabWidget;
class QToolButton;

namespace gui {

class AnalysisSession;
class ControlsPanel;
class LayersPage;
class ModelInfoPanel;
class ModelLoader;
class OverviewPage;
class ScalingPage;
class TimelinePage;
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
    VerdictBanner* verdict() const { return m_verdict; }
    ModelInfoPanel* modelInfo() const { return m_info; }
    QTabWidget* tabs() const { return m_tabs; }

signals:
    void modelLoaded(const QString& path);
    void loadFailed(const QString& message);
    // The full report (sweep, checkpoint curve, advice) for the current configuration is shown.
    void reportComplete();

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createMenus();
    void createStatusBar();
    void onModelAvailable(ModelPtr model, const QString& path);
    void onLoadFailed(const QString& message);
    void onReportChanged();
    void onDetailsChanged();
    void onTimelineStep(int step);
    void refreshUnits();
    void addRecentFile(const QString& path);
    void updateRecentMenu();
    void exportReport();

    ModelLoader* m_loader;
    AnalysisSession* m_session;
    ControlsPanel* m_controls;
    ModelInfoPanel* m_info;
    VerdictBanner* m_verdict;
    QTabWidget* m_tabs;
    LayersPage* m_layers;
    OverviewPage* m_overview;
    TimelinePage* m_timeline;
    ScalingPage* m_scaling;
    QWidget* m_probe = nullptr;
    QMenu* m_recentMenu = nullptr;
    QProgressBar* m_progress = nullptr;
    QLabel* m_progressLabel = nullptr;
    QToolButton* m_cancel = nullptr;
    QString m_currentFile;
    std::function<void(const QString&)> m_errorHandler;
};

} // namespace gui
