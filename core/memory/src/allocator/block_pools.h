#pragma once
// The caching allocator model's lowest layer (allocator.cpp has the map of the four): the allocator's
// constants and size rounding, the blocks and the segments they lie in, and DeviceCachingAllocator's small
// and large pools of free blocks with the best fit, splitting and merging. Header-only and included by
// allocator.cpp alone: its definitions keep the internal linkage (an anonymous namespace) they had when the
// model was one file, so that malloc and every rule still inline into the replay loop.
#include "allocator/free_index.h"
#include "headroom/memory/allocator.h"

#include <algorithm>
#include <array>
#include <memory>
#include <memory_resource>
#include <set>
#include <vector>

namespace headroom {
namespace {

// The allocator's constants (CUDACachingAllocator.h / AllocatorConfig).
inline constexpr int64_t kMinBlockSize = 512;       // all sizes are rounded to this
inline constexpr int64_t kSmallSize = 1 << 20;      // largest "small" request
inline constexpr int64_t kSmallBuffer = 2 << 20;    // segment for small requests (expandable: small page)
inline constexpr int64_t kLargeBuffer = 20 << 20;   // segment for 1-10 MiB requests (expandable: large page)
inline constexpr int64_t kMinLargeAlloc = 10 << 20; // requests from here on get their own segment
inline constexpr int64_t kRoundLarge = 2 << 20;     // ... rounded up to this
// Expandable segments reserve address space for the whole device; the model only needs "more than any
// plan will map", and 2^50 stays far from int64 overflow when pages are added.
inline constexpr int64_t kExpandableAddressSpace = int64_t(1) << 50;

inline int64_t ceilTo(int64_t v, int64_t unit) { return (v + unit - 1) / unit * unit; }

// roundSize / segmentSizeFor, here with internal linkage so that malloc inlines them (a public function of a
// -fPIC object is called, not inlined, as it could be interposed).
inline int64_t roundedSize(int64_t bytes)
{
    return bytes < kMinBlockSize ? kMinBlockSize : ceilTo(bytes, kMinBlockSize);
}
inline int64_t segmentSize(int64_t bytes)
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

} // namespace
} // namespace headroom
