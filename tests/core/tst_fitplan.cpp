// The plan to fit: on the bundled Hugging Face configs at sequence 2048 (LoRA as PEFT's defaults target,
// pure bf16, AdamW, batch 1) on an RTX 4090, and a 70B config on 4 × A100 80 GB, the plan fits; each claim
// is checked by evaluating the plan's configuration afresh (evaluate + computeFit / evaluateCluster), not by
// reading the search's own figures back.
#include "headroom/hardware/gpus.h"
#include "headroom/hardware/multigpu.h"
#include "headroom/import/hfconfig.h"
#include "headroom/load/loader.h"
#include "headroom/report/fitplan.h"

#include <QTest>

#include <algorithm>

using namespace headroom;

namespace {

std::string sample(const QString& name)
{
    return std::string(HEADROOM_SOURCE_DIR) + "/resources/samples/" + name.toStdString();
}

LoraSpec lora(std::vector<std::string> targets = {})
{
    LoraSpec l;
    l.r = 16;
    l.alpha = 32;
    l.targets = std::move(targets);
    return l;
}

Model loraModel(const std::string& path, const LoraSpec& spec)
{
    LoadOptions o;
    o.lora = spec;
    return loadModel(path, o);
}

Config loraConfig(const Model& m, const LoraSpec& spec, const char* gpu, int64_t seq)
{
    Config c;
    for (const Symbol& s : m.symbols)
        c.symbols.push_back(s.isBatch ? 1 : s.name == "seq" ? seq : s.value);
    c.dtype = DtypePolicy::BF16;
    c.optimizer = Optimizer::AdamW;
    c.finetune.lora = spec;
    c.freeze = loraFreezePatterns();
    c.gpu = *findGpu(gpu);
    return c;
}

// The need as a report computes it, from scratch.
int64_t freshNeed(const Model& m, const Config& c)
{
    if (c.gpus > 1 && c.strategy != Strategy::Single) {
        int64_t n = 0;
        for (const GpuShare& g : evaluateCluster(m, c).gpus)
            n = std::max(n, g.needed);
        return n;
    }
    return computeFit(m, c, evaluate(m, c)).needed;
}

// The verdict a plan stops on, judged afresh: "fits" (Fit::fitsSafely) with room to spare (not at capacity).
bool freshFitsWithRoom(const Model& m, const Config& c)
{
    const Fit f = computeFitOnly(makePlan(m, c), c, evaluate(m, c));
    return f.fitsSafely && !f.atCapacity;
}

void print(const FitPlan& plan)
{
    QString line = QStringLiteral("need %1 MiB").arg(plan.needBefore >> 20);
    for (const PlanStep& s : plan.steps)
        line += QStringLiteral(" -> %1: %2 MiB (-%3 MiB)")
                    .arg(QString::fromStdString(s.summary))
                    .arg(s.needAfter >> 20)
                    .arg(s.saving >> 20);
    qInfo("%s; capacity %lld MiB, fits %d", qPrintable(line), static_cast<long long>(plan.capacity >> 20), plan.fits);
}

} // namespace

class TestFitPlan : public QObject
{
    Q_OBJECT
private slots:
    // The acceptance case of issue 25: LoRA r16 on q_proj,v_proj needs ~29 GiB on a 23.6 GiB card; per-layer
    // checkpointing alone fits (segments do not: 8 segments still need ~26 GiB).
    void llama8bLoraFirstStepFits()
    {
        const LoraSpec spec = lora({"q_proj", "v_proj"});
        const Model m = loraModel(sample(QStringLiteral("Llama-3.1-8B.json")), spec);
        const Config c = loraConfig(m, spec, "RTX 4090", 2048);
        const FitPlan plan = planToFit(m, c);
        print(plan);
        QVERIFY(!plan.fitsBefore);
        QVERIFY(plan.fits);
        QVERIFY(plan.sameGpu);
        QCOMPARE(plan.steps.size(), size_t(1));
        QVERIFY(plan.steps.front().kind == PlanStep::Kind::LayerCheckpoint);
        Config expect = c;
        expect.finetune.layerCheckpoint = true;
        const int64_t need = freshNeed(m, expect);
        QCOMPARE(plan.steps.front().needAfter, need);
        QVERIFY(need <= c.gpu.capacity);
        QCOMPARE(plan.steps.front().saving, freshNeed(m, c) - need);
    }

