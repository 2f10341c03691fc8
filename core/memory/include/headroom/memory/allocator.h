#pragma once
#include "headroom/base/config.h"
#include "headroom/memory/engine.h"

#include <cstdint>
#include <vector>

namespace headroom {

// A model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp): 512 B rounding,
// small (<= 1 MiB, 2 MiB segments) and large pools (1-10 MiB from 20 MiB segments, larger rounded to
// 2 MiB), best fit with splitting, freed blocks cached; and the expandable-segments mode.
struct AllocatorStats
{
    int64_t allocatedPeak = 0; // max of requested-and-rounded bytes in use
    int64_t reservedPeak = 0;  // max of segment bytes held (what nvidia-smi shows, less context)
    int64_t reservedFinal = 0;
    int64_t segments = 0;               // segments created (cudaMalloc calls)
    double fragmentation = 0;           // 1 - allocated/reserved at the reserved peak
    std::vector<int64_t> reservedAfter; // per event
    // Added by the allocator model:
    int64_t allocatedFinal = 0;
    int64_t allocRetries = 0;            // cudaMalloc failures answered by releasing cached segments (capacity set)
    int64_t oomEvent = -1;               // index of the first event that fails even after releasing the cache
    std::vector<int64_t> allocatedAfter; // per event (rounded block bytes, as memory_allocated())
};

// Knobs of PYTORCH_CUDA_ALLOC_CONF that change reserved bytes, plus the device limit. Defaults are
// PyTorch's defaults (no max_split_size) and an unlimited device.
struct AllocatorOptions
{
    int64_t maxSplitSize = INT64_MAX; // max_split_size_mb: blocks this large are never split
    int64_t capacity = 0;             // bytes the process may reserve (0: unlimited); beyond it cudaMalloc fails
    int64_t preallocated = 0;         // a block allocated before the first event and never freed (library workspaces)
    bool perEvent = true;             // fill reservedAfter / allocatedAfter (a slider tick needs only the peaks)
    bool stopAtOom = false;           // end at the first allocation that fails (a fit test needs no more); a
                                      // preallocated block that fails gives oomEvent 0
};

class CachingAllocatorModel
{
public:
    explicit CachingAllocatorModel(AllocatorMode mode = AllocatorMode::Caching);
    CachingAllocatorModel(AllocatorMode mode, const AllocatorOptions& options);
    ~CachingAllocatorModel();
    CachingAllocatorModel(const CachingAllocatorModel&) = delete;
    CachingAllocatorModel& operator=(const CachingAllocatorModel&) = delete;

    // Returns a handle for free(); bytes as requested (the model rounds).
    int64_t allocate(int64_t bytes);
    void free(int64_t handle);
    void emptyCache();         // torch.cuda.empty_cache(): releases unused cached segments
    int64_t allocated() const; // torch.cuda.memory_allocated()
    int64_t reserved() const;  // torch.cuda.memory_reserved()
    int64_t maxAllocated() const;
    int64_t maxReserved() const;

    static int64_t roundSize(int64_t bytes);      // 512 B rounding (large: per the allocator's rules)
    static int64_t segmentSizeFor(int64_t bytes); // the segment a new request would create

    // Introspection for tests, the GUI's segment view and the probe's caching mode.
    int64_t segmentCount() const;            // segments held now (expandable: mapped ranges count once each)
    int64_t deviceAllocs() const;            // cudaMalloc (expandable: page-map) calls so far
    int64_t blockSize(int64_t handle) const; // bytes the allocator handed out for handle (after rounding/splits)
    bool outOfMemory() const;                // some allocation failed even after releasing the cache
    int64_t retries() const;

private:
    friend struct ModelReplay; // allocator.cpp's replay loop, which reads the state without a call per event
    struct Impl;
    Impl* d;
};

// Replays the engine's events; Exact returns allocated == reserved (sizes unrounded).
AllocatorStats replay(const std::vector<AllocEvent>& events, AllocatorMode mode);
// The same with PYTORCH_CUDA_ALLOC_CONF knobs and a device limit.
AllocatorStats replay(const std::vector<AllocEvent>& events, AllocatorMode mode, const AllocatorOptions& options);
// The same replay over a compact stream, as the engine records it once per program: an entry id >= 0
// allocates bytes[id] for buffer id, an entry ~id (< 0) frees buffer id. Same figures as replay() over the
// equivalent events (issue 16: a tick's replay can then start before its events vector is written).
AllocatorStats replayOps(const std::vector<int32_t>& ops, const std::vector<int64_t>& bytes, AllocatorMode mode,
                         const AllocatorOptions& options);

} // namespace headroom
