// One question, one answer (issue 45): for the shipped models and config.json samples, the report the CLI
// builds is what every surface says. The plan's sentence is core's (headroom::planText) in the CLI's text,
// the JSON's plan.text, the GUI's banner (its English strings) and the PDF; the verdict and the need are the
// same figures; a plan never stops where the report itself would not say "fits" with room to spare; and no
// tip says "fits" for a batch above the safe maximum.
#include "languageservice.h"
#include "pdfreport.h"
#include "plantext.h"
#include "servingstate.h"
#include "verdict.h"

#include "headroom/base/format.h"
#include "headroom/hardware/gpus.h"
#include "headroom/hardware/multigpu.h"
#include "headroom/import/batch.h"
#include "headroom/load/loader.h"
#include "headroom/report/report.h"
#include "headroom/serving/serve_model.h"

#include <QLocale>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

using namespace headroom;

namespace {

QString cliPath() { return QStringLiteral(HEADROOM_BINARY_DIR "/app/cli/headroom-cli"); }

// The CLI's own flags for a row, so the test asks the question the way a user does.
struct Question
{
    QString model;
    QStringList flags;
};

// The report as headroom-cli builds it for these flags (main.cpp: load, bind, the LoRA variant for the plan).
Report cliReport(const Model& model, const QString& file, const Config& config)
{
    ReportOptions ro;
    if (config.mode == Mode::Train && !config.finetune.lora.active())
        ro.loraVariant = peftDefaultLoraVariant(file.toStdString(), {});
    return buildReport(model, config, ro);
}

QString runCli(const QStringList& args)
{
    QProcess p;
    p.start(cliPath(), args);
    if (!p.waitForFinished(120000))
        return QStringLiteral("<timed out>");
    return QString::fromUtf8(p.readAllStandardOutput());
}

// pdftotext's ligatures and line breaks away, so a sentence wrapped over two lines compares as one.
QString pdfText(const QString& pdf)
{
    QProcess p;
    p.start(QStringLiteral("pdftotext"), {pdf, QStringLiteral("-")});
    if (!p.waitForFinished(60000))
        return {};
    QString t = QString::fromUtf8(p.readAllStandardOutput());
    t.replace(QChar(0xfb01), QStringLiteral("fi")).replace(QChar(0xfb02), QStringLiteral("fl"));
    t.replace(QChar(0xfb00), QStringLiteral("ff"));
    return t.simplified();
}

} // namespace

class TestOneReport : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
        QVERIFY2(QFileInfo::exists(cliPath()), qPrintable(cliPath()));
    }
    void everySurfaceSaysThePlan_data();
    void everySurfaceSaysThePlan();
    void planStopsWhereTheReportFits_data() { everySurfaceSaysThePlan_data(); }
    void planStopsWhereTheReportFits();
    void batchTipNeverAboveSafeMax_data();
    void batchTipNeverAboveSafeMax();
    void optimizerStepPeakIsNotActivations();
    void freezeTipNamesTheLayers();
    void servedTasksSayWhatTheCliSays_data();
    void servedTasksSayWhatTheCliSays();
};

void TestOneReport::everySurfaceSaysThePlan_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("gpu"); // a preset, or a capacity in GiB
    QTest::addColumn<int>("batch");   // 0: the model's default
    const QString data = QStringLiteral(HEADROOM_TEST_DATA "/");
    const QString samples = QStringLiteral(HEADROOM_SOURCE_DIR "/resources/samples/");
    // The case: Llama-3.1-8B full fine-tuning on a 4090 (the PDF used to say "Nothing fits this GPU").
    QTest::newRow("llama-3.1-8b 4090") << samples + QStringLiteral("Llama-3.1-8B.json") << QStringLiteral("RTX 4090")
                                       << 1;
    QTest::newRow("qwen2.5-7b 4090") << samples + QStringLiteral("Qwen2.5-7B.json") << QStringLiteral("RTX 4090") << 1;
    QTest::newRow("gpt2 4090") << samples + QStringLiteral("gpt2.json") << QStringLiteral("RTX 4090") << 64;
    QTest::newRow("llama-70b a100") << data + QStringLiteral("configs/Llama-3.1-70B.json") << QStringLiteral("a100-80")
                                    << 1;
    QTest::newRow("mixtral 4090") << data + QStringLiteral("moe/Mixtral-8x7B-v0.1.config.json")
                                  << QStringLiteral("RTX 4090") << 1;
    for (const char* onnx : {"resnet18.onnx", "resnet50.onnx", "vgg16.onnx", "tiny_gpt.onnx", "bert_like.onnx",
                             "mobilenet_v2.onnx", "squeezenet1_1.onnx"}) {
        QTest::newRow(qPrintable(QStringLiteral("%1 4090").arg(QLatin1String(onnx))))
            << data + QLatin1String(onnx) << QStringLiteral("RTX 4090") << 0;
        // A small card, so that the plans have steps.
        QTest::newRow(qPrintable(QStringLiteral("%1 3 GiB").arg(QLatin1String(onnx))))
            << data + QLatin1String(onnx) << QStringLiteral("3") << 256;
    }
}

