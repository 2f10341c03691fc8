#pragma once
#include "headroom/base/config.h"

#include <optional>
#include <string_view>
#include <vector>

namespace headroom {

// GPU presets: capacity as PyTorch sees it (cudaMemGetInfo total), memory outside the caching allocator
// (context) and the library workspaces inside it, each with its source in gpus.cpp.
const std::vector<GpuSpec>& gpuPresets();
// What every preset's capacity is, in words (the CLI's --gpu list and the GUI's GPU box say it).
inline constexpr const char* kGpuCapacitySource =
    "capacity: the device total PyTorch reports (torch.cuda.mem_get_info()[1], the \"total capacity\" of its "
    "out-of-memory message), below nvidia-smi's figure";
// Case-insensitive match on the preset name or a short alias ("4090", "a100-80", "h100").
std::optional<GpuSpec> findGpu(std::string_view name);
GpuSpec customGpu(int64_t capacityBytes);

} // namespace headroom
