// The caching-allocator model against hand-written traces whose figures follow from the rules of
// c10/cuda/CUDACachingAllocator.cpp (constants and rules are quoted in docs/ACCURACY-allocator.md).
#include "headroom/memory/allocator.h"

#include <QTest>

#include <map>
#include <random>

using namespace headroom;

namespace {

constexpr qint64 KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

int64_t parseSize(const QString& s)
{
    const QChar unit = s.back();
    const auto number = [&] { return s.left(s.size() - 1).toDouble(); };
    if (unit == u'K')
        return int64_t(number() * double(KiB));
    if (unit == u'M')
        return int64_t(number() * double(MiB));
    if (unit == u'G')
        return int64_t(number() * double(GiB));
    return s.toLongLong();
}

// "a x 1G; a x2 1G; f x; e": allocate/free named tensors, e = torch.cuda.empty_cache().
void run(CachingAllocatorModel& m, const QString& script)
{
    std::map<QString, int64_t> handles;
    const auto steps = script.split(u';', Qt::SkipEmptyParts);
    for (const QString& step : steps) {
        const auto w = step.split(u' ', Qt::SkipEmptyParts);
        if (w.isEmpty())
            continue;
        if (w[0] == u"a")
            handles[w[1]] = m.allocate(parseSize(w[2]));
        else if (w[0] == u"f")
            m.free(handles.at(w[1]));
        else if (w[0] == u"e")
            m.emptyCache();
        else
            QFAIL(qPrintable(QStringLiteral("bad step: ") + step));
    }
}

} // namespace

class TestAllocator : public QObject
{
    Q_OBJECT
private slots:
    void roundSize_data()
    {
        QTest::addColumn<qint64>("bytes");
        QTest::addColumn<qint64>("rounded");
        QTest::addColumn<qint64>("segment");
        QTest::newRow("1 B") << qint64(1) << qint64(512) << qint64(2 * MiB);
        QTest::newRow("512 B") << qint64(512) << qint64(512) << qint64(2 * MiB);
        QTest::newRow("513 B") << qint64(513) << qint64(1024) << qint64(2 * MiB);
        QTest::newRow("1 MiB is small") << qint64(MiB) << qint64(MiB) << qint64(2 * MiB);
        QTest::newRow("1 MiB + 1 is large") << qint64(MiB + 1) << qint64(MiB + 512) << qint64(20 * MiB);
        QTest::newRow("5 MiB") << qint64(5 * MiB) << qint64(5 * MiB) << qint64(20 * MiB);
        QTest::newRow("10 MiB - 512") << qint64(10 * MiB - 512) << qint64(10 * MiB - 512) << qint64(20 * MiB);
        QTest::newRow("10 MiB own segment") << qint64(10 * MiB) << qint64(10 * MiB) << qint64(10 * MiB);
        QTest::newRow("10 MiB + 1 to 2 MiB") << qint64(10 * MiB + 1) << qint64(10 * MiB + 512) << qint64(12 * MiB);
        QTest::newRow("1 GiB") << qint64(GiB) << qint64(GiB) << qint64(GiB);
    }
    void roundSize()
    {
        QFETCH(qint64, bytes);
        QFETCH(qint64, rounded);
        QFETCH(qint64, segment);
        QCOMPARE(CachingAllocatorModel::roundSize(bytes), rounded);
        QCOMPARE(CachingAllocatorModel::segmentSizeFor(bytes), segment);
    }

