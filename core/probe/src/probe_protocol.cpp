// The plan/result JSON of headroom-probe (docs/PROBE.md). This file has no engine dependency so the probe
// executable links it without pulling the engine (or ONNX) in.
#include "headroom/probe/probe_protocol.h"
#include "headroom/base/error.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>

namespace headroom {

namespace {

using json = nlohmann::json;

constexpr std::array<std::string_view, static_cast<size_t>(Category::Count)> kCategoryNames = {
    "weights",     "buffers",   "gradients", "optimizer", "master_weights",
    "activations", "workspace", "context",   "input",     "loss"};

constexpr std::array<std::string_view, 7> kStatusNames = {"ok",      "no_device", "built_without_cuda", "failed",
                                                          "crashed", "timed_out", "cancelled"};

[[noreturn]] void fail(std::string_view what, const std::string& detail)
{
    throw Error(std::string(what) + ": " + detail);
}

// Typed field access with one-line errors naming the document and the field.
template <typename T> T get(const json& j, const char* key, std::string_view doc, T fallback, bool required)
{
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
        if (required)
            fail(doc, std::string("missing field \"") + key + "\"");
        return fallback;
    }
    try {
        return it->get<T>();
    } catch (const json::exception&) {
        fail(doc, std::string("field \"") + key + "\" has the wrong type (" + it->type_name() + ")");
    }
}

int64_t nonNegative(int64_t v, const char* key, std::string_view doc)
{
    if (v < 0)
        fail(doc, std::string("field \"") + key + "\" is negative");
    return v;
}

void checkSchema(const json& j, std::string_view expected, std::string_view doc)
{
    if (!j.is_object())
        fail(doc, std::string("expected a JSON object, got ") + j.type_name());
    const std::string schema = get<std::string>(j, "schema", doc, {}, true);
    if (schema != expected)
        fail(doc, "unsupported schema \"" + schema + "\" (expected \"" + std::string(expected) + "\")");
}

json eventsToJson(const std::vector<AllocEvent>& events)
{
    // Compact rows: plans for many batches of a large model carry tens of thousands of events.
    json rows = json::array();
    for (const AllocEvent& e : events)
        rows.push_back(json::array({e.kind == AllocEvent::Kind::Alloc ? "alloc" : "free", e.id, e.bytes,
                                    probeCategoryName(e.category), e.step, e.tensor}));
    return rows;
}

std::vector<AllocEvent> eventsFromJson(const json& rows, std::string_view doc)
{
    if (!rows.is_array())
        fail(doc, "\"events\" is not an array");
    std::vector<AllocEvent> events;
    events.reserve(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
        const json& r = rows[i];
        const std::string where = "event " + std::to_string(i);
        if (!r.is_array() || r.size() < 4 || !r[0].is_string() || !r[1].is_number_integer() ||
            !r[2].is_number_integer() || !r[3].is_string())
            fail(doc, where + " is not [\"alloc\"|\"free\", id, bytes, category, step, tensor]");
        AllocEvent e;
        const auto kind = r[0].get<std::string>();
        if (kind == "alloc")
            e.kind = AllocEvent::Kind::Alloc;
        else if (kind == "free")
            e.kind = AllocEvent::Kind::Free;
        else
            fail(doc, where + " has unknown kind \"" + kind + "\"");
        e.id = r[1].get<int64_t>();
        e.bytes = r[2].get<int64_t>();
        if (e.bytes < 0)
            fail(doc, where + " has negative bytes");
        const auto cat = parseProbeCategory(r[3].get<std::string>());
        if (!cat)
            fail(doc, where + " has unknown category \"" + r[3].get<std::string>() + "\"");
        e.category = *cat;
        if (r.size() > 4 && r[4].is_number_integer())
            e.step = r[4].get<int>();
        if (r.size() > 5 && r[5].is_number_integer())
            e.tensor = r[5].get<int>();
        events.push_back(e);
    }
    return events;
}

json intArray(const std::vector<int64_t>& v) { return json(v); }

std::vector<int64_t> intVector(const json& j, const char* key, std::string_view doc)
{
    const auto it = j.find(key);
    if (it == j.end() || it->is_null())
        return {};
    if (!it->is_array())
        fail(doc, std::string("field \"") + key + "\" is not an array");
    std::vector<int64_t> out;
    out.reserve(it->size());
    for (const json& v : *it) {
        if (!v.is_number_integer())
            fail(doc, std::string("field \"") + key + "\" holds a non-integer");
        out.push_back(v.get<int64_t>());
    }
    return out;
}

std::pair<int64_t, int64_t> pairOf(const json& j, const char* key, std::string_view doc, int64_t fallback)
{
    const auto it = j.find(key);
    if (it == j.end())
        return {fallback, fallback};
    if (!it->is_array() || it->size() != 2 || !(*it)[0].is_number_integer() || !(*it)[1].is_number_integer())
        fail(doc, std::string("field \"") + key + "\" is not [h, w]");
    return {(*it)[0].get<int64_t>(), (*it)[1].get<int64_t>()};
}

} // namespace

