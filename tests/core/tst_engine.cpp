// The memory engine on tiny hand-built models, against values computed by hand.
#include "headroom/memory/allocator.h"
#include "headroom/memory/engine.h"

#include <QTest>

#include <cmath>
#include <map>

using namespace headroom;

namespace {

// Builds a Model by hand: tensors with symbolic dims, nodes in topological order.
struct ModelBuilder
{
    Model m;
    ModelBuilder() { m.layers.push_back(LayerNode{}); }
    int symbol(const std::string& name, int64_t value, bool batch = false)
    {
        m.symbols.push_back({name, value, batch, name, "test"});
        if (batch)
            m.batchSymbol = static_cast<int>(m.symbols.size()) - 1;
        return static_cast<int>(m.symbols.size()) - 1;
    }
    int tensor(const std::string& name, std::vector<DimExpr> dims, TensorRole role = TensorRole::Activation,
               DType dt = DType::Float32)
    {
        Tensor t;
        t.name = name;
        t.dtype = dt;
        t.role = role;
        t.shape.state = TensorShape::State::Exact;
        t.shape.dims = std::move(dims);
        m.tensors.push_back(t);
        const int id = static_cast<int>(m.tensors.size()) - 1;
        if (role == TensorRole::Input)
            m.inputs.push_back(id);
        return id;
    }
    int param(const std::string& name, std::vector<int64_t> dims)
    {
        std::vector<DimExpr> d;
        for (int64_t v : dims)
            d.push_back(DimExpr::constant(v));
        return tensor(name, d, TensorRole::Parameter);
    }
    int node(const std::string& op, std::vector<int> in, std::vector<int> out, std::vector<Attr> attrs = {})
    {
        Node n;
        n.name = op + "_" + std::to_string(m.nodes.size());
        n.op = op;
        n.inputs = in;
        n.outputs = out;
        n.attrs = std::move(attrs);
        const int id = static_cast<int>(m.nodes.size());
        for (int t : in)
            if (t >= 0)
                m.tensors[static_cast<size_t>(t)].consumers.push_back(id);
        for (int t : out)
            m.tensors[static_cast<size_t>(t)].producer = id;
        m.nodes.push_back(n);
        return id;
    }
    void output(int t)
    {
        m.outputs.push_back(t);
        m.tensors[static_cast<size_t>(t)].isGraphOutput = true;
    }
};

DimExpr sym(int i) { return DimExpr::symbol(i); }
Attr intAttr(const char* name, int64_t v)
{
    Attr a;
    a.name = name;
    a.kind = Attr::Kind::Int;
    a.i = v;
    return a;
}
DimExpr c(int64_t v) { return DimExpr::constant(v); }

// x[B,4] -> MatMul W1[4,8] -> Relu -> MatMul W2[8,3] -> y: 56 parameters, 224 bytes.
Model mlp()
{
    ModelBuilder b;
    const int B = b.symbol("batch", 1, true);
    const int x = b.tensor("x", {sym(B), c(4)}, TensorRole::Input);
    const int w1 = b.param("W1", {4, 8});
    const int h = b.tensor("h", {sym(B), c(8)});
    const int r = b.tensor("r", {sym(B), c(8)});
    const int w2 = b.param("W2", {8, 3});
    const int y = b.tensor("y", {sym(B), c(3)});
    b.node("MatMul", {x, w1}, {h});
    b.node("Relu", {h}, {r});
    b.node("MatMul", {r, w2}, {y});
    b.output(y);
    b.m.params.trainable = 56;
    b.m.params.trainableBytes = 224;
    return b.m;
}

Config cfg(const Model& m, int64_t batch, Optimizer opt = Optimizer::SGD, DtypePolicy dt = DtypePolicy::FP32)
{
    Config c;
    c.symbols = m.defaultBindings();
    if (m.batchSymbol >= 0)
        c.symbols[static_cast<size_t>(m.batchSymbol)] = batch;
    c.optimizer = opt;
    c.dtype = dt;
    c.allocator = AllocatorMode::Exact;
    return c;
}

// A chain of n equal layers x_{i+1} = x_i * s_i (s_i a per-feature scale): each layer keeps its input.
Model chain(int n, int64_t features)
{
    ModelBuilder b;
    const int B = b.symbol("batch", 64, true);
    int x = b.tensor("x", {sym(B), c(features)}, TensorRole::Input);
    for (int i = 0; i < n; ++i) {
        const int w = b.param("W" + std::to_string(i), {features, features});
        const int y = b.tensor("h" + std::to_string(i), {sym(B), c(features)});
        b.node("MatMul", {x, w}, {y});
        x = y;
    }
    b.output(x);
    return b.m;
}

} // namespace

