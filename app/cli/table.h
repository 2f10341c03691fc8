#pragma once
#include "headroom/report/report.h"

#include <nlohmann/json.hpp>

#include <string>

namespace headroom::cli {

// The torchinfo-style human report: layer tree to `depth`, then the memory breakdown and the verdict.
// Shape computations are folded into one row per layer unless allNodes, which also lists graph nodes.
std::string humanReport(const Model& model, const Report& report, int depth, bool allNodes = false);
// --compare: theory beside the measurement, from the JSON `compare` block.
std::string compareTable(const nlohmann::json& compare);

} // namespace headroom::cli
