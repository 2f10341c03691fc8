#include "headroom/hardware/gpus.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>

namespace headroom {
namespace {

constexpr int64_t MiB = 1024 * 1024;

// Workspaces that live inside PyTorch's caching allocator for the life of the cuBLAS handle
// (aten/src/ATen/cuda/CublasHandlePool.cpp: getNewWorkspace allocates getChosenWorkspaceSize() through
// CUDACachingAllocator). parseChosenWorkspaceSize's default is ":4096:8" = 32 MiB on sm90 (Hopper) and
// ":4096:2:16:8" = 8 MiB + 128 KiB on every other architecture; the cuBLASLt workspace comes on top.
// Measured on the H100 (tests/data/gpu/h100-points.jsonl, the run's first point, resnet18 b8 SGD):
// alloc_before_step holds 66.4 MiB beyond weights + gradients + input, against 0-3 MiB at every later
// point (whose baseline subtracts what earlier points left allocated): 64 MiB. The sm90 cuBLAS default
// explains 32 MiB of it; the other 32 MiB is a second workspace of the same size (cuBLASLt's, when it is
// not unified with cuBLAS's, or a second handle's): the measurement does not say which.
constexpr int64_t kHopperWorkspace = 64 * MiB;
// Other architectures: cuBLAS 8 MiB + 128 KiB and a cuBLASLt workspace of the same size (PyTorch's
// unified default shares the cuBLAS size); not measured here.
constexpr int64_t kOtherWorkspace = 2 * (8 * MiB + 128 * 1024);

// capacity: one source for every preset, the device total PyTorch reports (cudaMemGetInfo's total, the
// "total capacity" of its out-of-memory message, torch.cuda.mem_get_info()[1]), in bytes. nvidia-smi's figure
// is larger by a few hundred MiB. context: memory outside the caching allocator (CUDA context, loaded
// kernels, library handles): device used minus memory_reserved(). workspace: above.
GpuSpec make(const char* name, int64_t capacityBytes, int64_t contextBytes, int64_t workspaceBytes)
{
    return GpuSpec{name, capacityBytes, contextBytes, workspaceBytes};
}

// "X.XX GiB total capacity" as PyTorch prints it (two decimals): the figure rounded down to 10 MiB so
// that the preset never exceeds the device.
constexpr int64_t gib(double v) { return static_cast<int64_t>(v * 1024 * 1024 * 1024) / (10 * MiB) * (10 * MiB); }

// Where no PyTorch figure was found: nvidia-smi's total less the smallest gap between the two figures among
// the presets that have both (RTX 3060: 12,288 MiB against 11.75 GiB = 12,032 MiB; RTX 3090 307 MiB, RTX 4090
// 357 MiB, H100 480 MiB, A100 80 GB 768 MiB), so that the preset stays at or below PyTorch's figure.
constexpr int64_t fromSmi(int64_t smiMiB) { return (smiMiB - 256) * MiB; }

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
    // Contexts other than the H100's are estimates for CUDA 12/13 with PyTorch 2.x's kernels loaded (not
    // measured here: the probe replaces them with a measurement).
    static const std::vector<GpuSpec> presets = {
        // "GPU 0 has a total capacity of 14.56 GiB" (Zheng-Chong/CatVTON#133, AlphaGPU/leetgpu-challenges#52;
        // older drivers printed 14.75 GiB).
        make("Tesla T4 16 GB", gib(14.56), 400 * MiB, kOtherWorkspace),
        // "GPU 0 has a total capacity of 7.75 GiB" (ESRSchao/EdgeRegNet#2, RTX 4060 8 GB); Ada's context.
        make("GeForce RTX 4060 8 GB", gib(7.75), 450 * MiB, kOtherWorkspace),
        // "9.78 GiB total capacity" (zai-org/CogVideo#34, RTX 3080 10 GB).
        make("GeForce RTX 3080 10 GB", gib(9.78), 450 * MiB, kOtherWorkspace),
        // "GPU 0 has a total capacity of 15.61 GiB" (DengKaiCQ/VGGT-Long#6, RTX A4000 16 GB).
        make("RTX A4000 16 GB", gib(15.61), 450 * MiB, kOtherWorkspace),
        // "15.78 GiB total capacity" (kchengiva/Shift-GCN#34, V100 16 GB).
        make("Tesla V100 16 GB", gib(15.78), 400 * MiB, kOtherWorkspace),
        // "31.74 GiB total capacity" (haotian-liu/LLaVA#812, V100 32 GB).
        make("Tesla V100 32 GB", gib(31.74), 400 * MiB, kOtherWorkspace),
        // "11.75 GiB total capacity" (Kunhao-Liu/StyleGaussian#12, RTX 3060 12 GB; nvidia-smi 12,288 MiB).
        make("GeForce RTX 3060 12 GB", gib(11.75), 450 * MiB, kOtherWorkspace),
        // "23.70 GiB total capacity" (GaoLii/DSP#10, xiaoxiangAQ/GAS-Net#7, RTX 3090; nvidia-smi 24,576 MiB).
        make("GeForce RTX 3090 24 GB", gib(23.70), 500 * MiB, kOtherWorkspace),
        // "GPU 0 has a total capacity of 23.64 GiB" (ali-vilab/VGen#104, 3DTopia/Phidias-Diffusion#8;
        // 23.68 GiB with an older driver, zai-org/CogVideo#36).
        make("GeForce RTX 4090 24 GB", gib(23.64), 550 * MiB, kOtherWorkspace),
        // "GPU 0; 22.19 GiB total capacity" on AWS's ml.g5 instances (vllm-project/vllm#372), whose A10G is this
        // board (nvidia-smi 23,028 MiB, modal-labs/modal-client#2797: 306 MiB above, as the RTX 3090's gap).
        make("A10 24 GB", gib(22.19), 500 * MiB, kOtherWorkspace),
        // "23.67 GiB total capacity" (Magicboomliu/Accelerator-Simple-Template#7, RTX A5000 24 GB; with ECC
        // enabled the board reports less: --capacity).
        make("RTX A5000 24 GB", gib(23.67), 500 * MiB, kOtherWorkspace),
        // "GPU 0 has a total capacty of 23.53 GiB" (google/RB-Modulation#5, A30 24 GB).
        make("A30 24 GB", gib(23.53), 500 * MiB, kOtherWorkspace),
        // No PyTorch figure found: nvidia-smi's 23,034 MiB (modal-labs/modal-client#2797), less the gap above.
        make("L4 24 GB", fromSmi(23034), 550 * MiB, kOtherWorkspace),
        // "GPU 0 has a total capacity of 39.50 GiB" (TianheWu/CoSeR#10, A100 40 GB).
        make("A100 40 GB", gib(39.50), 550 * MiB, kOtherWorkspace),
        // "GPU 0 has a total capacity of 31.37 GiB" (Wan-Video/Wan2.1#465, RTX 5090 32 GB); context as Ada's.
        make("GeForce RTX 5090 32 GB", gib(31.37), 550 * MiB, kOtherWorkspace),
        // "total_gpu_memory (44.42GiB)", vLLM's torch.cuda.mem_get_info total on an L40S (vllm-project/vllm#15815;
        // tests/data/external/measured.jsonl vllm-15815-qwen2.5-32b-tp2-l40s); Ada's context, as the RTX 4090's.
        make("L40S 48 GB", gib(44.42), 550 * MiB, kOtherWorkspace),
        // "GPU 0 has a total capacity of 44.43 GiB" (DINGYANB/MTVCrafter#21, RTX 6000 Ada, ECC on as shipped:
        // nvidia-smi 46,068 MiB).
        make("RTX 6000 Ada 48 GB", gib(44.43), 550 * MiB, kOtherWorkspace),
        // "47.54 GiB total capacity" (vllm-project/vllm#1201, RTX A6000, ECC off: nvidia-smi 49,140 MiB).
        make("RTX A6000 48 GB", gib(47.54), 500 * MiB, kOtherWorkspace),
        // "47.46 GiB total capacity" (Victarry/stable-dreambooth#8, Quadro RTX 8000 48 GB); Turing's context.
        make("Quadro RTX 8000 48 GB", gib(47.46), 400 * MiB, kOtherWorkspace),
        // "79.25 GiB total capacity" (levihsu/OOTDiffusion#235, A100 80 GB).
        make("A100 80 GB", gib(79.25), 550 * MiB, kOtherWorkspace),
        // Measured (tests/data/gpu/README.md): cudaMemGetInfo total 85,017,493,504 B = 79.18 GiB on an H100
        // 80GB HBM3 (driver 580, CUDA 13.0); outside the allocator 767-793 MiB with PyTorch 2.11
        // (non_torch_bytes in h100-points.jsonl, growing as kernels load): the largest, 831,324,160 B.
        make("H100 80 GB", 85017493504, 831324160, kHopperWorkspace),
        // No PyTorch figure found: nvidia-smi's 143,771 MiB less the gap above; context and workspace as the
        // H100's (same architecture, same stack).
        make("H200 141 GB", fromSmi(143771), 831324160, kHopperWorkspace),
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
    // As nvidia-smi and torch.cuda.get_device_name() print them: "NVIDIA GeForce RTX 4090", "NVIDIA A10G".
    for (const char* vendor : {"nvidia", "geforce", "tesla", "quadro"})
        if (want.rfind(vendor, 0) == 0 && want.size() > std::string_view(vendor).size())
            return findGpu(want.substr(std::string_view(vendor).size()));
    // Form factor and memory type, as in "H100 80GB HBM3", "A100-SXM4-80GB", "H100 PCIe": the presets are by
    // memory size. (Not "NVL": the H100 NVL has 94 GB, which no preset holds.)
    // "NVIDIA RTX 6000 Ada Generation": the generation word too.
    for (const char* part :
         {"sxm5", "sxm4", "sxm3", "sxm2", "sxm", "pcie", "hbm3e", "hbm3", "hbm2e", "hbm2", "generation"})
        if (const size_t at = want.find(part); at != std::string::npos && at > 0)
            return findGpu(want.substr(0, at) + want.substr(at + std::string_view(part).size()));
    // "V100 32GB": the memory size as the presets' keys below carry it, without the unit.
    if (want.size() > 4 && want.compare(want.size() - 2, 2, "gb") == 0 &&
        std::isdigit(static_cast<unsigned char>(want[want.size() - 3])))
        return findGpu(want.substr(0, want.size() - 2));
    // Names a cloud gives the same board: AWS's A10G (g5 instances) is the A10 24 GB preset's figure.
    static constexpr std::pair<std::string_view, std::string_view> kOtherNames[] = {{"a10g", "A10 24 GB"}};
    for (const auto& [alias, preset] : kOtherNames)
        if (want == alias || want == std::string(alias) + "24" || want == std::string(alias) + "24gb")
            return findGpu(preset);
    std::optional<GpuSpec> best;
    for (const GpuSpec& g : gpuPresets()) {
        std::string key = squash(g.name);
        // Strip vendor words and the "gb" suffix: "geforcertx409024gb" -> "rtx409024".
        for (const char* w : {"geforce", "tesla", "quadro"})
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
    g.context = 550 * MiB;
    g.workspace = kOtherWorkspace;
    return g;
}

} // namespace headroom
