// The caching allocator model's index of free blocks (core/memory/src/allocator/free_index.h, issue 22's tick) against
// a std::set in the order it must keep, the allocator's BlockComparatorSize (c10/cuda/CUDACachingAllocator.cpp: size,
// then address): every query (best fit, the walk past it, both full walks) answers the same, over random operation
// sequences and over a best-fit allocator replaying the events of every model in tests/data. The index is a pure
// optimisation of the set: any divergence changes reserved figures, so this fails first. Last, the replay loop's
// shortcuts against the model driven one call per event, and the tick's replay (the program's op stream, evaluate())
// against replay() over the evaluation's events.
#include "allocator/free_index.h"
#include "headroom/load/loader.h"
#include "headroom/memory/allocator.h"
#include "headroom/memory/engine.h"

#include <QDirIterator>
#include <QTest>

#include <array>
#include <map>
#include <memory>
#include <random>
#include <set>

using namespace headroom;

namespace {

struct TestBlock
{
    int64_t addr = 0, size = 0;
    bool allocated = false;
    TestBlock* prev = nullptr;
    TestBlock* next = nullptr;
    // The index's bookkeeping (free_index.h).
    bool inFree = false;
    int64_t freeSize = 0, freeAddr = 0;
    uint64_t freeGen = 0;
    int32_t freeBucket = -1;
};
using Entry = allocator_detail::FreeEntry<TestBlock>;
using Fast = allocator_detail::FreeIndex<TestBlock>;

// The reference: the ordered set the index replaces, with the index's interface.
class Reference
{
    struct Less
    {
        bool operator()(const Entry& a, const Entry& b) const
        {
            return a.size != b.size ? a.size < b.size : a.addr < b.addr;
        }
    };
    std::set<Entry, Less> m_set;

public:
    using Cursor = std::set<Entry, Less>::iterator;
    Cursor lowerBound(int64_t size) { return m_set.lower_bound(Entry{size, INT64_MIN, nullptr}); }
    bool atEnd(const Cursor& c) const { return c == m_set.end(); }
    const Entry& at(const Cursor& c) const { return *c; }
    void advance(Cursor& c) { ++c; }
    size_t count() const { return m_set.size(); }
    void insert(const Entry& e) { m_set.insert(e); }
    size_t erase(const Entry& e)
    {
        auto it = m_set.find(e);
        if (it == m_set.end() || it->block != e.block)
            return 0;
        m_set.erase(it);
        return 1;
    }
    void erase(const Cursor& c) { m_set.erase(c); }
    template <class F> void forEachAscending(F&& f) const
    {
        for (const Entry& e : m_set)
            f(e);
    }
    template <class F> void forEachDescending(F&& f) const
    {
        for (auto it = m_set.rbegin(); it != m_set.rend(); ++it)
            if (!f(*it))
                return;
    }
};

QString show(const Entry& e) { return QStringLiteral("(%1, %2)").arg(e.size).arg(e.addr); }

// Two allocators over the two indexes have their own blocks: then only the keys can agree.
bool sameKey(const Entry& a, const Entry& b) { return a.size == b.size && a.addr == b.addr; }
bool same(const Entry& a, const Entry& b) { return sameKey(a, b) && a.block == b.block; }

// Both indexes' best fit for size and the next `steps` entries after it, equal or a message.
template <class A, class B> QString compareFrom(A& fast, B& ref, int64_t size, int steps, bool sharedBlocks = true)
{
    auto f = fast.lowerBound(size);
    auto r = ref.lowerBound(size);
    for (int i = 0; i <= steps; ++i) {
        if (fast.atEnd(f) != ref.atEnd(r))
            return QStringLiteral("lowerBound(%1)+%2: end differs").arg(size).arg(i);
        if (ref.atEnd(r))
            return {};
        if (!(sharedBlocks ? same : sameKey)(fast.at(f), ref.at(r)))
            return QStringLiteral("lowerBound(%1)+%2: %3 against %4")
                .arg(size)
                .arg(i)
                .arg(show(fast.at(f)), show(ref.at(r)));
        fast.advance(f);
        ref.advance(r);
    }
    return {};
}

template <class A, class B>
QString compareWalks(const A& fast, const B& ref, size_t stopAfter, bool sharedBlocks = true)
{
    std::vector<Entry> a, b, c, d;
    fast.forEachAscending([&](const Entry& e) { a.push_back(e); });
    ref.forEachAscending([&](const Entry& e) { b.push_back(e); });
    auto into = [stopAfter](std::vector<Entry>& v) {
        return [&v, stopAfter](const Entry& e) {
            v.push_back(e);
            return v.size() < stopAfter;
        };
    };
    fast.forEachDescending(into(c));
    ref.forEachDescending(into(d));
    auto equal = [sharedBlocks](const std::vector<Entry>& x, const std::vector<Entry>& y) {
        return std::equal(x.begin(), x.end(), y.begin(), y.end(), sharedBlocks ? same : sameKey);
    };
    if (!equal(a, b))
        return QStringLiteral("ascending walks differ (%1 against %2 entries)").arg(a.size()).arg(b.size());
    if (!equal(c, d))
        return QStringLiteral("descending walks differ (%1 against %2 entries)").arg(c.size()).arg(d.size());
    return {};
}

// A best-fit allocator over either index, as allocator.cpp's pools use it (get_free_block, split the front,
// merge freed neighbours and re-key them), recording every block it hands out.
template <class Index> class BestFit
{
public:
    std::vector<std::pair<int64_t, int64_t>> given; // (address, block size) per allocation
    int64_t reserved = 0;

    void allocate(int64_t id, int64_t bytes)
    {
        const int64_t size = CachingAllocatorModel::roundSize(bytes);
        auto it = index.lowerBound(size);
        TestBlock* b = nullptr;
        if (!index.atEnd(it)) {
            b = index.at(it).block;
            index.erase(it);
        } else {
            b = make(next, CachingAllocatorModel::segmentSizeFor(bytes));
            next += b->size + (int64_t(2) << 20);
            reserved += b->size;
        }
        if (b->size - size >= 512) {
            TestBlock* rest = make(b->addr + size, b->size - size);
            rest->prev = b;
            rest->next = b->next;
            if (rest->next)
                rest->next->prev = rest;
            b->next = rest;
            b->size = size;
            index.insert(Entry{rest->size, rest->addr, rest});
        }
        b->allocated = true;
        given.emplace_back(b->addr, b->size);
        live[id] = b;
    }
    void free(int64_t id)
    {
        auto it = live.find(id);
        if (it == live.end())
            return;
        TestBlock* b = it->second;
        live.erase(it);
        b->allocated = false;
        for (TestBlock* n : {b->prev, b->next}) {
            if (!n || n->allocated)
                continue;
            index.erase(Entry{n->size, n->addr, n});
            if (n == b->prev) {
                b->addr = n->addr;
                b->prev = n->prev;
                if (b->prev)
                    b->prev->next = b;
            } else {
                b->next = n->next;
                if (b->next)
                    b->next->prev = b;
            }
            b->size += n->size;
        }
        index.insert(Entry{b->size, b->addr, b});
    }
    Index index;

private:
    TestBlock* make(int64_t addr, int64_t size)
    {
        blocks.push_back(std::make_unique<TestBlock>());
        blocks.back()->addr = addr;
        blocks.back()->size = size;
        return blocks.back().get();
    }
    std::vector<std::unique_ptr<TestBlock>> blocks;
    std::map<int64_t, TestBlock*> live;
    int64_t next = int64_t(1) << 32;
};

QStringList dataModels()
{
    QStringList files;
    QDirIterator it(QStringLiteral(HEADROOM_TEST_DATA), {QStringLiteral("*.onnx"), QStringLiteral("*.config.json")},
                    QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext())
        files << it.next();
    files.sort();
    return files;
}

// replay() as the model's public interface runs it, one call per event and a handle per buffer: the
// event-by-event path the replay loop's shortcuts (ids straight to blocks, the early stop) must match.
AllocatorStats byHandles(const std::vector<AllocEvent>& events, AllocatorMode mode, const AllocatorOptions& options)
{
    CachingAllocatorModel model(mode, options);
    if (options.preallocated > 0)
        model.allocate(options.preallocated);
    std::map<int64_t, int64_t> handles;
    AllocatorStats s;
    int64_t allocatedAtPeak = 0;
    for (size_t i = 0; i < events.size(); ++i) {
        const AllocEvent& e = events[i];
        if (e.kind == AllocEvent::Kind::Alloc) {
            handles[e.id] = model.allocate(e.bytes);
            if (s.oomEvent < 0 && model.outOfMemory())
                s.oomEvent = int64_t(i);
        } else if (auto it = handles.find(e.id); it != handles.end()) {
            model.free(it->second);
            handles.erase(it);
        }
        s.reservedAfter.push_back(model.reserved());
        s.allocatedAfter.push_back(model.allocated());
        if (model.reserved() > s.reservedPeak) {
            s.reservedPeak = model.reserved();
            allocatedAtPeak = model.allocated();
        }
    }
    s.allocatedPeak = model.maxAllocated();
    s.reservedPeak = model.maxReserved();
    s.reservedFinal = model.reserved();
    s.allocatedFinal = model.allocated();
    s.segments = model.deviceAllocs();
    s.allocRetries = model.retries();
    s.fragmentation = s.reservedPeak > 0 ? 1.0 - double(allocatedAtPeak) / double(s.reservedPeak) : 0.0;
    return s;
}

QString compareStats(const AllocatorStats& a, const AllocatorStats& b)
{
    const std::pair<const char*, std::pair<int64_t, int64_t>> fields[] = {
        {"allocatedPeak", {a.allocatedPeak, b.allocatedPeak}},
        {"reservedPeak", {a.reservedPeak, b.reservedPeak}},
        {"reservedFinal", {a.reservedFinal, b.reservedFinal}},
        {"allocatedFinal", {a.allocatedFinal, b.allocatedFinal}},
        {"segments", {a.segments, b.segments}},
        {"allocRetries", {a.allocRetries, b.allocRetries}},
        {"oomEvent", {a.oomEvent, b.oomEvent}},
    };
    for (const auto& [name, v] : fields)
        if (v.first != v.second)
            return QStringLiteral("%1: %2 against %3").arg(QLatin1String(name)).arg(v.first).arg(v.second);
    if (a.fragmentation != b.fragmentation)
        return QStringLiteral("fragmentation: %1 against %2").arg(a.fragmentation).arg(b.fragmentation);
    if (a.reservedAfter != b.reservedAfter || a.allocatedAfter != b.allocatedAfter)
        return QStringLiteral("per-event figures differ");
    return {};
}

Config trainingConfig(const Model& m, AllocatorMode mode)
{
    Config c;
    c.symbols = m.defaultBindings();
    c.optimizer = Optimizer::AdamW; // the foreach step's per-parameter temporaries (issue 22)
    c.allocator = mode;
    return c;
}

} // namespace

