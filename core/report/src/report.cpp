// A report is built in three stages, each adding to what the one before made: the engine's figures, the fit,
// then the details (searches, curves, advice). buildReport runs them in order; the GUI runs the first two on
// every change and the third after a pause, on the same report (app/gui/session.cpp).
#include "headroom/report/report.h"

#include "headroom/import/batch.h"

#include <algorithm>

namespace headroom {
namespace {

bool oneGpu(const Config& c) { return c.gpus <= 1 && c.strategy == Strategy::Single; }

// The caller's stop flag (ReportOptions::cancel), latched into the report once it is seen.
class Stop
{
public:
    Stop(Report& report, const std::atomic<bool>* cancel) : m_report(report), m_cancel(cancel) {}
    bool operator()() const
    {
        m_report.cancelled = m_report.cancelled || (m_cancel && m_cancel->load(std::memory_order_relaxed));
        return m_report.cancelled;
    }

private:
    Report& m_report;
    const std::atomic<bool>* m_cancel;
};

// Batch points for the sweep chart: powers of two up to past the max batch (or the current batch),
// plus the current batch and the max batch themselves, so the chart shows where the line crosses.
std::vector<int64_t> sweepBatches(int64_t current, int64_t maxBatch)
{
    const int64_t top = std::max<int64_t>({current * 2, maxBatch * 2, 8});
    std::vector<int64_t> out;
    for (int64_t b = 1; b <= top && b <= (int64_t{1} << 20); b *= 2)
        out.push_back(b);
    out.push_back(current);
    if (maxBatch > 0)
        out.push_back(maxBatch);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

// --max SYMBOL. The search evaluates one GPU; a sharded or replicated configuration gets no number rather
// than a single-GPU one.
void addMaxSymbol(const EnginePlan& plan, Report& r, int symbol)
{
    r.fit.maxSymbol = symbol;
    r.fit.maxSymbolValue = r.fit.sizesUnknown || !oneGpu(r.config) ? kUnknownMax
                                                                   : maxSymbolValue(plan, r.config, symbol);
}

// Each symbol's largest fitting value (the batch's is the fit's max batch); stops early when cancelled.
std::vector<int64_t> symbolMaxima(const EnginePlan& plan, const Report& r, const Stop& stop)
{
    const Model& model = *plan.model;
    std::vector<int64_t> out;
    for (size_t i = 0; i < model.symbols.size() && !stop(); ++i)
        out.push_back(static_cast<int>(i) == model.batchSymbol ? r.fit.maxBatch
                                                               : maxSymbolValue(plan, r.config, static_cast<int>(i)));
    return out;
}

// The need at each sweep batch; stops early when cancelled.
std::vector<std::pair<int64_t, int64_t>> batchSweep(const EnginePlan& plan, const Report& r, const Stop& stop)
{
    const Model& model = *plan.model;
    const int64_t current = batchOf(model, r.config);
    std::vector<std::pair<int64_t, int64_t>> out;
    for (int64_t b : sweepBatches(current, r.fit.maxBatch)) {
        if (stop())
            break;
        const Config c = withBatch(model, r.config, b);
        if (r.cluster.gpus.empty()) {
            // The configured batch was evaluated above: the same need, not a second replay.
            out.emplace_back(b, neededBytes(c, b == current ? r.evaluation : evaluateLight(plan, c)));
        } else {
            int64_t need = 0;
            for (const GpuShare& g : evaluateCluster(plan, c).gpus)
                need = std::max(need, g.needed);
            out.emplace_back(b, need);
        }
    }
    return out;
}

std::vector<Advice> reportAdvice(const EnginePlan& plan, const Report& r)
{
    AdviceInputs known;
    known.plan = &plan;
    if (r.config.mode == Mode::Train)
        known.checkpointCurve = &r.checkpointCurve;
    if (r.cluster.gpus.empty()) {
        known.need = r.fit.needed;
        known.fits = r.fit.fitsSafely;
    }
    return advise(*plan.model, r.config, known);
}

} // namespace

Report reportFigures(const EnginePlan& plan, const Config& config)
{
    Report r;
    r.config = config;
    r.evaluation = evaluate(plan, config);
    if (!oneGpu(config))
        r.cluster = evaluateCluster(plan, config);
    return r;
}

void addFit(const EnginePlan& plan, Report& r, std::optional<int64_t> knownMaxBatch)
{
    // On one GPU this is computeFit(plan, config, evaluation).
    r.fit = computeClusterFit(plan, r.config, r.evaluation, r.cluster, knownMaxBatch);
}

void addDetails(const EnginePlan& plan, Report& r, const ReportOptions& options)
{
    const Model& model = *plan.model;
    const Config& config = r.config;
    const Stop stop(r, options.cancel);
    if (stop())
        return;
    if (options.maxSymbol >= 0 && size_t(options.maxSymbol) < model.symbols.size())
        addMaxSymbol(plan, r, options.maxSymbol);
    if (options.symbolMaxima && !r.fit.sizesUnknown && oneGpu(config) && config.gpu.capacity > 0)
        r.symbolMax = symbolMaxima(plan, r, stop);
    // No curves or advice built on sizes that are not known.
    if (!options.sweep || r.fit.sizesUnknown || stop())
        return;
    if (config.mode == Mode::Train) {
        r.checkpointCurve = checkpointCurve(plan, config, 16);
        r.bestCheckpoint = bestCheckpointSegments(r.checkpointCurve);
    }
    if (options.batchSweep && model.batchSymbol >= 0)
        r.batchSweep = batchSweep(plan, r, stop);
    if (stop())
        return;
    r.advice = reportAdvice(plan, r);
    // The cheapest plan that makes it fit (every output says it: table, JSON, banner, Breakdown, PDF).
    if (r.fit.capacity > 0)
        r.fitPlan = planToFit(*plan.model, r.config, &plan, &options.loraVariant);
}

Report buildReport(const EnginePlan& plan, const Config& config, const ReportOptions& options)
{
    Report r = reportFigures(plan, config);
    addFit(plan, r);
    addDetails(plan, r, options);
    return r;
}

std::vector<PeakPart> peakParts(const Evaluation& e)
{
    using K = PeakPart::Kind;
    const Breakdown& m = e.memory;
    const int64_t stored = m.weights + m.dequantTransient + m.gradients + m.optimizer + m.masterWeights;
    const int64_t live = std::max<int64_t>(0, m.peak - stored);
    const bool optimizerPeak = e.peakStep >= 0 && size_t(e.peakStep) < e.timeline.size() &&
                               e.timeline[size_t(e.peakStep)].phase == Phase::Optimizer;
    const int64_t activations = optimizerPeak ? std::min(m.activationsPeak, live) : live;
    const int64_t input = optimizerPeak ? std::min(m.input, live - activations) : 0; // the data loader's batch
    return {{K::Weights, m.weights},     {K::DequantizedWeight, m.dequantTransient},    {K::Gradients, m.gradients},
            {K::Optimizer, m.optimizer}, {K::MasterWeights, m.masterWeights},           {K::Activations, activations},
            {K::Input, input},           {K::OptimizerStep, live - activations - input}};
}

std::string_view toString(PeakPart::Kind k) noexcept
{
    using K = PeakPart::Kind;
    switch (k) {
    case K::Weights: return "weights";
    case K::DequantizedWeight: return "dequantized weight";
    case K::Gradients: return "gradients";
    case K::Optimizer: return "optimizer states";
    case K::MasterWeights: return "master weights";
    case K::Activations: return "activations";
    case K::Input: return "model input";
    case K::OptimizerStep: return "optimizer-step temporaries";
    }
    return "other";
}

Report buildReport(const Model& model, const Config& config, const ReportOptions& options)
{
    return buildReport(makePlan(model, config), config, options);
}

} // namespace headroom