class TestEngine : public QObject
{
    Q_OBJECT
private slots:
    void seedRule_data()
    {
        QTest::addColumn<int>("optimizer");
        QTest::addColumn<int>("multiple");
        QTest::newRow("sgd: 2x weights") << int(Optimizer::SGD) << 2;
        QTest::newRow("adam: 4x weights") << int(Optimizer::Adam) << 4;
    }
    void seedRule()
    {
        QFETCH(int, optimizer);
        QFETCH(int, multiple);
        const Model m = mlp();
        const Evaluation e = evaluate(m, cfg(m, 2, Optimizer(optimizer)));
        QCOMPARE(e.memory.weights, 224);
        QCOMPARE(e.memory.gradients, 224);
        QCOMPARE(e.memory.weights + e.memory.gradients + e.memory.optimizer + e.memory.masterWeights, multiple * 224);
    }

    void mlpTimeline()
    {
        // SGD, batch 2, fp32: saved = x (32) + relu output (64). Peak (hand-walked): during Relu's backward
        // weights 224 + x 32 + r 64 + W2 grad 96 + grad r 64 + grad h 64 = 544.
        const Model m = mlp();
        const Evaluation e = evaluate(m, cfg(m, 2));
        QCOMPARE(e.memory.activationsSaved, 96);
        QCOMPARE(e.memory.input, 32);
        QCOMPARE(e.memory.peak, 544);
        QCOMPARE(e.timeline.at(static_cast<size_t>(e.peakStep)).high, 544);
        // balanced events, in step order
        int64_t live = 0, maxLive = 0;
        int lastStep = 0;
        for (const AllocEvent& ev : e.events) {
            QVERIFY(ev.step >= lastStep);
            lastStep = ev.step;
            live += ev.kind == AllocEvent::Kind::Alloc ? ev.bytes : -ev.bytes;
            maxLive = std::max(maxLive, live);
        }
        QCOMPARE(live, 0);
        QCOMPARE(maxLive, e.memory.peak);
        QCOMPARE(replay(e.events, AllocatorMode::Exact).allocatedPeak, e.memory.peak);
        QVERIFY(!e.peakLive.empty());
        QCOMPARE(e.nodes.size(), size_t(3));
        QCOMPARE(e.nodes[0].params, 32);
        QCOMPARE(e.nodes[0].recomputeMacs, 2 * 8 * 4);
        QCOMPARE(e.forwardMacs, 2 * 8 * 4 + 2 * 3 * 8);
    }

