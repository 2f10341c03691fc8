#pragma once
// One loaded model and its current configuration. Every change recomputes the engine's figures
// synchronously with a cached EnginePlan (evaluate + fit: what the tree, breakdown, timeline and verdict
// show), then buildReport() - batch sweep, checkpoint curve, advice - on a worker; stale worker results
// are dropped by job id. The max batch does not depend on the batch itself, so a batch drag reuses it
// (the search costs ~80 ms on a 10k-node graph); other changes search again synchronously.
#include "guiutil.h"

#include "headroom/report.h"

#include <QObject>
#include <QThreadPool>

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
    // What buildReport(model, config) gives once isComplete(); before that, what
    // buildReport(model, config, {.sweep = false}) gives (no sweep, curve or advice).
    const headroom::Report& report() const { return m_report; }
    bool isComplete() const { return m_complete; }
    // Tests and the screenshot mode: compute the details synchronously instead of on the worker.
    void setSynchronousDetails(bool on) { m_synchronous = on; }

signals:
    void modelChanged();
    // The fast figures for the current configuration are ready (tree, breakdown, timeline, fit).
    void reportChanged();
    // The batch sweep, checkpoint curve and advice for the current configuration are ready.
    void detailsChanged();

private:
    void recompute();
    void startDetails();
    headroom::Report fastReport();

    headroom::EnginePlan m_plan;
    std::vector<std::string> m_planFreeze;
    std::optional<headroom::Config> m_maxBatchConfig; // the configuration m_maxBatch was searched for
    int64_t m_maxBatch = 0;

    ModelPtr m_model;
    headroom::Config m_config;
    headroom::Report m_report;
    bool m_complete = false;
    bool m_synchronous = false;
    int m_job = 0;           // latest configuration's id
    bool m_running = false;  // a details job is in flight
    bool m_pending = false;  // the configuration changed while it ran
    QThreadPool m_pool;
};

} // namespace gui
