// The advisor on the hand-built MLP of tst_multigpu: every saving is re-evaluated (never asserted by the
// advisor), and where the peak is the optimizer step (weights + gradients + states + Adam's fp32 temporary
// + the input batch) the savings are computed by hand.
#include "headroom/hardware/multigpu.h"
#include "headroom/report/advisor.h"

#include "mlp_fixture.h"

#include <QTest>

#include <algorithm>

using namespace headroom;

namespace {
using namespace testfixture;

Config config(Strategy s, int gpus, int64_t batch, DtypePolicy dtype = DtypePolicy::FP32)
{
    Config c;
    c.symbols = {batch};
    c.strategy = s;
    c.gpus = gpus;
    c.dtype = dtype;
    c.optimizer = Optimizer::Adam;
    c.allocator = AllocatorMode::Exact;
    c.gpu.capacity = int64_t(24) << 30;
    return c;
}

} // namespace

namespace {

int64_t need(const Model& m, const Config& c)
{
    if (c.gpus > 1 && c.strategy != Strategy::Single) {
        int64_t n = 0;
        for (const auto& g : evaluateCluster(m, c).gpus)
            n = std::max(n, g.needed);
        return n;
    }
    return neededBytes(c, evaluate(m, c));
}

const Advice* find(const std::vector<Advice>& list, Advice::Kind kind)
{
    for (const auto& a : list)
        if (a.kind == kind)
            return &a;
    return nullptr;
}

} // namespace

class TestAdvisor : public QObject
{
    Q_OBJECT
private slots:
    // Single GPU, fp32 Adam, batch 8: the peak is the optimizer step, 20P + the 32 KiB input.
    void savingsByHand()
    {
        const Model m = mlp();
        const Config c = config(Strategy::Single, 1, 8);
        const auto advice = advise(m, c, 10);
        const Advice* freeze = find(advice, Advice::Kind::Freeze);
        QVERIFY(freeze);
        // fc0 frozen: no gradient (4), Adam states (8) or step temporary (4) for its parameters.
        QCOMPARE(freeze->saving(), 16 * kFc0);
        QCOMPARE(freeze->changed.freeze, std::vector<std::string>{"fc0"});
        const Advice* dtype = find(advice, Advice::Kind::Dtype);
        QVERIFY(dtype);
        QCOMPARE(dtype->summary, std::string("bf16"));
        // bf16 params, grads and Adam states (zeros_like the params) and the step's temporary
        // (torch._foreach_sqrt of the bf16 exp_avg_sq: torch/optim/adam.py _multi_tensor_adam): 2 + 2 + 4 + 2
        // bytes saved per parameter; the 8 x 1024 input halves.
        QCOMPARE(dtype->saving(), 10 * P + 8 * 1024 * 2);
        const Advice* acc = find(advice, Advice::Kind::Accumulate);
        QVERIFY(acc);
        QCOMPARE(acc->changed.accumulate, 2);
        QCOMPARE(acc->saving(), qint64(4 * 1024 * 4)); // the input batch at micro-batch 4
        QCOMPARE(advice.front().kind, Advice::Kind::Freeze);
    }