    void samplesFitOn4090_data()
    {
        QTest::addColumn<QString>("file");
        for (const char* f : {"Llama-3.1-8B.json", "Llama-3.2-3B.json", "Mistral-7B-v0.1.json",
                              "Phi-3-mini-4k-instruct.json", "Qwen2.5-7B.json", "gemma-2-9b.json", "gpt2.json"})
            QTest::newRow(f) << QString::fromLatin1(f);
    }
    void samplesFitOn4090()
    {
        QFETCH(QString, file);
        const LoraSpec spec = lora();
        const Model m = loraModel(sample(file), spec);
        const Config c = loraConfig(m, spec, "RTX 4090", 2048);
        const FitPlan plan = planToFit(m, c);
        print(plan);
        QVERIFY(plan.fits);
        QVERIFY(plan.sameGpu);
        QVERIFY(freshNeed(m, plan.config) <= plan.config.gpu.capacity);
        for (const PlanStep& s : plan.steps)
            QVERIFY2(s.saving > 0, s.summary.c_str());
    }

    // 70B with LoRA replicated (DDP) on four A100 80 GB: 141 GB of bf16 weights per GPU cannot fit; the plan
    // shards them.
    void llama70bOnFourA100()
    {
        const LoraSpec spec = lora();
        const Model m = loraModel(std::string(HEADROOM_TEST_DATA) + "/configs/Llama-3.1-70B.json", spec);
        Config c = loraConfig(m, spec, "A100 80 GB", 2048);
        c.gpus = 4;
        c.strategy = Strategy::DDP;
        const FitPlan plan = planToFit(m, c);
        print(plan);
        QVERIFY(!plan.fitsBefore);
        QVERIFY(plan.fits);
        QVERIFY(plan.sameGpu);
        QCOMPARE(plan.config.gpus, 4);
        QVERIFY(freshNeed(m, plan.config) <= plan.config.gpu.capacity);
    }

    // Sequence 65,536 on the 8B: nothing short of a shorter sequence fits one 4090; the plan names the longest
    // multiple of 128 that does, and one more multiple of 128 would not.
    void llama8bLongSequenceShortens()
    {
        const LoraSpec spec = lora({"q_proj", "v_proj"});
        const Model m = loraModel(sample(QStringLiteral("Llama-3.1-8B.json")), spec);
        const Config c = loraConfig(m, spec, "RTX 4090", 65536);
        const FitPlan plan = planToFit(m, c);
        print(plan);
        QVERIFY(plan.fits);
        QVERIFY(!plan.steps.empty());
        const PlanStep& last = plan.steps.back();
        QVERIFY(last.kind == PlanStep::Kind::ShorterSequence);
        QCOMPARE(last.value % 128, int64_t(0));
        Config longer = plan.config;
        const int seq = int(
            std::find_if(m.symbols.begin(), m.symbols.end(), [](const Symbol& s) { return s.name == "seq"; }) -
            m.symbols.begin());
        longer.symbols[size_t(seq)] = last.value + 128;
        QVERIFY(freshFitsWithRoom(m, plan.config));
        QVERIFY(!freshFitsWithRoom(m, longer));
    }

    // Full fine-tuning of gemma-2-9b on a 3 GiB card: nothing on it fits; the plan ends with the smallest
    // preset that holds what the cheaper steps leave, and a one-size-smaller preset would not.
    void largerGpuWhenNothingFits()
    {
        const Model m = loadModel(sample(QStringLiteral("gemma-2-9b.json")));
        Config c;
        c.symbols = m.defaultBindings();
        c.gpu = customGpu(int64_t(3) << 30);
        const FitPlan plan = planToFit(m, c);
        print(plan);
        QVERIFY(plan.fits);
        QVERIFY(!plan.sameGpu);
        QVERIFY(plan.steps.back().kind == PlanStep::Kind::LargerGpu);
        QCOMPARE(plan.config.gpu.name, plan.steps.back().name);
        QVERIFY(freshNeed(m, plan.config) <= plan.config.gpu.capacity);
        for (const GpuSpec& g : gpuPresets()) {
            if (g.capacity >= plan.config.gpu.capacity)
                continue;
            Config smaller = plan.config;
            smaller.gpu = g;
            QVERIFY2(freshNeed(m, smaller) > g.capacity, g.name.c_str());
        }
    }

