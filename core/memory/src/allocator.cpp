// A model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp, DeviceCachingAllocator)
// for one device and one stream: the rules that decide how many bytes are reserved, nothing else.
// Function names follow the original (get_free_block, should_split, alloc_block, ...) so that a reader can
// check each rule against it.
#include "headroom/memory/allocator.h"

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
    // FreeIndex's bookkeeping: the key the block is indexed under, and a count that outlives the block's
    // reuse so that a slot left from an earlier life never reads as alive.
    bool inFree = false;
    int64_t freeSize = 0, freeAddr = 0;
    uint64_t freeGen = 0;
    bool isSplit() const { return prev || next; }
};

// Free blocks ordered as BlockComparatorSize (stream, size, address): best fit is the first entry of the
// smallest size >= the request, lowest address first. The key is kept in the entry so that a search does
// not touch the blocks themselves (issue 16: a replay is a search per event).
struct FreeEntry
{
    int64_t size = 0;
    int64_t addr = 0;
    Block* block = nullptr;
};

// The same order as one std::set keyed on (size, address), stored as a map from size to the blocks of that
// size. A deep graph's backward frees thousands of blocks of a handful of sizes, so a balanced tree over all
// of them made every event a deep pointer chase (issue 16: ~45 % of a 100k-node tick). Here the tree holds
// only the distinct sizes; each size keeps its blocks in a binary min-heap on address (one contiguous array:
// the best fit is its top), and an erase only marks the block as out of the index, its heap entry being
// dropped when it reaches the top or when dead entries outnumber live ones. Walking past the best fit (the
// expandable segments' rule, the release paths) reads the heap in address order, which is rare.
class FreeIndex
{
    struct Slot
    {
        int64_t addr;
        Block* block;
        uint64_t gen;
    };
    struct Bucket
    {
        std::vector<Slot> heap; // min-heap on addr, with dead slots
        size_t live = 0;
    };
    using Map = std::pmr::map<int64_t, Bucket>;
    // A function object, not a function pointer, so that the heap operations inline the comparison.
    struct Later
    {
        bool operator()(const Slot& a, const Slot& b) const { return a.addr > b.addr; }
    };
    static constexpr Later later{};

public:
    explicit FreeIndex(std::pmr::memory_resource* nodes) : m_sizes(nodes) {}

    // A position in (size, address) order; valid while the index is not changed.
    struct Cursor
    {
        Map::iterator it;
        FreeEntry entry;
    };
    Cursor lowerBound(int64_t size)
    {
        Cursor c{m_sizes.lower_bound(size), {}};
        if (c.it != m_sizes.end())
            c.entry = top(c.it);
        return c;
    }
    bool atEnd(const Cursor& c) const { return c.it == m_sizes.end(); }
    const FreeEntry& at(const Cursor& c) const { return c.entry; }
    void advance(Cursor& c)
    {
        const Slot* best = nullptr;
        for (const Slot& s : c.it->second.heap)
            if (alive(s) && s.addr > c.entry.addr && (!best || s.addr < best->addr))
                best = &s;
        if (best) {
            c.entry = FreeEntry{c.it->first, best->addr, best->block};
            return;
        }
        if (++c.it != m_sizes.end())
            c.entry = top(c.it);
    }
    size_t count() const { return m_count; }

    void insert(const FreeEntry& e)
    {
        Block* b = e.block;
        if (b->inFree)
            return; // already present: a set insert does nothing either
        auto [it, added] = m_sizes.try_emplace(e.size);
        Bucket& k = it->second;
        if (added && !m_spare.empty()) {
            k.heap = std::move(m_spare.back());
            m_spare.pop_back();
        }
        b->inFree = true;
        b->freeSize = e.size;
        b->freeAddr = e.addr;
        k.heap.push_back(Slot{e.addr, b, ++b->freeGen});
        std::push_heap(k.heap.begin(), k.heap.end(), later);
        ++k.live;
        ++m_count;
    }
    size_t erase(const FreeEntry& key)
    {
        Block* b = key.block;
        if (!b->inFree || b->freeSize != key.size || b->freeAddr != key.addr)
            return 0;
        auto it = m_sizes.find(key.size);
        b->inFree = false;
        ++b->freeGen; // its slot is dead from here on
        --m_count;
        Bucket& k = it->second;
        if (--k.live == 0) {
            // Sizes come and go by the thousand in a replay: keep the array's storage for the next one.
            k.heap.clear();
            m_spare.push_back(std::move(k.heap));
            m_sizes.erase(it);
        } else if (k.heap.size() > 2 * k.live + 32) {
            std::erase_if(k.heap, [](const Slot& s) { return !alive(s); });
            std::make_heap(k.heap.begin(), k.heap.end(), later);
        }
        return 1;
    }
    void erase(const Cursor& c) { erase(c.entry); }