    void reEvaluated_data()
    {
        QTest::addColumn<int>("strategy");
        QTest::addColumn<int>("gpus");
        QTest::addColumn<qint64>("batch");
        QTest::addColumn<qint64>("capacityMiB");
        QTest::addColumn<int>("allocator");
        QTest::newRow("single, fits") << int(Strategy::Single) << 1 << qint64(8) << qint64(1024)
                                      << int(AllocatorMode::Exact);
        QTest::newRow("single, large batch")
            << int(Strategy::Single) << 1 << qint64(4096) << qint64(40) << int(AllocatorMode::Exact);
        QTest::newRow("single, caching") << int(Strategy::Single) << 1 << qint64(2048) << qint64(40)
                                         << int(AllocatorMode::Caching);
        QTest::newRow("ddp") << int(Strategy::DDP) << 2 << qint64(16) << qint64(1024) << int(AllocatorMode::Exact);
        QTest::newRow("dp, tight") << int(Strategy::DP) << 2 << qint64(4096) << qint64(40) << int(AllocatorMode::Exact);
        QTest::newRow("zero1") << int(Strategy::ZeRO1) << 4 << qint64(64) << qint64(1024) << int(AllocatorMode::Exact);
    }
    void reEvaluated()
    {
        QFETCH(int, strategy);
        QFETCH(int, gpus);
        QFETCH(qint64, batch);
        QFETCH(qint64, capacityMiB);
        QFETCH(int, allocator);
        const Model m = mlp();
        Config c = config(Strategy(strategy), gpus, batch);
        c.gpu.capacity = capacityMiB << 20;
        c.allocator = AllocatorMode(allocator);
        const auto advice = advise(m, c, 6);
        QVERIFY(!advice.empty());
        QVERIFY(advice.size() <= 6);
        const int64_t before = need(m, c);
        for (size_t i = 0; i < advice.size(); ++i) {
            const Advice& a = advice[i];
            QCOMPARE(a.needBefore, before);
            QCOMPARE(a.needAfter, need(m, a.changed));
            QVERIFY(a.saving() > 0);
            QCOMPARE(a.fitsAfter, a.needAfter <= c.gpu.capacity);
            if (i > 0)
                QVERIFY(advice[i - 1].saving() >= a.saving());
        }
    }

    // Too large a batch: the largest batch that fits, and one more does not.
    void batch()
    {
        const Model m = mlp();
        Config c = config(Strategy::Single, 1, 4096);
        c.gpu.capacity = int64_t(40) << 20;
        QVERIFY(need(m, c) > c.gpu.capacity);
        const auto advice = advise(m, c, 10);
        const Advice* b = find(advice, Advice::Kind::Batch);
        QVERIFY(b);
        const int64_t best = b->changed.symbols[0];
        QVERIFY(best >= 1 && best < 4096);
        QVERIFY(b->fitsAfter);
        Config more = c;
        more.symbols[0] = best + 1;
        QVERIFY(need(m, more) > c.gpu.capacity);
    }

    // Of the ZeRO stages, the mildest that fits: a capacity just above ZeRO-1's need picks ZeRO-1.
    void zeroStageMildest()
    {
        const Model m = mlp();
        Config c = config(Strategy::DDP, 2, 16);
        Config z1 = c;
        z1.strategy = Strategy::ZeRO1;
        c.gpu.capacity = need(m, z1);
        QVERIFY(need(m, c) > c.gpu.capacity);
        const auto advice = advise(m, c, 10);
        const Advice* z = find(advice, Advice::Kind::ZeroStage);
        QVERIFY(z);
        QVERIFY(z->changed.strategy == Strategy::ZeRO1);
        QCOMPARE(z->summary, std::string("ZeRO-1"));
        QVERIFY(z->fitsAfter);
    }

    // DataParallel: a GPU-0 batch that evens the GPUs, re-evaluated as balanced DP.
    void gpu0Batch()
    {
        const Model m = mlp();
        Config c = config(Strategy::DP, 2, 4096);
        c.optimizer = Optimizer::SGD;
        const auto advice = advise(m, c, 10);
        const Advice* g = find(advice, Advice::Kind::Gpu0Batch);
        QVERIFY(g);
        QVERIFY(g->changed.strategy == Strategy::BalancedDP);
        QVERIFY(g->changed.gpu0Batch >= 0 && g->changed.gpu0Batch < 2048);
        QCOMPARE(g->needAfter, need(m, g->changed));
    }

    // No gradient work in inference: no training-only advice.
    void inference()
    {
        const Model m = mlp();
        Config c = config(Strategy::Single, 1, 64);
        c.mode = Mode::Infer;
        for (const Advice& a : advise(m, c, 10)) {
            QVERIFY(a.kind != Advice::Kind::Freeze && a.kind != Advice::Kind::Accumulate &&
                    a.kind != Advice::Kind::Checkpoint);
            QCOMPARE(a.needAfter, need(m, a.changed));
        }
    }
};

QTEST_GUILESS_MAIN(TestAdvisor)
#include "tst_advisor.moc"
