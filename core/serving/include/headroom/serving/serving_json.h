#pragma once
#include "headroom/serving/vllm.h"

#include <nlohmann/json.hpp>

namespace headroom {

// The `serving` object of `headroom-cli --serve vllm --json` (docs/SERVING.md "Output"): bytes as integers.
nlohmann::json toJson(const VllmPlan& plan);

} // namespace headroom
