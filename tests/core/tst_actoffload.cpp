// torchtune's activation offloading (Config::offloadActivations, core/memory/src/timeline/offload.cpp) against
// what torchtune's own pack hook does on the same decoder (tests/data/actoffload: measure_offload.py runs
// OffloadActivations.pack_tensor's bookkeeping around a 4-layer Llama-style decoder with one non-reentrant
// checkpoint per layer, torch 1.13 on CPU; offload_truth.json). Headroom's per-layer segments put the token
// embedding inside layer 0's segment (layer_checkpoint.cpp), so layer 0's input is never held and never packed
// there: every expectation below is the truth's checkpoint inputs less that one.
#include "headroom/base/config.h"
#include "headroom/load/loader.h"
#include "headroom/memory/engine.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace headroom;

namespace {

const QString kDir = QStringLiteral(HEADROOM_TEST_DATA "/actoffload/");

QJsonObject truthPoint(int64_t batch, int64_t seq)
{
    QFile f(kDir + QStringLiteral("offload_truth.json"));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    const QJsonArray points = QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("points")).toArray();
    for (const QJsonValue& p : points)
        if (p[QStringLiteral("batch")].toInteger() == batch && p[QStringLiteral("seq")].toInteger() == seq)
            return p.toObject();
    return {};
}

// The truth's checkpoint inputs after layer 0's: all of them (host bytes), or those whose GPU original left
// during forward (pack_tensor's fwd_stash sweep).
int64_t truthBytes(const QJsonObject& point, bool releasedOnly)
{
    const QJsonObject ck = point[QStringLiteral("checkpoint_inputs")].toObject();
    const QJsonArray bytes = ck[QStringLiteral("layer_input_bytes")].toArray();
    const QJsonArray released = ck[QStringLiteral("released_in_forward")].toArray();
    int64_t sum = 0;
    for (qsizetype i = 1; i < bytes.size(); ++i)
        if (!releasedOnly || released[i].toBool())
            sum += bytes[i].toInteger();
    return sum;
}

Config configFor(const Model& m, int64_t batch, int64_t seq, bool offload)
{
    Config c;
    c.allocator = AllocatorMode::Exact;
    c.attention = Attention::Flex; // no T x T scores: the peak is the lm_head's, after forward
    c.symbols = m.defaultBindings();
    c.symbols[static_cast<size_t>(m.batchSymbol)] = batch;
    c.symbols[static_cast<size_t>(m.symbolIndex("seq"))] = seq;
    c.finetune.layerCheckpoint = true;
    c.offloadActivations = offload;
    return c;
}

int64_t endOfForward(const Evaluation& e)
{
    int64_t last = 0;
    for (const TimelinePoint& p : e.timeline)
        if (p.phase == Phase::Forward)
            last = p.allocated;
    return last;
}

} // namespace

class TestActOffload : public QObject
{
    Q_OBJECT

private slots:
    // Host bytes and what leaves the GPU in forward, at each measured binding ((1, 64): the final norm's
    // per-row statistics are under min_offload_size and take an id without being offloaded).
    void againstTorchtunesPackHook_data()
    {
        QTest::addColumn<qint64>("batch");
        QTest::addColumn<qint64>("seq");
        QTest::newRow("b2 s128") << qint64(2) << qint64(128);
        QTest::newRow("b1 s64") << qint64(1) << qint64(64);
        QTest::newRow("b8 s1024") << qint64(8) << qint64(1024);
    }
    void againstTorchtunesPackHook()
    {
        QFETCH(qint64, batch);
        QFETCH(qint64, seq);
        const QJsonObject truth = truthPoint(batch, seq);
        QVERIFY2(!truth.isEmpty(), "offload_truth.json has no such point");
        const Model m = loadModel((kDir + QStringLiteral("tiny_llama4.config.json")).toStdString());
        const Evaluation plain = evaluate(m, configFor(m, batch, seq, false));
        const Evaluation off = evaluate(m, configFor(m, batch, seq, true));
        QCOMPARE(plain.memory.offloadedActivations, int64_t(0));
        QCOMPARE(off.memory.offloadedActivations, truthBytes(truth, false));
        // what the forward stash let go is off the GPU when forward ends
        QCOMPARE(endOfForward(plain) - endOfForward(off), truthBytes(truth, true));
        // offloading moves tensors; it saves none and recomputes nothing more
        QCOMPARE(off.memory.activationsSaved, plain.memory.activationsSaved);
        QCOMPARE(off.recomputeMacs, plain.recomputeMacs);
    }

    // The peak (the lm_head's output in forward here) drops by the checkpoint inputs that left the GPU, and no
    // more: the in-flight layers' inputs come back (a copy per recomputation) below it.
    void peakDrop()
    {
        const QJsonObject truth = truthPoint(8, 1024);
        QVERIFY(!truth.isEmpty());
        const Model m = loadModel((kDir + QStringLiteral("tiny_llama4.config.json")).toStdString());
        const Evaluation plain = evaluate(m, configFor(m, 8, 1024, false));
        const Evaluation off = evaluate(m, configFor(m, 8, 1024, true));
        QCOMPARE(plain.memory.peak - off.memory.peak, truthBytes(truth, true));
        QVERIFY(off.memory.reservedPeak <= plain.memory.reservedPeak);
    }

    // torchtune's recipes refuse offloading without checkpointing (RuntimeError): nothing moves, and the report
    // says so.
    void needsCheckpointing()
    {
        const Model m = loadModel((kDir + QStringLiteral("tiny_llama4.config.json")).toStdString());
        Config c = configFor(m, 2, 128, true);
        c.finetune.layerCheckpoint = false;
        const Evaluation off = evaluate(m, c);
        c.offloadActivations = false;
        const Evaluation plain = evaluate(m, c);
        QCOMPARE(off.memory.peak, plain.memory.peak);
        QCOMPARE(off.memory.offloadedActivations, int64_t(0));
        bool warned = false;
        for (const std::string& w : off.warnings)
            warned = warned || w.starts_with("--offload-activations: needs activation checkpointing");
        QVERIFY(warned);
    }

    // --framework torchtune leaves it off (every *_lora_single_device.yaml / *_qlora_single_device.yaml:
    // enable_activation_offloading: False); a user's switch stays under the preset.
    void presetLeavesItOff()
    {
        Config c;
        applyFramework(Framework::Torchtune, c);
        QVERIFY(!c.offloadActivations);
        Config on;
        on.offloadActivations = true;
        applyFramework(Framework::Torchtune, on, kPresetOffloadActivations);
        QVERIFY(on.offloadActivations);
    }
};

QTEST_GUILESS_MAIN(TestActOffload)
#include "tst_actoffload.moc"
