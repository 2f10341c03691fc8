// headroom-probe: replays a Headroom memory plan on a real GPU and reports what the device did
// (docs/PROBE.md). Host C++ over the CUDA runtime API only; no managed memory, no kernels of its own.
#include "libraries.h"
#include "replay.h"

#include "headroom/base/error.h"
#include "headroom/headroom_config.h"
#include "headroom/probe/probe_protocol.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <unistd.h>

namespace {

using headroom::ProbePlan;
using headroom::ProbeResult;
namespace exit_code = headroom::probe_exit;

constexpr const char* kUsage =
    "Usage: headroom-probe [--plan FILE|-] [--out FILE] [--device N] [--time-limit SECONDS]\n"
    "       headroom-probe --list-devices | --version | --help\n"
    "\n"
    "Replays a Headroom memory plan (JSON \"headroom.plan/1\", from FILE or standard input) on a CUDA\n"
    "device with real allocations and writes the measurement (JSON \"headroom.probe/1\") to standard\n"
    "output or FILE. Progress lines (\"progress 0.42 stage\") and errors go to standard error.\n"
    "\n"
    "Exit codes: 0 measured (out-of-memory is a result, not an error), 1 the plan could not be used,\n"
    "2 bad usage, 3 no CUDA device or driver, 4 time limit reached, 5 CUDA error.\n";

struct Options
{
    std::string plan = "-";
    std::string out;
    int device = -1;   // -1: the plan's
    int timeLimit = 0; // 0: the plan's
    bool listDevices = false;
};

void progress(double fraction, const char* stage)
{
    std::fprintf(stderr, "progress %.2f %s\n", fraction, stage);
    std::fflush(stderr);
}

[[noreturn]] void die(int code, const std::string& line)
{
    std::fprintf(stderr, "%s\n", line.c_str());
    std::exit(code);
}

// The backstop for a driver call that never returns: the replay loop checks the deadline itself, but
// only between calls. The kernel frees the device memory of a process that exits.
extern "C" void onAlarm(int)
{
    constexpr char msg[] = "headroom-probe: time limit reached\n";
    [[maybe_unused]] const auto n = ::write(STDERR_FILENO, msg, sizeof msg - 1);
    std::_Exit(exit_code::TimeLimit);
}

std::string cudaMessage(cudaError_t e) { return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }

bool isNoDevice(cudaError_t e)
{
    return e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorInitializationError ||
           e == cudaErrorNotSupported || e == cudaErrorDevicesUnavailable || e == cudaErrorSystemDriverMismatch ||
           e == cudaErrorCompatNotSupportedOnDevice || e == cudaErrorStubLibrary || e == cudaErrorSystemNotReady;
}

Options parseArgs(int argc, char** argv)
{
    Options o;
    auto value = [&](int& i) -> std::string {
        if (i + 1 >= argc)
            die(exit_code::BadUsage, std::string("headroom-probe: ") + argv[i] + " needs a value");
        return argv[++i];
    };
    auto number = [&](int& i) -> int {
        const std::string flag = argv[i];
        const std::string v = value(i);
        char* end = nullptr;
        const long n = std::strtol(v.c_str(), &end, 10);
        if (end == v.c_str() || *end != '\0' || n < 0 || n > 1000000)
            die(exit_code::BadUsage, "headroom-probe: " + flag + " needs a non-negative number, got \"" + v + "\"");
        return static_cast<int>(n);
    };
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fputs(kUsage, stdout);
            std::exit(exit_code::Ok);
        } else if (a == "--version") {
            std::printf("headroom-probe %s (CUDA runtime %d.%d)\n", HEADROOM_VERSION, CUDART_VERSION / 1000,
                        (CUDART_VERSION % 1000) / 10);
            std::exit(exit_code::Ok);
        } else if (a == "--plan") {
            o.plan = value(i);
        } else if (a == "--out") {
            o.out = value(i);
        } else if (a == "--device") {
            o.device = number(i);
        } else if (a == "--time-limit") {
            o.timeLimit = number(i);
        } else if (a == "--list-devices") {
            o.listDevices = true;
        } else {
            die(exit_code::BadUsage, "headroom-probe: unknown option \"" + a + "\" (see --help)");
        }
    }
    return o;
}