void TestOneReport::everySurfaceSaysThePlan()
{
    QFETCH(QString, file);
    QFETCH(QString, gpu);
    QFETCH(int, batch);
    const bool capacity = gpu.toInt() > 0;
    QStringList flags = {file};
    flags << (capacity ? QStringLiteral("--capacity") : QStringLiteral("--gpu"))
          << (capacity ? gpu + QStringLiteral("GiB") : gpu);
    LoadOptions load;
    if (batch > 0) {
        flags << QStringLiteral("--batch") << QString::number(batch);
        load.symbolValues.emplace_back("batch", batch);
    }
    const Model model = loadModel(file.toStdString(), load);
    Config config;
    config.symbols = model.defaultBindings();
    if (batch > 0 && model.batchSymbol >= 0)
        config.symbols[size_t(model.batchSymbol)] = batch;
    config.gpu = capacity ? customGpu(int64_t{gpu.toInt()} << 30) : *findGpu(gpu.toStdString());
    const Report report = cliReport(model, file, config);
    const std::string plan = planText(report.fitPlan);

    // The plan's "fits before" is the report's verdict.
    QCOMPARE(report.fitPlan.fitsBefore, report.fit.fitsSafely);
    // The GUI's words are core's (English, no catalogue).
    QCOMPARE(gui::planText(report.fitPlan, Units::IEC), QString::fromStdString(plan));
    // The JSON's.
    const nlohmann::json j = toJson(model, report);
    QCOMPARE(QString::fromStdString(j["plan"]["text"].get<std::string>()), QString::fromStdString(plan));
    // The CLI's text, from its own process.
    const QString cli = runCli(flags);
    QVERIFY2(cli.contains(QStringLiteral("fit on")) || cli.contains(QStringLiteral("Fits on")) ||
                 cli.contains(QStringLiteral("fit on ")),
             qPrintable(cli.right(400)));
    if (!plan.empty())
        QVERIFY2(cli.contains(QString::fromStdString(plan)), qPrintable(QString::fromStdString(plan)));
    else
        QVERIFY(!cli.contains(QStringLiteral("To fit:")) && !cli.contains(QStringLiteral("Closest plan")));
    // Every tip in core's words, the CLI's Try: line and the banner's (its English strings).
    for (const Advice& a : report.advice)
        QCOMPARE(gui::adviceText(a, model, Units::IEC), QString::fromStdString(adviceText(a)));
    if (!report.advice.empty() && !report.fit.fits && !report.fit.sizesUnknown)
        QVERIFY2(cli.contains(QStringLiteral("Try: ") + QString::fromStdString(adviceText(report.advice.front()))),
                 qPrintable(cli.right(600)));
    // The banner: the plan, where there is one, and the verdict's need.
    gui::VerdictBanner banner;
    banner.setReport(model, report, Units::IEC);
    if (!plan.empty() && !report.fitPlan.steps.empty())
        QVERIFY2(banner.text().contains(QString::fromStdString(plan)), qPrintable(banner.text()));
    // The PDF of the CLI's --pdf, from the same flags.
    if (QStandardPaths::findExecutable(QStringLiteral("pdftotext")).isEmpty())
        QSKIP("poppler-utils (pdftotext) is not installed");
    QTemporaryDir dir;
    const QString pdf = dir.filePath(QStringLiteral("r.pdf"));
    runCli(QStringList(flags) << QStringLiteral("--pdf") << pdf);
    QVERIFY(QFileInfo::exists(pdf));
    const QString text = pdfText(pdf);
    if (!plan.empty())
        QVERIFY2(text.contains(QString::fromStdString(plan).simplified()), qPrintable(QString::fromStdString(plan)));
    // The PDF written by the GUI library from the report itself says the same.
    const QString pdf2 = dir.filePath(QStringLiteral("g.pdf"));
    PdfReportOptions options;
    options.gpuTable = false;
    QString error;
    QVERIFY2(writePdfReport(pdf2, model, report, &error, options), qPrintable(error));
    if (!plan.empty())
        QVERIFY(pdfText(pdf2).contains(QString::fromStdString(plan).simplified()));
}

