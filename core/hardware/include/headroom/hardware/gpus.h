#pragma once
#include "headroom/base/config.h"

#include <optional>
#include <string_view>
#include <vector>

namespace headroom {

// GPU presets: capacity as PyTorch sees it (cudaMemGetInfo total), memory outside the caching allocator
// (context) and the library workspaces inside it, each with its source in gpus.cpp.
const std::vector<GpuSpec>& gpuPresets();
// Case-insensitive match on the preset name or a short alias ("4090", "a100-80", "h100").
std::optional<GpuSpec> findGpu(std::string_view name);
GpuSpec customGpu(int64_t capacityBytes);

} // namespace headroom
