#pragma once
#include "headroom/hardware/multigpu.h"
#include "headroom/memory/engine.h"
#include "headroom/report/advisor.h"
#include "headroom/report/fitplan.h"

#include <atomic>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace headroom {

// Everything one output (CLI table/JSON, GUI export, PDF) shows for one configuration, computed once.
struct Report
{
    Config config;
    Evaluation evaluation;
    Fit fit;
    ClusterEvaluation cluster;
    std::vector<CheckpointPoint> checkpointCurve;
    int bestCheckpoint = 1;
    std::vector<std::pair<int64_t, int64_t>> batchSweep; // (batch, need)
    std::vector<Advice> advice;
    FitPlan fitPlan; // the cheapest plan that makes it fit (planToFit), with the advice; every output says it
    std::optional<nlohmann::json> probe; // probe results when run
    // Per symbol (ReportOptions::symbolMaxima): the largest value that fits with the others as configured;
    // kUnknownMax where no number is honest. Empty when not asked or when the fit is unknown.
    std::vector<int64_t> symbolMax;
    bool cancelled = false; // ReportOptions::cancel stopped it: incomplete, not to be shown
};

struct ReportOptions
{
    bool timeline = false;     // include the per-step timeline in JSON
    bool sweep = true;         // compute batch sweep / checkpoint curve / advice (costly parts)
    bool batchSweep = true;    // with sweep: the batch sweep too (the GUI leaves it out while no tab draws it)
    int maxSymbol = -1;        // --max SYMBOL: symbol index whose largest fitting value goes in fit.max
    bool symbolMaxima = false; // fill Report::symbolMax (the GUI marks each slider's max)
    // Set by another thread when the report is no longer wanted (the GUI's controls moved on): buildReport
    // stops between its searches and returns what it has, which the caller must drop (Report::cancelled).
    const std::atomic<bool>* cancel = nullptr;
    // The model with PEFT's default adapters, for the fit plan's LoRA step (peftDefaultLoraVariant); empty:
    // the plan has no such step.
    LoraVariantSource loraVariant = {};
};

Report buildReport(const Model& model, const Config& config, const ReportOptions& options = {});
// Same over a plan the caller keeps (plan.model is the model), so repeated reports share it.
Report buildReport(const EnginePlan& plan, const Config& config, const ReportOptions& options = {});

// buildReport's three stages, for a caller that shows the first figures before the rest (the GUI); each
// adds to the report the one before made, and buildReport(plan, config, options) is the three in order.
// 1. The engine's figures for `config`: the evaluation and, on several GPUs, each GPU's share.
Report reportFigures(const EnginePlan& plan, const Config& config);
// 2. The fit and the max batch; `knownMaxBatch` is an earlier search's, reused while only the batch changed.
void addFit(const EnginePlan& plan, Report& report, std::optional<int64_t> knownMaxBatch = std::nullopt);
// 3. What `options` asks for beyond the fit: fit.max, the symbols' maxima, the checkpoint curve, the batch
// sweep, the advice. What it computes replaces what the report held, so a detailed report can be detailed
// again (with the batch sweep it left out).
void addDetails(const EnginePlan& plan, Report& report, const ReportOptions& options);
// What the allocated peak holds, every byte in a named part, in the order the bars stack them: the stored
// state, then what is live at that moment. At an optimizer-step peak (the step's foreach/fused temporaries
// beside every parameter, gradient and state) the activations are only those still live, and the rest is
// the step's own temporaries, never "activations". The parts add up to Breakdown::peak.
struct PeakPart
{
    enum class Kind : uint8_t {
        Weights,
        DequantizedWeight,
        Gradients,
        Optimizer,
        MasterWeights,
        Activations, // at an optimizer-step peak those still live; at any other, everything live beyond the state
        Input,       // optimizer-step peak: the model input the data loader keeps
        OptimizerStep
    };
    Kind kind = Kind::Weights;
    int64_t bytes = 0;
};
std::vector<PeakPart> peakParts(const Evaluation& evaluation);
// "weights", "dequantized weight", ..., "optimizer-step temporaries": the part's name in the CLI's table.
std::string_view toString(PeakPart::Kind kind) noexcept;

// The JSON of docs/DESIGN.md "Machine-readable output": schema "headroom.report/1".
nlohmann::json toJson(const Model& model, const Report& report, const ReportOptions& options = {});
// CSV of the layer table (one row per node, topological): path,op,output_shapes,params,activation_bytes,saved_bytes
std::string toCsv(const Model& model, const Report& report);
// Netron attachment: {"signature":"netron:attachment", ...} with each node's bytes as metrics.
nlohmann::json toNetronAttachment(const Model& model, const Report& report);

} // namespace headroom