std::string_view toString(ProbeResult::Status s) noexcept
{
    const auto i = static_cast<size_t>(s);
    return i < kStatusNames.size() ? kStatusNames[i] : std::string_view("failed");
}

std::optional<ProbeResult::Status> parseProbeStatus(std::string_view s) noexcept
{
    for (size_t i = 0; i < kStatusNames.size(); ++i)
        if (kStatusNames[i] == s)
            return static_cast<ProbeResult::Status>(i);
    return std::nullopt;
}

std::string_view probeCategoryName(Category c) noexcept
{
    const auto i = static_cast<size_t>(c);
    return i < kCategoryNames.size() ? kCategoryNames[i] : std::string_view("activations");
}

std::optional<Category> parseProbeCategory(std::string_view s) noexcept
{
    for (size_t i = 0; i < kCategoryNames.size(); ++i)
        if (kCategoryNames[i] == s)
            return static_cast<Category>(i);
    return std::nullopt;
}

json toJson(const ProbePlan& plan)
{
    json j;
    j["schema"] = kProbePlanSchema;
    j["model"] = plan.model;
    j["mode"] = plan.mode.empty() ? std::string("both") : plan.mode;
    j["batch"] = plan.batch;
    j["device"] = plan.device;
    j["time_limit_s"] = plan.timeLimitSeconds;
    j["dtype"] = plan.dtype;
    j["train"] = plan.train;
    j["events"] = eventsToJson(plan.events);
    json plans = json::array();
    for (const auto& [batch, events] : plan.batchPlans)
        plans.push_back({{"batch", batch}, {"events", eventsToJson(events)}});
    j["batch_plans"] = std::move(plans);
    json convs = json::array();
    for (const ProbePlan::Conv& c : plan.convs)
        convs.push_back({{"n", c.n},
                         {"c", c.c},
                         {"h", c.h},
                         {"w", c.w},
                         {"k", c.k},
                         {"r", c.r},
                         {"s", c.s},
                         {"pad", {c.padH, c.padW}},
                         {"stride", {c.strideH, c.strideW}},
                         {"dilation", {c.dilationH, c.dilationW}},
                         {"groups", c.groups}});
    j["convs"] = std::move(convs);
    json gemms = json::array();
    for (const ProbePlan::Gemm& g : plan.gemms)
        gemms.push_back({{"m", g.m}, {"n", g.n}, {"k", g.k}, {"batch", g.batch}});
    j["gemms"] = std::move(gemms);
    return j;
}

