// A model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp, DeviceCachingAllocator)
// for one device and one stream: the rules that decide how many bytes are reserved, nothing else.
// Function names follow the original (get_free_block, should_split, alloc_block, ...) so that a reader can
// check each rule against it.
#include "headroom/memory/allocator.h"
#include "allocator/free_index.h"

#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <memory>
#include <memory_resource>
#include <set>
#include <unordered_map>

namespace headroom {
namespace {

// The allocator's constants (CUDACachingAllocator.h / AllocatorConfig).
constexpr int64_t kMinBlockSize = 512;       // all sizes are rounded to this
constexpr int64_t kSmallSize = 1 << 20;      // largest "small" request
constexpr int64_t kSmallBuffer = 2 << 20;    // segment for small requests (expandable: small page)
constexpr int64_t kLargeBuffer = 20 << 20;   // segment for 1-10 MiB requests (expandable: large page)
constexpr int64_t kMinLargeAlloc = 10 << 20; // requests from here on get their own segment
constexpr int64_t kRoundLarge = 2 << 20;     // ... rounded up to this
// Expandable segments reserve address space for the whole device; the model only needs "more than any
// plan will map", and 2^50 stays far from int64 overflow when pages are added.
constexpr int64_t kExpandableAddressSpace = int64_t(1) << 50;

int64_t ceilTo(int64_t v, int64_t unit) { return (v + unit - 1) / unit * unit; }

// roundSize / segmentSizeFor, here with internal linkage so that malloc inlines them (a public function of a
// -fPIC object is called, not inlined, as it could be interposed).
int64_t roundedSize(int64_t bytes) { return bytes < kMinBlockSize ? kMinBlockSize : ceilTo(bytes, kMinBlockSize); }
int64_t segmentSize(int64_t bytes)
{
    const int64_t size = roundedSize(bytes);
    if (size <= kSmallSize)
        return kSmallBuffer;
    if (size < kMinLargeAlloc)
        return kLargeBuffer;
    return ceilTo(size, kRoundLarge);
}

struct Pool;
struct Segment
{
    int64_t base = 0;
    int64_t pageSize = 0; // expandable only
    bool expandable = false;
};

struct Block
{
    int64_t addr = 0;
    int64_t size = 0;
    Pool* pool = nullptr;
    Segment* segment = nullptr;
    Block* prev = nullptr;
    Block* next = nullptr;
    bool allocated = false;
    bool mapped = true;
    // FreeIndex's bookkeeping (free_index.h): the key and bucket the block is indexed under, and a count that
    // outlives the block's reuse so that a slot left from an earlier life never reads as alive.
    bool inFree = false;
    int64_t freeSize = 0, freeAddr = 0;
    uint64_t freeGen = 0;
    int32_t freeBucket = -1;
    bool isSplit() const { return prev || next; }
};

using FreeEntry = allocator_detail::FreeEntry<Block>;
using FreeIndex = allocator_detail::FreeIndex<Block>;

struct ByAddr
{
    bool operator()(const Block* a, const Block* b) const { return a->addr < b->addr; }
};

// The sets' nodes: a replay inserts and erases a node per event, and the general-purpose heap made that the
// replay's largest cost (issue 16). Nodes come in one or two sizes, so freed ones are kept per size and
// handed out again; everything goes back when the model does.
class NodeRecycler final : public std::pmr::memory_resource
{
    struct Bin
    {
        size_t bytes = 0, align = 0;
        std::vector<void*> free;
    };
    std::array<Bin, 4> m_bins;
    std::pmr::monotonic_buffer_resource m_arena;