class TestFreeIndex : public QObject
{
    Q_OBJECT
private slots:
    void randomOperations_data()
    {
        QTest::addColumn<int>("seed");
        QTest::addColumn<QString>("sizes");
        // few: a handful of sizes, so that buckets hold many blocks and drop dead entries; distinct: the
        // replays' usual case (every size its own bucket); wide: 1 B to 2^50 B (expandable segments'
        // address space); tiny: 0-200 B, below the allocator's rounding (the first classes).
        for (const char* name : {"few", "distinct", "wide", "tiny"})
            for (int seed = 1; seed <= 3; ++seed)
                QTest::newRow(qPrintable(QStringLiteral("%1, seed %2").arg(QLatin1String(name)).arg(seed)))
                    << seed << QString::fromLatin1(name);
    }
    void randomOperations()
    {
        QFETCH(int, seed);
        QFETCH(QString, sizes);
        std::mt19937_64 rng{static_cast<uint64_t>(seed)};
        auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
        auto randomSize = [&]() -> int64_t {
            if (sizes == u"few")
                return std::array<int64_t, 4>{512, 2 << 20, 20 << 20, 3 * 512}[size_t(pick(0, 3))];
            if (sizes == u"distinct")
                return 512 * pick(1, 128 * 1024);
            if (sizes == u"wide")
                return (int64_t(1) << pick(0, 49)) | pick(0, 1 << 20);
            return pick(0, 200);
        };
        std::vector<TestBlock> blocks(300);
        Fast fast;
        Reference ref;
        int64_t nextAddr = 0;
        for (int op = 0; op < 20000; ++op) {
            TestBlock& b = blocks[size_t(pick(0, int64_t(blocks.size()) - 1))];
            const int64_t what = pick(0, 9);
            if (what < 4 && !b.inFree) {
                const Entry e{randomSize(), nextAddr += pick(1, 4096), &b};
                fast.insert(e);
                ref.insert(e);
            } else if (what < 7 && b.inFree) {
                // A stale key (the block re-keyed since) erases nothing in either.
                const Entry key{b.freeSize + (what == 6 ? 1 : 0), b.freeAddr, &b};
                QCOMPARE(fast.erase(key), ref.erase(key));
            } else if (what == 7) {
                // Best fit taken, as get_free_block does.
                const int64_t size = randomSize();
                QCOMPARE(compareFrom(fast, ref, size, 0), QString());
                auto f = fast.lowerBound(size);
                auto r = ref.lowerBound(size);
                if (!ref.atEnd(r)) {
                    fast.erase(f);
                    ref.erase(r);
                }
            } else {
                QCOMPARE(compareFrom(fast, ref, randomSize(), 6), QString());
            }
            QCOMPARE(fast.count(), ref.count());
            if (op % 997 == 0)
                QCOMPARE(compareWalks(fast, ref, size_t(pick(1, 400))), QString());
        }
        QCOMPARE(compareWalks(fast, ref, SIZE_MAX), QString());
    }