    void optimizerStates_data()
    {
        QTest::addColumn<int>("optimizer");
        QTest::addColumn<bool>("momentum");
        QTest::addColumn<bool>("centered");
        QTest::addColumn<qint64>("bytes");
        // 56 parameters; Adafactor: W1 4x8 -> (4 + 8) * 4, W2 8x3 -> (8 + 3) * 4
        QTest::newRow("sgd") << int(Optimizer::SGD) << false << false << qint64(0);
        QTest::newRow("momentum") << int(Optimizer::Momentum) << false << false << qint64(224);
        QTest::newRow("adam") << int(Optimizer::Adam) << false << false << qint64(448);
        QTest::newRow("adamw") << int(Optimizer::AdamW) << false << false << qint64(448);
        QTest::newRow("adagrad") << int(Optimizer::Adagrad) << false << false << qint64(224);
        QTest::newRow("rmsprop") << int(Optimizer::RMSprop) << false << false << qint64(224);
        QTest::newRow("rmsprop momentum") << int(Optimizer::RMSprop) << true << false << qint64(448);
        QTest::newRow("rmsprop centered") << int(Optimizer::RMSprop) << true << true << qint64(672);
        QTest::newRow("adadelta") << int(Optimizer::Adadelta) << false << false << qint64(448);
        QTest::newRow("lion") << int(Optimizer::Lion) << false << false << qint64(224);
        QTest::newRow("lamb") << int(Optimizer::LAMB) << false << false << qint64(448);
        // bitsandbytes keeps 32-bit state for tensors under 4096 elements: all of these
        QTest::newRow("adam8bit") << int(Optimizer::Adam8bit) << false << false << qint64(448);
        QTest::newRow("adafactor") << int(Optimizer::Adafactor) << false << false << qint64(48 + 44);
        QTest::newRow("custom 3 B") << int(Optimizer::Custom) << false << false << qint64(168);
    }
    void optimizerStates()
    {
        QFETCH(int, optimizer);
        QFETCH(bool, momentum);
        QFETCH(bool, centered);
        QFETCH(qint64, bytes);
        const Model m = mlp();
        Config c = cfg(m, 2, Optimizer(optimizer));
        c.rmspropMomentum = momentum;
        c.rmspropCentered = centered;
        c.customOptimizerBytes = 3;
        QCOMPARE(evaluate(m, c).memory.optimizer, bytes);
    }

    void dtypePolicies_data()
    {
        QTest::addColumn<int>("dtype");
        QTest::addColumn<qint64>("weights");
        QTest::addColumn<qint64>("grads");
        QTest::addColumn<qint64>("optimizer");
        QTest::addColumn<qint64>("master");
        QTest::addColumn<qint64>("saved");
        // MLP, Adam, batch 2. saved = x [2,4] + relu output [2,8]
        QTest::newRow("fp32") << int(DtypePolicy::FP32) << qint64(224) << qint64(224) << qint64(448) << qint64(0)
                              << qint64(32 + 64);
        QTest::newRow("fp16") << int(DtypePolicy::FP16) << qint64(112) << qint64(112) << qint64(224) << qint64(0)
                              << qint64(16 + 32);
        QTest::newRow("bf16") << int(DtypePolicy::BF16) << qint64(112) << qint64(112) << qint64(224) << qint64(0)
                              << qint64(16 + 32);
        // autocast: fp32 params + cached 16-bit copies of both matmul weights; matmul outputs 16-bit; the first
        // matmul casts the fp32 input x and keeps that 16-bit copy (16 B), not x (autocast caches only weights)
        QTest::newRow("amp-fp16") << int(DtypePolicy::AmpFP16) << qint64(224 + 112) << qint64(224) << qint64(448)
                                  << qint64(0) << qint64(16 + 32);
        QTest::newRow("amp-bf16") << int(DtypePolicy::AmpBF16) << qint64(224 + 112) << qint64(224) << qint64(448)
                                  << qint64(0) << qint64(16 + 32);
        // 2 + 2 + 4 + 8 = 16 bytes per parameter
        QTest::newRow("mixed-fp16") << int(DtypePolicy::MixedFP16) << qint64(112) << qint64(112) << qint64(448)
                                    << qint64(224) << qint64(16 + 32);
        QTest::newRow("mixed-bf16") << int(DtypePolicy::MixedBF16) << qint64(112) << qint64(112) << qint64(448)
                                    << qint64(224) << qint64(16 + 32);
        QTest::newRow("int8") << int(DtypePolicy::INT8) << qint64(56) << qint64(0) << qint64(0) << qint64(0)
                              << qint64(0);
        QTest::newRow("int4") << int(DtypePolicy::INT4) << qint64(28) << qint64(0) << qint64(0) << qint64(0)
                              << qint64(0);
    }
    void dtypePolicies()
    {
        QFETCH(int, dtype);
        QFETCH(qint64, weights);
        QFETCH(qint64, grads);
        QFETCH(qint64, optimizer);
        QFETCH(qint64, master);
        QFETCH(qint64, saved);
        const Model m = mlp();
        const Evaluation e = evaluate(m, cfg(m, 2, Optimizer::Adam, DtypePolicy(dtype)));
        QCOMPARE(e.memory.weights, weights);
        QCOMPARE(e.memory.gradients, grads);
        QCOMPARE(e.memory.optimizer, optimizer);
        QCOMPARE(e.memory.masterWeights, master);
        QCOMPARE(e.memory.activationsSaved, saved);
        if (DtypePolicy(dtype) == DtypePolicy::MixedFP16)
            QCOMPARE(e.memory.weights + e.memory.gradients + e.memory.masterWeights + e.memory.optimizer, 16 * 56);
    }