    template <class F> void forEachAscending(F&& f) const
    {
        for (auto s = m_sizes.begin(); s != m_sizes.end(); ++s)
            for (const FreeEntry& e : sorted(s))
                f(e);
    }
    // Largest first; f returns false to stop.
    template <class F> void forEachDescending(F&& f) const
    {
        for (auto s = m_sizes.rbegin(); s != m_sizes.rend(); ++s) {
            const std::vector<FreeEntry> v = sorted(std::prev(s.base()));
            for (auto r = v.rbegin(); r != v.rend(); ++r)
                if (!f(*r))
                    return;
        }
    }

private:
    static bool alive(const Slot& s) { return s.block->inFree && s.block->freeGen == s.gen; }
    FreeEntry top(Map::iterator it)
    {
        auto& h = it->second.heap;
        while (!alive(h.front())) {
            std::pop_heap(h.begin(), h.end(), later);
            h.pop_back();
        }
        return FreeEntry{it->first, h.front().addr, h.front().block};
    }
    static std::vector<FreeEntry> sorted(Map::const_iterator it)
    {
        std::vector<FreeEntry> v;
        for (const Slot& s : it->second.heap)
            if (alive(s))
                v.push_back(FreeEntry{it->first, s.addr, s.block});
        std::sort(v.begin(), v.end(), [](const FreeEntry& a, const FreeEntry& b) { return a.addr < b.addr; });
        return v;
    }

    Map m_sizes;
    std::vector<std::vector<Slot>> m_spare;
    size_t m_count = 0;
};

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
    explicit Pool(std::pmr::memory_resource* nodes) : blocks(nodes), unmapped(nodes) {}
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
        const bool dstInBlocks = dst->mapped && pool.blocks.erase(FreeEntry{dst->size, dst->addr, dst}) > 0;
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
        const int64_t size = CachingAllocatorModel::roundSize(origSize);
        Pool& pool = getPool(size);
        const int64_t allocSize = CachingAllocatorModel::segmentSizeFor(origSize);
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
};

CachingAllocatorModel::CachingAllocatorModel(AllocatorMode mode) : CachingAllocatorModel(mode, AllocatorOptions{}) {}

CachingAllocatorModel::CachingAllocatorModel(AllocatorMode mode, const AllocatorOptions& options)
    : d(new Impl(mode, options))
{
}

CachingAllocatorModel::~CachingAllocatorModel() { delete d; }

int64_t CachingAllocatorModel::roundSize(int64_t bytes)
{
    if (bytes < kMinBlockSize)
        return kMinBlockSize;
    return ceilTo(bytes, kMinBlockSize);
}

int64_t CachingAllocatorModel::segmentSizeFor(int64_t bytes)
{
    const int64_t size = roundSize(bytes);
    if (size <= kSmallSize)
        return kSmallBuffer;
    if (size < kMinLargeAlloc)
        return kLargeBuffer;
    return ceilTo(size, kRoundLarge);
}

int64_t CachingAllocatorModel::allocate(int64_t bytes)
{
    const auto handle = int64_t(d->handles.size());
    if (d->mode == AllocatorMode::Exact) {
        const int64_t b = std::max<int64_t>(bytes, 0);
        d->handles.push_back(nullptr);
        d->exactSizes.resize(d->handles.size(), 0);
        d->exactSizes.back() = b;
        d->allocated += b;
        d->reserved += b;
        d->updatePeaks();
        return handle;
    }
    // PyTorch never calls the allocator for an empty tensor.
    d->handles.push_back(bytes > 0 ? d->malloc(bytes) : nullptr);
    d->updatePeaks();
    return handle;
}

void CachingAllocatorModel::free(int64_t handle)
{
    if (handle < 0 || handle >= int64_t(d->handles.size()))
        return;
    if (d->mode == AllocatorMode::Exact) {
        auto& b = d->exactSizes[size_t(handle)];
        d->allocated -= b;
        d->reserved -= b;
        b = 0;
        return;
    }
    Block*& block = d->handles[size_t(handle)];
    if (!block)
        return;
    d->freeBlock(block);
    block = nullptr;
}

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

