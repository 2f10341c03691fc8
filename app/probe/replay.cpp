#include "replay.h"

#include "headroom/memory/allocator.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <unordered_map>

namespace probe {

int64_t deviceUsed()
{
    size_t freeBytes = 0, totalBytes = 0;
    if (cudaMemGetInfo(&freeBytes, &totalBytes) != cudaSuccess)
        return -1;
    return static_cast<int64_t>(totalBytes) - static_cast<int64_t>(freeBytes);
}

namespace {

struct Block
{
    void* ptr = nullptr;
    int64_t bytes = 0;
};

// Owns every device pointer of one replay; frees them all on destruction (OOM, error or deadline).
class DevicePool
{
public:
    DevicePool() = default;
    DevicePool(const DevicePool&) = delete;
    DevicePool& operator=(const DevicePool&) = delete;
    ~DevicePool()
    {
        for (Block& b : m_blocks)
            if (b.ptr)
                cudaFree(b.ptr);
        cudaDeviceSynchronize();
        cudaGetLastError(); // leave no sticky non-fatal error behind for the next replay
    }

    // Index of the new block, or -1 with `err` set.
    int64_t allocate(int64_t bytes, cudaError_t& err)
    {
        void* p = nullptr;
        // Zero-byte tensors still get a distinct allocation in frameworks; cudaMalloc(0) returns null.
        err = cudaMalloc(&p, static_cast<size_t>(std::max<int64_t>(bytes, 1)));
        if (err != cudaSuccess) {
            cudaGetLastError();
            return -1;
        }
        err = cudaMemset(p, 0, static_cast<size_t>(std::max<int64_t>(bytes, 1)));
        if (err != cudaSuccess) {
            cudaFree(p);
            return -1;
        }
        ++m_allocs;
        m_blocks.push_back({p, bytes});
        return static_cast<int64_t>(m_blocks.size()) - 1;
    }
    void release(int64_t index)
    {
        Block& b = m_blocks[static_cast<size_t>(index)];
        if (b.ptr)
            cudaFree(b.ptr);
        b.ptr = nullptr;
    }
    const Block& at(int64_t index) const { return m_blocks[static_cast<size_t>(index)]; }
    int64_t size() const { return static_cast<int64_t>(m_blocks.size()); }
    int64_t allocs() const { return m_allocs; }

private:
    std::vector<Block> m_blocks;
    int64_t m_allocs = 0;
};

} // namespace

ReplayOutcome replay(const std::vector<headroom::AllocEvent>& events, bool caching, int64_t baseline,
                     Clock::time_point deadline, bool record)
{
    using headroom::AllocEvent;
    ReplayOutcome out;
    DevicePool pool;
    headroom::CachingAllocatorModel model(headroom::AllocatorMode::Caching);
    int64_t modelReserved = 0;

    struct Live
    {
        int64_t block = -1;   // exact mode: pool index
        int64_t handle = -1;  // caching mode: allocator model handle
        int64_t measured = 0; // exact mode: device growth its cudaMalloc caused
        size_t category = 0;
    };
    std::unordered_map<int64_t, Live> live;
    std::array<int64_t, static_cast<size_t>(headroom::Category::Count)> categoryNow{};
    int64_t usedBefore = deviceUsed();

    // Caching mode: grow or shrink the real segments to what the model holds.
    auto syncSegments = [&](cudaError_t& err, int64_t& grown) -> bool {
        const int64_t want = model.reserved();
        grown = 0;
        if (want > modelReserved) {
            if (pool.allocate(want - modelReserved, err) < 0)
                return false;
            grown = want - modelReserved;
        } else if (want < modelReserved) {
            // The model released cached segments: free real ones of the same total, largest matching first.
            int64_t toFree = modelReserved - want;
            for (int64_t i = pool.size(); i-- > 0 && toFree > 0;) {
                const Block& b = pool.at(i);
                if (b.ptr && b.bytes <= toFree) {
                    toFree -= b.bytes;
                    pool.release(i);
                }
            }
        }
        modelReserved = want;
        return true;
    };

    for (size_t i = 0; i < events.size(); ++i) {
        const AllocEvent& e = events[i];
        if ((i & 63) == 0 && Clock::now() > deadline) {
            out.timedOut = true;
            break;
        }
        if (e.category == headroom::Category::Context)
            continue;
        const auto cat = std::min(static_cast<size_t>(e.category), categoryNow.size() - 1);
        cudaError_t err = cudaSuccess;
        bool ok = true;
        if (e.kind == AllocEvent::Kind::Alloc) {
            Live l;
            l.category = cat;
            if (caching) {
                try {
                    l.handle = model.allocate(e.bytes);
                } catch (const std::exception&) {
                    out.cudaError = cudaErrorInvalidValue;
                    break;
                }
                int64_t grown = 0;
                ok = syncSegments(err, grown);
            } else {
                l.block = pool.allocate(e.bytes, err);
                ok = l.block >= 0;
            }
            if (ok) {
                const int64_t usedNow = deviceUsed();
                if (!caching) {
                    l.measured = std::max<int64_t>(0, usedNow - usedBefore);
                    categoryNow[cat] += l.measured;
                    out.categoryPeak[cat] = std::max(out.categoryPeak[cat], categoryNow[cat]);
                }
                usedBefore = usedNow;
                live[e.id] = l;
            }
        } else if (const auto it = live.find(e.id); it != live.end()) {
            if (caching) {
                model.free(it->second.handle);
                int64_t grown = 0;
                ok = syncSegments(err, grown);
            } else {
                pool.release(it->second.block);
                categoryNow[it->second.category] -= it->second.measured;
            }
            live.erase(it);
            usedBefore = deviceUsed();
        }
        if (!ok) {
            if (err == cudaErrorMemoryAllocation) {
                out.oom = true;
                out.oomAtEvent = static_cast<int64_t>(i);
            } else {
                out.cudaError = static_cast<int>(err);
            }
            break;
        }
        const int64_t above = usedBefore - baseline;
        out.peak = std::max(out.peak, above);
        if (record)
            out.usedAfterEvent.push_back(above);
    }
    out.deviceAllocs = pool.allocs();
    return out;
}

} // namespace probe
