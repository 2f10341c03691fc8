// The real headroom-probe on a small hand-made plan. Needs a CUDA device: QSKIP when the probe says there is
// none (or was not built). Labelled "gpu" in ctest by its name.
#include "headroom/headroom_config.h"
#include "headroom/probe/probe_protocol.h"

#include <QTest>

using namespace headroom;

namespace {

constexpr int64_t MiB = 1 << 20;
using K = AllocEvent::Kind;

std::string probePath() { return std::string(HEADROOM_BINARY_DIR) + "/app/probe/headroom-probe"; }

// weights 64 MiB kept, activations 32 + 96 MiB, gradients 64 MiB; every alloc freed.
std::vector<AllocEvent> events(int64_t scale)
{
    return {{K::Alloc, 1, 64 * MiB, Category::Weights, 0, 0},
            {K::Alloc, 2, 32 * MiB * scale, Category::Activations, 1, 1},
            {K::Alloc, 3, 96 * MiB * scale, Category::Activations, 2, 2},
            {K::Free, 2, 32 * MiB * scale, Category::Activations, 3, 1},
            {K::Alloc, 4, 64 * MiB, Category::Gradients, 4, 0},
            {K::Free, 3, 96 * MiB * scale, Category::Activations, 5, 2},
            {K::Free, 4, 64 * MiB, Category::Gradients, 6, 0},
            {K::Free, 1, 64 * MiB, Category::Weights, 7, 0}};
}

} // namespace

class TestProbeGpu : public QObject
{
    Q_OBJECT

    ProbeResult m_result;

private slots:
    void initTestCase()
    {
        if (!HEADROOM_HAVE_CUDA || findProbe(probePath()).empty())
            QSKIP("built without CUDA");
        ProbePlan plan;
        plan.model = "tst_probe_gpu";
        plan.batch = 1;
        plan.events = events(1);
        // Batch b needs ~128 MiB * b of activations: far beyond any GPU at 1M.
        for (int64_t b : {1, 2, 4, 1 << 20})
            plan.batchPlans.emplace_back(b, events(b));
        plan.gemms = {{256, 256, 256, 1}};
        plan.convs = {{8, 3, 224, 224, 64, 7, 7, 3, 3, 2, 2, 1, 1, 1}};
        m_result = runProbe(plan, probePath(), 120);
        if (m_result.status == ProbeResult::Status::NoDevice)
            QSKIP(m_result.message.c_str());
        QVERIFY2(m_result.status == ProbeResult::Status::Ok, m_result.message.c_str());
    }

    void device()
    {
        QVERIFY(!m_result.deviceName.empty());
        QVERIFY(m_result.totalBytes > 0);
        QVERIFY(m_result.freeBytes > 0 && m_result.freeBytes <= m_result.totalBytes);
        QVERIFY(m_result.contextBytes > 0);
        QCOMPARE(m_result.deviceCount, int(m_result.devices.size()));
    }

    void exactReplay()
    {
        // Peak: weights + both activations + ... theory 64 + 32 + 96 = 192 MiB, or 64 + 96 + 64 = 224 MiB.
        // cudaMalloc rounds to 2 MiB pages; these sizes are multiples, so allow only a few pages of slack.
        QVERIFY2(m_result.exactPeak >= 224 * MiB, qPrintable(QString::number(m_result.exactPeak)));
        QVERIFY2(m_result.exactPeak <= 224 * MiB + 16 * MiB, qPrintable(QString::number(m_result.exactPeak)));
        QCOMPARE(m_result.usedAfterEvent.size(), size_t(8));
        QVERIFY(m_result.usedAfterEvent.back() <= 4 * MiB); // everything freed
        QVERIFY(!m_result.oom);
        for (const auto& [name, bytes] : m_result.peakByCategory) {
            if (name == "activations")
                QVERIFY(bytes >= 128 * MiB && bytes <= 136 * MiB);
            if (name == "weights")
                QVERIFY(bytes >= 64 * MiB && bytes <= 68 * MiB);
        }
    }

    void cachingReplay()
    {
        QVERIFY(m_result.cachingPeak >= m_result.exactPeak - 4 * MiB);
        QVERIFY(m_result.cachingSegments > 0);
    }

    void maxBatch()
    {
        QVERIFY2(m_result.measuredMaxBatch >= 4, qPrintable(QString::number(m_result.measuredMaxBatch)));
        QVERIFY(!m_result.maxBatchIsLowerBound);
        bool sawOom = false;
        for (const auto& t : m_result.batchTrials)
            sawOom = sawOom || !t.fits;
        QVERIFY(sawOom); // the 1M plan must have been refused, and the probe survived it
    }

    void workspace()
    {
        if (m_result.cublasWorkspace < 0)
            QSKIP("cuBLAS absent on this machine");
        QVERIFY(m_result.cublasWorkspace >= m_result.cublasHandleBytes);
    }
};

QTEST_GUILESS_MAIN(TestProbeGpu)
#include "tst_probe_gpu.moc"
