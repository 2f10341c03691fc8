#pragma once
// One loaded model and its current configuration. Every change recomputes the engine's figures with a
// cached EnginePlan (evaluate + fit + per-GPU shares: what the tree, breakdown, timeline and verdict
// show: buildReport's first two stages), then its third - batch sweep, checkpoint curve, advice - on a
// worker, added to those same figures (core's addDetails); stale worker results are dropped by job id. The fast figures
// are computed on the GUI thread while that takes less than a frame's share (asyncThresholdMs); when the last
// computation took longer (a 10k-node graph), they move to a second worker so the slider never waits: one job in
// flight, only the latest configuration runs next, and the views keep the previous figures until it lands. The max
// batch does not depend on the batch itself, so a batch drag reuses it (the search costs ~80 ms on a 10k-node graph).
// The full report starts once the fast figures have landed and the controls have been still for detailsDelayMs after
// that, so a drag does not compete with it (nor a 100k-node tick, slower than the pause), and a
// full report still running when the controls move again is cancelled (ReportOptions::cancel): its
// result would be dropped, and on a 100k-node graph it holds the worker for seconds. The plan is built
// where the figures are computed: for a large graph (asyncNodes) the first figures of a newly opened
// model and every plan rebuild (freeze, precision, attention) run on the worker, so opening a
// 100k-node model never blocks the window.
#include "guiutil.h"

#include "headroom/report/report.h"

#include <QObject>
#include <QThreadPool>
#include <QTimer>

#include <atomic>
#include <memory>
#include <optional>

namespace gui {

class AnalysisSession : public QObject
{
    Q_OBJECT
public:
    explicit AnalysisSession(QObject* parent = nullptr);
    ~AnalysisSession() override;

    void setModel(ModelPtr model, const headroom::Config& config);
    void setConfig(const headroom::Config& config);

    ModelPtr model() const { return m_model; }
    const headroom::Config& config() const { return m_config; }
    // What buildReport(model, config) gives once isComplete() (less the batch sweep while !hasSweep());
    // before that, what buildReport(model, config, {.sweep = false}) gives (no sweep, curve or advice).
    const headroom::Report& report() const { return *m_report; }
    bool isComplete() const { return m_complete; }
    // The batch sweep is only drawn by the "Batch & checkpoints" tab (and exports, which compute their own
    // when it is missing): while nothing wants it, the full report leaves it out (it costs a replay per
    // batch point, seconds on a 100k-node graph); wanting it again computes it at once, off the GUI thread.
    // The checkpoint curve and advice are always computed: the verdict's tips read them.
    void setSweepWanted(bool wanted);
    bool sweepWanted() const { return m_sweepWanted; }
    // The complete report holds the batch sweep (buildReport(model, config) exactly).
    bool hasSweep() const { return m_complete && m_reportHasSweep; }
    // The report every export writes: report() once it is complete with its sweep, else the same question
    // computed now, with the session's own options (the fit plan's LoRA step), so that a PDF or a JSON says
    // what the banner says.
    headroom::Report completeReport() const;
    // Tests and the screenshot mode: compute the details synchronously instead of on the worker.
    void setSynchronousDetails(bool on) { m_synchronous = on; }
    // Fast figures move to the worker when the last computation took longer than this (ms; < 0: always).
    void setAsyncThresholdMs(double ms) { m_asyncThresholdMs = ms; }
    // True while the fast figures for the current configuration are being computed on the worker.
    bool isPending() const { return m_fastRunning || m_fastPending; }
    // Duration of the last fast computation (evaluate, per-GPU shares; the fit is not timed), in milliseconds.
    double lastFastMs() const { return m_lastFastMs; }

signals:
    void modelChanged();
    // The fast figures for the current configuration are ready (tree, breakdown, timeline, fit).
    void reportChanged();
    // The batch sweep, checkpoint curve and advice for the current configuration are ready.
    void detailsChanged();

private:
    struct Fast
    {
        headroom::Report report;
        headroom::EnginePlan plan;               // the plan it used (built by the job when none matched)
        std::optional<int64_t> searchedMaxBatch; // set when the max batch had to be searched
        double ms = 0;                           // reportFigures (evaluate + per-GPU shares); not the fit
    };
    void recompute();
    void scheduleDetails();
    void startDetails();
    void startFast();
    void applyFast(Fast fast);
    static Fast computeFast(const ModelPtr& model, headroom::EnginePlan plan, const headroom::Config& config,
                            std::optional<int64_t> maxBatch);
    // A plan for a graph this large is built off the GUI thread (~0.3 s at 100k nodes).
    bool planIsSlow() const;
    // The max batch searched for a configuration that differs from the current one at most in the batch.
    std::optional<int64_t> knownMaxBatch() const;

    headroom::EnginePlan m_plan;
    std::optional<headroom::Config> m_maxBatchConfig; // the configuration m_maxBatch was searched for
    int64_t m_maxBatch = 0;

    ModelPtr m_model;
    headroom::LoraVariantSource m_loraVariant; // the model with PEFT's default adapters, for the fit plan
    headroom::Config m_config;
    // Shared with the detail pass, which extends a copy of it on the worker; never null.
    std::shared_ptr<const headroom::Report> m_report = std::make_shared<const headroom::Report>();
    bool m_complete = false;
    bool m_synchronous = false;
    bool m_sweepWanted = true;
    bool m_reportHasSweep = false; // the details in m_report were computed with the sweep
    int m_job = 0;                 // latest configuration's id
    int m_shownJob = 0;            // the configuration whose fast figures m_report holds
    bool m_running = false;        // a details job is in flight
    bool m_pending = false;        // the configuration changed while it ran
    bool m_fastRunning = false;    // a fast job is in flight
    bool m_fastPending = false;    // the configuration changed while it ran
    double m_lastFastMs = 0;
    double m_asyncThresholdMs = 4;                      // a quarter frame: the slider and repaint must fit in the rest
    std::shared_ptr<std::atomic<bool>> m_detailsCancel; // the running full report's stop flag
    QTimer* m_detailsTimer;
    QThreadPool m_pool;     // the full report
    QThreadPool m_fastPool; // fast figures, when they are slow
};

} // namespace gui