ProbePlan readPlan(const std::string& path)
{
    std::FILE* in = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
    if (!in)
        die(exit_code::BadPlan, path + ": cannot open the plan: " + std::strerror(errno));
    std::string text;
    char buf[1 << 16];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, in)) > 0;)
        text.append(buf, n);
    if (in != stdin)
        std::fclose(in);
    const std::string name = path == "-" ? std::string("<stdin>") : path;
    try {
        return headroom::planFromJson(nlohmann::json::parse(text));
    } catch (const nlohmann::json::exception&) {
        die(exit_code::BadPlan, name + ": the plan is not valid JSON");
    } catch (const headroom::Error& e) {
        die(exit_code::BadPlan, name + ": " + e.what());
    }
}

void writeResult(const ProbeResult& r, const std::string& out)
{
    const std::string text = headroom::toJson(r).dump() + "\n";
    if (out.empty()) {
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);
        return;
    }
    std::ofstream f(out, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f)
        die(exit_code::BadUsage, out + ": cannot write the result");
}

std::string pciBusId(int device)
{
    char id[32] = {};
    return cudaDeviceGetPCIBusId(id, sizeof id, device) == cudaSuccess ? std::string(id) : std::string();
}

} // namespace

// Long on purpose: the probe's run in the order the protocol defines it (plan, device, context overhead, library
// workspaces, replays, max-batch bisection, result); each section is commented where it starts.
int main(int argc, char** argv)
{
    const auto start = probe::Clock::now();
    const Options opt = parseArgs(argc, argv);
    ProbePlan plan;
    if (!opt.listDevices)
        plan = readPlan(opt.plan);
    const int limit = opt.timeLimit > 0 ? opt.timeLimit : plan.timeLimitSeconds;
    const auto deadline = start + std::chrono::seconds(limit);
    std::signal(SIGALRM, onAlarm);
    alarm(static_cast<unsigned>(limit + 2));
    const int device = opt.device >= 0 ? opt.device : plan.device;

    ProbeResult r;
    r.status = ProbeResult::Status::Ok;
    cudaDriverGetVersion(&r.driverVersion);
    cudaRuntimeGetVersion(&r.runtimeVersion);
    int count = 0;
    if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess || count == 0) {
        if (e == cudaSuccess || isNoDevice(e))
            die(exit_code::NoDevice, e == cudaSuccess ? std::string("no CUDA device found")
                                                      : "no CUDA device found (" + cudaMessage(e) + ")");
        die(exit_code::CudaError, "headroom-probe: " + cudaMessage(e));
    }
    r.deviceCount = count;
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp prop{};
        r.devices.push_back(cudaGetDeviceProperties(&prop, i) == cudaSuccess ? std::string(prop.name)
                                                                             : std::string("?"));
    }
    if (device >= count)
        die(exit_code::BadUsage, "headroom-probe: device " + std::to_string(device) + " does not exist (" +
                                     std::to_string(count) + " found)");
    r.deviceIndex = device;
    r.deviceName = r.devices[static_cast<size_t>(device)];
    if (opt.listDevices) {
        r.message = std::to_string(count) + " CUDA device(s)";
        writeResult(r, opt.out);
        return exit_code::Ok;
    }

    // Context overhead: NVML sees the device before our context exists; without NVML, everything in use
    // once the context exists is the upper bound (it includes other processes).
    progress(0.0, "creating the CUDA context");
    const int64_t nvmlBefore = probe::nvmlUsedBytes(pciBusId(device));
    if (const cudaError_t e = cudaSetDevice(device); e != cudaSuccess)
        die(isNoDevice(e) ? exit_code::NoDevice : exit_code::CudaError, "headroom-probe: " + cudaMessage(e));
    if (const cudaError_t e = cudaFree(nullptr); e != cudaSuccess)
        die(isNoDevice(e) ? exit_code::NoDevice : exit_code::CudaError, "headroom-probe: " + cudaMessage(e));
    size_t freeBytes = 0, totalBytes = 0;
    if (const cudaError_t e = cudaMemGetInfo(&freeBytes, &totalBytes); e != cudaSuccess)
        die(exit_code::CudaError, "headroom-probe: " + cudaMessage(e));
    r.totalBytes = static_cast<int64_t>(totalBytes);
    r.freeBytes = static_cast<int64_t>(freeBytes);
    const int64_t usedWithContext = r.totalBytes - r.freeBytes;
    const int64_t nvmlAfter = nvmlBefore >= 0 ? probe::nvmlUsedBytes(pciBusId(device)) : -1;
    if (nvmlBefore >= 0 && nvmlAfter >= nvmlBefore) {
        r.contextBytes = nvmlAfter - nvmlBefore;
        r.contextMethod = "nvml";
    } else {
        r.contextBytes = usedWithContext;
        r.contextMethod = "memgetinfo";
    }

    progress(0.05, "measuring cuBLAS and cuDNN");
    probe::Libraries libraries;
    const probe::WorkspaceMeasure ws = libraries.measure(plan);
    r.cublasHandleBytes = ws.cublasHandle;
    r.cublasWorkspace = ws.cublasWorkspace;
    r.cudnnHandleBytes = ws.cudnnHandle;
    r.cudnnWorkspace = ws.cudnnWorkspace;
    r.warnings = ws.warnings;

    // Replays start from what is in use now (context + library handles), like a framework's first step.
    r.baselineBytes = probe::deviceUsed();
    auto checkEnd = [&](const probe::ReplayOutcome& o) {
        if (o.timedOut)
            die(exit_code::TimeLimit, "headroom-probe: time limit of " + std::to_string(limit) + " s reached");
        if (o.cudaError != 0)
            die(exit_code::CudaError, "headroom-probe: " + cudaMessage(static_cast<cudaError_t>(o.cudaError)));
    };
    const bool exact = plan.mode == "exact" || plan.mode == "both";
    const bool caching = plan.mode == "caching" || plan.mode == "both";
    if (exact) {
        progress(0.1, "replaying exact");
        const probe::ReplayOutcome o = probe::replay(plan.events, false, r.baselineBytes, deadline, true);
        checkEnd(o);
        r.exactPeak = o.peak;
        r.usedAfterEvent = o.usedAfterEvent;
        r.oom = o.oom;
        r.oomAtEvent = o.oomAtEvent;
        for (size_t c = 0; c < o.categoryPeak.size(); ++c)
            r.peakByCategory.emplace_back(std::string(headroom::probeCategoryName(static_cast<headroom::Category>(c))),
                                          o.categoryPeak[c]);
    }
    if (caching) {
        progress(0.3, "replaying caching");
        const probe::ReplayOutcome o = probe::replay(plan.events, true, r.baselineBytes, deadline, true);
        checkEnd(o);
        r.cachingPeak = o.peak;
        r.cachingSegments = o.deviceAllocs;
        r.reservedAfterEvent = o.usedAfterEvent;
        if (!exact) {
            r.oom = o.oom;
            r.oomAtEvent = o.oomAtEvent;
        }
    }

    // Max batch: bisection over the offered plans, assuming need grows with the batch. A plan fits when its
    // replay never hits out-of-memory; the caching replay is what a PyTorch run needs.
    auto plans = plan.batchPlans;
    std::sort(plans.begin(), plans.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    if (!plans.empty()) {
        int64_t lo = -1, hi = static_cast<int64_t>(plans.size());
        int step = 0;
        while (hi - lo > 1) {
            const int64_t mid = lo + (hi - lo) / 2;
            const auto& [batch, events] = plans[static_cast<size_t>(mid)];
            const std::string stage = "bisecting: batch " + std::to_string(batch);
            progress(std::min(0.99, 0.5 + 0.08 * step++), stage.c_str());
            const probe::ReplayOutcome o = probe::replay(events, caching, r.baselineBytes, deadline, false);
            checkEnd(o);
            r.batchTrials.push_back({batch, !o.oom, o.peak});
            (o.oom ? hi : lo) = mid;
        }
        r.measuredMaxBatch = lo >= 0 ? plans[static_cast<size_t>(lo)].first : 0;
        r.maxBatchIsLowerBound = lo == static_cast<int64_t>(plans.size()) - 1;
    }

    r.message = r.oom ? "does not fit at batch " + std::to_string(plan.batch)
                      : "fits at batch " + std::to_string(plan.batch);
    r.seconds = std::chrono::duration<double>(probe::Clock::now() - start).count();
    progress(1.0, "done");
    writeResult(r, opt.out);
    return exit_code::Ok;
}