    Bin* bin(size_t bytes, size_t align)
    {
        for (Bin& b : m_bins) {
            if (b.bytes == 0) {
                b.bytes = bytes;
                b.align = align;
            }
            if (b.bytes == bytes && b.align == align)
                return &b;
        }
        return nullptr;
    }
    void* do_allocate(size_t bytes, size_t align) override
    {
        if (Bin* b = bin(bytes, align); b && !b->free.empty()) {
            void* p = b->free.back();
            b->free.pop_back();
            return p;
        }
        return m_arena.allocate(bytes, align);
    }
    void do_deallocate(void* p, size_t bytes, size_t align) override
    {
        if (Bin* b = bin(bytes, align))
            b->free.push_back(p);
    }
    bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }
};

// Stable storage for the model's blocks: std::deque's 512-byte chunks hold five blocks each, so a deep
// graph's replay made ~20k small allocations and freed them at once (malloc_consolidate). Chunks here
// double from 64 blocks up to 4096.
class BlockArena
{
public:
    Block* make()
    {
        if (m_chunks.empty() || m_used == m_size) {
            m_size = m_chunks.empty() ? 64 : std::min<size_t>(m_size * 2, 4096);
            m_chunks.emplace_back(new Block[m_size]);
            m_used = 0;
        }
        return &m_chunks.back()[m_used++];
    }

private:
    std::vector<std::unique_ptr<Block[]>> m_chunks;
    size_t m_size = 0, m_used = 0;
};

struct Pool
{
    explicit Pool(std::pmr::memory_resource* nodes) : unmapped(nodes) {}
    bool isSmall = false;
    FreeIndex blocks;                       // free, mapped, keyed on their current size and address
    std::pmr::set<Block*, ByAddr> unmapped; // expandable segments' unbacked address ranges
};

// The model in four layers, each a struct extending the one below it: plain inheritance, no virtual calls,
// so every rule still compiles into the event loop as it did when they were one struct (a replay runs on
// every slider tick).
//   BlockPools          the small and large pools: blocks, the best fit, splitting and merging
//   Segments            cudaMalloc'd segments: the reserved bytes and the device limit
//   ExpandableSegments  expandable_segments:True: one growing segment per pool, mapped and unmapped by pages
//   CacheRelease        the retry path when cudaMalloc fails: cached segments given back (also empty_cache)
// and CachingAllocatorModel::Impl on top: malloc and free, the handles and the peaks.

// DeviceCachingAllocator's small_blocks and large_blocks and the blocks they hold.
struct BlockPools
{
    BlockPools(AllocatorMode m, const AllocatorOptions& o) : mode(m), options(o), small(&nodes), large(&nodes)
    {
        small.isSmall = true;
    }

    AllocatorMode mode;
    AllocatorOptions options;
    NodeRecycler nodes;
    Pool small;
    Pool large;
    BlockArena storage;
    std::vector<Block*> recycled;

    Block* newBlock(int64_t addr, int64_t size, Pool* pool, Segment* segment)
    {
        Block* b;
        if (!recycled.empty()) {
            b = recycled.back();
            recycled.pop_back();
            const uint64_t gen = b->freeGen;
            *b = Block{};
            b->freeGen = gen;
        } else {
            b = storage.make();
        }
        b->addr = addr;
        b->size = size;
        b->pool = pool;
        b->segment = segment;
        return b;
    }
    void deleteBlock(Block* b) { recycled.push_back(b); }

    Pool& getPool(int64_t size) { return size <= kSmallSize ? small : large; }

    bool expandable() const { return mode == AllocatorMode::Expandable; }

    bool shouldSplit(const Block* block, int64_t size) const
    {
        const int64_t remaining = block->size - size;
        if (block->pool->isSmall || expandable())
            return remaining >= kMinBlockSize;
        return size < options.maxSplitSize && remaining > kSmallSize;
    }

