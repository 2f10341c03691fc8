#pragma once
#include "headroom/config.h"
#include "headroom/engine.h"

#include <cstdint>
#include <vector>

namespace headroom {

// A model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp): 512 B rounding,
// small (<= 1 MiB, 2 MiB segments) and large pools (1-10 MiB from 20 MiB segments, larger rounded to
// 2 MiB), best fit with splitting, freed blocks cached; and the expandable-segments mode.
struct AllocatorStats {
    int64_t allocatedPeak = 0;   // max of requested-and-rounded bytes in use
    int64_t reservedPeak = 0;    // max of segment bytes held (what nvidia-smi shows, less context)
    int64_t reservedFinal = 0;
    int64_t segments = 0;        // segments created (cudaMalloc calls)
    double fragmentation = 0;    // 1 - allocated/reserved at the reserved peak
    std::vector<int64_t> reservedAfter; // per event
};

class CachingAllocatorModel
{
public:
    explicit CachingAllocatorModel(AllocatorMode mode = AllocatorMode::Caching);
    ~CachingAllocatorModel();
    CachingAllocatorModel(const CachingAllocatorModel&) = delete;
    CachingAllocatorModel& operator=(const CachingAllocatorModel&) = delete;

    // Returns a handle for free(); bytes as requested (the model rounds).
    int64_t allocate(int64_t bytes);
    void free(int64_t handle);
    void emptyCache();           // torch.cuda.empty_cache(): releases unused cached segments
    int64_t allocated() const;   // torch.cuda.memory_allocated()
    int64_t reserved() const;    // torch.cuda.memory_reserved()
    int64_t maxAllocated() const;
    int64_t maxReserved() const;

    static int64_t roundSize(int64_t bytes);       // 512 B rounding (large: per the allocator's rules)
    static int64_t segmentSizeFor(int64_t bytes);  // the segment a new request would create

private:
    struct Impl;
    Impl* d;
};

// Replays the engine's events; Exact returns allocated == reserved (sizes unrounded).
AllocatorStats replay(const std::vector<AllocEvent>& events, AllocatorMode mode);

} // namespace headroom
