#include "session.h"

#include "headroom/multigpu.h"

namespace gui {

namespace {
// Every field of Config but the batch (config.h lists them); what the max batch depends on.
bool sameButBatch(const headroom::Config& a, const headroom::Config& b, int batchSymbol)
{
    if (a.symbols.size() != b.symbols.size())
        return false;
    for (size_t i = 0; i < a.symbols.size(); ++i)
        if (static_cast<int>(i) != batchSymbol && a.symbols[i] != b.symbols[i])
            return false;
    return a.mode == b.mode && a.dtype == b.dtype && a.optimizer == b.optimizer
        && a.customOptimizerBytes == b.customOptimizerBytes && a.rmspropMomentum == b.rmspropMomentum
        && a.rmspropCentered == b.rmspropCentered && a.loss == b.loss && a.checkpointSegments == b.checkpointSegments
        && a.accumulate == b.accumulate && a.inplace == b.inplace && a.freeze == b.freeze && a.gpu.name == b.gpu.name
        && a.gpu.capacity == b.gpu.capacity && a.gpu.context == b.gpu.context && a.gpu.workspace == b.gpu.workspace
        && a.marginBytes == b.marginBytes && a.gpus == b.gpus && a.strategy == b.strategy && a.gpu0Batch == b.gpu0Batch
        && a.offload == b.offload && a.allocator == b.allocator;
}
} // namespace

AnalysisSession::AnalysisSession(QObject* parent)
    : QObject(parent)
{
    m_pool.setMaxThreadCount(1);
}

AnalysisSession::~AnalysisSession()
{
    m_pool.waitForDone();
}

void AnalysisSession::setModel(ModelPtr model, const headroom::Config& config)
{
    m_model = std::move(model);
    m_config = config;
    m_report = {};
    m_plan = m_model ? headroom::makePlan(*m_model, config.freeze) : headroom::EnginePlan{};
    m_planFreeze = config.freeze;
    m_maxBatchConfig.reset();
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
    m_report = fastReport();
    emit reportChanged();
    if (m_synchronous) {
        m_report = headroom::buildReport(*m_model, m_config);
        m_complete = true;
        emit detailsChanged();
        return;
    }
    if (m_running)
        m_pending = true; // one job in flight at a time; the latest configuration runs next
    else
        startDetails();
}

headroom::Report AnalysisSession::fastReport()
{
    // buildReport(model, config, {.sweep = false}) from the same core functions, with the plan cached
    // and the max batch reused while only the batch changes (tests compare the two).
    if (m_planFreeze != m_config.freeze) {
        m_plan = headroom::makePlan(*m_model, m_config.freeze);
        m_planFreeze = m_config.freeze;
    }
    headroom::Report r;
    r.config = m_config;
    r.evaluation = headroom::evaluate(m_plan, m_config);
    if (!m_maxBatchConfig || !sameButBatch(*m_maxBatchConfig, m_config, m_model->batchSymbol)) {
        m_maxBatch = headroom::maxBatch(m_plan, m_config);
        m_maxBatchConfig = m_config;
    }
    headroom::Fit& f = r.fit;
    f.gpu = m_config.gpu.name;
    f.capacity = m_config.gpu.capacity;
    f.needed = headroom::neededBytes(m_config, r.evaluation);
    f.fits = f.capacity > 0 && f.needed + m_config.marginBytes <= f.capacity;
    f.headroom = f.capacity - f.needed;
    f.maxBatch = m_maxBatch;
    if (m_config.gpus > 1 || m_config.strategy != headroom::Strategy::Single)
        r.cluster = headroom::evaluateCluster(*m_model, m_config);
    return r;
}

void AnalysisSession::startDetails()
{
    m_running = true;
    m_pending = false;
    const int job = m_job;
    m_pool.start([this, job, model = m_model, config = m_config] {
        auto report = std::make_shared<headroom::Report>(headroom::buildReport(*model, config));
        QMetaObject::invokeMethod(this, [this, job, report] {
            m_running = false;
            if (job == m_job) {
                m_report = std::move(*report);
                m_complete = true;
                emit detailsChanged();
            } else if (m_pending) {
                startDetails();
            }
        }, Qt::QueuedConnection);
    });
}

} // namespace gui
