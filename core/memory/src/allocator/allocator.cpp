// A model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp, DeviceCachingAllocator)
// for one device and one stream: the rules that decide how many bytes are reserved, nothing else.
// Function names follow the original (get_free_block, should_split, alloc_block, ...) so that a reader can
// check each rule against it.
//
// The model in four layers, each a struct extending the one below it: plain inheritance, no virtual calls,
// so every rule still compiles into the event loop as it did when they were one struct (a replay runs on
// every slider tick).
//   BlockPools          the small and large pools: blocks, the best fit, splitting and merging (block_pools.h)
//   Segments            cudaMalloc'd segments: the reserved bytes and the device limit (segments.h)
//   ExpandableSegments  expandable_segments:True: one growing segment per pool, mapped and unmapped by pages
//   CacheRelease        the retry path when cudaMalloc fails: cached segments given back (also empty_cache)
// and CachingAllocatorModel::Impl on top (here): malloc and free, the handles and the peaks; then the public
// model's calls and the replay loop over an event stream.
#include "headroom/memory/allocator.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

// The model's layers after the standard headers, as when they were one file: included before <unordered_map>,
// they change what GCC inlines into the replay loop's std::unordered_map calls; here the code is the same.
#include "allocator/segments.h"

namespace headroom {

struct CachingAllocatorModel::Impl : CacheRelease
{
    using CacheRelease::CacheRelease;

    std::vector<Block*> handles;     // handle -> allocated block (nullptr: freed or zero bytes)
    std::vector<int64_t> exactSizes; // Exact mode: handle -> bytes
    int64_t allocated = 0, maxAllocated = 0, maxReserved = 0;

    Block* malloc(int64_t origSize)
    {
        const int64_t size = roundedSize(origSize);
        Pool& pool = getPool(size);
        const int64_t allocSize = segmentSize(origSize);
        Block* block = getFreeBlock(pool, size);
        if (!block)
            block = allocAfterMiss(pool, size, allocSize);
        if (shouldSplit(block, size))
            splitFront(pool, block, size);
        block->allocated = true;
        allocated += block->size;
        return block;
    }

    void freeBlock(Block* block)
    {
        block->allocated = false;
        allocated -= block->size;
        Pool& pool = *block->pool;
        tryMerge(block, block->prev, pool);
        tryMerge(block, block->next, pool);
        pool.blocks.insert(FreeEntry{block->size, block->addr, block});
    }

    void updatePeaks()
    {
        maxAllocated = std::max(maxAllocated, allocated);
        maxReserved = std::max(maxReserved, reserved);
    }

    // CachingAllocatorModel::allocate and free, here so that the replay loop inlines them.
    int64_t allocate(int64_t bytes)
    {
        const auto handle = int64_t(handles.size());
        if (mode == AllocatorMode::Exact) {
            const int64_t b = std::max<int64_t>(bytes, 0);
            handles.push_back(nullptr);
            exactSizes.resize(handles.size(), 0);
            exactSizes.back() = b;
            allocated += b;
            reserved += b;
            updatePeaks();
            return handle;
        }
        // PyTorch never calls the allocator for an empty tensor.
        handles.push_back(bytes > 0 ? malloc(bytes) : nullptr);
        updatePeaks();
        return handle;
    }

