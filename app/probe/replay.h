#pragma once
// Replaying a plan's events with real device allocations (docs/PROBE.md "What is measured").
#include "headroom/memory/engine.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

namespace probe {

using Clock = std::chrono::steady_clock;

// Device bytes in use (total - free from cudaMemGetInfo); -1 when the query fails.
int64_t deviceUsed();

struct ReplayOutcome
{
    bool oom = false; // cudaMalloc said cudaErrorMemoryAllocation
    int64_t oomAtEvent = -1;
    bool timedOut = false;               // the deadline passed mid-replay
    int cudaError = 0;                   // another CUDA error ended the replay (cudaError_t)
    int64_t peak = 0;                    // most device bytes in use above the baseline
    int64_t deviceAllocs = 0;            // cudaMalloc calls
    std::vector<int64_t> usedAfterEvent; // above the baseline, when recording
    // Exact mode, per category: the most device bytes that cudaMalloc of that category's events took at once (the
    // driver's growth at each allocation, so page rounding and pooling show).
    std::array<int64_t, static_cast<size_t>(headroom::Category::Count)> categoryPeak{};
};

// Exact mode: one cudaMalloc/cudaFree per event; caching mode: headroom's CachingAllocatorModel decides
// when a segment is created (one cudaMalloc per segment). Memory is zeroed (cudaMemset) so it is committed.
// Everything allocated is freed before returning, whatever happened. Events of category Context are
// skipped: the real context is already there.
ReplayOutcome replay(const std::vector<headroom::AllocEvent>& events, bool caching, int64_t baseline,
                     Clock::time_point deadline, bool record);

} // namespace probe
