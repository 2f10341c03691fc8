// runProbe: headroom-probe as a child process, its exit code and output mapped to a ProbeResult.
#include "headroom/base/error.h"
#include "headroom/headroom_config.h"
#include "headroom/probe/probe_protocol.h"
#include "process.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace headroom {

namespace {

bool isExecutable(const std::string& path)
{
    struct stat st
    {
    };
    return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string selfDir()
{
    char buf[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0)
        return {};
    std::string p(buf, static_cast<size_t>(n));
    const auto slash = p.rfind('/');
    return slash == std::string::npos ? std::string() : p.substr(0, slash);
}

std::string firstLine(const std::string& s)
{
    // The probe's last non-progress line is its message; progress lines start with "progress ".
    std::string last;
    size_t pos = 0;
    while (pos < s.size()) {
        size_t nl = s.find('\n', pos);
        if (nl == std::string::npos)
            nl = s.size();
        std::string line = s.substr(pos, nl - pos);
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (!line.empty() && line.rfind("progress ", 0) != 0)
            last = line;
        pos = nl + 1;
    }
    return last;
}

std::string signalName(int sig)
{
    const char* d = ::strsignal(sig);
    return std::to_string(sig) + (d ? std::string(": ") + d : std::string());
}

ProbeResult statusOnly(ProbeResult::Status status, std::string message)
{
    ProbeResult r;
    r.status = status;
    r.message = std::move(message);
    return r;
}

// "progress 0.42 replaying exact" -> (0.42, "replaying exact")
void parseProgress(std::string_view line, const std::function<void(double, const std::string&)>& cb)
{
    constexpr std::string_view tag = "progress ";
    if (!cb || line.substr(0, tag.size()) != tag)
        return;
    const std::string rest(line.substr(tag.size()));
    char* end = nullptr;
    const double f = std::strtod(rest.c_str(), &end);
    if (end == rest.c_str())
        return;
    std::string stage(end);
    while (!stage.empty() && stage.front() == ' ')
        stage.erase(0, 1);
    cb(f, stage);
}

} // namespace

std::string findProbe(const std::string& hint)
{
    if (!hint.empty())
        return isExecutable(hint) ? hint : std::string();
    if (const std::string dir = selfDir(); !dir.empty()) {
        for (const char* rel : {"/headroom-probe", "/../probe/headroom-probe", "/../app/probe/headroom-probe"}) {
            const std::string p = dir + rel;
            if (isExecutable(p))
                return p;
        }
    }
    if (const char* path = std::getenv("PATH")) {
        std::string_view rest(path);
        while (!rest.empty()) {
            const auto colon = rest.find(':');
            const std::string dir(rest.substr(0, colon));
            const std::string p = (dir.empty() ? std::string(".") : dir) + "/headroom-probe";
            if (isExecutable(p))
                return p;
            if (colon == std::string_view::npos)
                break;
            rest.remove_prefix(colon + 1);
        }
    }
    return {};
}

ProbeResult runProbe(const ProbePlan& plan, const std::string& probePath, int timeLimitSeconds,
                     const ProbeRunOptions& options)
{
    try {
        const std::string exe = findProbe(probePath);
        if (exe.empty()) {
            if (!probePath.empty())
                return statusOnly(ProbeResult::Status::BuiltWithoutCuda, "headroom-probe not found: " + probePath);
            return statusOnly(ProbeResult::Status::BuiltWithoutCuda,
                              HEADROOM_HAVE_CUDA ? "headroom-probe not found" : "built without CUDA");
        }
        const int limit = timeLimitSeconds > 0 ? timeLimitSeconds
                                               : (plan.timeLimitSeconds > 0 ? plan.timeLimitSeconds : 60);

        detail::ProcessSpec spec;
        spec.program = exe;
        // The probe's own limit is a little shorter, so it can free everything and report before we kill it.
        spec.args = {"--time-limit", std::to_string(std::max(1, limit - 1)), "--device", std::to_string(plan.device)};
        spec.args.insert(spec.args.end(), options.extraArgs.begin(), options.extraArgs.end());
        spec.input = toJson(plan).dump();
        spec.limit = std::chrono::seconds(limit);
        spec.cancel = options.cancel;
        if (options.progress)
            spec.onErrLine = [&](std::string_view line) { parseProgress(line, options.progress); };
        const detail::ProcessOutcome o = detail::runProcess(spec);

        ProbeResult r;
        const std::string errLine = firstLine(o.err);
        if (!o.started)
            r = statusOnly(ProbeResult::Status::BuiltWithoutCuda,
                           "headroom-probe could not be started: " + exe + ": " + std::strerror(o.spawnErrno));
        else if (o.cancelled)
            r = statusOnly(ProbeResult::Status::Cancelled, "probe cancelled");
        else if (o.timedOut)
            r = statusOnly(ProbeResult::Status::TimedOut,
                           "headroom-probe did not finish within " + std::to_string(limit) + " s and was stopped");
        else if (o.signal != 0) {
            r = statusOnly(ProbeResult::Status::Crashed,
                           "headroom-probe crashed (signal " + signalName(o.signal) + ")");
            r.signal = o.signal;
        } else if (o.exitCode == 127 && o.out.empty())
            r = statusOnly(ProbeResult::Status::BuiltWithoutCuda, "headroom-probe could not be executed: " + exe);
        else if (o.exitCode == probe_exit::NoDevice)
            r = statusOnly(ProbeResult::Status::NoDevice, errLine.empty() ? "no CUDA device found" : errLine);
        else if (o.exitCode == probe_exit::TimeLimit)
            r = statusOnly(ProbeResult::Status::TimedOut, errLine.empty() ? "probe time limit reached" : errLine);
        else if (o.exitCode != probe_exit::Ok)
            r = statusOnly(ProbeResult::Status::Failed,
                           errLine.empty() ? "headroom-probe failed with exit code " + std::to_string(o.exitCode)
                                           : errLine);
        else {
            try {
                r = probeResultFromJson(nlohmann::json::parse(o.out));
            } catch (const nlohmann::json::exception&) {
                r = statusOnly(ProbeResult::Status::Failed, "probe result: not valid JSON");
            } catch (const Error& e) {
                r = statusOnly(ProbeResult::Status::Failed, e.what());
            }
        }
        if (o.exited)
            r.exitCode = o.exitCode;
        return r;
    } catch (const std::exception& e) {
        return statusOnly(ProbeResult::Status::Failed, std::string("probe: ") + e.what());
    }
}

ProbeResult runProbe(const ProbePlan& plan, const std::string& probePath, int timeLimitSeconds)
{
    return runProbe(plan, probePath, timeLimitSeconds, ProbeRunOptions{});
}

ProbeResult listProbeDevices(const std::string& probePath, int timeLimitSeconds)
{
    ProbeRunOptions options;
    options.extraArgs = {"--list-devices"};
    return runProbe(ProbePlan{}, probePath, timeLimitSeconds, options);
}

} // namespace headroom
