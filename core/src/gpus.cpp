#include "headroom/gpus.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace headroom {
namespace {

constexpr int64_t MiB = 1024 * 1024;

// Capacity: the total nvidia-smi prints for the board (MiB). Context: a CUDA context with PyTorch's
// kernels loaded, as commonly measured per architecture (the probe replaces it with a measurement).
// Workspace: cuBLAS (PyTorch's default 4096 KiB x 8 on Hopper, less before) plus a cuDNN allowance.
GpuSpec make(const char* name, int64_t totalMiB, int64_t contextMiB, int64_t workspaceMiB)
{
    return GpuSpec{name, totalMiB * MiB, contextMiB * MiB, workspaceMiB * MiB};
}

std::string squash(std::string_view s)
{
    std::string out;
    for (char c : s)
        if (std::isalnum(static_cast<unsigned char>(c)))
            out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

} // namespace

const std::vector<GpuSpec>& gpuPresets()
{
    static const std::vector<GpuSpec> presets = {
        make("Tesla T4 16 GB", 15360, 300, 40),
        make("Tesla V100 16 GB", 16160, 300, 40),
        make("Tesla V100 32 GB", 32510, 300, 40),
        make("GeForce RTX 3060 12 GB", 12288, 350, 40),
        make("GeForce RTX 3090 24 GB", 24576, 400, 40),
        make("GeForce RTX 4090 24 GB", 24564, 450, 40),
        make("A10 24 GB", 23028, 400, 40),
        make("L4 24 GB", 23034, 450, 40),
        make("A100 40 GB", 40960, 450, 40),
        make("A100 80 GB", 81920, 450, 40),
        make("H100 80 GB", 81559, 550, 72),
        make("H200 141 GB", 143771, 550, 72),
    };
    return presets;
}

std::optional<GpuSpec> findGpu(std::string_view name)
{
    const std::string want = squash(name);
    if (want.empty())
        return std::nullopt;
    // Exact (squashed) name first, then aliases: "4090", "a10080", "a100-80", "v10032", "h100".
    for (const GpuSpec& g : gpuPresets())
        if (squash(g.name) == want)
            return g;
    std::optional<GpuSpec> best;
    for (const GpuSpec& g : gpuPresets()) {
        std::string key = squash(g.name);
        // Strip vendor words and the "gb" suffix: "geforcertx409024gb" -> "rtx409024".
        for (const char* w : {"geforce", "tesla"})
            if (key.rfind(w, 0) == 0)
                key.erase(0, std::string(w).size());
        if (key.size() > 2 && key.compare(key.size() - 2, 2, "gb") == 0)
            key.erase(key.size() - 2);
        if (key == want || key.rfind(want, 0) == 0 || ("rtx" + want) == key.substr(0, 3 + want.size())) {
            if (!best)
                best = g; // the first preset in the table is the default size ("a100" -> 40 GB, "v100" -> 16 GB)
            if (key.size() >= want.size() && key.substr(0, want.size()) == want && key.size() - want.size() <= 3)
                return g;
        }
    }
    return best;
}

GpuSpec customGpu(int64_t capacityBytes)
{
    GpuSpec g;
    g.name = "custom";
    g.capacity = capacityBytes;
    g.context = 450 * MiB;
    g.workspace = 40 * MiB;
    return g;
}

} // namespace headroom