namespace {

// The replay loop over any event stream: Stream has size(), alloc(i), id(i) and bytes(i).
template <class Stream>
AllocatorStats replayStream(const Stream& events, AllocatorMode mode, const AllocatorOptions& options)
{
    CachingAllocatorModel model(mode, options);
    // Buffer ids -> handles: a flat table when the ids are dense (the engine numbers its buffers 0..n-1),
    // a hash map for anything else.
    const size_t n = events.size();
    int64_t maxId = -1;
    bool dense = true;
    for (size_t i = 0; i < n; ++i) {
        const int64_t id = events.id(i);
        dense = dense && id >= 0;
        maxId = std::max(maxId, id);
    }
    dense = dense && maxId < int64_t(2 * n + 16);
    std::vector<int64_t> handleAt(dense ? size_t(maxId + 1) : 0, -1);
    std::unordered_map<int64_t, int64_t> handleOf;
    if (!dense)
        handleOf.reserve(n);
    AllocatorStats stats;
    if (options.perEvent) {
        stats.reservedAfter.reserve(n);
        stats.allocatedAfter.reserve(n);
    }
    int64_t allocatedAtReservedPeak = 0;
    if (options.preallocated > 0)
        model.allocate(options.preallocated);
    for (size_t i = 0; i < n; ++i) {
        const int64_t id = events.id(i);
        if (events.alloc(i)) {
            const int64_t h = model.allocate(events.bytes(i));
            if (dense)
                handleAt[size_t(id)] = h;
            else
                handleOf[id] = h;
            if (stats.oomEvent < 0 && model.outOfMemory())
                stats.oomEvent = int64_t(i);
        } else if (dense) {
            if (int64_t& h = handleAt[size_t(id)]; h >= 0) {
                model.free(h);
                h = -1;
            }
        } else if (auto it = handleOf.find(id); it != handleOf.end()) {
            model.free(it->second);
            handleOf.erase(it);
        }
        if (options.perEvent) {
            stats.reservedAfter.push_back(model.reserved());
            stats.allocatedAfter.push_back(model.allocated());
        }
        // The first time reserved reaches a new high, that allocation is what forced it: the share of
        // reserved that is not allocated then is the fragmentation the peak carries.
        if (model.reserved() > stats.reservedPeak) {
            stats.reservedPeak = model.reserved();
            allocatedAtReservedPeak = model.allocated();
        }
    }
    stats.allocatedPeak = model.maxAllocated();
    stats.reservedPeak = model.maxReserved();
    stats.reservedFinal = model.reserved();
    stats.allocatedFinal = model.allocated();
    stats.segments = model.deviceAllocs();
    stats.allocRetries = model.retries();
    stats.fragmentation = stats.reservedPeak > 0 ? 1.0 - double(allocatedAtReservedPeak) / double(stats.reservedPeak)
                                                 : 0.0;
    return stats;
}

struct EventStream
{
    const std::vector<AllocEvent>& e;
    size_t size() const { return e.size(); }
    bool alloc(size_t i) const { return e[i].kind == AllocEvent::Kind::Alloc; }
    int64_t id(size_t i) const { return e[i].id; }
    int64_t bytes(size_t i) const { return e[i].bytes; }
};

struct OpStream
{
    const std::vector<int32_t>& ops;
    const std::vector<int64_t>& sizes;
    size_t size() const { return ops.size(); }
    bool alloc(size_t i) const { return ops[i] >= 0; }
    int64_t id(size_t i) const { return ops[i] >= 0 ? ops[i] : ~ops[i]; }
    int64_t bytes(size_t i) const { return sizes[size_t(ops[i])]; }
};

} // namespace

AllocatorStats replay(const std::vector<AllocEvent>& events, AllocatorMode mode, const AllocatorOptions& options)
{
    return replayStream(EventStream{events}, mode, options);
}

AllocatorStats replayOps(const std::vector<int32_t>& ops, const std::vector<int64_t>& bytes, AllocatorMode mode,
                         const AllocatorOptions& options)
{
    return replayStream(OpStream{ops, bytes}, mode, options);
}

} // namespace headroom