ProbePlan planFromJson(const json& j)
{
    constexpr std::string_view doc = "plan";
    checkSchema(j, kProbePlanSchema, doc);
    ProbePlan p;
    p.model = get<std::string>(j, "model", doc, {}, false);
    p.mode = get<std::string>(j, "mode", doc, "both", false);
    if (p.mode != "exact" && p.mode != "caching" && p.mode != "both")
        fail(doc, "unknown mode \"" + p.mode + "\" (exact, caching or both)");
    p.batch = nonNegative(get<int64_t>(j, "batch", doc, 0, false), "batch", doc);
    p.device = static_cast<int>(nonNegative(get<int64_t>(j, "device", doc, 0, false), "device", doc));
    p.timeLimitSeconds = static_cast<int>(get<int64_t>(j, "time_limit_s", doc, 60, false));
    if (p.timeLimitSeconds <= 0)
        fail(doc, "field \"time_limit_s\" must be positive");
    p.dtype = get<std::string>(j, "dtype", doc, "fp32", false);
    if (p.dtype != "fp32" && p.dtype != "fp16" && p.dtype != "bf16")
        fail(doc, "unknown dtype \"" + p.dtype + "\" (fp32, fp16 or bf16)");
    p.train = get<bool>(j, "train", doc, true, false);
    if (const auto it = j.find("events"); it != j.end())
        p.events = eventsFromJson(*it, doc);
    if (const auto it = j.find("batch_plans"); it != j.end()) {
        if (!it->is_array())
            fail(doc, "\"batch_plans\" is not an array");
        for (const json& bp : *it) {
            if (!bp.is_object())
                fail(doc, "a batch plan is not an object");
            const int64_t batch = get<int64_t>(bp, "batch", doc, 0, true);
            if (batch <= 0)
                fail(doc, "a batch plan has batch " + std::to_string(batch));
            const auto ev = bp.find("events");
            if (ev == bp.end())
                fail(doc, "the batch plan for batch " + std::to_string(batch) + " has no events");
            p.batchPlans.emplace_back(batch, eventsFromJson(*ev, doc));
        }
    }
    if (const auto it = j.find("convs"); it != j.end()) {
        if (!it->is_array())
            fail(doc, "\"convs\" is not an array");
        for (const json& c : *it) {
            if (!c.is_object())
                fail(doc, "a conv is not an object");
            ProbePlan::Conv v;
            v.n = get<int64_t>(c, "n", doc, 1, true);
            v.c = get<int64_t>(c, "c", doc, 1, true);
            v.h = get<int64_t>(c, "h", doc, 1, true);
            v.w = get<int64_t>(c, "w", doc, 1, true);
            v.k = get<int64_t>(c, "k", doc, 1, true);
            v.r = get<int64_t>(c, "r", doc, 1, true);
            v.s = get<int64_t>(c, "s", doc, 1, true);
            std::tie(v.padH, v.padW) = pairOf(c, "pad", doc, 0);
            std::tie(v.strideH, v.strideW) = pairOf(c, "stride", doc, 1);
            std::tie(v.dilationH, v.dilationW) = pairOf(c, "dilation", doc, 1);
            v.groups = get<int64_t>(c, "groups", doc, 1, false);
            if (std::min({v.n, v.c, v.h, v.w, v.k, v.r, v.s, v.strideH, v.strideW, v.dilationH, v.dilationW,
                          v.groups}) <= 0 ||
                v.padH < 0 || v.padW < 0)
                fail(doc, "a conv has a non-positive dimension");
            p.convs.push_back(v);
        }
    }
    if (const auto it = j.find("gemms"); it != j.end()) {
        if (!it->is_array())
            fail(doc, "\"gemms\" is not an array");
        for (const json& g : *it) {
            if (!g.is_object())
                fail(doc, "a gemm is not an object");
            ProbePlan::Gemm v;
            v.m = get<int64_t>(g, "m", doc, 1, true);
            v.n = get<int64_t>(g, "n", doc, 1, true);
            v.k = get<int64_t>(g, "k", doc, 1, true);
            v.batch = get<int64_t>(g, "batch", doc, 1, false);
            if (std::min({v.m, v.n, v.k, v.batch}) <= 0)
                fail(doc, "a gemm has a non-positive dimension");
            p.gemms.push_back(v);
        }
    }
    return p;
}