// Where a plan says "fits", the configuration it ends on is, judged afresh, a fit with room to spare
// (Fit::fitsSafely and not at capacity: no "0 B to spare" plans).
void TestOneReport::planStopsWhereTheReportFits()
{
    QFETCH(QString, file);
    QFETCH(QString, gpu);
    QFETCH(int, batch);
    LoadOptions load;
    if (batch > 0)
        load.symbolValues.emplace_back("batch", batch);
    const Model model = loadModel(file.toStdString(), load);
    Config config;
    config.symbols = model.defaultBindings();
    if (batch > 0 && model.batchSymbol >= 0)
        config.symbols[size_t(model.batchSymbol)] = batch;
    config.gpu = gpu.toInt() > 0 ? customGpu(int64_t{gpu.toInt()} << 30) : *findGpu(gpu.toStdString());
    const Report report = cliReport(model, file, config);
    const FitPlan& p = report.fitPlan;
    if (p.fitsBefore || !p.fits || p.steps.empty())
        return;
    QVERIFY(p.capacity - p.needAfter > 0);
    const Config& after = p.config;
    const bool lora = after.finetune.lora.r > 0 && config.finetune.lora.r <= 0;
    LoadOptions withLora = load;
    if (lora)
        withLora.lora = after.finetune.lora;
    const Model changed = lora ? loadModel(file.toStdString(), withLora) : Model{};
    const Model& m = lora ? changed : model;
    const EnginePlan plan = makePlan(m, after);
    const Evaluation e = evaluate(plan, after);
    if (after.gpus > 1 && after.strategy != Strategy::Single) {
        const Fit f = computeClusterFit(plan, after, e, evaluateCluster(plan, after));
        QVERIFY(f.fits && !f.atCapacity);
    } else {
        const Fit f = computeFitOnly(plan, after, e);
        QVERIFY2(f.fitsSafely && !f.atCapacity, qPrintable(QString::fromStdString(planText(p))));
        QCOMPARE(f.needed, p.needAfter);
    }
}

void TestOneReport::batchTipNeverAboveSafeMax_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<int>("batch");
    QTest::addColumn<int>("gib");
    QTest::newRow("resnet50") << QStringLiteral(HEADROOM_TEST_DATA "/resnet50.onnx") << 512 << 24;
    QTest::newRow("vgg16") << QStringLiteral(HEADROOM_TEST_DATA "/vgg16.onnx") << 2048 << 24;
    QTest::newRow("tiny_gpt") << QStringLiteral(HEADROOM_TEST_DATA "/tiny_gpt.onnx") << 1024 << 8;
    QTest::newRow("bert_like") << QStringLiteral(HEADROOM_TEST_DATA "/bert_like.onnx") << 4096 << 24;
}

// "Try: batch 280 (fits)" above a safe maximum of 278 was two answers: the tip is the safe maximum.
void TestOneReport::batchTipNeverAboveSafeMax()
{
    QFETCH(QString, file);
    QFETCH(int, batch);
    QFETCH(int, gib);
    const Model model = loadModel(file.toStdString());
    Config config;
    config.symbols = model.defaultBindings();
    config.symbols[size_t(model.batchSymbol)] = batch;
    config.gpu = customGpu(int64_t{gib} << 30);
    const Report report = buildReport(model, config);
    QVERIFY(!report.fit.fitsSafely);
    bool seen = false;
    for (const Advice& a : report.advice) {
        if (a.kind != Advice::Kind::Batch)
            continue;
        seen = true;
        QCOMPARE(batchOf(model, a.changed), report.fit.maxBatch);
        QVERIFY(a.fitsAfter);
    }
    QVERIFY(seen || report.fit.maxBatch == 0);
}