    // Best fit; an expandable segment's tail block counts with the address space it could still map.
    Block* getFreeBlock(Pool& pool, int64_t size)
    {
        auto it = pool.blocks.lowerBound(size);
        if (pool.blocks.atEnd(it))
            return nullptr;
        if (pool.blocks.at(it).block->segment->expandable) {
            auto expandableSize = [](const Block* b) {
                return b->size + (b->next && !b->next->mapped ? b->next->size : 0);
            };
            auto next = it;
            pool.blocks.advance(next);
            while (pool.blocks.at(it).block->segment->expandable && !pool.blocks.atEnd(next) &&
                   expandableSize(pool.blocks.at(next).block) < expandableSize(pool.blocks.at(it).block)) {
                it = next;
                pool.blocks.advance(next);
            }
        }
        const FreeEntry& best = pool.blocks.at(it);
        // Oversize blocks (>= max_split_size) serve only oversize requests, and only within kLargeBuffer.
        if (size < options.maxSplitSize && best.size >= options.maxSplitSize)
            return nullptr;
        if (size >= options.maxSplitSize && best.size >= size + kLargeBuffer)
            return nullptr;
        Block* b = best.block;
        pool.blocks.erase(it);
        return b;
    }

    // alloc_found_block: keep the front `size` bytes, return the remainder to the pool.
    void splitFront(Pool& pool, Block* block, int64_t size)
    {
        Block* rest = newBlock(block->addr + size, block->size - size, &pool, block->segment);
        rest->prev = block;
        rest->next = block->next;
        if (rest->next)
            rest->next->prev = rest;
        block->next = rest;
        block->size = size;
        pool.blocks.insert(FreeEntry{rest->size, rest->addr, rest});
    }

    // try_merge_blocks: src is absorbed into dst; returns whether it was.
    bool tryMerge(Block* dst, Block* src, Pool& pool)
    {
        if (!src || src->allocated || dst->mapped != src->mapped)
            return false;
        if (dst->prev == src) {
            dst->addr = src->addr;
            dst->prev = src->prev;
            if (dst->prev)
                dst->prev->next = dst;
        } else {
            dst->next = src->next;
            if (dst->next)
                dst->next->prev = dst;
        }
        if (src->mapped)
            pool.blocks.erase(FreeEntry{src->size, src->addr, src});
        else
            pool.unmapped.erase(src);
        // dst may sit in a sorted set keyed on the size that is about to change: re-insert it.
        const bool dstInBlocks = dst->mapped && FreeIndex::contains(dst) &&
                                 pool.blocks.erase(FreeEntry{dst->size, dst->addr, dst}) > 0;
        const bool dstInUnmapped = !dst->mapped && pool.unmapped.erase(dst) > 0;
        dst->size += src->size;
        if (dstInBlocks)
            pool.blocks.insert(FreeEntry{dst->size, dst->addr, dst});
        if (dstInUnmapped)
            pool.unmapped.insert(dst);
        deleteBlock(src);
        return true;
    }
};

// Whole segments from cudaMalloc, and the reserved bytes they add up to.
struct Segments : BlockPools
{
    using BlockPools::BlockPools;

    std::deque<Segment> segments;
    int64_t nextAddress = int64_t(1) << 32;
    int64_t reserved = 0;
    int64_t deviceAllocs = 0, liveSegments = 0;

    bool deviceHasRoom(int64_t bytes) const { return options.capacity <= 0 || reserved + bytes <= options.capacity; }

    // cudaMalloc of a whole segment.
    Block* allocSegment(Pool& pool, int64_t allocSize, bool force)
    {
        if (!force && !deviceHasRoom(allocSize))
            return nullptr;
        Segment& seg = segments.emplace_back();
        seg.base = nextAddress;
        nextAddress += ceilTo(allocSize, kRoundLarge) + kRoundLarge;
        reserved += allocSize;
        ++deviceAllocs;
        ++liveSegments;
        return newBlock(seg.base, allocSize, &pool, &seg);
    }