    void modelTraces_data()
    {
        QTest::addColumn<QString>("file");
        for (const QString& f : dataModels())
            QTest::newRow(qPrintable(QDir(QStringLiteral(HEADROOM_TEST_DATA)).relativeFilePath(f))) << f;
    }
    // Every allocation of a model's training step gets the same block from either index, and every best fit
    // and the entries after it agree on the way.
    void modelTraces()
    {
        QFETCH(QString, file);
        const Model m = loadModel(file.toStdString());
        const Evaluation e = evaluate(m, trainingConfig(m, AllocatorMode::Caching));
        QVERIFY(!e.events.empty());
        BestFit<Fast> fast;
        BestFit<Reference> ref;
        for (const AllocEvent& ev : e.events) {
            if (ev.kind == AllocEvent::Kind::Alloc) {
                const int64_t size = CachingAllocatorModel::roundSize(ev.bytes);
                QCOMPARE(compareFrom(fast.index, ref.index, size, 2, false), QString());
                fast.allocate(ev.id, ev.bytes);
                ref.allocate(ev.id, ev.bytes);
            } else {
                fast.free(ev.id);
                ref.free(ev.id);
            }
            QCOMPARE(fast.index.count(), ref.index.count());
        }
        QVERIFY(fast.given == ref.given);
        QCOMPARE(fast.reserved, ref.reserved);
        QCOMPARE(compareWalks(fast.index, ref.index, SIZE_MAX, false), QString());
    }

