#pragma once
#include "headroom/serving/hf_generate.h"
#include "headroom/serving/vllm.h"

#include <nlohmann/json.hpp>

namespace headroom {

// The `serving` object of `headroom-cli --serve vllm --json` (docs/SERVING.md "Output"): bytes as integers.
nlohmann::json toJson(const VllmPlan& plan);
// The `serving` object of `--serve hf-generate --json` (docs/SERVING.md "Hugging Face generate()").
nlohmann::json toJson(const HfGeneratePlan& plan);

} // namespace headroom