    // cudaFree of a whole free segment.
    void releaseSegmentBlock(Block* b)
    {
        b->pool->blocks.erase(FreeEntry{b->size, b->addr, b});
        reserved -= b->size;
        --liveSegments;
        deleteBlock(b);
    }
};

// Expandable segments (ExpandableSegment): one address range per pool, backed page by page as it grows.
struct ExpandableSegments : Segments
{
    using Segments::Segments;

    // map_block: map pages of the pool's segment (ExpandableSegment::map rounds to whole pages).
    bool mapBlock(Block* toMap, int64_t size, bool force)
    {
        const int64_t page = toMap->segment->pageSize;
        const int64_t mappedSize = std::min(ceilTo(size, page), toMap->size);
        if (!force && !deviceHasRoom(mappedSize))
            return false;
        Pool& pool = *toMap->pool;
        pool.unmapped.erase(toMap);
        toMap->mapped = true;
        if (mappedSize < toMap->size) {
            Block* rest = newBlock(toMap->addr + mappedSize, toMap->size - mappedSize, &pool, toMap->segment);
            rest->mapped = false;
            rest->prev = toMap;
            rest->next = toMap->next;
            if (rest->next)
                rest->next->prev = rest;
            toMap->next = rest;
            toMap->size = mappedSize;
            pool.unmapped.insert(rest);
        }
        tryMerge(toMap, toMap->prev, pool);
        tryMerge(toMap, toMap->next, pool);
        pool.blocks.insert(FreeEntry{toMap->size, toMap->addr, toMap});
        reserved += mappedSize;
        ++deviceAllocs;
        return true;
    }

    // find_expandable_block: the lowest address with enough free-or-unmapped room, else a new segment.
    Block* findExpandableBlock(Pool& pool, int64_t size)
    {
        auto allocatable = [](const Block* b) { return b && !b->allocated; };
        auto hasRoom = [&](const Block* b) {
            int64_t bytes = 0;
            while (bytes < size && allocatable(b)) {
                bytes += b->size;
                b = b->next;
            }
            return bytes >= size;
        };
        for (Block* c : pool.unmapped) {
            Block* candidate = allocatable(c->prev) ? c->prev : c;
            if (hasRoom(candidate))
                return candidate;
        }
        Segment& seg = segments.emplace_back();
        seg.base = nextAddress;
        seg.expandable = true;
        seg.pageSize = pool.isSmall ? kSmallBuffer : kLargeBuffer;
        nextAddress += kExpandableAddressSpace;
        ++liveSegments;
        Block* b = newBlock(seg.base, kExpandableAddressSpace, &pool, &seg);
        b->mapped = false;
        pool.unmapped.insert(b);
        return b;
    }

    Block* tryAllocateExpandable(Pool& pool, int64_t size, bool force)
    {
        Block* candidate = findExpandableBlock(pool, size);
        if (!candidate->mapped && !mapBlock(candidate, std::min(candidate->size, size), force))
            return nullptr;
        while (candidate->size < size) {
            Block* next = candidate->next;
            if (!mapBlock(next, std::min(size - candidate->size, next->size), force))
                return nullptr;
            candidate = next; // map_block merged the free candidate into it
        }
        candidate->pool->blocks.erase(FreeEntry{candidate->size, candidate->addr, candidate});
        return candidate;
    }

    // unmap_block: give back the whole pages inside a free expandable block.
    void unmapBlock(Block* b)
    {
        Pool& pool = *b->pool;
        const int64_t page = b->segment->pageSize;
        const int64_t base = b->segment->base;
        const int64_t begin = base + ceilTo(b->addr - base, page);
        const int64_t end = base + (b->addr + b->size - base) / page * page;
        if (end <= begin)
            return;
        pool.blocks.erase(FreeEntry{b->size, b->addr, b});
        if (begin > b->addr) {
            Block* before = newBlock(b->addr, begin - b->addr, &pool, b->segment);
            before->prev = b->prev;
            before->next = b;
            if (b->prev)
                b->prev->next = before;
            b->prev = before;
            pool.blocks.insert(FreeEntry{before->size, before->addr, before});
        }
        if (b->addr + b->size > end) {
            Block* after = newBlock(end, b->addr + b->size - end, &pool, b->segment);
            after->prev = b;
            after->next = b->next;
            if (b->next)
                b->next->prev = after;
            b->next = after;
            pool.blocks.insert(FreeEntry{after->size, after->addr, after});
        }
        b->addr = begin;
        b->size = end - begin;
        b->mapped = false;
        reserved -= b->size;
        tryMerge(b, b->prev, pool);
        tryMerge(b, b->next, pool);
        pool.unmapped.insert(b);
    }