    void free(int64_t handle)
    {
        if (handle < 0 || handle >= int64_t(handles.size()))
            return;
        if (mode == AllocatorMode::Exact) {
            auto& b = exactSizes[size_t(handle)];
            allocated -= b;
            reserved -= b;
            b = 0;
            return;
        }
        Block*& block = handles[size_t(handle)];
        if (!block)
            return;
        freeBlock(block);
        block = nullptr;
    }
};

CachingAllocatorModel::CachingAllocatorModel(AllocatorMode mode) : CachingAllocatorModel(mode, AllocatorOptions{}) {}

CachingAllocatorModel::CachingAllocatorModel(AllocatorMode mode, const AllocatorOptions& options)
    : d(new Impl(mode, options))
{
}

CachingAllocatorModel::~CachingAllocatorModel() { delete d; }

int64_t CachingAllocatorModel::roundSize(int64_t bytes) { return roundedSize(bytes); }

int64_t CachingAllocatorModel::segmentSizeFor(int64_t bytes) { return segmentSize(bytes); }

int64_t CachingAllocatorModel::allocate(int64_t bytes) { return d->allocate(bytes); }

void CachingAllocatorModel::free(int64_t handle) { d->free(handle); }

void CachingAllocatorModel::emptyCache()
{
    if (d->mode != AllocatorMode::Exact)
        d->releaseCachedBlocks();
}

int64_t CachingAllocatorModel::allocated() const { return d->allocated; }
int64_t CachingAllocatorModel::reserved() const { return d->reserved; }
int64_t CachingAllocatorModel::maxAllocated() const { return d->maxAllocated; }
int64_t CachingAllocatorModel::maxReserved() const { return d->maxReserved; }
int64_t CachingAllocatorModel::segmentCount() const { return d->liveSegments; }
int64_t CachingAllocatorModel::deviceAllocs() const { return d->deviceAllocs; }
bool CachingAllocatorModel::outOfMemory() const { return d->oom; }
int64_t CachingAllocatorModel::retries() const { return d->retries; }

int64_t CachingAllocatorModel::blockSize(int64_t handle) const
{
    if (handle < 0 || handle >= int64_t(d->handles.size()))
        return 0;
    if (d->mode == AllocatorMode::Exact)
        return d->exactSizes[size_t(handle)];
    const Block* b = d->handles[size_t(handle)];
    return b ? b->size : 0;
}

AllocatorStats replay(const std::vector<AllocEvent>& events, AllocatorMode mode)
{
    return replay(events, mode, AllocatorOptions{});
}

// The replay loop over any event stream: Stream has size(), alloc(i), id(i), bytes(i), and idBound() (ids
// are known to lie in [0, idBound()), or -1). A friend of the model so that the loop calls the model's state
// directly: a replay is a tick's largest part and makes several queries per event.
struct ModelReplay
{
    template <class Stream>
    static AllocatorStats run(const Stream& events, AllocatorMode mode, const AllocatorOptions& options);
};

template <class Stream>
AllocatorStats ModelReplay::run(const Stream& events, AllocatorMode mode, const AllocatorOptions& options)
{
    CachingAllocatorModel holder(mode, options);
    CachingAllocatorModel::Impl& model = *holder.d;
    // Buffer ids -> what the model gave them. Ids in [0, bound) (the engine numbers its buffers 0..n-1) index
    // a flat table grown as they come: under a caching mode it holds the block itself (no handle in between,
    // one table less to read per free), in Exact mode the handle. Any other id goes through a hash map of
    // handles. An id always takes the same way, so the model sees the same calls either way, and no pass
    // over the stream is needed first to find out whether its ids are dense.
    const size_t n = events.size();
    const int64_t bound = events.idBound() >= 0 ? events.idBound() : int64_t(2 * n + 16);
    const bool direct = mode != AllocatorMode::Exact;
    const size_t initial = size_t(std::min<int64_t>(bound, int64_t(n / 2 + 16)));
    std::vector<Block*> blockAt(direct ? initial : 0, nullptr);
    std::vector<int64_t> handleAt(direct ? 0 : initial, -1);
    std::unordered_map<int64_t, int64_t> handleOf;
    auto slot = [](auto& table, int64_t id, auto empty) -> auto&
    {
        if (size_t(id) >= table.size())
            table.resize(std::max(size_t(id) + 1, 2 * table.size()), empty);
        return table[size_t(id)];
    };
    AllocatorStats stats;
    if (options.perEvent) {
        stats.reservedAfter.reserve(n);
        stats.allocatedAfter.reserve(n);
    }
    int64_t allocatedAtReservedPeak = 0;
    if (options.preallocated > 0)
        model.allocate(options.preallocated);
    size_t end = n;
    if (options.stopAtOom && model.oom) {
        stats.oomEvent = 0;
        end = 0;
    }
    for (size_t i = 0; i < end; ++i) {
        const int64_t id = events.id(i);
        const bool inTable = id >= 0 && id < bound;
        if (events.alloc(i)) {
            if (inTable && direct) {
                // Impl::allocate without the handle (PyTorch never calls the allocator for an empty tensor).
                const int64_t bytes = events.bytes(i);
                slot(blockAt, id, nullptr) = bytes > 0 ? model.malloc(bytes) : nullptr;
                model.updatePeaks();
            } else {
                const int64_t h = model.allocate(events.bytes(i));
                if (inTable)
                    slot(handleAt, id, int64_t(-1)) = h;
                else
                    handleOf[id] = h;
            }
            if (stats.oomEvent < 0 && model.oom) {
                stats.oomEvent = int64_t(i);
                if (options.stopAtOom)
                    break;
            }
        } else if (inTable && direct) {
            if (Block*& b = slot(blockAt, id, nullptr)) {
                model.freeBlock(b);
                b = nullptr;
            }
        } else if (inTable) {
            if (int64_t& h = slot(handleAt, id, int64_t(-1)); h >= 0) {
                model.free(h);
                h = -1;
            }
        } else if (auto it = handleOf.find(id); it != handleOf.end()) {
            model.free(it->second);
            handleOf.erase(it);
        }
        if (options.perEvent) {
            stats.reservedAfter.push_back(model.reserved);
            stats.allocatedAfter.push_back(model.allocated);
        }
        // The first time reserved reaches a new high, that allocation is what forced it: the share of
        // reserved that is not allocated then is the fragmentation the peak carries.
        if (model.reserved > stats.reservedPeak) {
            stats.reservedPeak = model.reserved;
            allocatedAtReservedPeak = model.allocated;
        }
    }
    stats.allocatedPeak = model.maxAllocated;
    stats.reservedPeak = model.maxReserved;
    stats.reservedFinal = model.reserved;
    stats.allocatedFinal = model.allocated;
    stats.segments = model.deviceAllocs;
    stats.allocRetries = model.retries;
    stats.fragmentation = stats.reservedPeak > 0 ? 1.0 - double(allocatedAtReservedPeak) / double(stats.reservedPeak)
                                                 : 0.0;
    return stats;
}

namespace {

struct EventStream
{
    const std::vector<AllocEvent>& e;
    size_t size() const { return e.size(); }
    bool alloc(size_t i) const { return e[i].kind == AllocEvent::Kind::Alloc; }
    int64_t id(size_t i) const { return e[i].id; }
    int64_t bytes(size_t i) const { return e[i].bytes; }
    int64_t idBound() const { return -1; } // any ids
};

struct OpStream
{
    const std::vector<int32_t>& ops;
    const std::vector<int64_t>& sizes;
    size_t size() const { return ops.size(); }
    bool alloc(size_t i) const { return ops[i] >= 0; }
    int64_t id(size_t i) const { return ops[i] >= 0 ? ops[i] : ~ops[i]; }
    int64_t bytes(size_t i) const { return sizes[size_t(ops[i])]; }
    // The ids index sizes: dense by construction, no pass over the stream to find out.
    int64_t idBound() const { return int64_t(sizes.size()); }
};

} // namespace

AllocatorStats replay(const std::vector<AllocEvent>& events, AllocatorMode mode, const AllocatorOptions& options)
{
    return ModelReplay::run(EventStream{events}, mode, options);
}

AllocatorStats replayOps(const std::vector<int32_t>& ops, const std::vector<int64_t>& bytes, AllocatorMode mode,
                         const AllocatorOptions& options)
{
    return ModelReplay::run(OpStream{ops, bytes}, mode, options);
}

} // namespace headroom