    void traces_data()
    {
        QTest::addColumn<int>("mode");
        QTest::addColumn<QString>("script");
        QTest::addColumn<qint64>("maxSplit"); // 0: PyTorch default (none)
        QTest::addColumn<qint64>("capacity"); // 0: unlimited
        QTest::addColumn<qint64>("allocated");
        QTest::addColumn<qint64>("reserved");
        QTest::addColumn<qint64>("maxAllocated");
        QTest::addColumn<qint64>("maxReserved");
        QTest::addColumn<qint64>("deviceAllocs");
        const int caching = int(AllocatorMode::Caching), expandable = int(AllocatorMode::Expandable),
                  exact = int(AllocatorMode::Exact);

        // The seed experiments: x = torch.empty(1 GiB); x = torch.empty(1 GiB) (the new tensor exists before
        // the old one is released: 2 GiB for a moment); del x without empty_cache; then empty_cache.
        QTest::newRow("seed: allocate 1 GiB")
            << caching << "a x 1G" << qint64(0) << qint64(0) << GiB << GiB << GiB << GiB << qint64(1);
        QTest::newRow("seed: re-assign keeps 2 GiB reserved")
            << caching << "a x 1G; a x2 1G; f x" << qint64(0) << qint64(0) << GiB << 2 * GiB << 2 * GiB << 2 * GiB
            << qint64(2);
        QTest::newRow("seed: del without release") << caching << "a x 1G; a x2 1G; f x; f x2" << qint64(0) << qint64(0)
                                                   << qint64(0) << 2 * GiB << 2 * GiB << 2 * GiB << qint64(2);
        QTest::newRow("seed: empty_cache") << caching << "a x 1G; a x2 1G; f x; f x2; e" << qint64(0) << qint64(0)
                                           << qint64(0) << qint64(0) << 2 * GiB << 2 * GiB << qint64(2);
        QTest::newRow("seed: empty_cache keeps live tensors")
            << caching << "a x 1G; a x2 1G; f x; e" << qint64(0) << qint64(0) << GiB << GiB << 2 * GiB << 2 * GiB
            << qint64(2);

        // Small requests are rounded to 512 B and packed into one 2 MiB segment.
        QTest::newRow("1000 B rounds to 1 KiB")
            << caching << "a a 1000" << qint64(0) << qint64(0) << KiB << 2 * MiB << KiB << 2 * MiB << qint64(1);
        QTest::newRow("small requests share a 2 MiB segment")
            << caching << "a a 100K; a b 100K; a c 100K; a d 100K" << qint64(0) << qint64(0) << 400 * KiB << 2 * MiB
            << 400 * KiB << 2 * MiB << qint64(1);
        // 3 x 600 KiB = 1800 KiB fit in 2048 KiB; the fourth needs a second segment.
        QTest::newRow("fourth 600 KiB opens a second small segment")
            << caching << "a a 600K; a b 600K; a c 600K; a d 600K" << qint64(0) << qint64(0) << 2400 * KiB << 4 * MiB
            << 2400 * KiB << 4 * MiB << qint64(2);
        QTest::newRow("small and large pools never share")
            << caching << "a s 1M; a l 1049088" << qint64(0) << qint64(0) << 2 * MiB + 512 << 22 * MiB << 2 * MiB + 512
            << 22 * MiB << qint64(2);

        // 1-10 MiB requests are carved from 20 MiB segments.
        QTest::newRow("5 MiB from a 20 MiB segment")
            << caching << "a a 5M" << qint64(0) << qint64(0) << 5 * MiB << 20 * MiB << 5 * MiB << 20 * MiB << qint64(1);
        QTest::newRow("four 5 MiB fill one segment, the fifth opens another")
            << caching << "a a 5M; a b 5M; a c 5M; a d 5M; a e 5M" << qint64(0) << qint64(0) << 25 * MiB << 40 * MiB
            << 25 * MiB << 40 * MiB << qint64(2);
        // >= 10 MiB: own segment rounded to 2 MiB; a remainder <= 1 MiB is not split off, so the block
        // (and memory_allocated) is the whole 20 MiB.
        QTest::newRow("19.5 MiB keeps its unsplit 0.5 MiB")
            << caching << "a a 19.5M" << qint64(0) << qint64(0) << 20 * MiB << 20 * MiB << 20 * MiB << 20 * MiB
            << qint64(1);
        QTest::newRow("1 GiB + 1 B splits off 2 MiB - 512")
            << caching << "a a 1073741825" << qint64(0) << qint64(0) << GiB + 512 << GiB + 2 * MiB << GiB + 512
            << GiB + 2 * MiB << qint64(1);

        // Best fit: 35 MiB takes the cached 40 MiB segment (30 MiB is too small), 30 MiB the 30 MiB one,
        // and the 5 MiB left over from the split serves a 5 MiB request exactly.
        QTest::newRow("best fit reuses cached segments")
            << caching << "a a 30M; a b 40M; f a; f b; a c 35M; a d 30M; a e 5M" << qint64(0) << qint64(0) << 70 * MiB
            << 70 * MiB << 70 * MiB << 70 * MiB << qint64(2);
        // Coalescing: two freed 5 MiB neighbours merge into 10 MiB, which then holds an 8 MiB request.
        QTest::newRow("freed neighbours coalesce")
            << caching << "a a 5M; a b 5M; a c 5M; f a; f b; a d 8M" << qint64(0) << qint64(0) << 13 * MiB << 20 * MiB
            << 15 * MiB << 20 * MiB << qint64(1);
        QTest::newRow("without a free neighbour a new segment is needed")
            << caching << "a a 5M; a b 5M; a c 5M; a d 5M; f a; f c; a e 8M" << qint64(0) << qint64(0) << 18 * MiB
            << 40 * MiB << 20 * MiB << 40 * MiB << qint64(2);
        QTest::newRow("empty_cache keeps a partly used segment")
            << caching << "a a 5M; a b 5M; f b; e" << qint64(0) << qint64(0) << 5 * MiB << 20 * MiB << 10 * MiB
            << 20 * MiB << qint64(1);
        QTest::newRow("empty_cache releases a segment once all of it is free")
            << caching << "a a 5M; a b 5M; f b; f a; e" << qint64(0) << qint64(0) << qint64(0) << qint64(0) << 10 * MiB
            << 20 * MiB << qint64(1);

        // max_split_size_mb:100 - a 200 MiB cached block is "oversize": it does not serve 50 MiB.
        QTest::newRow("max_split_size: oversize blocks serve only oversize requests")
            << caching << "a a 200M; f a; a b 50M" << 100 * MiB << qint64(0) << 50 * MiB << 250 * MiB << 200 * MiB
            << 250 * MiB << qint64(2);
        QTest::newRow("max_split_size: oversize within 20 MiB reuses")
            << caching << "a a 200M; f a; a b 190M" << 100 * MiB << qint64(0) << 200 * MiB << 200 * MiB << 200 * MiB
            << 200 * MiB << qint64(1);
        // A device limit: the failed cudaMalloc frees the cached 60 MiB and retries.
        QTest::newRow("capacity: cache released on cudaMalloc failure")
            << caching << "a a 60M; f a; a b 80M" << qint64(0) << 100 * MiB << 80 * MiB << 80 * MiB << 80 * MiB
            << 80 * MiB << qint64(2);

        // Expandable segments: one segment per pool grows by 20 MiB pages (large) / 2 MiB pages (small).
        QTest::newRow("expandable: 5 MiB maps one 20 MiB page")
            << expandable << "a a 5M" << qint64(0) << qint64(0) << 5 * MiB << 20 * MiB << 5 * MiB << 20 * MiB
            << qint64(1);
        // The free 15 MiB tail grows by one page to hold 30 MiB (caching would reserve 20 + 30 = 50 MiB).
        QTest::newRow("expandable: the tail grows instead of a new segment")
            << expandable << "a a 5M; a b 30M" << qint64(0) << qint64(0) << 35 * MiB << 40 * MiB << 35 * MiB << 40 * MiB
            << qint64(2);
        QTest::newRow("expandable: small requests share 2 MiB pages")
            << expandable << "a a 100K; a b 100K; a c 100K; a d 100K" << qint64(0) << qint64(0) << 400 * KiB << 2 * MiB
            << 400 * KiB << 2 * MiB << qint64(1);
        // 1 GiB maps 52 pages (1040 MiB); the second 1 GiB uses the 16 MiB tail and 51 more pages (2060 MiB);
        // empty_cache unmaps the 51 pages wholly inside the first, freed GiB: 2060 - 1020 = 1040 MiB.
        QTest::newRow("expandable: seed re-assign") << expandable << "a x 1G; a x2 1G; f x" << qint64(0) << qint64(0)
                                                    << GiB << 2060 * MiB << 2 * GiB << 2060 * MiB << qint64(2);
        QTest::newRow("expandable: empty_cache unmaps whole free pages")
            << expandable << "a x 1G; a x2 1G; f x; e" << qint64(0) << qint64(0) << GiB << 1040 * MiB << 2 * GiB
            << 2060 * MiB << qint64(2);
        QTest::newRow("expandable: everything freed and released")
            << expandable << "a x 1G; a x2 1G; f x; f x2; e" << qint64(0) << qint64(0) << qint64(0) << qint64(0)
            << 2 * GiB << 2060 * MiB << qint64(2);

        // Exact: no rounding, nothing cached.
        QTest::newRow("exact: 1000 B") << exact << "a a 1000" << qint64(0) << qint64(0) << qint64(1000) << qint64(1000)
                                       << qint64(1000) << qint64(1000) << qint64(0);
        QTest::newRow("exact: seed re-assign") << exact << "a x 1G; a x2 1G; f x" << qint64(0) << qint64(0) << GiB
                                               << GiB << 2 * GiB << 2 * GiB << qint64(0);
    }
    void traces()
    {
        QFETCH(int, mode);
        QFETCH(QString, script);
        QFETCH(qint64, maxSplit);
        QFETCH(qint64, capacity);
        QFETCH(qint64, allocated);
        QFETCH(qint64, reserved);
        QFETCH(qint64, maxAllocated);
        QFETCH(qint64, maxReserved);
        QFETCH(qint64, deviceAllocs);
        AllocatorOptions options;
        if (maxSplit > 0)
            options.maxSplitSize = maxSplit;
        options.capacity = capacity;
        CachingAllocatorModel m(AllocatorMode(mode), options);
        run(m, script);
        QCOMPARE(m.allocated(), allocated);
        QCOMPARE(m.reserved(), reserved);
        QCOMPARE(m.maxAllocated(), maxAllocated);
        QCOMPARE(m.maxReserved(), maxReserved);
        QCOMPARE(m.deviceAllocs(), deviceAllocs);
        QVERIFY(!m.outOfMemory());
    }

