#pragma once
#include "headroom/report.h"

#include <string>

namespace headroom::cli {

// The torchinfo-style human report: layer tree to `depth`, then the memory breakdown and the verdict.
std::string humanReport(const Model& model, const Report& report, int depth);

} // namespace headroom::cli
