#pragma once
#include "headroom/config.h"

#include <optional>
#include <string_view>
#include <vector>

namespace headroom {

// GPU presets: capacity as nvidia-smi reports it, with a default context overhead and workspace each.
const std::vector<GpuSpec>& gpuPresets();
// Case-insensitive match on the preset name or a short alias ("4090", "a100-80", "h100").
std::optional<GpuSpec> findGpu(std::string_view name);
GpuSpec customGpu(int64_t capacityBytes);

} // namespace headroom