    void outOfMemory()
    {
        AllocatorOptions options;
        options.capacity = 100 * MiB;
        CachingAllocatorModel m(AllocatorMode::Caching, options);
        const int64_t a = m.allocate(80 * MiB);
        QVERIFY(!m.outOfMemory());
        m.allocate(30 * MiB); // nothing cached to release: torch raises OutOfMemoryError here
        QVERIFY(m.outOfMemory());
        QCOMPARE(m.retries(), qint64(1));
        QCOMPARE(m.blockSize(a), 80 * MiB);
    }

    // replay() is what the engine calls: the seed experiment as an event list.
    void replaySeed_data()
    {
        QTest::addColumn<int>("mode");
        QTest::addColumn<qint64>("allocatedPeak");
        QTest::addColumn<qint64>("reservedPeak");
        QTest::addColumn<qint64>("reservedFinal");
        QTest::addColumn<double>("fragmentation");
        QTest::newRow("caching") << int(AllocatorMode::Caching) << 2 * GiB + 1024 << 2 * GiB + 2 * MiB
                                 << 2 * GiB + 2 * MiB << 1.0 - double(2 * GiB + 1024) / double(2 * GiB + 2 * MiB);
        QTest::newRow("exact") << int(AllocatorMode::Exact) << 2 * GiB + 1000 << 2 * GiB + 1000 << qint64(0) << 0.0;
    }
    void replaySeed()
    {
        QFETCH(int, mode);
        QFETCH(qint64, allocatedPeak);
        QFETCH(qint64, reservedPeak);
        QFETCH(qint64, reservedFinal);
        QFETCH(double, fragmentation);
        using K = AllocEvent::Kind;
        const std::vector<AllocEvent> events{
            {K::Alloc, 1, 1000, Category::Activations, 0, -1}, {K::Alloc, 2, GiB, Category::Activations, 1, -1},
            {K::Alloc, 3, GiB, Category::Activations, 2, -1},  {K::Free, 2, GiB, Category::Activations, 2, -1},
            {K::Free, 3, GiB, Category::Activations, 3, -1},   {K::Free, 1, 1000, Category::Activations, 3, -1},
        };
        const AllocatorStats s = replay(events, AllocatorMode(mode));
        QCOMPARE(s.allocatedPeak, allocatedPeak);
        QCOMPARE(s.reservedPeak, reservedPeak);
        QCOMPARE(s.reservedFinal, reservedFinal);
        QCOMPARE(s.allocatedFinal, qint64(0));
        QCOMPARE(s.reservedAfter.size(), events.size());
        QCOMPARE(s.reservedAfter.back(), reservedFinal);
        QVERIFY(qAbs(s.fragmentation - fragmentation) < 1e-12);
        QCOMPARE(s.oomEvent, qint64(-1));

        // The same trace as the engine's compact stream (ids 1..3, id allocates, ~id frees): same figures.
        const std::vector<int32_t> ops{1, 2, 3, ~2, ~3, ~1};
        const std::vector<int64_t> bytes{0, 1000, GiB, GiB};
        const AllocatorStats o = replayOps(ops, bytes, AllocatorMode(mode), AllocatorOptions{});
        QCOMPARE(o.allocatedPeak, allocatedPeak);
        QCOMPARE(o.reservedPeak, reservedPeak);
        QCOMPARE(o.reservedFinal, reservedFinal);
        QCOMPARE(o.reservedAfter, s.reservedAfter);
        QVERIFY(qAbs(o.fragmentation - fragmentation) < 1e-12);
    }

