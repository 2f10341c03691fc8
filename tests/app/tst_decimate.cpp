// minMaxPoints: what the timeline chart draws of a long series. Checked against the series itself: each
// bucket's lowest and highest point are kept, so the drawn extent of any run of buckets is the data's.
#include "decimate.h"

#include <QTest>

#include <algorithm>
#include <cmath>

using namespace gui;

namespace {
// A memory-timeline-like series: a ramp up and down with a periodic saw, one spike at `spikeAt`.
std::vector<double> series(size_t n, size_t spikeAt)
{
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) {
        const double ramp = static_cast<double>(std::min(i, n - i));
        v[i] = 1000.0 + ramp + static_cast<double>((i * 7919) % 97);
    }
    if (spikeAt < n)
        v[spikeAt] = 1e9;
    return v;
}
} // namespace

class TestDecimate : public QObject
{
    Q_OBJECT

private slots:
    void keepsExtremes_data()
    {
        QTest::addColumn<int>("points");
        QTest::addColumn<int>("buckets");
        QTest::addColumn<int>("spikeAt");
        QTest::newRow("short series kept whole") << 100 << 64 << 17;
        QTest::newRow("exactly two per bucket") << 128 << 64 << 127;
        QTest::newRow("100k-node chain's steps") << 200003 << 4096 << 123457;
        QTest::newRow("spike on the first step") << 50000 << 1000 << 0;
        QTest::newRow("spike on the last step") << 50000 << 1000 << 49999;
        QTest::newRow("uneven buckets") << 10007 << 333 << 5000;
    }
    void keepsExtremes()
    {
        QFETCH(int, points);
        QFETCH(int, buckets);
        QFETCH(int, spikeAt);
        const std::vector<double> v = series(size_t(points), size_t(spikeAt));
        const std::vector<size_t> kept = minMaxPoints(v, size_t(buckets));
        QVERIFY(std::is_sorted(kept.begin(), kept.end()));
        QVERIFY(std::adjacent_find(kept.begin(), kept.end()) == kept.end()); // no index twice
        QCOMPARE(kept.front(), size_t{0});
        QCOMPARE(kept.back(), size_t(points - 1));
        if (points <= 2 * buckets) {
            QCOMPARE(kept.size(), size_t(points));
            return;
        }
        QVERIFY(kept.size() <= size_t(2 * buckets + 2));
        QVERIFY(std::find(kept.begin(), kept.end(), size_t(spikeAt)) != kept.end()); // the peak is drawn
        // Every bucket's extremes are among the kept points of that bucket.
        const size_t n = v.size(), b = size_t(buckets);
        for (size_t k = 0; k < b; ++k) {
            const size_t begin = k * n / b, end = (k + 1) * n / b;
            const auto [lo, hi] = std::minmax_element(v.begin() + long(begin), v.begin() + long(end));
            double keptLo = INFINITY, keptHi = -INFINITY;
            for (size_t i : kept)
                if (i >= begin && i < end) {
                    keptLo = std::min(keptLo, v[i]);
                    keptHi = std::max(keptHi, v[i]);
                }
            QCOMPARE(keptLo, *lo);
            QCOMPARE(keptHi, *hi);
        }
    }
};

QTEST_MAIN(TestDecimate)
#include "tst_decimate.moc"
