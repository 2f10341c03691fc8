#pragma once
#include "headroom/engine.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace headroom {

// The plan handed to headroom-probe (versioned JSON, "headroom.plan/1"): the timeline's allocation and
// free events, plus plans at other batch sizes for the max-batch bisection.
struct ProbePlan {
    std::string model;                     // for messages
    std::string mode;                      // "exact" | "caching" | "both"
    int64_t batch = 0;
    std::vector<AllocEvent> events;
    std::vector<std::pair<int64_t, std::vector<AllocEvent>>> batchPlans; // (batch, events) for bisection
    int timeLimitSeconds = 60;
    int device = 0;
};
nlohmann::json toJson(const ProbePlan& plan);
ProbePlan planFromJson(const nlohmann::json& j); // throws headroom::Error on a malformed plan

// What the probe measured ("headroom.probe/1").
struct ProbeResult {
    enum class Status : uint8_t { Ok, NoDevice, BuiltWithoutCuda, Failed, Crashed, TimedOut, Cancelled };
    Status status = Status::Failed;
    std::string message;                   // one line
    std::string deviceName;
    int64_t totalBytes = 0, freeBytes = 0;
    int64_t contextBytes = 0;
    int64_t exactPeak = 0, cachingPeak = 0;          // measured device bytes above the baseline
    std::vector<int64_t> usedAfterEvent;             // cudaMemGetInfo after each event (exact mode)
    std::vector<std::pair<std::string, int64_t>> peakByCategory;
    int64_t cublasWorkspace = -1, cudnnWorkspace = -1;
    int64_t measuredMaxBatch = -1;
    bool oom = false;                                 // the plan at `batch` did not fit
};
nlohmann::json toJson(const ProbeResult& r);
ProbeResult probeResultFromJson(const nlohmann::json& j);

// Builds the plan from evaluations (one per batch) for the probe.
ProbePlan makeProbePlan(const Model& model, const Config& config, const std::vector<int64_t>& bisectionBatches);

// Runs the headroom-probe executable with a time limit (posix_spawn + poll; kills it after the limit).
// `probePath` empty: look beside the current executable, then PATH. Never throws; failures are statuses.
ProbeResult runProbe(const ProbePlan& plan, const std::string& probePath, int timeLimitSeconds);

} // namespace headroom
