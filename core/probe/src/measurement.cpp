// Reading a real run's memory figures (gpu_truth.py JSON lines, PyTorch memory snapshots as JSON) and
// setting them beside the engine's.
#include "headroom/probe/measurement.h"
#include "headroom/base/error.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace headroom {
namespace {

std::optional<int64_t> intField(const nlohmann::json& j, const char* name)
{
    if (!j.is_object() || !j.contains(name) || !j[name].is_number_integer())
        return std::nullopt;
    return j[name].get<int64_t>();
}

std::string str(const nlohmann::json& j, const char* name)
{
    return j.is_object() && j.contains(name) && j[name].is_string() ? j[name].get<std::string>() : std::string();
}

bool matches(const nlohmann::json& line, const MeasurementKey& key)
{
    if (str(line, "model") != key.model)
        return false;
    if (intField(line, "batch") != std::optional<int64_t>(key.batch))
        return false;
    if (line.contains("seq") && line["seq"].is_number_integer() && key.seq != line["seq"].get<int64_t>())
        return false;
    const bool infer = str(line, "mode") == "infer";
    if (infer != (key.config.mode == Mode::Infer))
        return false;
    if (!infer && str(line, "optimizer") != toString(key.config.optimizer))
        return false;
    if (line.contains("dtype") && str(line, "dtype") != toString(key.config.dtype))
        return false;
    const int64_t k = intField(line, "checkpoint").value_or(1);
    return k == std::max(1, key.config.checkpointSegments);
}

Measurement fromTruthLine(const std::string& path, const nlohmann::json& line)
{
    Measurement m;
    m.file = path;
    m.source = "gpu_truth";
    m.allocatedPeak = intField(line, "max_allocated");
    m.reservedPeak = intField(line, "max_reserved");
    m.weights = intField(line, "weights_bytes");
    m.steadyState = intField(line, "alloc_before_step");
    m.outsideAllocator = intField(line, "non_torch_bytes");
    return m;
}

// Peak of a quantity whose end value is known and whose changes the trace lists.
struct Track
{
    int64_t net = 0, highPrefix = 0;
    void add(int64_t d)
    {
        net += d;
        highPrefix = std::max(highPrefix, net);
    }
    int64_t peak(int64_t end) const { return end - net + highPrefix; }
};

Measurement fromSnapshot(const std::string& path, const nlohmann::json& snap)
{
    Measurement m;
    m.file = path;
    m.source = "snapshot";
    int64_t reserved = 0, allocated = 0;
    for (const nlohmann::json& seg : snap["segments"]) {
        reserved += intField(seg, "total_size").value_or(0);
        allocated += intField(seg, "allocated_size").value_or(0);
    }
    Track alloc, res;
    if (snap.contains("device_traces") && snap["device_traces"].is_array())
        for (const nlohmann::json& device : snap["device_traces"]) {
            if (!device.is_array())
                continue;
            for (const nlohmann::json& ev : device) {
                const std::string action = str(ev, "action");
                const int64_t size = intField(ev, "size").value_or(0);
                if (action == "alloc")
                    alloc.add(size);
                else if (action == "free_completed")
                    alloc.add(-size);
                else if (action == "segment_alloc" || action == "segment_map")
                    res.add(size);
                else if (action == "segment_free" || action == "segment_unmap")
                    res.add(-size);
            }
        }
    m.allocatedPeak = alloc.peak(allocated);
    m.reservedPeak = res.peak(reserved);
    return m;
}

nlohmann::json row(int64_t theory, const std::optional<int64_t>& measured)
{
    nlohmann::json r;
    r["theory"] = theory;
    r["measured"] = measured ? nlohmann::json(*measured) : nlohmann::json(nullptr);
    r["error_pct"] = measured && *measured > 0
                         ? nlohmann::json(100.0 * (static_cast<double>(theory) - static_cast<double>(*measured)) /
                                          static_cast<double>(*measured))
                         : nlohmann::json(nullptr);
    return r;
}

} // namespace

Measurement loadMeasurement(const std::string& path, const MeasurementKey& key)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error(path + ": cannot be opened");
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    // One JSON document: a snapshot (or a single gpu_truth line).
    nlohmann::json whole = nlohmann::json::parse(text, nullptr, false);
    if (!whole.is_discarded()) {
        if (whole.is_object() && whole.contains("segments") && whole["segments"].is_array())
            return fromSnapshot(path, whole);
        if (whole.is_object() && whole.contains("max_allocated")) {
            if (!matches(whole, key))
                throw Error(path + ": the measurement is not of " + key.model + " at this configuration");
            return fromTruthLine(path, whole);
        }
        throw Error(path + ": neither a PyTorch memory snapshot (segments) nor gpu_truth.py output");
    }
    // JSON lines.
    std::istringstream lines(text);
    int lineNo = 0;
    bool any = false;
    for (std::string line; std::getline(lines, line);) {
        ++lineNo;
        if (line.find_first_not_of(" \t\r") == std::string::npos)
            continue;
        const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object())
            throw Error(path + ": line " + std::to_string(lineNo) + " is not JSON");
        any = true;
        if (j.contains("max_allocated") && matches(j, key))
            return fromTruthLine(path, j);
    }
    if (!any)
        throw Error(path + ": empty");
    std::string what = key.model + " batch " + std::to_string(key.batch);
    if (key.seq)
        what += " seq " + std::to_string(*key.seq);
    what += " " + std::string(toString(key.config.optimizer)) + " " + std::string(toString(key.config.dtype));
    throw Error(path + ": no measurement of " + what);
}

nlohmann::json compareJson(const Measurement& m, const Breakdown& b)
{
    nlohmann::json j;
    j["file"] = m.file;
    j["source"] = m.source;
    j["allocated_peak"] = row(b.peak, m.allocatedPeak);
    j["reserved_peak"] = row(b.reservedPeak, m.reservedPeak);
    j["weights"] = row(b.weights - b.autocastCopies, m.weights);
    // Between steps PyTorch still holds the gradients: zero_grad(set_to_none=True) runs at the next step.
    j["steady_state"] = row(b.weights + b.gradients + b.optimizer + b.masterWeights + b.input, m.steadyState);
    if (m.outsideAllocator)
        j["outside_allocator"] = row(b.context, m.outsideAllocator);
    return j;
}

} // namespace headroom