// Llama-3.1-8B full fine-tuning peaks in the optimizer step: what is live beside the state is the step's own
// temporaries (29.9 GiB, one fp32 copy of the parameters), not activations; the parts add up to the peak.
void TestOneReport::optimizerStepPeakIsNotActivations()
{
    const QString file = QStringLiteral(HEADROOM_SOURCE_DIR "/resources/samples/Llama-3.1-8B.json");
    LoadOptions load;
    load.symbolValues = {{"batch", 1}, {"seq", 128}};
    const Model model = loadModel(file.toStdString(), load);
    Config config;
    config.symbols = model.defaultBindings();
    config.gpu = *findGpu("RTX 4090");
    const Report report = buildReport(model, config, {.sweep = false});
    const Evaluation& e = report.evaluation;
    QVERIFY(e.timeline[size_t(e.peakStep)].phase == Phase::Optimizer);
    int64_t total = 0, step = 0, activations = -1, input = -1;
    for (const PeakPart& p : peakParts(e)) {
        total += p.bytes;
        if (p.kind == PeakPart::Kind::OptimizerStep)
            step = p.bytes;
        if (p.kind == PeakPart::Kind::Activations)
            activations = p.bytes;
        if (p.kind == PeakPart::Kind::Input)
            input = p.bytes;
    }
    QCOMPARE(total, e.memory.peak);
    QCOMPARE(activations, e.memory.activationsPeak);
    QCOMPARE(input, e.memory.input);
    // 8,030,261,248 parameters x 4 bytes: foreach Adam's one temporary per parameter
    QCOMPARE(step, int64_t{8030261248} * 4);
    QCOMPARE(toJson(model, report)["memory"]["optimizer_step_temporaries"].get<int64_t>(), step);
}

// A 32-layer Llama's freeze tip names its decoder layers (not "the first 1 of 2 blocks (model)"), and a list of
// any length stays two names.
void TestOneReport::freezeTipNamesTheLayers()
{
    const QString file = QStringLiteral(HEADROOM_SOURCE_DIR "/resources/samples/Llama-3.1-8B.json");
    LoadOptions load;
    load.symbolValues = {{"batch", 1}, {"seq", 128}};
    const Model model = loadModel(file.toStdString(), load);
    Config config;
    config.symbols = model.defaultBindings();
    config.gpu = *findGpu("RTX 4090");
    const Report report = buildReport(model, config);
    bool seen = false;
    for (const Advice& a : report.advice)
        if (a.kind == Advice::Kind::Freeze) {
            seen = true;
            QCOMPARE(QString::fromStdString(a.summary),
                     QStringLiteral("freeze the first 16 of 32 blocks (layers.0 to layers.15)"));
            QCOMPARE(a.changed.freeze.size(), size_t{16});
        }
    QVERIFY(seen);
}

QTEST_MAIN(TestOneReport)
#include "tst_onereport.moc"

// The Generate and Serve tasks of a config: the window's ServingState (the banner's verdict, the PDF's serving
// report) plans what headroom-cli --task generate / serve prints, at the engines' defaults on the H100: vLLM's
// concurrency, context and TP are the CLI line's, generate()'s peak and max batch too, and the PDF is that plan's
// report (the serving verdict, no training "what makes it fit").
void TestOneReport::servedTasksSayWhatTheCliSays_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<bool>("vllm");
    for (const char* f :
         {"/resources/samples/Llama-3.1-8B.json", "/resources/samples/gpt2.json", "/resources/samples/Qwen2.5-7B.json",
          "/tests/data/moe/Qwen3-30B-A3B.config.json", "/tests/data/moe/Mixtral-8x7B-v0.1.config.json"}) {
        const QString file = QStringLiteral(HEADROOM_SOURCE_DIR) + QLatin1String(f);
        QTest::newRow(qPrintable(QFileInfo(file).fileName() + QStringLiteral(" serve"))) << file << true;
        QTest::newRow(qPrintable(QFileInfo(file).fileName() + QStringLiteral(" generate"))) << file << false;
    }
}

