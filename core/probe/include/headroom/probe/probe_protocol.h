#pragma once
#include "headroom/memory/engine.h"

#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace headroom {

// The plan handed to headroom-probe (versioned JSON, "headroom.plan/1"): the timeline's allocation and
// free events, plus plans at other batch sizes for the max-batch bisection.
struct ProbePlan
{
    std::string model; // for messages
    std::string mode;  // "exact" | "caching" | "both"
    int64_t batch = 0;
    std::vector<AllocEvent> events;
    std::vector<std::pair<int64_t, std::vector<AllocEvent>>> batchPlans; // (batch, events) for bisection
    int timeLimitSeconds = 60;
    int device = 0;
    // What the probe needs for the cuBLAS/cuDNN workspace queries (docs/DESIGN.md "The CUDA probe").
    std::string dtype = "fp32"; // "fp32" | "fp16" | "bf16": element type of the GEMM/conv queries
    bool train = true;          // training: cuDNN's backward algorithms' workspace counts too
    struct Conv
    { // one distinct NCHW convolution of the model (forward shapes)
        int64_t n = 1, c = 1, h = 1, w = 1, k = 1, r = 1, s = 1;
        int64_t padH = 0, padW = 0, strideH = 1, strideW = 1, dilationH = 1, dilationW = 1, groups = 1;
        friend bool operator==(const Conv&, const Conv&) = default;
    };
    struct Gemm
    { // C[m,n] = A[m,k] B[k,n], `batch` times (MatMul/Gemm nodes)
        int64_t m = 1, n = 1, k = 1, batch = 1;
        friend bool operator==(const Gemm&, const Gemm&) = default;
    };
    std::vector<Conv> convs;
    std::vector<Gemm> gemms;
};
nlohmann::json toJson(const ProbePlan& plan);
ProbePlan planFromJson(const nlohmann::json& j); // throws headroom::Error on a malformed plan

// What the probe measured ("headroom.probe/1").
struct ProbeResult
{
    enum class Status : uint8_t { Ok, NoDevice, BuiltWithoutCuda, Failed, Crashed, TimedOut, Cancelled };
    Status status = Status::Failed;
    std::string message; // one line
    std::string deviceName;
    int64_t totalBytes = 0, freeBytes = 0;
    int64_t contextBytes = 0;
    int64_t exactPeak = 0, cachingPeak = 0; // measured device bytes above the baseline
    std::vector<int64_t> usedAfterEvent;    // cudaMemGetInfo after each event (exact mode)
    std::vector<std::pair<std::string, int64_t>> peakByCategory;
    int64_t cublasWorkspace = -1, cudnnWorkspace = -1;
    int64_t measuredMaxBatch = -1;
    bool oom = false; // the plan at `batch` did not fit
    // Added (all optional in the JSON; defaults mean "not measured"):
    int exitCode = -1; // of the probe process (-1: not run / killed)
    int signal = 0;    // that killed it (Crashed)
    int deviceIndex = 0, deviceCount = 0;
    std::vector<std::string> devices;                      // names of every visible device, by index
    int driverVersion = 0, runtimeVersion = 0;             // CUDA's encoding: 12040 = 12.4
    std::string contextMethod;                             // "nvml" (exact) | "memgetinfo" (upper bound)
    int64_t baselineBytes = 0;                             // device bytes in use when the replays start
    std::vector<int64_t> reservedAfterEvent;               // caching mode: bytes above the baseline per event
    int64_t cachingSegments = 0;                           // cudaMalloc calls of the caching replay
    int64_t oomAtEvent = -1;                               // first event that failed in the plan at `batch`
    int64_t cublasHandleBytes = -1, cudnnHandleBytes = -1; // device bytes cublasCreate/cudnnCreate took
    struct BatchTrial
    {
        int64_t batch = 0;
        bool fits = false;
        int64_t peak = 0;
    };
    std::vector<BatchTrial> batchTrials; // bisection steps, in the order they ran
    bool maxBatchIsLowerBound = false;   // the largest batch offered fit: the real max is higher
    double seconds = 0;                  // the probe's own run time
    std::vector<std::string> warnings;   // one line each (library absent, shapes skipped, ...)
};
nlohmann::json toJson(const ProbeResult& r);
ProbeResult probeResultFromJson(const nlohmann::json& j);

// Builds the plan from evaluations (one per batch) for the probe. Every event list is balanced (what the
// iteration keeps, e.g. weights, is freed at the end); the model's distinct Conv/GEMM shapes (at most 64
// each) go into convs/gemms.
ProbePlan makeProbePlan(const Model& model, const Config& config, const std::vector<int64_t>& bisectionBatches);

// Runs the headroom-probe executable with a time limit (posix_spawn + poll; kills it after the limit).
// `probePath` empty: look beside the current executable, then PATH. Never throws; failures are statuses.
ProbeResult runProbe(const ProbePlan& plan, const std::string& probePath, int timeLimitSeconds);

// ---- Added by the probe work (docs/PROBE.md) ----

// headroom-probe's exit codes. Out-of-memory is a result (Ok), never an exit code.
namespace probe_exit {
inline constexpr int Ok = 0, BadPlan = 1, BadUsage = 2, NoDevice = 3, TimeLimit = 4, CudaError = 5;
}
inline constexpr std::string_view kProbePlanSchema = "headroom.plan/1";
inline constexpr std::string_view kProbeResultSchema = "headroom.probe/1";

std::string_view toString(ProbeResult::Status s) noexcept; // "ok", "no_device", "timed_out", ...
std::optional<ProbeResult::Status> parseProbeStatus(std::string_view s) noexcept;
// Wire names of the categories in both JSON documents ("weights", "master_weights", ...): stable protocol
// names, independent of display names.
std::string_view probeCategoryName(Category c) noexcept;
std::optional<Category> parseProbeCategory(std::string_view s) noexcept;

// Theory from the events, computed exactly as the probe computes the measurement: bytes live after each
// event, and per category the most bytes of that category live at once (categories in enum order, all
// listed, zeros included).
std::vector<int64_t> liveAfterEvent(const std::vector<AllocEvent>& events);
std::vector<std::pair<std::string, int64_t>> peakByCategory(const std::vector<AllocEvent>& events);

// Batches worth offering the bisection: 1, powers of two and the neighbourhood of the predicted max
// (predicted/2 .. 2*predicted in ~10 % steps; powers of two only up to 4*predicted), plus `batch`;
// ascending, distinct, capped at `limit`.
std::vector<int64_t> bisectionBatches(int64_t predictedMax, int64_t batch, int64_t limit = 1 << 16);

struct ProbeRunOptions
{
    std::function<void(double fraction, const std::string& stage)> progress; // from the probe's stderr
    const std::atomic<bool>* cancel = nullptr; // set it to stop the probe (status Cancelled)
    std::vector<std::string> extraArgs;        // e.g. {"--list-devices"}
};
ProbeResult runProbe(const ProbePlan& plan, const std::string& probePath, int timeLimitSeconds,
                     const ProbeRunOptions& options);
// The probe executable: `hint` if it names an executable file, else headroom-probe beside the current
// executable, then on PATH; "" when none is found.
std::string findProbe(const std::string& hint);
// Devices only (headroom-probe --list-devices): fills deviceCount/devices, no replay.
ProbeResult listProbeDevices(const std::string& probePath, int timeLimitSeconds);

} // namespace headroom