    // The tick replays the program's op stream (replayOps, with ids known dense); replay() walks the
    // evaluation's events, finding the ids' range first. Same reserved peak, caching and expandable.
    void tickReplayMatchesEvents_data() { modelTraces_data(); }
    void tickReplayMatchesEvents()
    {
        QFETCH(QString, file);
        const Model m = loadModel(file.toStdString());
        for (AllocatorMode mode : {AllocatorMode::Caching, AllocatorMode::Expandable}) {
            const Config c = trainingConfig(m, mode);
            const Evaluation e = evaluate(m, c);
            AllocatorOptions options;
            options.preallocated = c.gpu.workspace;
            const AllocatorStats s = replay(e.events, mode, options);
            QCOMPARE(e.memory.reservedPeak, std::max(e.memory.peak, s.reservedPeak));
            QCOMPARE(qint64(s.reservedAfter.size()), qint64(e.events.size()));
        }
    }

    // The replay loop (replay(): dense ids straight to their blocks, sparse ids through a hash map, the early
    // stop of a fit test) against the model driven one public call per event, over every model's step under
    // each allocator setting that takes another path: expandable segments, max_split_size, a device limit
    // that forces cached segments back and one that runs out.
    void replayMatchesEventByEvent_data() { modelTraces_data(); }
    void replayMatchesEventByEvent()
    {
        QFETCH(QString, file);
        const Model m = loadModel(file.toStdString());
        const Evaluation e = evaluate(m, trainingConfig(m, AllocatorMode::Caching));
        // Other ids: far apart (the hash map's path), and every other one so (both paths in one replay).
        std::vector<AllocEvent> sparse = e.events, mixed = e.events;
        for (AllocEvent& ev : sparse)
            ev.id = ev.id * 7919 + 1000003;
        for (AllocEvent& ev : mixed)
            ev.id = ev.id % 2 ? ev.id * 7919 + 1000003 : ev.id;
        const int64_t unconstrained = replay(e.events, AllocatorMode::Caching).reservedPeak;
        struct Setting
        {
            const char* name;
            AllocatorMode mode;
            AllocatorOptions options;
        };
        std::vector<Setting> settings(6, Setting{"caching", AllocatorMode::Caching, {}});
        settings[1] = {"expandable", AllocatorMode::Expandable, {}};
        settings[5] = {"exact", AllocatorMode::Exact, {}};
        settings[2].name = "max_split_size 4 MiB, workspace";
        settings[2].options.maxSplitSize = int64_t(4) << 20;
        settings[2].options.preallocated = int64_t(8) << 20;
        settings[3].name = "capacity 90 %";
        settings[3].options.capacity = unconstrained * 9 / 10;
        settings[4].name = "capacity 40 %";
        settings[4].options.capacity = unconstrained * 4 / 10;
        for (const Setting& s : settings) {
            const AllocatorStats reference = byHandles(e.events, s.mode, s.options);
            QVERIFY2(compareStats(replay(e.events, s.mode, s.options), reference).isEmpty(), s.name);
            QVERIFY2(compareStats(replay(sparse, s.mode, s.options), reference).isEmpty(), s.name);
            QVERIFY2(compareStats(replay(mixed, s.mode, s.options), reference).isEmpty(), s.name);
            AllocatorOptions stop = s.options;
            stop.stopAtOom = true;
            stop.perEvent = false;
            const AllocatorStats early = replay(e.events, s.mode, stop);
            QCOMPARE(early.oomEvent, reference.oomEvent);
            if (reference.oomEvent < 0)
                QCOMPARE(early.reservedPeak, reference.reservedPeak);
        }
    }
};

QTEST_GUILESS_MAIN(TestFreeIndex)
#include "tst_freeindex.moc"