void TestOneReport::servedTasksSayWhatTheCliSays()
{
    QFETCH(QString, file);
    QFETCH(bool, vllm);
    gui::ServingState state;
    QString error;
    QVERIFY2(state.loadConfig(file, &error), qPrintable(error));
    state.setEngine(vllm ? gui::ServingEngine::Vllm : gui::ServingEngine::HfGenerate);
    const QString cli =
        runCli({file, QStringLiteral("--task"), vllm ? QStringLiteral("serve") : QStringLiteral("generate")}).trimmed();
    QVERIFY2(!cli.isEmpty(), qPrintable(file));
    gui::VerdictBanner banner;
    banner.setServing(state, Units::IEC);
    const QString verdict = state.verdictText(Units::IEC);
    QVERIFY(banner.text().startsWith(verdict));
    if (state.verdict() == gui::ServingState::Verdict::Unknown) {
        // "cannot tell", naming the same missing fields
        QVERIFY2(cli.startsWith(QStringLiteral("cannot tell")), qPrintable(cli));
        QVERIFY(verdict.startsWith(QStringLiteral("Cannot tell")));
        QCOMPARE(verdict.section(QStringLiteral(" lacks "), 1), cli.section(QStringLiteral(" lacks "), 1));
        return;
    }
    if (vllm) {
        const headroom::VllmPlan& p = *state.snapshot().vllm;
        // "Serves N concurrent Lk-token requests on GPU (TP t)" is the CLI's "serves N ... (TP t, vLLM v): ...";
        // "Does not start on GPU (TP t): why" its "does not start on GPU (TP t, vLLM v): why"
        const bool starts = p.starts && *p.starts;
        QString head = starts ? verdict : verdict.section(QStringLiteral("): "), 0, 0) + QLatin1Char(')');
        head[0] = head[0].toLower();
        head.chop(1);
        QVERIFY2(cli.startsWith(head + QStringLiteral(", vLLM")), qPrintable(head + QStringLiteral("\n") + cli));
        if (!starts)
            QVERIFY2(cli.contains(QString::fromStdString(p.reason)), qPrintable(cli));
    } else {
        const headroom::HfGeneratePlan& p = *state.snapshot().hf;
        // the same peak and max batch, and the same verdict
        QVERIFY2(cli.contains(QStringLiteral("peak %1").arg(gui::bytesText(p.peak, Units::IEC))), qPrintable(cli));
        QVERIFY2(cli.contains(QStringLiteral("max batch %1").arg(p.maxBatch)), qPrintable(cli));
        QVERIFY2(verdict.contains(QStringLiteral("peak %1").arg(gui::bytesText(p.peak, Units::IEC))),
                 qPrintable(verdict));
        QVERIFY(verdict.contains(QStringLiteral("max batch %1").arg(p.maxBatch)));
        QCOMPARE(cli.startsWith(QStringLiteral("fits")), verdict.startsWith(QStringLiteral("generate() fits")));
    }
    if (QStandardPaths::findExecutable(QStringLiteral("pdftotext")).isEmpty())
        QSKIP("poppler-utils (pdftotext) is not installed");
    const Model model = loadModel(file.toStdString());
    Config config;
    config.symbols = model.defaultBindings();
    config.mode = Mode::Infer;
    QTemporaryDir dir;
    const QString pdf = dir.filePath(QStringLiteral("s.pdf"));
    PdfReportOptions options;
    options.serving = &state;
    options.servingOnly = true;
    QVERIFY2(writePdfReport(pdf, model, buildReport(model, config), &error, options), qPrintable(error));
    const QString text = pdfText(pdf);
    QVERIFY2(text.contains(verdict.simplified()), qPrintable(text.left(600)));
    QVERIFY(!text.contains(QStringLiteral("What makes it fit")));
    QVERIFY(!text.contains(QStringLiteral("Does not fit on")));
    QVERIFY(!text.contains(QStringLiteral("Fits on")));
}