json toJson(const ProbeResult& r)
{
    json j;
    j["schema"] = kProbeResultSchema;
    j["status"] = toString(r.status);
    j["message"] = r.message;
    j["device_name"] = r.deviceName;
    j["device_index"] = r.deviceIndex;
    j["device_count"] = r.deviceCount;
    j["devices"] = r.devices;
    j["driver_version"] = r.driverVersion;
    j["runtime_version"] = r.runtimeVersion;
    j["total_bytes"] = r.totalBytes;
    j["free_bytes"] = r.freeBytes;
    j["context_bytes"] = r.contextBytes;
    j["context_method"] = r.contextMethod;
    j["baseline_bytes"] = r.baselineBytes;
    j["exact_peak"] = r.exactPeak;
    j["caching_peak"] = r.cachingPeak;
    j["caching_segments"] = r.cachingSegments;
    j["used_after_event"] = intArray(r.usedAfterEvent);
    j["reserved_after_event"] = intArray(r.reservedAfterEvent);
    json cats = json::array();
    for (const auto& [name, bytes] : r.peakByCategory)
        cats.push_back(json::array({name, bytes}));
    j["peak_by_category"] = std::move(cats);
    j["cublas_workspace"] = r.cublasWorkspace;
    j["cudnn_workspace"] = r.cudnnWorkspace;
    j["cublas_handle_bytes"] = r.cublasHandleBytes;
    j["cudnn_handle_bytes"] = r.cudnnHandleBytes;
    j["measured_max_batch"] = r.measuredMaxBatch;
    j["max_batch_lower_bound"] = r.maxBatchIsLowerBound;
    json trials = json::array();
    for (const ProbeResult::BatchTrial& t : r.batchTrials)
        trials.push_back({{"batch", t.batch}, {"fits", t.fits}, {"peak", t.peak}});
    j["batch_trials"] = std::move(trials);
    j["oom"] = r.oom;
    j["oom_at_event"] = r.oomAtEvent;
    j["seconds"] = r.seconds;
    j["warnings"] = r.warnings;
    if (r.exitCode >= 0)
        j["exit_code"] = r.exitCode;
    if (r.signal != 0)
        j["signal"] = r.signal;
    return j;
}

ProbeResult probeResultFromJson(const json& j)
{
    constexpr std::string_view doc = "probe result";
    checkSchema(j, kProbeResultSchema, doc);
    ProbeResult r;
    const std::string status = get<std::string>(j, "status", doc, {}, true);
    const auto st = parseProbeStatus(status);
    if (!st)
        fail(doc, "unknown status \"" + status + "\"");
    r.status = *st;
    r.message = get<std::string>(j, "message", doc, {}, false);
    r.deviceName = get<std::string>(j, "device_name", doc, {}, false);
    r.deviceIndex = get<int>(j, "device_index", doc, 0, false);
    r.deviceCount = get<int>(j, "device_count", doc, 0, false);
    r.devices = get<std::vector<std::string>>(j, "devices", doc, {}, false);
    r.driverVersion = get<int>(j, "driver_version", doc, 0, false);
    r.runtimeVersion = get<int>(j, "runtime_version", doc, 0, false);
    r.totalBytes = get<int64_t>(j, "total_bytes", doc, 0, false);
    r.freeBytes = get<int64_t>(j, "free_bytes", doc, 0, false);
    r.contextBytes = get<int64_t>(j, "context_bytes", doc, 0, false);
    r.contextMethod = get<std::string>(j, "context_method", doc, {}, false);
    r.baselineBytes = get<int64_t>(j, "baseline_bytes", doc, 0, false);
    r.exactPeak = get<int64_t>(j, "exact_peak", doc, 0, false);
    r.cachingPeak = get<int64_t>(j, "caching_peak", doc, 0, false);
    r.cachingSegments = get<int64_t>(j, "caching_segments", doc, 0, false);
    r.usedAfterEvent = intVector(j, "used_after_event", doc);
    r.reservedAfterEvent = intVector(j, "reserved_after_event", doc);
    if (const auto it = j.find("peak_by_category"); it != j.end() && !it->is_null()) {
        if (!it->is_array())
            fail(doc, "\"peak_by_category\" is not an array");
        for (const json& row : *it) {
            if (!row.is_array() || row.size() != 2 || !row[0].is_string() || !row[1].is_number_integer())
                fail(doc, "\"peak_by_category\" rows must be [category, bytes]");
            r.peakByCategory.emplace_back(row[0].get<std::string>(), row[1].get<int64_t>());
        }
    }
    r.cublasWorkspace = get<int64_t>(j, "cublas_workspace", doc, -1, false);
    r.cudnnWorkspace = get<int64_t>(j, "cudnn_workspace", doc, -1, false);
    r.cublasHandleBytes = get<int64_t>(j, "cublas_handle_bytes", doc, -1, false);
    r.cudnnHandleBytes = get<int64_t>(j, "cudnn_handle_bytes", doc, -1, false);
    r.measuredMaxBatch = get<int64_t>(j, "measured_max_batch", doc, -1, false);
    r.maxBatchIsLowerBound = get<bool>(j, "max_batch_lower_bound", doc, false, false);
    if (const auto it = j.find("batch_trials"); it != j.end() && !it->is_null()) {
        if (!it->is_array())
            fail(doc, "\"batch_trials\" is not an array");
        for (const json& t : *it) {
            if (!t.is_object())
                fail(doc, "a batch trial is not an object");
            r.batchTrials.push_back({get<int64_t>(t, "batch", doc, 0, true), get<bool>(t, "fits", doc, false, true),
                                     get<int64_t>(t, "peak", doc, 0, false)});
        }
    }
    r.oom = get<bool>(j, "oom", doc, false, false);
    r.oomAtEvent = get<int64_t>(j, "oom_at_event", doc, -1, false);
    r.seconds = get<double>(j, "seconds", doc, 0.0, false);
    r.warnings = get<std::vector<std::string>>(j, "warnings", doc, {}, false);
    r.exitCode = get<int>(j, "exit_code", doc, -1, false);
    r.signal = get<int>(j, "signal", doc, 0, false);
    return r;
}

