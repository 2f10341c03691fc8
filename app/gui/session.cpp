#include "session.h"

#include "headroom/hardware/multigpu.h"

#include <QElapsedTimer>

namespace gui {

namespace {
// The full report also searches each symbol's largest fitting value, for the sliders' marks.
headroom::ReportOptions detailsOptions()
{
    headroom::ReportOptions o;
    o.symbolMaxima = true;
    return o;
}
} // namespace

headroom::Report AnalysisSession::computeDetails(const headroom::EnginePlan& plan, const headroom::Config& config,
                                                 bool sweep, const std::atomic<bool>* cancel)
{
    headroom::ReportOptions options = detailsOptions();
    options.cancel = cancel;
    if (sweep)
        return headroom::buildReport(plan, config, options);
    // ReportOptions::sweep = false also leaves out the checkpoint curve and advice, which the verdict and
    // the checkpoint chart need: those are added here as buildReport (report.cpp) computes them - same
    // functions, same inputs - and tst_session compares the two field by field.
    options.sweep = false;
    headroom::Report r = headroom::buildReport(plan, config, options);
    const auto stopped = [&] { return r.cancelled || (cancel && cancel->load(std::memory_order_relaxed)); };
    if (r.fit.sizesUnknown || stopped()) {
        r.cancelled = stopped();
        return r;
    }
    if (config.mode == headroom::Mode::Train) {
        r.checkpointCurve = headroom::checkpointCurve(plan, config, 16);
        r.bestCheckpoint = headroom::bestCheckpointSegments(r.checkpointCurve);
    }
    if (stopped()) {
        r.cancelled = true;
        return r;
    }
    headroom::AdviceInputs known;
    known.plan = &plan;
    if (config.mode == headroom::Mode::Train)
        known.checkpointCurve = &r.checkpointCurve;
    if (r.cluster.gpus.empty())
        known.need = r.fit.needed;
    r.advice = headroom::advise(*plan.model, config, known);
    return r;
}

void AnalysisSession::setSweepWanted(bool wanted)
{
    if (wanted == m_sweepWanted)
        return;
    m_sweepWanted = wanted;
    if (!wanted || !m_model || hasSweep())
        return;
    if (m_synchronous) {
        m_report = computeDetails(m_plan, m_config, true, nullptr);
        m_reportHasSweep = true;
        emit detailsChanged();
    } else if (m_complete) {
        // The figures shown are complete but for the sweep: compute the report again with it, now.
        if (m_running)
            m_pending = true;
        else
            startDetails();
    }
    // Otherwise the full report is scheduled or running; it adds the sweep when it lands (startDetails).
}

namespace {
// Every field of Config but the batch (config.h lists them); what the max batch depends on.
bool sameButBatch(const headroom::Config& a, const headroom::Config& b, int batchSymbol)
{
    if (a.symbols.size() != b.symbols.size())
        return false;
    for (size_t i = 0; i < a.symbols.size(); ++i)
        if (static_cast<int>(i) != batchSymbol && a.symbols[i] != b.symbols[i])
            return false;
    return a.mode == b.mode && a.dtype == b.dtype && a.optimizer == b.optimizer &&
           a.customOptimizerBytes == b.customOptimizerBytes && a.rmspropMomentum == b.rmspropMomentum &&
           a.rmspropCentered == b.rmspropCentered && a.loss == b.loss && a.checkpointSegments == b.checkpointSegments &&
           a.accumulate == b.accumulate && a.inplace == b.inplace && a.freeze == b.freeze && a.gpu.name == b.gpu.name &&
           a.gpu.capacity == b.gpu.capacity && a.gpu.context == b.gpu.context && a.gpu.workspace == b.gpu.workspace &&
           a.marginBytes == b.marginBytes && a.gpus == b.gpus && a.strategy == b.strategy &&
           a.gpu0Batch == b.gpu0Batch && a.offload == b.offload && a.allocator == b.allocator &&
           a.attention == b.attention && a.device == b.device && a.torch == b.torch;
}

constexpr int DetailsDelayMs = 120; // a drag's ticks come faster than this; the full report waits for a pause
// Above this many nodes a plan build and a first evaluation take tens of milliseconds or more (the 10k-node
// transformer: ~60 ms with its max-batch search; docs/BENCHMARKS.md "Searches at scale"): off the GUI thread.
constexpr size_t AsyncNodes = 5000;
} // namespace

AnalysisSession::AnalysisSession(QObject* parent) : QObject(parent), m_detailsTimer(new QTimer(this))
{
    m_pool.setMaxThreadCount(1);
    m_fastPool.setMaxThreadCount(1);
    m_detailsTimer->setSingleShot(true);
    m_detailsTimer->setInterval(DetailsDelayMs);
    connect(m_detailsTimer, &QTimer::timeout, this, [this] {
        if (m_running)
            m_pending = true; // one job in flight at a time; the latest configuration runs next
        else
            startDetails();
    });
}

AnalysisSession::~AnalysisSession()
{
    if (m_detailsCancel)
        m_detailsCancel->store(true);
    m_fastPool.waitForDone();
    m_pool.waitForDone();
}

void AnalysisSession::setModel(ModelPtr model, const headroom::Config& config)
{
    m_model = std::move(model);
    m_config = config;
    m_report = {};
    m_plan = {}; // built with the first figures (on the worker for a large graph)
    m_maxBatchConfig.reset();
    m_lastFastMs = 0; // the first figures of a model come at once; its own timing decides the next ticks
    emit modelChanged();
    recompute();
}

void AnalysisSession::setConfig(const headroom::Config& config)
{
    m_config = config;
    recompute();
}

void AnalysisSession::recompute()
{
    if (!m_model)
        return;
    ++m_job;
    m_complete = false;
    if (m_detailsCancel)
        m_detailsCancel->store(true); // the running full report is for a configuration no longer shown
    if (m_synchronous) {
        m_detailsTimer->stop();
        applyFast(computeFast(m_model, m_plan, m_config, std::nullopt));
        m_report = computeDetails(m_plan, m_config, m_sweepWanted, nullptr);
        m_reportHasSweep = m_sweepWanted;
        m_complete = true;
        emit detailsChanged();
        return;
    }
    const bool planBuild = !headroom::planMatches(m_plan, m_config) && planIsSlow();
    if (m_fastRunning || m_lastFastMs > m_asyncThresholdMs || planBuild) {
        m_detailsTimer->stop(); // its pause is counted from when these figures land (startFast)
        startFast();
    } else {
        std::optional<int64_t> known;
        if (m_maxBatchConfig && sameButBatch(*m_maxBatchConfig, m_config, m_model->batchSymbol))
            known = m_maxBatch;
        applyFast(computeFast(m_model, m_plan, m_config, known));
        scheduleDetails();
    }
}

bool AnalysisSession::planIsSlow() const { return m_model && m_model->nodes.size() > AsyncNodes; }

AnalysisSession::Fast AnalysisSession::computeFast(const ModelPtr& model, headroom::EnginePlan plan,
                                                   const headroom::Config& config, std::optional<int64_t> maxBatch)
{
    // buildReport(model, config, {.sweep = false}) from the same core functions, with the plan cached
    // and the max batch reused while only the batch changes (tests compare the two).
    Fast fast;
    if (!headroom::planMatches(plan, config) || plan.model != model.get())
        plan = headroom::makePlan(*model, config);
    fast.plan = plan;
    QElapsedTimer timer;
    timer.start();
    headroom::Report& r = fast.report;
    r.config = config;
    r.evaluation = headroom::evaluate(plan, config);
    if (config.gpus > 1 || config.strategy != headroom::Strategy::Single)
        r.cluster = headroom::evaluateCluster(plan, config);
    fast.ms = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    if (!maxBatch) {
        maxBatch = headroom::maxGlobalBatch(plan, config);
        fast.searchedMaxBatch = maxBatch;
    }
    r.fit = headroom::computeClusterFit(plan, config, r.evaluation, r.cluster, maxBatch);
    return fast;
}

void AnalysisSession::applyFast(Fast fast)
{
    m_lastFastMs = fast.ms;
    if (fast.plan.model == m_model.get())
        m_plan = fast.plan;
    if (fast.searchedMaxBatch) {
        m_maxBatch = *fast.searchedMaxBatch;
        m_maxBatchConfig = fast.report.config;
    }
    m_report = std::move(fast.report);
    m_shownJob = m_job;
    emit reportChanged();
}

void AnalysisSession::startFast()
{
    if (m_fastRunning) {
        m_fastPending = true; // coalesce: whatever the configuration is when this job lands runs next
        return;
    }
    m_fastRunning = true;
    m_fastPending = false;
    const int job = m_job;
    std::optional<int64_t> known;
    if (m_maxBatchConfig && sameButBatch(*m_maxBatchConfig, m_config, m_model->batchSymbol))
        known = m_maxBatch;
    // The plan points into the model; the captured ModelPtr keeps it alive if another model is opened.
    m_fastPool.start([this, job, model = m_model, plan = m_plan, config = m_config, known] {
        auto fast = std::make_shared<Fast>(computeFast(model, plan, config, known));
        QMetaObject::invokeMethod(
            this,
            [this, job, fast] {
                m_fastRunning = false;
                if (job == m_job) {
                    if (m_complete)
                        return; // the full report landed first; it has the same figures and more
                    applyFast(std::move(*fast));
                    // The full report waits for the drag's pause after these figures, not after the move:
                    // on a 100k-node graph a tick's figures take longer than the pause, and a full report
                    // started under them competes for the cores with the next tick's (perf: 3/4 of the
                    // worker time during a drag was cancelled full reports).
                    scheduleDetails();
                } else {
                    m_lastFastMs = fast->ms;
                    if (fast->plan.model == m_model.get() && headroom::planMatches(fast->plan, m_config))
                        m_plan = fast->plan; // still the right plan: the next job need not build it again
                    if (fast->searchedMaxBatch) {
                        m_maxBatch = *fast->searchedMaxBatch;
                        m_maxBatchConfig = fast->report.config;
                    }
                    startFast(); // stale: compute the configuration the controls show now
                }
            },
            Qt::QueuedConnection);
    });
}

void AnalysisSession::scheduleDetails() { m_detailsTimer->start(); }

void AnalysisSession::startDetails()
{
    m_running = true;
    m_pending = false;
    const int job = m_job;
    m_detailsCancel = std::make_shared<std::atomic<bool>>(false);
    // The session's plan when it is this configuration's (the worker builds one otherwise); the captured
    // ModelPtr keeps the model it points into alive.
    const bool sweep = m_sweepWanted;
    m_pool.start([this, job, sweep, model = m_model, plan = m_plan, config = m_config, cancel = m_detailsCancel] {
        const headroom::EnginePlan use = plan.model == model.get() && headroom::planMatches(plan, config)
                                             ? plan
                                             : headroom::makePlan(*model, config);
        auto report = std::make_shared<headroom::Report>(computeDetails(use, config, sweep, cancel.get()));
        QMetaObject::invokeMethod(
            this,
            [this, job, sweep, report] {
                m_running = false;
                if (job == m_job && !report->cancelled) {
                    m_report = std::move(*report);
                    m_reportHasSweep = sweep;
                    m_complete = true;
                    if (m_shownJob != job) { // it overtook the fast figures' worker
                        m_shownJob = job;
                        emit reportChanged();
                    }
                    emit detailsChanged();
                    if (m_sweepWanted && !sweep)
                        startDetails(); // the sweep's tab was shown while this ran without it
                } else if (m_pending) {
                    startDetails();
                }
            },
            Qt::QueuedConnection);
    });
}

} // namespace gui