    // Full fine-tuning of an 8B in pure bf16 with AdamW (16 bytes a parameter: ~120 GiB) on a 4090: LoRA
    // with PEFT's defaults is in the plan, and the plan's configuration, evaluated afresh on the model loaded
    // with those adapters (the same load as --lora r=8,alpha=8), fits. A ResNet has no Linear PEFT targets:
    // no LoRA step, and the source says so with a null model.
    void fullFineTuningSwitchesToLora_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<bool>("loraApplies");
        // PEFT's targets: the model type's default, or all-linear where PEFT lists none (peft/utils/constants.py
        // at 00073fe has no qwen3_moe, qwen2_moe, olmoe)
        QTest::addColumn<QString>("targets");
        QTest::newRow("Llama-3.1-8B") << QString::fromStdString(sample(QStringLiteral("Llama-3.1-8B.json"))) << true
                                      << QString();
        QTest::newRow("Qwen2.5-7B") << QString::fromStdString(sample(QStringLiteral("Qwen2.5-7B.json"))) << true
                                    << QString();
        QTest::newRow("Qwen3-30B-A3B (qwen3_moe)")
            << QStringLiteral(HEADROOM_TEST_DATA "/moe/Qwen3-30B-A3B.config.json") << true
            << QStringLiteral("all-linear");
        QTest::newRow("Qwen1.5-MoE (qwen2_moe)")
            << QStringLiteral(HEADROOM_TEST_DATA "/moe/Qwen1.5-MoE-A2.7B.config.json") << true
            << QStringLiteral("all-linear");
        QTest::newRow("resnet50") << QStringLiteral(HEADROOM_TEST_DATA "/resnet50.onnx") << false << QString();
    }
    void fullFineTuningSwitchesToLora()
    {
        QFETCH(QString, path);
        QFETCH(bool, loraApplies);
        QFETCH(QString, targets);
        const std::string file = path.toStdString();
        const Model m = loadModel(file);
        Config c;
        c.symbols = m.defaultBindings();
        for (size_t i = 0; i < m.symbols.size(); ++i)
            if (m.symbols[i].name == "seq")
                c.symbols[i] = 2048;
        c.dtype = DtypePolicy::BF16;
        c.optimizer = Optimizer::AdamW;
        c.gpu = *findGpu("RTX 4090");
        const LoraVariantSource source = peftDefaultLoraVariant(file, {});
        const FitPlan plan = planToFit(m, c, nullptr, &source);
        print(plan);
        const bool hasLora = std::any_of(plan.steps.begin(), plan.steps.end(),
                                         [](const PlanStep& s) { return s.kind == PlanStep::Kind::Lora; });
        QCOMPARE(hasLora, loraApplies);
        QCOMPARE(source().model != nullptr, loraApplies);
        if (!loraApplies)
            return;
        QVERIFY(!plan.fitsBefore);
        QVERIFY(plan.fits);
        QVERIFY(plan.sameGpu);
        QCOMPARE(plan.config.finetune.lora.r, 8);
        const auto step = std::find_if(plan.steps.begin(), plan.steps.end(),
                                       [](const PlanStep& s) { return s.kind == PlanStep::Kind::Lora; });
        LoraSpec peftDefaults;
        peftDefaults.r = 8;
        peftDefaults.alpha = 8;
        if (!targets.isEmpty())
            peftDefaults.targets = {targets.toStdString()};
        QCOMPARE(plan.config.finetune.lora.targets, peftDefaults.targets);
        // the sentence says which targets: PEFT's defaults, or every linear layer where PEFT has none
        QCOMPARE(QString::fromStdString(planStepText(*step, c.strategy)).contains(QStringLiteral("every linear layer")),
                 !targets.isEmpty());
        QCOMPARE(peftDefaultTargets(m.info.modelType).empty(), !targets.isEmpty());
        const Model adapted = loraModel(file, peftDefaults);
        QVERIFY(freshNeed(adapted, plan.config) <= plan.config.gpu.capacity);
        QVERIFY(freshNeed(m, c) > c.gpu.capacity);
    }

    // Already fitting: no steps.
    void fitsAlready()
    {
        const LoraSpec spec = lora();
        const Model m = loraModel(sample(QStringLiteral("gpt2.json")), spec);
        const Config c = loraConfig(m, spec, "H100", 512);
        const FitPlan plan = planToFit(m, c);
        print(plan);
        QVERIFY(plan.fitsBefore);
        QVERIFY(plan.steps.empty());
    }
};

QTEST_GUILESS_MAIN(TestFitPlan)
#include "tst_fitplan.moc"
