// The caching allocator model's free blocks (allocator.cpp), in the order of the allocator's pools
// (c10/cuda/CUDACachingAllocator.cpp, BlockComparatorSize: stream, size, address): the best fit is the
// first block of the smallest size >= the request, lowest address first. Private to core/memory; a header
// so that tst_freeindex can check it against a std::set in that order.
#pragma once
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <vector>

namespace headroom::allocator_detail {

template <class Block> struct FreeEntry
{
    int64_t size = 0;
    int64_t addr = 0;
    Block* block = nullptr;
};

// The blocks are grouped by exact size into buckets; each bucket keeps its blocks in a binary min-heap on
// address (one contiguous array: the lowest address is its top), and an erase only marks the block as out
// of the index, its heap entry being dropped when it reaches the top or when dead entries outnumber live
// ones. The buckets are found without a tree: sizes fall into 64 classes per power of two (the class grows
// with the size), a bit per non-empty class and one per non-empty power of two give the first class at or
// above a request in two count-trailing-zeros, and a class lists its few buckets unsorted. Issue 22: a
// replay's free blocks are mostly of distinct sizes, so a tree over the sizes (std::map) inserted and
// erased a node, with its rebalancing, on nearly every event; here an insert or an erase is a short list
// walk and a bit flip. Walking past the best fit (the expandable segments' rule, the release paths) reads a
// heap in address order, which is rare.
//
// Block provides: bool inFree; int64_t freeSize, freeAddr; uint64_t freeGen; int32_t freeBucket (the
// index's bookkeeping: the key and bucket it is indexed under, and a count that outlives the block's reuse
// so that a slot left from an earlier life never reads as alive).
template <class Block> class FreeIndex
{
    using Entry = FreeEntry<Block>;
    struct Slot
    {
        int64_t addr;
        Block* block;
        uint64_t gen;
    };
    struct Bucket
    {
        int64_t size = 0;
        std::vector<Slot> heap; // min-heap on addr, with dead slots
        size_t live = 0;
        int32_t cls = 0, prev = -1, next = -1; // its class's list
    };
    // A function object, not a function pointer, so that the heap operations inline the comparison.
    struct Later
    {
        bool operator()(const Slot& a, const Slot& b) const { return a.addr > b.addr; }
    };
    static constexpr Later later{};
    static constexpr int kSubBits = 6; // 64 classes per power of two

public:
    // A position in (size, address) order; valid while the index is not changed.
    struct Cursor
    {
        int32_t bucket = -1;
        Entry entry;
    };
    Cursor lowerBound(int64_t size)
    {
        Cursor c{firstBucketFrom(size), {}};
        if (c.bucket >= 0)
            c.entry = top(c.bucket);
        return c;
    }
    bool atEnd(const Cursor& c) const { return c.bucket < 0; }
    const Entry& at(const Cursor& c) const { return c.entry; }
    void advance(Cursor& c)
    {
        const Slot* best = nullptr;
        for (const Slot& s : m_buckets[size_t(c.bucket)].heap)
            if (alive(s) && s.addr > c.entry.addr && (!best || s.addr < best->addr))
                best = &s;
        if (best) {
            c.entry = Entry{c.entry.size, best->addr, best->block};
            return;
        }
        c.bucket = firstBucketFrom(c.entry.size + 1);
        if (c.bucket >= 0)
            c.entry = top(c.bucket);
    }
    size_t count() const { return m_count; }
    // Whether b is indexed (under its current size and address: the allocator re-indexes a block before it
    // changes either). Inline, so that a merge asks it without a call.
    static bool contains(const Block* b) { return b->inFree; }

    void insert(const Entry& e)
    {
        Block* b = e.block;
        if (b->inFree)
            return; // already present: a set insert does nothing either
        const int32_t id = bucketFor(e.size);
        Bucket& k = m_buckets[size_t(id)];
        b->inFree = true;
        b->freeSize = e.size;
        b->freeAddr = e.addr;
        b->freeBucket = id;
        k.heap.push_back(Slot{e.addr, b, ++b->freeGen});
        std::push_heap(k.heap.begin(), k.heap.end(), later);
        ++k.live;
        ++m_count;
    }
    size_t erase(const Entry& key)
    {
        Block* b = key.block;
        if (!b->inFree || b->freeSize != key.size || b->freeAddr != key.addr)
            return 0;
        b->inFree = false;
        ++b->freeGen; // its slot is dead from here on
        --m_count;
        Bucket& k = m_buckets[size_t(b->freeBucket)];
        if (--k.live == 0) {
            // Sizes come and go by the thousand in a replay: the bucket and its array's storage are kept
            // for the next size.
            k.heap.clear();
            unlink(b->freeBucket);
            m_spare.push_back(b->freeBucket);
        } else if (k.heap.size() > 2 * k.live + 32) {
            std::erase_if(k.heap, [](const Slot& s) { return !alive(s); });
            std::make_heap(k.heap.begin(), k.heap.end(), later);
        }
        return 1;
    }
    void erase(const Cursor& c) { erase(c.entry); }

    template <class F> void forEachAscending(F&& f) const
    {
        for (int32_t k = firstBucketFrom(0); k >= 0; k = firstBucketFrom(m_buckets[size_t(k)].size + 1))
            for (const Entry& e : sorted(k))
                f(e);
    }
    // Largest first; f returns false to stop.
    template <class F> void forEachDescending(F&& f) const
    {
        std::vector<int32_t> ascending;
        for (int32_t k = firstBucketFrom(0); k >= 0; k = firstBucketFrom(m_buckets[size_t(k)].size + 1))
            ascending.push_back(k);
        for (auto k = ascending.rbegin(); k != ascending.rend(); ++k) {
            const std::vector<Entry> v = sorted(*k);
            for (auto r = v.rbegin(); r != v.rend(); ++r)
                if (!f(*r))
                    return;
        }
    }

private:
    static bool alive(const Slot& s) { return s.block->inFree && s.block->freeGen == s.gen; }
    // Classes grow with the size: the power of two, then the next kSubBits bits below the leading one.
    static int classOf(int64_t size)
    {
        if (size <= 0)
            return 0;
        const int octave = 63 - std::countl_zero(uint64_t(size));
        const uint64_t sub = octave >= kSubBits ? uint64_t(size) >> (octave - kSubBits)
                                                : uint64_t(size) << (kSubBits - octave);
        return (octave << kSubBits) | int(sub & ((1u << kSubBits) - 1));
    }
    bool hasClass(int c) const { return (m_classes[size_t(c >> kSubBits)] >> (c & 63)) & 1; }
    // The first non-empty class above c, or -1.
    int classAbove(int c) const
    {
        const int octave = c >> kSubBits, sub = c & 63;
        if (sub < 63)
            if (const uint64_t m = m_classes[size_t(octave)] & (~uint64_t(0) << (sub + 1)))
                return (octave << kSubBits) | std::countr_zero(m);
        if (octave >= 63)
            return -1;
        const uint64_t above = m_octaves & (~uint64_t(0) << (octave + 1));
        if (!above)
            return -1;
        const int o = std::countr_zero(above);
        return (o << kSubBits) | std::countr_zero(m_classes[size_t(o)]);
    }
    // The bucket of the smallest size >= size in class c, or -1.
    int32_t smallestFrom(int c, int64_t size) const
    {
        int32_t best = -1;
        for (int32_t k = m_head[size_t(c)]; k >= 0; k = m_buckets[size_t(k)].next) {
            const int64_t s = m_buckets[size_t(k)].size;
            if (s >= size && (best < 0 || s < m_buckets[size_t(best)].size))
                best = k;
        }
        return best;
    }
    int32_t firstBucketFrom(int64_t size) const
    {
        const int c = classOf(size);
        if (hasClass(c))
            if (const int32_t k = smallestFrom(c, size); k >= 0)
                return k;
        const int above = classAbove(c);
        return above < 0 ? -1 : smallestFrom(above, INT64_MIN);
    }
    int32_t bucketFor(int64_t size)
    {
        const int c = classOf(size);
        if (hasClass(c)) {
            for (int32_t k = m_head[size_t(c)]; k >= 0; k = m_buckets[size_t(k)].next)
                if (m_buckets[size_t(k)].size == size)
                    return k;
        }
        int32_t id;
        if (!m_spare.empty()) {
            id = m_spare.back();
            m_spare.pop_back();
        } else {
            id = int32_t(m_buckets.size());
            m_buckets.emplace_back();
        }
        Bucket& k = m_buckets[size_t(id)];
        k.size = size;
        k.live = 0;
        k.cls = c;
        k.prev = -1;
        k.next = hasClass(c) ? m_head[size_t(c)] : -1;
        if (k.next >= 0)
            m_buckets[size_t(k.next)].prev = id;
        m_head[size_t(c)] = id;
        m_classes[size_t(c >> kSubBits)] |= uint64_t(1) << (c & 63);
        m_octaves |= uint64_t(1) << (c >> kSubBits);
        return id;
    }
    void unlink(int32_t id)
    {
        const Bucket& k = m_buckets[size_t(id)];
        if (k.next >= 0)
            m_buckets[size_t(k.next)].prev = k.prev;
        if (k.prev >= 0) {
            m_buckets[size_t(k.prev)].next = k.next;
        } else if (k.next >= 0) {
            m_head[size_t(k.cls)] = k.next;
        } else {
            uint64_t& bits = m_classes[size_t(k.cls >> kSubBits)];
            bits &= ~(uint64_t(1) << (k.cls & 63));
            if (!bits)
                m_octaves &= ~(uint64_t(1) << (k.cls >> kSubBits));
        }
    }
    Entry top(int32_t id)
    {
        Bucket& k = m_buckets[size_t(id)];
        auto& h = k.heap;
        while (!alive(h.front())) {
            std::pop_heap(h.begin(), h.end(), later);
            h.pop_back();
        }
        return Entry{k.size, h.front().addr, h.front().block};
    }
    std::vector<Entry> sorted(int32_t id) const
    {
        const Bucket& k = m_buckets[size_t(id)];
        std::vector<Entry> v;
        for (const Slot& s : k.heap)
            if (alive(s))
                v.push_back(Entry{k.size, s.addr, s.block});
        std::sort(v.begin(), v.end(), [](const Entry& a, const Entry& b) { return a.addr < b.addr; });
        return v;
    }

    std::vector<Bucket> m_buckets;
    std::vector<int32_t> m_spare; // buckets out of use
    uint64_t m_octaves = 0;       // a bit per power of two with a non-empty class
    std::array<uint64_t, 64> m_classes{};
    // Each class's first bucket, read only while its bit is set: left unwritten otherwise, as a model is
    // built for every replay.
    std::unique_ptr<int32_t[]> m_head{new int32_t[size_t(64) << kSubBits]};
    size_t m_count = 0;
};

} // namespace headroom::allocator_detail
