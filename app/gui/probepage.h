#pragma once
// The Probe tab: runs headroom-probe on a worker thread (the probe is a separate process with a time limit,
// so a driver crash or hang never reaches the GUI) and puts theory beside measurement.
#include "headroom/base/config.h"
#include "headroom/base/format.h"
#include "headroom/import/model.h"
#include "headroom/probe/probe_protocol.h"

#include <QWidget>

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

class QComboBox;
class QHBoxLayout;
class QCustomPlot;
class QLabel;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QSplitter;
class QTableWidget;
class QThread;

class QStackedWidget;

namespace gui {

class ProbePage : public QWidget
{
    Q_OBJECT
public:
    enum Rows { ContextRow, WorkspaceRow, ExactPeakRow, CachingPeakRow, MaxBatchRow, FIRST_CATEGORY_ROW };
    enum Columns { NameColumn, TheoryColumn, MeasuredColumn, DifferenceColumn, NUM_COLUMNS };

    explicit ProbePage(QWidget* parent = nullptr);
    ~ProbePage() override;

    // Empty: headroom-probe beside the application, then on PATH.
    void setProbePath(const QString& path);
    void setTimeLimit(int seconds);
    void setUnits(headroom::Units units);
    bool isRunning() const { return m_thread != nullptr; }
    QString message() const;
    const headroom::ProbeResult& result() const { return m_result; }
    QTableWidget* table() const { return m_table; }

public slots:
    void setContext(std::shared_ptr<const headroom::Model> model, const headroom::Config& config);
    void run();
    void cancel();
    void detectDevices();
    // Theory beside a real run's figures (headroom::loadMeasurement's formats); errors go to message().
    void loadMeasurement(const QString& path);

signals:
    void finished(); // a run or device detection ended, whatever its status

private:
    // What the engine predicts for the same plan, computed on the worker with the plan.
    struct Theory
    {
        bool valid = false;
        std::vector<std::pair<std::string, int64_t>> peakByCategory;
        std::vector<int64_t> liveAfterEvent;
        int64_t peak = 0, reservedPeak = 0, context = 0, workspace = 0, maxBatch = -1;
    };

    void describeControls();
    void setupTable();
    void layoutPage();
    void addMeasurementTable(QHBoxLayout* controls, QSplitter* split);
    void start(bool listOnly);
    void onProgress(double fraction, const QString& stage);
    void onDone(const headroom::ProbeResult& result, const std::shared_ptr<Theory>& theory, bool listOnly);
    void setRunning(bool running);
    void showResult();
    void plotCategories();
    void plotTimeline();
    QString statusLine(const headroom::ProbeResult& r) const;

    std::shared_ptr<const headroom::Model> m_model;
    headroom::Config m_config;
    QString m_probePath;
    headroom::Units m_units = headroom::Units::IEC;
    headroom::ProbeResult m_result;
    std::shared_ptr<Theory> m_theory;
    QThread* m_thread = nullptr;
    std::shared_ptr<std::atomic<bool>> m_cancel;

    QComboBox* m_device;
    QPushButton* m_detect;
    QSpinBox* m_timeLimit;
    QPushButton* m_run;
    QPushButton* m_cancelButton;
    QProgressBar* m_progress;
    QLabel* m_message;
    QLabel* m_maxBatch;
    QTableWidget* m_table;
    QCustomPlot* m_categoryPlot;
    QCustomPlot* m_timelinePlot;
    QStackedWidget* m_chartStack = nullptr; // an empty-state line until the probe has measured
};

} // namespace gui
