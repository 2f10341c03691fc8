#pragma once
#include "headroom/base/config.h"
#include "headroom/memory/engine.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace headroom {

// A measurement of a real run to set beside the theory (headroom-cli --compare FILE, the Probe page):
// - a JSON line of tests/data/gpu/gpu_truth.py (the line whose model, batch, seq, optimizer and dtype match
//   the configuration), or
// - torch.cuda.memory._snapshot() saved as JSON (segments, device_traces): the peaks are rebuilt from the
//   trace's alloc / free_completed / segment_alloc / segment_free actions on top of the state at the start
//   of the trace (what the end state minus the trace's net change leaves).
struct Measurement
{
    std::string file;
    std::string source; // "gpu_truth" or "snapshot"
    std::optional<int64_t> allocatedPeak, reservedPeak, weights, steadyState, outsideAllocator;
};

// Which gpu_truth line a configuration is: model file stem plus the configuration's values.
struct MeasurementKey
{
    std::string model; // file stem, e.g. "resnet50"
    int64_t batch = 1;
    std::optional<int64_t> seq;
    Config config;
};

// Throws Error ("<file>: <problem>") when the file cannot be read, is neither form, or has no matching line.
Measurement loadMeasurement(const std::string& path, const MeasurementKey& key);

// The comparison as the JSON `compare` block: per figure theory, measured (null when the file lacks it)
// and the error in percent of the measurement.
nlohmann::json compareJson(const Measurement& m, const Breakdown& theory);

} // namespace headroom
