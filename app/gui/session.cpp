#include "session.h"

#include "headroom/hardware/multigpu.h"
#include "headroom/import/batch.h"
#include "headroom/load/loader.h"

#include <QElapsedTimer>

namespace gui {

namespace {
// The detail pass: what the fast figures leave out. The full report also searches each symbol's largest
// fitting value, for the sliders' marks; the batch sweep only when its tab wants it.
headroom::Report detailed(const headroom::EnginePlan& plan, headroom::Report report, bool sweep,
                          const std::atomic<bool>* cancel, const headroom::LoraVariantSource& lora)
{
    headroom::ReportOptions options;
    options.loraVariant = lora;
    options.symbolMaxima = true;
    options.batchSweep = sweep;
    options.cancel = cancel;
    headroom::addDetails(plan, report, options);
    return report;
}

// The plan `config` needs: the session's when it matches, else a new one.
headroom::EnginePlan planFor(const headroom::Model& model, const headroom::EnginePlan& plan,
                             const headroom::Config& config)
{
    return plan.model == &model && headroom::planMatches(plan, config) ? plan : headroom::makePlan(model, config);
}
} // namespace

void AnalysisSession::setSweepWanted(bool wanted)
{
    if (wanted == m_sweepWanted)
        return;
    m_sweepWanted = wanted;
    if (!wanted || !m_model || hasSweep())
        return;
    if (m_synchronous) {
        m_report = std::make_shared<const headroom::Report>(detailed(m_plan, *m_report, true, nullptr, m_loraVariant));
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
    // The fit plan's LoRA step loads the file again with PEFT's default adapters, once, on the worker, and
    // only when full fine-tuning does not fit (a model loaded with LoRA never asks).
    m_loraVariant = m_model ? headroom::peftDefaultLoraVariant(m_model->info.file, {}) : headroom::LoraVariantSource{};
    m_report = std::make_shared<const headroom::Report>();
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
        m_report = std::make_shared<const headroom::Report>(
            detailed(m_plan, *m_report, m_sweepWanted, nullptr, m_loraVariant));
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
        applyFast(computeFast(m_model, m_plan, m_config, knownMaxBatch()));
        scheduleDetails();
    }
}

headroom::Report AnalysisSession::completeReport() const
{
    if (hasSweep() || !m_model)
        return *m_report;
    headroom::ReportOptions options;
    options.loraVariant = m_loraVariant;
    options.symbolMaxima = true;
    return headroom::buildReport(planFor(*m_model, m_plan, m_config), m_config, options);
}

bool AnalysisSession::planIsSlow() const { return m_model && m_model->nodes.size() > AsyncNodes; }

std::optional<int64_t> AnalysisSession::knownMaxBatch() const
{
    if (m_maxBatchConfig && headroom::sameButBatch(*m_model, *m_maxBatchConfig, m_config))
        return m_maxBatch;
    return std::nullopt;
}

AnalysisSession::Fast AnalysisSession::computeFast(const ModelPtr& model, headroom::EnginePlan plan,
                                                   const headroom::Config& config, std::optional<int64_t> maxBatch)
{
    // buildReport's first two stages, with the plan cached and the max batch reused while only the batch
    // changes; the detail pass adds the third to this report.
    Fast fast;
    fast.plan = planFor(*model, plan, config);
    QElapsedTimer timer;
    timer.start();
    fast.report = headroom::reportFigures(fast.plan, config);
    fast.ms = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    if (!maxBatch) {
        maxBatch = headroom::maxGlobalBatch(fast.plan, config);
        fast.searchedMaxBatch = maxBatch;
    }
    headroom::addFit(fast.plan, fast.report, maxBatch);
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
    m_report = std::make_shared<const headroom::Report>(std::move(fast.report));
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
    const std::optional<int64_t> known = knownMaxBatch();
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
    // The detail pass extends the report shown when it is this configuration's (its fast figures have
    // landed), copied on the worker, not here (a large graph's evaluation holds per-tensor tables); otherwise
    // it overtook the fast figures' worker and computes them first, the same way. The session's plan when
    // it is this configuration's (the worker builds one otherwise); the captured ModelPtr keeps the model it
    // points into alive.
    const bool sweep = m_sweepWanted;
    std::shared_ptr<const headroom::Report> shown = m_shownJob == job ? m_report : nullptr;
    m_pool.start([this, job, sweep, shown, known = knownMaxBatch(), model = m_model, plan = m_plan, config = m_config,
                  cancel = m_detailsCancel, lora = m_loraVariant] {
        Fast fast = shown ? Fast{*shown, planFor(*model, plan, config), std::nullopt, 0}
                          : computeFast(model, plan, config, known);
        auto report = std::make_shared<const headroom::Report>(
            detailed(fast.plan, std::move(fast.report), sweep, cancel.get(), lora));
        QMetaObject::invokeMethod(
            this,
            [this, job, sweep, report] {
                m_running = false;
                if (job == m_job && !report->cancelled) {
                    m_report = report;
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