    // replayOps (the engine's tick) against replay (events) on random traces with frees in any order,
    // zero-byte requests, a capacity that forces OOM retries and max_split_size: every statistic agrees.
    void replayOpsMatchesEvents_data()
    {
        QTest::addColumn<int>("mode");
        QTest::addColumn<int>("seed");
        QTest::addColumn<qint64>("capacity");
        QTest::addColumn<qint64>("maxSplit");
        for (int seed = 1; seed <= 2; ++seed) {
            QTest::addRow("caching %d", seed) << int(AllocatorMode::Caching) << seed << qint64(0) << qint64(INT64_MAX);
            QTest::addRow("caching cap %d", seed)
                << int(AllocatorMode::Caching) << seed << 256 * MiB << qint64(INT64_MAX);
            QTest::addRow("caching split %d", seed) << int(AllocatorMode::Caching) << seed << 512 * MiB << 8 * MiB;
            QTest::addRow("expandable cap %d", seed)
                << int(AllocatorMode::Expandable) << seed << 256 * MiB << qint64(INT64_MAX);
            QTest::addRow("exact %d", seed) << int(AllocatorMode::Exact) << seed << qint64(0) << qint64(INT64_MAX);
        }
    }
    void replayOpsMatchesEvents()
    {
        QFETCH(int, mode);
        QFETCH(int, seed);
        QFETCH(qint64, capacity);
        QFETCH(qint64, maxSplit);
        std::mt19937_64 rng{static_cast<uint64_t>(seed)};
        std::vector<AllocEvent> events;
        std::vector<int32_t> ops;
        std::vector<int64_t> bytes;
        std::vector<int32_t> live;
        for (int i = 0; i < 6000; ++i) {
            if (live.empty() || rng() % 5 < 3) {
                const int64_t sizes[] = {0, int64_t(rng() % 4096), int64_t(rng() % (2 * MiB)),
                                         int64_t(rng() % (12 * MiB)), int64_t(rng() % (64 * MiB))};
                const auto id = int32_t(bytes.size());
                bytes.push_back(sizes[rng() % 5]);
                events.push_back({AllocEvent::Kind::Alloc, id, bytes.back(), Category::Activations, i, -1});
                ops.push_back(id);
                live.push_back(id);
            } else {
                const size_t k = size_t(rng() % live.size());
                const int32_t id = live[k];
                events.push_back({AllocEvent::Kind::Free, id, bytes[size_t(id)], Category::Activations, i, -1});
                ops.push_back(~id);
                live.erase(live.begin() + std::ptrdiff_t(k));
            }
        }
        AllocatorOptions options;
        options.capacity = capacity;
        options.maxSplitSize = maxSplit;
        options.preallocated = 3 * MiB;
        const AllocatorStats e = replay(events, AllocatorMode(mode), options);
        const AllocatorStats o = replayOps(ops, bytes, AllocatorMode(mode), options);
        QCOMPARE(o.allocatedPeak, e.allocatedPeak);
        QCOMPARE(o.reservedPeak, e.reservedPeak);
        QCOMPARE(o.reservedFinal, e.reservedFinal);
        QCOMPARE(o.allocatedFinal, e.allocatedFinal);
        QCOMPARE(o.segments, e.segments);
        QCOMPARE(o.allocRetries, e.allocRetries);
        QCOMPARE(o.oomEvent, e.oomEvent);
        QCOMPARE(o.fragmentation, e.fragmentation);
        QCOMPARE(o.reservedAfter, e.reservedAfter);
        QCOMPARE(o.allocatedAfter, e.allocatedAfter);
        QVERIFY(e.reservedPeak >= e.allocatedPeak);
        if (capacity > 0 && mode != int(AllocatorMode::Exact))
            QVERIFY(e.allocRetries > 0 || e.oomEvent >= 0); // the capacity rows reach the release paths
    }

