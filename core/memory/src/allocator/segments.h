#pragma once
// The caching allocator model's upper three layers (allocator.cpp has the map): whole segments from
// cudaMalloc and the reserved bytes they add up to, expandable segments mapped and unmapped by pages, and
// the retry path that gives cached segments back when cudaMalloc fails. Header-only, as block_pools.h.
#include "allocator/block_pools.h"

#include <algorithm>
#include <deque>
#include <vector>

namespace headroom {
namespace {

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
} // namespace headroom