    void freeze()
    {
        // W1 frozen: no gradient for it, and its matmul keeps nothing (neither operand needs a gradient);
        // the relu's input no longer requires grad, so only the second matmul keeps r.
        const Model m = mlp();
        Config c = cfg(m, 2, Optimizer::Adam);
        c.freeze = {"W1"};
        const Evaluation e = evaluate(m, c);
        QCOMPARE(e.memory.gradients, 96);
        QCOMPARE(e.memory.optimizer, 192);
        QCOMPARE(e.memory.activationsSaved, 64);
        QCOMPARE(e.memory.weights, 224);
    }

    void accumulation()
    {
        // s = 4 at batch 8: activations of micro-batch 2, gradients alive from the start of the micro-step.
        // Hand-walked peak: weights 224 + grads 224 + x 32 + r 64 + grad y 24 + grad r 64 + W2 contribution
        // 96 = 728, in the second matmul's backward (in-place accumulation into the persistent gradient).
        const Model m = mlp();
        Config c = cfg(m, 8);
        c.accumulate = 4;
        const Evaluation e = evaluate(m, c);
        const Evaluation micro = evaluate(m, cfg(m, 2));
        QCOMPARE(e.memory.microBatch, 2);
        QCOMPARE(e.memory.activationsSaved, micro.memory.activationsSaved);
        QCOMPARE(e.memory.gradients, micro.memory.gradients);
        QCOMPARE(e.memory.peak, 728);
        QVERIFY(e.memory.peak > micro.memory.peak);
    }

    void torch110KeepsGradients()
    {
        // PyTorch before 2.0: zero_grad() zeroes the gradients in place (set_to_none=False, pytorch#92731 made
        // None the default in 2.0), so a steady step starts with every gradient allocated, as an accumulation
        // micro-step does: at batch 2 the hand walk of accumulation() above, 728.
        const Model m = mlp();
        Config c = cfg(m, 2);
        c.torch = TorchVersion::V1_10;
        const Evaluation e = evaluate(m, c);
        QCOMPARE(e.memory.peak, 728);
        QVERIFY(evaluate(m, cfg(m, 2)).memory.peak < 728);
    }

    void torch110OptimizerLoop()
    {
        // Adam on 16 [16, 16] weights (1 KiB each): its states are 2 x 16 KiB. 2.x's foreach step holds every
        // parameter's exp_avg_sq.sqrt() at once (16 KiB); 1.x's loop over the parameters rebinds one `denom`
        // per parameter, so at most the previous parameter's and the next one's exist (2 KiB).
        const Model m = chain(16, 16);
        auto optimizerHighWater = [&](TorchVersion torch) {
            Config c = cfg(m, 1, Optimizer::Adam);
            c.torch = torch;
            const Evaluation e = evaluate(m, c);
            std::map<int64_t, int64_t> live;
            int64_t cur = 0, high = 0;
            for (const AllocEvent& ev : e.events) {
                if (ev.category != Category::Optimizer)
                    continue;
                if (ev.kind == AllocEvent::Kind::Alloc) {
                    live[ev.id] = ev.bytes;
                    cur += ev.bytes;
                    high = std::max(high, cur);
                } else if (live.count(ev.id)) {
                    cur -= live[ev.id];
                    live.erase(ev.id);
                }
            }
            return high;
        };
        const int64_t param = 16 * 16 * 4, states = 2 * 16 * param;
        QCOMPARE(optimizerHighWater(TorchVersion::V2), states + 16 * param);
        QCOMPARE(optimizerHighWater(TorchVersion::V1_10), states + 2 * param);
    }