    // Invariants on random traces: reserved covers allocated, freeing all and empty_cache returns to zero,
    // and the exact mode is the plain sum.
    void randomTraces_data()
    {
        QTest::addColumn<int>("mode");
        QTest::addColumn<int>("seed");
        for (int seed = 1; seed <= 3; ++seed) {
            QTest::addRow("caching %d", seed) << int(AllocatorMode::Caching) << seed;
            QTest::addRow("expandable %d", seed) << int(AllocatorMode::Expandable) << seed;
        }
    }
    void randomTraces()
    {
        QFETCH(int, mode);
        QFETCH(int, seed);
        std::mt19937_64 rng{static_cast<uint64_t>(seed)};
        CachingAllocatorModel m{AllocatorMode(mode)};
        std::vector<int64_t> live;
        int64_t sumRounded = 0;
        for (int i = 0; i < 4000; ++i) {
            if (live.empty() || rng() % 3 != 0) {
                const int64_t sizes[] = {int64_t(rng() % 4096), int64_t(rng() % (2 * MiB)), int64_t(rng() % (12 * MiB)),
                                         int64_t(rng() % (64 * MiB))};
                const int64_t bytes = sizes[rng() % 4];
                live.push_back(m.allocate(bytes));
                sumRounded += m.blockSize(live.back());
            } else {
                const size_t k = size_t(rng() % live.size());
                sumRounded -= m.blockSize(live[k]);
                m.free(live[k]);
                live.erase(live.begin() + std::ptrdiff_t(k));
            }
            QCOMPARE(m.allocated(), sumRounded);
            QVERIFY(m.reserved() >= m.allocated());
            if (i % 997 == 0)
                m.emptyCache();
        }
        for (int64_t h : live)
            m.free(h);
        QCOMPARE(m.allocated(), qint64(0));
        m.emptyCache();
        QCOMPARE(m.reserved(), qint64(0));
        QCOMPARE(m.segmentCount(), qint64(0));
    }
};

QTEST_GUILESS_MAIN(TestAllocator)
#include "tst_allocator.moc"