std::vector<int64_t> liveAfterEvent(const std::vector<AllocEvent>& events)
{
    std::unordered_map<int64_t, int64_t> live; // id -> bytes, so a Free needs no size of its own
    std::vector<int64_t> out;
    out.reserve(events.size());
    int64_t total = 0;
    for (const AllocEvent& e : events) {
        if (e.kind == AllocEvent::Kind::Alloc) {
            live[e.id] += e.bytes;
            total += e.bytes;
        } else if (const auto it = live.find(e.id); it != live.end()) {
            total -= it->second;
            live.erase(it);
        }
        out.push_back(total);
    }
    return out;
}

std::vector<std::pair<std::string, int64_t>> peakByCategory(const std::vector<AllocEvent>& events)
{
    constexpr auto n = static_cast<size_t>(Category::Count);
    std::array<int64_t, n> now{}, peak{};
    std::unordered_map<int64_t, std::pair<Category, int64_t>> live;
    for (const AllocEvent& e : events) {
        if (e.kind == AllocEvent::Kind::Alloc) {
            auto& slot = live[e.id];
            slot = {e.category, slot.second + e.bytes};
            const auto c = static_cast<size_t>(e.category);
            now[c] += e.bytes;
            peak[c] = std::max(peak[c], now[c]);
        } else if (const auto it = live.find(e.id); it != live.end()) {
            now[static_cast<size_t>(it->second.first)] -= it->second.second;
            live.erase(it);
        }
    }
    std::vector<std::pair<std::string, int64_t>> out;
    for (size_t i = 0; i < n; ++i)
        out.emplace_back(std::string(kCategoryNames[i]), peak[i]);
    return out;
}

std::vector<int64_t> bisectionBatches(int64_t predictedMax, int64_t batch, int64_t limit)
{
    limit = std::max<int64_t>(limit, 1);
    std::vector<int64_t> out;
    // Powers of two bracket a wrong prediction; beyond 4x the prediction they only cost replay time.
    const int64_t top = predictedMax > 0 ? std::min(limit, 4 * predictedMax) : limit;
    for (int64_t b = 1; b <= top; b *= 2)
        out.push_back(b);
    if (predictedMax > 0) {
        // ~10 % steps from half to twice the prediction: the measured max lands within a step of the truth.
        for (double b = std::max(1.0, static_cast<double>(predictedMax) / 2);
             b <= 2.0 * static_cast<double>(predictedMax) && b <= static_cast<double>(limit); b *= 1.1)
            out.push_back(static_cast<int64_t>(std::llround(b)));
        out.push_back(std::min(predictedMax, limit));
        out.push_back(std::min(predictedMax + 1, limit));
    }
    if (batch > 0)
        out.push_back(std::min(batch, limit));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

} // namespace headroom