    void inplace()
    {
        // inplace relu writes into h: the forward transient drops, the saved set does not change
        const Model m = mlp();
        Config c = cfg(m, 64);
        c.loss = Loss::None;
        c.mode = Mode::Infer;
        const Evaluation off = evaluate(m, c);
        c.inplace = true;
        const Evaluation on = evaluate(m, c);
        // off: weights 224 + x 1024 + h 2048 + r 2048 while the relu runs = 5344
        // on: r is h; the peak moves to the last matmul: 224 + 1024 + 2048 + y 768 = 4064
        QCOMPARE(off.memory.peak, 5344);
        QCOMPARE(on.memory.peak, 4064);
        QCOMPARE(on.inplaceTransientSaving, 1280);
        QCOMPARE(off.inplaceTransientSaving, 1280);
    }

    void checkpointChain()
    {
        // 16 equal layers, activations dominate: k segments hold k - 1 segment inputs plus one segment's
        // saved inputs while it is recomputed, ~ (k - 1) + 16 / k layers: minimal at k = sqrt(16) = 4.
        const Model m = chain(16, 16);
        Config c = cfg(m, 4096);
        const auto curve = checkpointCurve(m, c, 8);
        QCOMPARE(curve.size(), size_t(8));
        QCOMPARE(curve[0].recomputeMacs, 0);
        QVERIFY(curve[1].peak < curve[0].peak);
        QVERIFY(curve[3].peak < curve[1].peak);
        for (size_t k = 1; k < curve.size(); ++k)
            QVERIFY(curve[k].recomputeMacs > 0);
        const int best = bestCheckpointSegments(curve);
        QVERIFY2(best >= 3 && best <= 5, qPrintable(QString::number(best)));
        // recompute = forward MACs of all but the last segment
        c.checkpointSegments = 4;
        const Evaluation e = evaluate(m, c);
        QVERIFY(e.recomputeMacs > 0 && e.recomputeMacs < e.forwardMacs);
        QCOMPARE(e.recomputeMacs % (4096 * 16 * 16), 0);
        int64_t live = 0;
        for (const AllocEvent& ev : e.events)
            live += ev.kind == AllocEvent::Kind::Alloc ? ev.bytes : -ev.bytes;
        QCOMPARE(live, 0);
    }

    void maxBatchBoundary()
    {
        const Model m = mlp();
        Config c = cfg(m, 5);
        c.gpu.context = 1000;
        c.gpu.workspace = 300;
        c.marginBytes = 7;
        const Evaluation e5 = evaluate(m, c);
        c.gpu.capacity = e5.memory.peak + 1000 + 300 + 7; // exactly batch 5 and the margin
        QCOMPARE(maxBatch(m, c), 5);
        const Fit fit = computeFit(m, c, e5);
        QVERIFY(fit.fits);
        QCOMPARE(fit.headroom, 7);
        QCOMPARE(fit.maxBatch, 5);
        c.gpu.capacity -= 1;
        QCOMPARE(maxBatch(m, c), 4);
        QVERIFY(!computeFit(m, c, e5).fits);
        c.gpu.capacity = 10;
        QCOMPARE(maxBatch(m, c), 0);
    }