    // alloc_block: a new segment, or more pages of the pool's expandable one.
    Block* allocBlock(Pool& pool, int64_t size, int64_t allocSize, bool force)
    {
        return expandable() ? tryAllocateExpandable(pool, size, force) : allocSegment(pool, allocSize, force);
    }
};

// What malloc does when no cached block fits and cudaMalloc fails: give cached segments back and try again.
struct CacheRelease : ExpandableSegments
{
    using ExpandableSegments::ExpandableSegments;

    int64_t retries = 0;
    bool oom = false;

    // release_available_cached_blocks: with max_split_size set, free oversize cached segments first.
    bool releaseAvailableCachedBlocks(Pool& pool, int64_t size)
    {
        if (options.maxSplitSize == INT64_MAX || expandable())
            return false;
        const int64_t want = std::max(size, options.maxSplitSize);
        auto it = pool.blocks.lowerBound(want);
        if (!pool.blocks.atEnd(it)) {
            Block* b = pool.blocks.at(it).block;
            if (b->isSplit())
                return false;
            releaseSegmentBlock(b);
            return true;
        }
        int64_t released = 0;
        std::vector<Block*> victims;
        pool.blocks.forEachDescending([&](const FreeEntry& e) {
            if (released >= want || e.size < options.maxSplitSize)
                return false;
            if (!e.block->isSplit()) {
                victims.push_back(e.block);
                released += e.size;
            }
            return true;
        });
        for (Block* b : victims)
            releaseSegmentBlock(b);
        return released >= want;
    }

    // release_cached_blocks: every free segment goes back to the driver; expandable ones unmap free pages.
    void releaseCachedBlocks()
    {
        for (Pool* pool : {&large, &small}) {
            std::vector<Block*> toRelease;
            toRelease.reserve(pool->blocks.count());
            pool->blocks.forEachAscending([&](const FreeEntry& e) { toRelease.push_back(e.block); });
            for (Block* b : toRelease) {
                if (b->segment->expandable)
                    unmapBlock(b);
                else if (!b->isSplit())
                    releaseSegmentBlock(b);
            }
            // A fully unmapped expandable segment is dropped (release_expandable_segment).
            std::vector<Block*> whole;
            for (Block* b : pool->unmapped)
                if (!b->isSplit())
                    whole.push_back(b);
            for (Block* b : whole) {
                pool->unmapped.erase(b);
                --liveSegments;
                deleteBlock(b);
            }
        }
    }

    // malloc's path when no cached block fits: alloc_block, then the two releases, each followed by a retry.
    Block* allocAfterMiss(Pool& pool, int64_t size, int64_t allocSize)
    {
        Block* block = allocBlock(pool, size, allocSize, false);
        if (!block && releaseAvailableCachedBlocks(pool, size)) {
            ++retries;
            block = allocBlock(pool, size, allocSize, false);
        }
        if (!block) {
            ++retries;
            releaseCachedBlocks();
            block = allocBlock(pool, size, allocSize, false);
        }
        if (!block) {
            // A real run raises OutOfMemoryError here; the model records it and goes on over the limit
            // so that the caller still sees the full plan's figures.
            oom = true;
            block = allocBlock(pool, size, allocSize, true);
        }
        return block;
    }
};

} // namespace

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