    void kvCache()
    {
        // One decoder step with past_key_values: x[B,8] -> k, v projections, present = Concat(past, new)
        // over a symbolic past length P. Inference keeps past (input) and present (output) alive:
        // 2 caches * (P + P + 1) * 8 floats; the peak grows by 4 * 8 * 4 = 128 bytes per past position.
        ModelBuilder b;
        const int B = b.symbol("batch", 1, true);
        const int P = b.symbol("past", 16);
        DimExpr p1 = sym(P);
        p1.addTerm(0, 1);
        const int x = b.tensor("x", {sym(B), c(8)}, TensorRole::Input);
        const int pk = b.tensor("past_key", {sym(B), sym(P), c(8)}, TensorRole::Input);
        const int pv = b.tensor("past_value", {sym(B), sym(P), c(8)}, TensorRole::Input);
        const int wk = b.param("Wk", {8, 8}), wv = b.param("Wv", {8, 8}), wo = b.param("Wo", {8, 8});
        const int axes = b.tensor("axes", {c(1)}, TensorRole::Constant, DType::Int64);
        const int k = b.tensor("k", {sym(B), c(8)}), v = b.tensor("v", {sym(B), c(8)});
        const int ku = b.tensor("k1", {sym(B), c(1), c(8)}), vu = b.tensor("v1", {sym(B), c(1), c(8)});
        const int prk = b.tensor("present_key", {sym(B), p1, c(8)});
        const int prv = b.tensor("present_value", {sym(B), p1, c(8)});
        const int y = b.tensor("logits", {sym(B), c(8)});
        b.node("MatMul", {x, wk}, {k});
        b.node("MatMul", {x, wv}, {v});
        b.node("Unsqueeze", {k, axes}, {ku});
        b.node("Unsqueeze", {v, axes}, {vu});
        b.node("Concat", {pk, ku}, {prk}, {intAttr("axis", 1)});
        b.node("Concat", {pv, vu}, {prv}, {intAttr("axis", 1)});
        b.node("MatMul", {x, wo}, {y});
        b.output(y);
        b.output(prk);
        b.output(prv);
        const Model& m = b.m;
        Config cf = cfg(m, 1);
        cf.mode = Mode::Infer;
        cf.symbols[static_cast<size_t>(P)] = 10;
        const Evaluation e10 = evaluate(m, cf);
        cf.symbols[static_cast<size_t>(P)] = 100;
        const Evaluation e100 = evaluate(m, cf);
        QCOMPARE(e100.memory.peak - e10.memory.peak, 90 * 128);
        // at P = 100: weights 768 + x 32 + past 2 * 3200 + present 2 * 3232 + logits 32 (+ k/v transients)
        QVERIFY(e100.memory.peak >= 768 + 32 + 6400 + 6464 + 32);
        QVERIFY(e100.memory.peak <= 768 + 32 + 6400 + 6464 + 32 + 64);
        QCOMPARE(e100.memory.gradients, 0);
        QCOMPARE(e100.memory.activationsSaved, 0);
    }

    void unknownOpIsConservativeAndNamed()
    {
        ModelBuilder b;
        const int B = b.symbol("batch", 2, true);
        const int x = b.tensor("x", {sym(B), c(4)}, TensorRole::Input);
        const int w = b.param("W", {4, 4});
        const int h = b.tensor("h", {sym(B), c(4)});
        const int y = b.tensor("y", {sym(B), c(4)});
        b.node("MatMul", {x, w}, {h});
        b.node("FancyOp", {h}, {y});
        b.output(y);
        const Evaluation e = evaluate(b.m, cfg(b.m, 2));
        // x (32) + FancyOp's input h (32) and output y (32)
        QCOMPARE(e.memory.activationsSaved, 96);
        QCOMPARE(e.warnings.size(), size_t(1));
        QVERIFY(e.warnings[0].find("FancyOp") != std::string::npos);
    }

    void viewsCountOnce()
    {
        // Relu saves r; a Reshape of r saved by the next matmul is the same storage in PyTorch.
        ModelBuilder b;
        const int B = b.symbol("batch", 2, true);
        const int x = b.tensor("x", {sym(B), c(4)}, TensorRole::Input);
        const int w = b.param("W", {4, 8});
        const int h = b.tensor("h", {sym(B), c(8)});
        const int r = b.tensor("r", {sym(B), c(8)});
        const int shape = b.tensor("shape", {c(3)}, TensorRole::Constant, DType::Int64);
        const int rr = b.tensor("rr", {sym(B), c(2), c(4)});
        const int w2 = b.param("W2", {4, 3});
        const int y = b.tensor("y", {sym(B), c(2), c(3)});
        b.node("MatMul", {x, w}, {h});
        b.node("Relu", {h}, {r});
        b.node("Reshape", {r, shape}, {rr});
        b.node("MatMul", {rr, w2}, {y});
        b.output(y);
        const Evaluation e = evaluate(b.m, cfg(b.m, 2));
        QCOMPARE(e.memory.activationsSaved, 32 + 64);
    }
};

QTEST_APPLESS_MAIN(TestEngine)
#include "tst_engine.moc"
