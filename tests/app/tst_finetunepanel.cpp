// The fine-tuning panel as a new user meets it: open Llama-3.1-8B's config.json, pick the QLoRA recipe on
// an RTX 4090 at seq 2048, read the verdict; switch to LoRA in bf16 and see it stop fitting. Every figure
// must equal core's report for the configuration the CLI builds from the same flags.
#include "configundo.h"
#include "controlspanel.h"
#include "finetunepanel.h"
#include "logslider.h"
#include "mainwindow.h"
#include "modelinfopanel.h"
#include "scalingpage.h"
#include "session.h"
#include "verdict.h"

#include "headroom/hardware/gpus.h"
#include "headroom/load/loader.h"
#include "headroom/memory/finetune_summary.h"
#include "headroom/report/report.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using namespace gui;
using namespace headroom;

namespace {
const QString kLlama = QStringLiteral(HEADROOM_SOURCE_DIR "/resources/samples/Llama-3.1-8B.json");
const std::string kLlamaPath = HEADROOM_SOURCE_DIR "/resources/samples/Llama-3.1-8B.json";

bool waitForModel(MainWindow& w, const std::function<void()>& action)
{
    QSignalSpy loaded(&w, &MainWindow::modelLoaded);
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    action();
    return QTest::qWaitFor([&] { return !loaded.isEmpty() || !failed.isEmpty(); }, 120000) && !loaded.isEmpty();
}

bool waitForReport(MainWindow& w)
{
    return QTest::qWaitFor([&] { return w.session()->isComplete() && !w.session()->isPending(); }, 120000);
}

void selectData(QComboBox* box, const QVariant& data)
{
    const int i = box->findData(data);
    QVERIFY(i >= 0);
    box->setCurrentIndex(i);
}

// What headroom-cli builds from `--gpu "RTX 4090" --set seq=2048` plus the fine-tuning flags
// (app/cli/main.cpp: LoadOptions::lora, loraFreezePatterns, the preset found by name).
Report cliReport(const FineTune& ft, DtypePolicy dtype, Optimizer optimizer, Model& model)
{
    LoadOptions load;
    load.symbolValues.emplace_back("seq", 2048);
    load.lora = ft.lora;
    model = loadModel(kLlamaPath, load);
    Config c;
    c.finetune = ft;
    c.dtype = dtype;
    c.optimizer = optimizer;
    c.gpu = *findGpu("RTX 4090");
    if (ft.lora.active())
        for (const std::string& p : adapterFreezePatterns(ft.lora))
            c.freeze.push_back(p);
    c.symbols.resize(model.symbols.size(), 1);
    for (size_t i = 0; i < model.symbols.size(); ++i)
        c.symbols[i] = model.symbols[i].name == "seq" ? 2048 : 1;
    return buildReport(model, c);
}

FineTune qloraPaper()
{
    // --recipe qlora-paper (app/cli/options.cpp)
    FineTune f;
    f.lora = LoraSpec{64, 16, 0.1, {"all-linear"}};
    f.quant = Quant::NF4;
    f.doubleQuant = true;
    f.computeDtype = "bf16";
    f.computeBytes = 2;
    f.layerCheckpoint = true;
    return f;
}
} // namespace

class TestFineTunePanel : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_settings;

    // The window's figures equal core's for the window's own configuration (what --json prints), and
    // the numbers equal the CLI's for the equivalent flags.
    void compare(MainWindow& w, const Report& cli, const Model& cliModel)
    {
        const ModelPtr model = w.session()->model();
        QVERIFY(model);
        // The batch sweep is computed while its tab is shown (issue 16): look at it, as a user would.
        w.tabs()->setCurrentWidget(w.scalingPage());
        QVERIFY(QTest::qWaitFor([&] { return w.session()->hasSweep(); }, 120000));
        const Report& shown = w.session()->report();
        const Report expected = buildReport(*model, w.controls()->config());
        QCOMPARE(QString::fromStdString(toJson(*model, shown).dump()),
                 QString::fromStdString(toJson(*model, expected).dump()));
        QCOMPARE(shown.fit.fits, cli.fit.fits);
        QCOMPARE(shown.fit.needed, cli.fit.needed);
        QCOMPARE(shown.fit.maxBatch, cli.fit.maxBatch);
        QCOMPARE(shown.evaluation.memory.peak, cli.evaluation.memory.peak);
        const FineTuneSummary a = summarizeFineTune(*model, shown.config, shown.evaluation);
        const FineTuneSummary b = summarizeFineTune(cliModel, cli.config, cli.evaluation);
        QCOMPARE(a.method, b.method);
        QCOMPARE(a.trainableParams, b.trainableParams);
        QCOMPARE(a.frozenBytes, b.frozenBytes);
        QCOMPARE(a.adapterBytes, b.adapterBytes);
        QCOMPARE(a.adapterGradientBytes, b.adapterGradientBytes);
        QCOMPARE(a.adapterOptimizerBytes, b.adapterOptimizerBytes);
        QCOMPARE(a.dequantTransientBytes, b.dequantTransientBytes);
        // The banner says where the fine-tuning memory goes.
        const QString banner = w.verdict()->text();
        QVERIFY2(banner.contains(fineTuneText(*model, shown, Units::IEC)), qPrintable(banner));
        QCOMPARE(w.verdict()->fits(), cli.fit.fits);
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_settings.isValid());
        useSettingsDirectory(m_settings.path());
        QCoreApplication::setOrganizationName(QStringLiteral("Headroom"));
        QCoreApplication::setApplicationName(QStringLiteral("Headroom"));
    }

    void recipes_data()
    {
        QTest::addColumn<bool>("qlora");
        QTest::addColumn<int>("rank");
        QTest::addColumn<double>("alpha");
        QTest::addColumn<double>("dropout");
        QTest::addColumn<QStringList>("targets");
        QTest::addColumn<int>("quant");
        QTest::addColumn<bool>("layerCheckpoint");
        // LoraConfig() defaults; the QLoRA paper's section 4 (as the CLI's --recipe)
        QTest::newRow("peft-defaults") << false << 8 << 8.0 << 0.0 << QStringList{} << int(Quant::None) << false;
        QTest::newRow("qlora-paper") << true << 64 << 16.0 << 0.1 << QStringList{QStringLiteral("all-linear")}
                                     << int(Quant::NF4) << true;
    }
    void recipes()
    {
        QFETCH(bool, qlora);
        QFETCH(int, rank);
        QFETCH(double, alpha);
        QFETCH(double, dropout);
        QFETCH(QStringList, targets);
        QFETCH(int, quant);
        QFETCH(bool, layerCheckpoint);
        FineTunePanel panel;
        QSignalSpy changed(&panel, &FineTunePanel::changed);
        QSignalSpy optimizer(&panel, &FineTunePanel::optimizerRequested);
        QSignalSpy precision(&panel, &FineTunePanel::precisionRequested);
        (qlora ? panel.qloraButton() : panel.peftButton())->click();
        QCOMPARE(changed.size(), 1); // one recompute (and at most one reload) per click
        const FineTune f = panel.fineTune();
        QCOMPARE(f.lora.r, rank);
        QCOMPARE(f.lora.alpha, alpha);
        QCOMPARE(f.lora.dropout, dropout);
        QStringList got;
        for (const std::string& t : f.lora.targets)
            got << QString::fromStdString(t);
        QCOMPARE(got, targets);
        QCOMPARE(int(f.quant), quant);
        QCOMPARE(f.layerCheckpoint, layerCheckpoint);
        QCOMPARE(optimizer.size(), qlora ? 1 : 0);
        QCOMPARE(precision.size(), qlora ? 1 : 0);
        if (qlora) {
            QVERIFY(f == qloraPaper());
            QVERIFY(optimizer.first().first().value<Optimizer>() == Optimizer::PagedAdamW);
            // qlora.py's --bf16 (TrainingArguments(bf16=True)): the recipe sets the compute precision too.
            QVERIFY(precision.first().first().value<DtypePolicy>() == DtypePolicy::AmpBF16);
        }
    }

    void methodsGiveValidConfigs()
    {
        // Full fine-tuning never carries adapters or quantization; LoRA never quantization (the CLI refuses
        // --quant without --lora); int8 ignores the 4-bit-only options.
        FineTunePanel panel;
        panel.qloraButton()->click();
        panel.setMethod(FineTunePanel::Method::Full);
        QCOMPARE(panel.fineTune().lora.r, 0);
        QVERIFY(panel.fineTune().quant == Quant::None);
        QVERIFY(panel.fineTune().layerCheckpoint);
        panel.setMethod(FineTunePanel::Method::LoRA);
        QCOMPARE(panel.fineTune().lora.r, 64);
        QVERIFY(panel.fineTune().quant == Quant::None);
        QVERIFY(!panel.quantBox()->isEnabled());
        panel.setMethod(FineTunePanel::Method::QLoRA);
        selectData(panel.quantBox(), int(Quant::Int8));
        QVERIFY(panel.fineTune().quant == Quant::Int8);
        QVERIFY(!panel.fineTune().doubleQuant);
    }

    // The adapters' dtype box is --lora dtype=: PEFT's fp32 by default and after either recipe; it survives a
    // restart.
    void adapterDtype_data()
    {
        QTest::addColumn<QString>("dtype");
        QTest::newRow("fp32") << QStringLiteral("fp32");
        QTest::newRow("bf16") << QStringLiteral("bf16");
        QTest::newRow("fp16") << QStringLiteral("fp16");
    }
    void adapterDtype()
    {
        QFETCH(QString, dtype);
        QSettings s;
        {
            FineTunePanel panel;
            panel.setMethod(FineTunePanel::Method::LoRA);
            QCOMPARE(QString::fromStdString(panel.fineTune().lora.dtype), QStringLiteral("fp32"));
            auto* box = panel.findChild<QComboBox*>(QStringLiteral("adapterDtype"));
            QVERIFY(box);
            QSignalSpy changed(&panel, &FineTunePanel::changed);
            selectData(box, dtype);
            QCOMPARE(changed.size(), dtype == QStringLiteral("fp32") ? 0 : 1);
            QCOMPARE(QString::fromStdString(panel.fineTune().lora.dtype), dtype);
            panel.saveSettings(s);
        }
        FineTunePanel restored;
        restored.restoreSettings(s);
        QCOMPARE(QString::fromStdString(restored.fineTune().lora.dtype), dtype);
        restored.peftButton()->click();
        QCOMPARE(QString::fromStdString(restored.fineTune().lora.dtype), QStringLiteral("fp32"));
        s.remove(QStringLiteral("finetune"));
    }

    void settingsPersist()
    {
        QSettings s;
        {
            FineTunePanel panel;
            panel.qloraButton()->click();
            panel.saveSettings(s);
        }
        FineTunePanel restored;
        restored.restoreSettings(s);
        QVERIFY(restored.fineTune() == qloraPaper());
        s.remove(QStringLiteral("finetune"));
    }

    void newUserLlama()
    {
        QSettings().clear(); // a model's settings are kept per model: start from none
        MainWindow w;
        w.setErrorHandler([](const QString& m) { QFAIL(qPrintable(m)); });
        ControlsPanel* controls = w.controls();
        selectData(controls->findChild<QComboBox*>(QStringLiteral("gpuCombo")),
                   QStringLiteral("GeForce RTX 4090 24 GB"));
        QVERIFY(waitForModel(w, [&] { w.openFile(kLlama); }));
        w.setTask(Task::FineTune);
        LogSlider* seq = controls->findChild<LogSlider*>(QStringLiteral("symbol_seq"));
        QVERIFY(seq);
        seq->setValue(2048);
        // The recipe adds adapters: the model is rebuilt on the loader, keeping seq 2048.
        QVERIFY(waitForModel(w, [&] { controls->fineTunePanel()->qloraButton()->click(); }));
        QCOMPARE(controls->symbolSlider(w.session()->model()->symbolIndex("seq"))->value(), 2048);
        QVERIFY(waitForReport(w));
        Model cliModel;
        // headroom-cli Llama-3.1-8B.json --recipe qlora-paper --gpu "RTX 4090" --set seq=2048 (amp-bf16)
        QVERIFY(w.session()->config().dtype == DtypePolicy::AmpBF16);
        Report cli = cliReport(qloraPaper(), DtypePolicy::AmpBF16, Optimizer::PagedAdamW, cliModel);
        compare(w, cli, cliModel);
        // ... with --dtype bf16 (docs/FINETUNING.md's table): it fits, and the banner gives the max batch.
        selectData(controls->findChild<QComboBox*>(QStringLiteral("dtypeCombo")), int(DtypePolicy::BF16));
        QVERIFY(waitForReport(w));
        cli = cliReport(qloraPaper(), DtypePolicy::BF16, Optimizer::PagedAdamW, cliModel);
        QVERIFY2(cli.fit.fits, "the CLI says the QLoRA recipe fits in bf16");
        compare(w, cli, cliModel);
        QVERIFY(w.verdict()->text().contains(QStringLiteral("max batch %1").arg(cli.fit.maxBatch)));
        // LoRA in bf16, same adapters: the base weights take 2 bytes instead of ~0.52, no reload (the
        // adapters did not change). Whether that still fits is the CLI's call.
        controls->fineTunePanel()->setMethod(FineTunePanel::Method::LoRA);
        QVERIFY(waitForReport(w));
        FineTune lora = qloraPaper();
        lora.quant = Quant::None;
        lora.doubleQuant = false;
        cli = cliReport(lora, DtypePolicy::BF16, Optimizer::PagedAdamW, cliModel);
        compare(w, cli, cliModel);
        // ... and without the recipe's per-layer checkpointing (docs/FINETUNING.md's LoRA column) it does
        // not: `--lora r=64,alpha=16,dropout=0.1,targets=all-linear --dtype bf16 --optimizer adamw`.
        controls->fineTunePanel()->layerCheckpointBox()->setChecked(false);
        QVERIFY(waitForReport(w));
        lora.layerCheckpoint = false;
        cli = cliReport(lora, DtypePolicy::BF16, Optimizer::PagedAdamW, cliModel);
        QVERIFY2(!cli.fit.fits, "the CLI says LoRA bf16 without checkpointing does not fit an RTX 4090");
        compare(w, cli, cliModel);
        QVERIFY(!w.verdict()->fits());
        // DoRA on the same adapters (--lora ...,dora=true): the model is rebuilt with the magnitude vectors, and
        // the window's figures are the CLI's again, with more trainable parameters and more memory.
        controls->fineTunePanel()->layerCheckpointBox()->setChecked(true);
        QVERIFY(waitForReport(w));
        QVERIFY(waitForModel(
            w, [&] { controls->fineTunePanel()->findChild<QCheckBox*>(QStringLiteral("dora"))->setChecked(true); }));
        QVERIFY(waitForReport(w));
        lora.layerCheckpoint = true;
        const Report plain = cliReport(lora, DtypePolicy::BF16, Optimizer::PagedAdamW, cliModel);
        lora.lora.dora = true;
        cli = cliReport(lora, DtypePolicy::BF16, Optimizer::PagedAdamW, cliModel);
        compare(w, cli, cliModel);
        QVERIFY(w.session()->config().finetune.lora.dora);
        QVERIFY(cli.evaluation.memory.peak > plain.evaluation.memory.peak);
    }

    // The DoRA box is --lora dora=true: off by default and after the recipes, for adapters only, kept across a
    // restart.
    void doraBox()
    {
        QSettings s;
        {
            FineTunePanel panel;
            auto* box = panel.findChild<QCheckBox*>(QStringLiteral("dora"));
            QVERIFY(box);
            QVERIFY(!box->isEnabled()); // full fine-tuning: no adapters
            panel.setMethod(FineTunePanel::Method::LoRA);
            QVERIFY(box->isEnabled());
            QVERIFY(!panel.fineTune().lora.dora);
            QSignalSpy changed(&panel, &FineTunePanel::changed);
            box->setChecked(true);
            QCOMPARE(changed.size(), 1);
            QVERIFY(panel.fineTune().lora.dora);
            panel.saveSettings(s);
            // lit-gpt's model code has no DoRA (the CLI refuses the mix): the litgpt preset turns the box off
            panel.applyFrameworkSwitches(panel.fineTune(), false);
            QVERIFY(!box->isEnabled());
            QVERIFY(!panel.fineTune().lora.dora);
            panel.applyFrameworkSwitches(panel.fineTune(), true);
            QVERIFY(box->isEnabled());
        }
        FineTunePanel restored;
        restored.restoreSettings(s);
        QVERIFY(restored.fineTune().lora.dora);
        restored.setMethod(FineTunePanel::Method::Full);
        QVERIFY(!restored.fineTune().lora.dora); // no adapters, no DoRA
        restored.peftButton()->click();
        QVERIFY(!restored.fineTune().lora.dora);
        s.remove(QStringLiteral("finetune"));
    }

    // IA3 is --ia3 [targets=...]: no rank, alpha, dropout or DoRA; the targets and the vectors' dtype; kept across
    // a restart; off under lit-gpt's model code (the CLI refuses the mix), where it becomes LoRA.
    void ia3Method()
    {
        QSettings s;
        {
            FineTunePanel panel;
            panel.setMethod(FineTunePanel::Method::IA3);
            const FineTune f = panel.fineTune();
            QVERIFY(f.lora.method == PeftMethod::IA3 && f.lora.active());
            QCOMPARE(f.lora.r, 0);
            QVERIFY(f.quant == Quant::None && !f.lora.dora && !f.lora.feedforward);
            QVERIFY(!panel.findChild<QSpinBox*>()->isEnabled()); // the rank
            QVERIFY(!panel.findChild<QCheckBox*>(QStringLiteral("dora"))->isEnabled());
            QVERIFY(!panel.quantBox()->isEnabled());
            QVERIFY(panel.findChild<QComboBox*>(QStringLiteral("adapterDtype"))->isEnabled());
            panel.saveSettings(s);
            panel.applyFrameworkSwitches(panel.fineTune(), false);
            QCOMPARE(panel.method(), FineTunePanel::Method::LoRA);
            QVERIFY(panel.fineTune().lora.method == PeftMethod::LoRA);
        }
        FineTunePanel restored;
        restored.restoreSettings(s);
        QCOMPARE(restored.method(), FineTunePanel::Method::IA3);
        QVERIFY(restored.fineTune().lora.method == PeftMethod::IA3);
        s.remove(QStringLiteral("finetune"));
    }

    // Choosing IA3 in the window rebuilds the model with the vectors, and every figure is the CLI's for
    // `--ia3 default --dtype bf16 --optimizer adamw --gpu "RTX 4090" --set seq=2048`.
    void ia3InTheWindow()
    {
        QSettings().clear(); // a model's settings are kept per model: start from none
        MainWindow w;
        w.setErrorHandler([](const QString& m) { QFAIL(qPrintable(m)); });
        ControlsPanel* controls = w.controls();
        selectData(controls->findChild<QComboBox*>(QStringLiteral("gpuCombo")),
                   QStringLiteral("GeForce RTX 4090 24 GB"));
        QVERIFY(waitForModel(w, [&] { w.openFile(kLlama); }));
        w.setTask(Task::FineTune);
        controls->symbolSlider(w.session()->model()->symbolIndex("seq"))->setValue(2048);
        selectData(controls->findChild<QComboBox*>(QStringLiteral("dtypeCombo")), int(DtypePolicy::BF16));
        selectData(controls->findChild<QComboBox*>(QStringLiteral("optimizerCombo")), int(Optimizer::AdamW));
        QVERIFY(waitForModel(w, [&] { controls->fineTunePanel()->setMethod(FineTunePanel::Method::IA3); }));
        QVERIFY(waitForReport(w));
        FineTune ia3;
        ia3.lora.method = PeftMethod::IA3;
        Model cliModel;
        const Report cli = cliReport(ia3, DtypePolicy::BF16, Optimizer::AdamW, cliModel);
        compare(w, cli, cliModel);
        const FineTuneSummary f = summarizeFineTune(cliModel, cli.config, cli.evaluation);
        QCOMPARE(f.method, std::string("ia3"));
        QVERIFY(f.trainableParams > 0 && f.adapterParams == f.trainableParams);
        QVERIFY(w.verdict()->text().contains(QStringLiteral("IA3: ")));
    }

    void adaptersThatDoNotApply()
    {
        // LoRA chosen before any model (settings of another model at start-up), then a CNN opened: it opens
        // for full fine-tuning, with no "Cannot open" for a model that loads.
        MainWindow w;
        QStringList errors;
        w.setErrorHandler([&](const QString& m) { errors << m; });
        FineTunePanel* panel = w.controls()->fineTunePanel();
        panel->setMethod(FineTunePanel::Method::LoRA);
        panel->applyPeftDefaults();
        QCOMPARE(panel->method(), FineTunePanel::Method::LoRA);
        QSignalSpy loaded(&w, &MainWindow::modelLoaded);
        w.openFile(QStringLiteral(HEADROOM_SOURCE_DIR "/resources/samples/resnet18.onnx"));
        QVERIFY(QTest::qWaitFor([&] { return !loaded.isEmpty(); }, 120000));
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join(QLatin1Char('\n'))));
        QCOMPARE(panel->method(), FineTunePanel::Method::Full);
        QVERIFY(waitForReport(w));
        QCOMPARE(w.session()->config().finetune.lora.r, 0);
        QCOMPARE(w.session()->model()->info.file.ends_with("resnet18.onnx"), true);
    }

    // Undo covers the sliders: a move of the batch slider is one Ctrl+Z away, and a drag across several
    // stops is one step of the history.
    void undoSliderMove()
    {
        ControlsPanel panel;
        QUndoStack stack;
        ConfigUndo undo(&panel, &stack);
        const Model m = loadModel(kLlamaPath);
        panel.setModel(m);
        undo.reset();
        LogSlider* batch = panel.batchSlider();
        QVERIFY(batch);
        const int before = batch->value();
        batch->slider()->setValue(batch->positionFor(8));
        QCOMPARE(batch->value(), 8);
        QCOMPARE(stack.count(), 1);
        stack.undo();
        QCOMPARE(batch->value(), before);
        QCOMPARE(panel.config().symbols[size_t(m.batchSymbol)], int64_t(before));
        stack.redo();
        QCOMPARE(batch->value(), 8);
        // A drag: pressed, three stops, released: one entry that undoes to where the drag began.
        batch->slider()->setSliderDown(true);
        emit batch->slider()->sliderPressed();
        for (int v : {16, 32, 64})
            batch->slider()->setValue(batch->positionFor(v));
        batch->slider()->setSliderDown(false);
        QCOMPARE(stack.count(), 2);
        stack.undo();
        QCOMPARE(batch->value(), 8);
        // The sequence slider too.
        LogSlider* seq = panel.findChild<LogSlider*>(QStringLiteral("symbol_seq"));
        QVERIFY(seq);
        const int seqBefore = seq->value();
        seq->setValue(4096);
        stack.undo();
        QCOMPARE(seq->value(), seqBefore);
    }

    // Sliders snap to round values: powers of two for the batch, multiples of 128 for the sequence; with a
    // largest fitting value known the slider ends at twice it, and the widget keeps its width.
    void sliderStops()
    {
        ControlsPanel panel;
        panel.setModel(loadModel(kLlamaPath));
        LogSlider* batch = panel.batchSlider();
        for (int v : batch->stops())
            QVERIFY2((v & (v - 1)) == 0, qPrintable(QString::number(v)));
        LogSlider* seq = panel.findChild<LogSlider*>(QStringLiteral("symbol_seq"));
        for (int v : seq->stops())
            QVERIFY2(v < 128 ? (v & (v - 1)) == 0 : v % 128 == 0, qPrintable(QString::number(v)));
        QVERIFY(batch->slider()->minimumWidth() >= 160);
        panel.resize(500, 800);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        const int width = seq->width();
        const int sliderWidth = seq->slider()->width();
        seq->setValue(2048);
        seq->setMaxMark(4949);
        // 2 x 4949 = 9898: the slider ends at the first stop at or above it, 8192 x 1.25 = 10240.
        QCOMPARE(seq->valueAt(seq->slider()->maximum()), 10240);
        QCoreApplication::processEvents();
        QCOMPARE(seq->width(), width);
        QCOMPARE(seq->slider()->width(), sliderWidth);
        seq->setMaxMark(0);
        QCOMPARE(seq->valueAt(seq->slider()->maximum()), seq->spinBox()->maximum() >= 65536 ? 65536 : 0);
    }

    // Settings belong to the model they were set on: LoRA in bf16 with paged AdamW on Llama, then another
    // model opened: it starts from the defaults (full fine-tuning, fp32, Adam, its own default sizes); the
    // GPU stays.
    void secondModelStartsFromDefaults()
    {
        QSettings().clear();
        ControlsPanel panel;
        const Model llama = loadModel(kLlamaPath);
        panel.setModel(llama);
        panel.setTask(Task::FineTune);
        panel.fineTunePanel()->qloraButton()->click();
        selectData(panel.findChild<QComboBox*>(QStringLiteral("gpuCombo")), QStringLiteral("GeForce RTX 4090 24 GB"));
        panel.findChild<LogSlider*>(QStringLiteral("symbol_seq"))->setValue(2048);
        QVERIFY(panel.config().optimizer == Optimizer::PagedAdamW);
        QVERIFY(panel.config().dtype == DtypePolicy::AmpBF16);
        const Model other = loadModel(HEADROOM_SOURCE_DIR "/resources/samples/gpt2.json");
        panel.setModel(other);
        const Config c = panel.config();
        const Config defaults;
        QCOMPARE(panel.fineTunePanel()->method(), FineTunePanel::Method::Full);
        QVERIFY(c.finetune == FineTune{});
        QVERIFY(c.dtype == defaults.dtype);
        QVERIFY(c.optimizer == defaults.optimizer);
        QCOMPARE(c.checkpointSegments, 0);
        for (size_t i = 0; i < other.symbols.size(); ++i)
            QCOMPARE(c.symbols[i], other.symbols[i].value);
        QCOMPARE(c.gpu.name, std::string("GeForce RTX 4090 24 GB"));
        // The same model again keeps what was set on it.
        panel.fineTunePanel()->setMethod(FineTunePanel::Method::LoRA);
        panel.setModel(other);
        QCOMPARE(panel.fineTunePanel()->method(), FineTunePanel::Method::LoRA);
        // The first model reopened after another: what was set on it comes back (the user guide's promise),
        // and so does the other's when it is reopened in turn.
        panel.setModel(llama);
        QCOMPARE(panel.fineTunePanel()->method(), FineTunePanel::Method::QLoRA);
        QVERIFY(panel.config().optimizer == Optimizer::PagedAdamW);
        QCOMPARE(panel.config().symbols[size_t(llama.symbolIndex("seq"))], 2048);
        panel.setModel(other);
        QCOMPARE(panel.fineTunePanel()->method(), FineTunePanel::Method::LoRA);
        QSettings().clear();
    }

    // Each task keeps its own settings per model: Fine-tune's QLoRA stays Fine-tune's while Train trains every
    // weight in fp32 Adam; switching back brings the QLoRA set-up again, and the panel shows each task's knobs.
    void tasksKeepTheirSettings()
    {
        QSettings().clear();
        ControlsPanel panel;
        const Model llama = loadModel(kLlamaPath);
        panel.setModel(llama);
        panel.setTask(Task::FineTune);
        panel.fineTunePanel()->qloraButton()->click();
        QVERIFY(panel.config().finetune.quant == Quant::NF4);
        QSignalSpy changed(&panel, &ControlsPanel::configChanged);
        panel.setTask(Task::Train);
        QCOMPARE(changed.size(), 1);
        QVERIFY(panel.config().finetune == FineTune{});
        QVERIFY(panel.config().mode == Mode::Train);
        QVERIFY(panel.config().optimizer == Config{}.optimizer);
        QVERIFY(panel.fineTunePanel()->isHidden());
        panel.setTask(Task::Generate);
        QVERIFY(panel.config().mode == Mode::Infer);
        QVERIFY(panel.findChild<QComboBox*>(QStringLiteral("optimizerCombo"))->isHidden() ||
                !panel.findChild<QComboBox*>(QStringLiteral("optimizerCombo"))->isVisibleTo(&panel));
        panel.setTask(Task::FineTune);
        QVERIFY(!panel.fineTunePanel()->isHidden());
        QVERIFY(panel.config().finetune.quant == Quant::NF4);
        QVERIFY(panel.config().optimizer == Optimizer::PagedAdamW);
        QSettings().clear();
    }

    // The Framework combo writes the preset into the controls (torchtune's lora_single_device recipes: bf16,
    // AdamW, CEWithChunkedOutputLoss, a checkpoint per layer, bf16 adapters), which stay
    // the user's to change afterwards, as a CLI flag wins over --framework.
    void frameworkCombo()
    {
        QSettings().clear();
        ControlsPanel panel;
        panel.setModel(loadModel(kLlamaPath));
        panel.setTask(Task::FineTune);
        panel.fineTunePanel()->setMethod(FineTunePanel::Method::LoRA);
        QSignalSpy changed(&panel, &ControlsPanel::configChanged);
        selectData(panel.findChild<QComboBox*>(QStringLiteral("frameworkCombo")), int(Framework::Torchtune));
        QVERIFY(changed.size() >= 1);
        Config c = panel.config();
        QVERIFY(c.framework == Framework::Torchtune);
        QVERIFY(c.dtype == DtypePolicy::BF16);
        QVERIFY(c.optimizer == Optimizer::AdamW);
        QVERIFY(c.loss == Loss::ChunkedCE);
        QVERIFY(c.finetune.layerCheckpoint);
        QCOMPARE(c.finetune.lora.dtype, std::string("bf16"));
        QVERIFY(!c.offloadActivations); // every *_lora_single_device.yaml: enable_activation_offloading: False
        QCheckBox* offload = panel.findChild<QCheckBox*>(QStringLiteral("offloadActivationsCheck"));
        QVERIFY(offload);
        offload->setChecked(true);
        QVERIFY(panel.config().offloadActivations);
        offload->setChecked(false);
        selectData(panel.findChild<QComboBox*>(QStringLiteral("lossCombo")), int(Loss::CrossEntropy));
        c = panel.config();
        QVERIFY(c.loss == Loss::CrossEntropy);
        QVERIFY(c.framework == Framework::Torchtune && c.dtype == DtypePolicy::BF16);
        // litgpt with 4-bit weights: paged AdamW and its 16-bit chunked loss, no checkpointing
        panel.fineTunePanel()->setMethod(FineTunePanel::Method::QLoRA);
        selectData(panel.findChild<QComboBox*>(QStringLiteral("frameworkCombo")), int(Framework::Litgpt));
        c = panel.config();
        QVERIFY(c.optimizer == Optimizer::PagedAdamW);
        QVERIFY(c.loss == Loss::ChunkedCE16);
        QVERIFY(!c.finetune.layerCheckpoint);
        QVERIFY(!c.finetune.kbitPrep); // prepare_model_for_kbit_training is PEFT's (shown with 4-bit weights)
        // Fabric's FSDP: use_orig_params and no_backward_sync accumulation, dropped again with Hugging Face
        QVERIFY(c.fsdpOrigParams && c.fsdpNoSync);
        selectData(panel.findChild<QComboBox*>(QStringLiteral("frameworkCombo")), int(Framework::HF));
        c = panel.config();
        QVERIFY(!c.fsdpOrigParams && !c.fsdpNoSync);
    }

    // One meaning of "trainable" in the Model panel: LoRA r=16 on q_proj,v_proj of Llama-3.1-8B trains
    // 32 layers x 16 x ((4096 + 4096) + (4096 + 1024)) = 6,815,744 parameters (PEFT's count), the 8.03 G of
    // the file frozen beside them; a config.json's "no weights" is a note by the name, not a warning.
    void modelPanelTrainable()
    {
        LoadOptions o;
        o.lora.r = 16;
        o.lora.targets = {"q_proj", "v_proj"};
        const Model m = loadModel(kLlamaPath, o);
        Config c;
        c.symbols = m.defaultBindings();
        c.finetune.lora = o.lora;
        c.freeze = loraFreezePatterns();
        const ParamCounts counts = countParams(m, c);
        QCOMPARE(counts.trainable, int64_t(32) * 16 * ((4096 + 4096) + (4096 + 1024)));
        QCOMPARE(counts.frozen, int64_t(8030261248));
        ModelInfoPanel panel;
        panel.setModel(m, {});
        QVERIFY(!panel.paramsText().contains(QStringLiteral("trainable")));
        panel.setParamCounts(counts);
        QVERIFY2(panel.paramsText().startsWith(QStringLiteral("6.82 M trainable · 8.03 G frozen · 8.04 G total")),
                 qPrintable(panel.paramsText()));
        // the bytes are what the run holds (the main window passes the Breakdown's): in bf16 the frozen base at 2
        // bytes and PEFT's fp32 adapters at 4, not the fp32 the config.json was built in
        c.dtype = DtypePolicy::BF16;
        const Breakdown held = evaluate(m, c).memory;
        QCOMPARE(held.weights - held.buffers, int64_t(8030261248) * 2 + counts.trainable * 4);
        panel.setParamCounts(counts, held.weights - held.buffers, held.buffers);
        QVERIFY2(panel.paramsText().contains(
                     QStringLiteral("total (%1)").arg(bytesText(held.weights - held.buffers, Units::IEC))),
                 qPrintable(panel.paramsText()));
        QVERIFY(panel.fileText().contains(QStringLiteral("architecture only")));
        auto* warnings = panel.findChild<QListWidget*>();
        QVERIFY(warnings);
        for (int i = 0; i < warnings->count(); ++i)
            QVERIFY2(!warnings->item(i)->text().contains(QStringLiteral("architecture only")),
                     qPrintable(warnings->item(i)->text()));
    }

    // Issue 25: LoRA q_proj,v_proj on Llama, then another model opened: no dialog, and it starts from the
    // defaults (full fine-tuning, fp32, Adam), the GPU kept.
    void secondModelAfterLora()
    {
        QSettings().clear(); // a first start: no settings saved by the tests before
        MainWindow w;
        QStringList errors;
        w.setErrorHandler([&](const QString& m) { errors << m; });
        ControlsPanel* controls = w.controls();
        selectData(controls->findChild<QComboBox*>(QStringLiteral("gpuCombo")),
                   QStringLiteral("GeForce RTX 4090 24 GB"));
        QVERIFY(waitForModel(w, [&] { w.openFile(kLlama); }));
        w.setTask(Task::FineTune);
        QVERIFY(waitForModel(w, [&] { controls->fineTunePanel()->peftButton()->click(); }));
        selectData(controls->findChild<QComboBox*>(QStringLiteral("dtypeCombo")), int(DtypePolicy::BF16));
        QVERIFY(waitForReport(w));
        QCOMPARE(w.session()->config().finetune.lora.r, 8);
        QVERIFY(waitForModel(
            w, [&] { w.openFile(QStringLiteral(HEADROOM_SOURCE_DIR "/resources/samples/tiny_gpt.onnx")); }));
        QVERIFY(waitForReport(w));
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join(QLatin1Char('\n'))));
        const Config c = w.session()->config();
        const Config defaults;
        QCOMPARE(c.finetune.lora.r, 0);
        QCOMPARE(controls->fineTunePanel()->method(), FineTunePanel::Method::Full);
        QVERIFY(c.dtype == defaults.dtype);
        QVERIFY(c.optimizer == defaults.optimizer);
        QCOMPARE(c.gpu.name, std::string("GeForce RTX 4090 24 GB"));
        QVERIFY(w.session()->model()->info.file.ends_with("tiny_gpt.onnx"));
    }

    // The banner's advice makes it fit: LoRA r16 q,v, pure bf16, seq 2048 on an RTX 4090 needs ~29 GiB; the
    // banner names the plan (per-layer checkpointing) and the need after it, and the Breakdown says the same.
    void bannerPlanFits()
    {
        QSettings().clear(); // a first start: no settings saved by the tests before
        MainWindow w;
        w.session()->setSynchronousDetails(true);
        ControlsPanel* controls = w.controls();
        selectData(controls->findChild<QComboBox*>(QStringLiteral("gpuCombo")),
                   QStringLiteral("GeForce RTX 4090 24 GB"));
        QVERIFY(waitForModel(w, [&] { w.openFile(kLlama); }));
        w.setTask(Task::FineTune);
        controls->findChild<LogSlider*>(QStringLiteral("symbol_seq"))->setValue(2048);
        selectData(controls->findChild<QComboBox*>(QStringLiteral("dtypeCombo")), int(DtypePolicy::BF16));
        selectData(controls->findChild<QComboBox*>(QStringLiteral("optimizerCombo")), int(Optimizer::AdamW));
        FineTunePanel* panel = controls->fineTunePanel();
        // LoRA with PEFT's default targets for llama (q_proj, v_proj), rank 16: each reloads the graph.
        QVERIFY(waitForModel(w, [&] { panel->setMethod(FineTunePanel::Method::LoRA); }));
        QVERIFY(waitForModel(w, [&] { panel->findChild<QSpinBox*>()->setValue(16); }));
        QVERIFY(waitForReport(w));
        const Report& r = w.session()->report();
        QVERIFY(!r.fit.fits);
        QVERIFY(r.fitPlan.fits);
        QVERIFY(r.fitPlan.steps.front().kind == PlanStep::Kind::LayerCheckpoint);
        QVERIFY2(w.verdict()->text().contains(QStringLiteral("To fit: per-layer checkpointing")),
                 qPrintable(w.verdict()->text()));
    }

    // Issue 45: QLoRA on Qwen3-30B-A3B (model_type qwen3_moe, which PEFT's target mapping does not list). The
    // Targets field says what an empty field means there (all-linear, not "q_proj, v_proj"), the model reloads
    // with adapters on every linear layer (no "Cannot open the model"), and the verdict is QLoRA's, the CLI's for
    // --lora r=8,targets=all-linear --quant nf4.
    void moeQloraInTheWindow()
    {
        QSettings().clear();
        MainWindow w;
        QStringList errors;
        w.setErrorHandler([&](const QString& m) { errors << m; });
        ControlsPanel* controls = w.controls();
        selectData(controls->findChild<QComboBox*>(QStringLiteral("gpuCombo")),
                   QStringLiteral("GeForce RTX 4090 24 GB"));
        const QString file = QStringLiteral(HEADROOM_TEST_DATA "/moe/Qwen3-30B-A3B.config.json");
        QVERIFY(waitForModel(w, [&] { w.openFile(file); }));
        w.setTask(Task::FineTune);
        FineTunePanel* panel = controls->fineTunePanel();
        QVERIFY(waitForModel(w, [&] { panel->setMethod(FineTunePanel::Method::QLoRA); }));
        QVERIFY(waitForReport(w));
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join(QLatin1Char('\n'))));
        auto* targets = panel->findChild<QLineEdit*>();
        QVERIFY(targets);
        QVERIFY2(targets->placeholderText().contains(QStringLiteral("all-linear")) &&
                     targets->placeholderText().contains(QStringLiteral("qwen3_moe")),
                 qPrintable(targets->placeholderText()));
        const Config c = w.session()->config();
        QCOMPARE(c.finetune.lora.targets, std::vector<std::string>{"all-linear"});
        QVERIFY(c.finetune.quant == Quant::NF4);
        LoadOptions load;
        load.lora = c.finetune.lora;
        const Model cliModel = loadModel(file.toStdString(), load);
        Config cli = c;
        cli.symbols = cliModel.defaultBindings();
        const Report r = buildReport(cliModel, cli);
        QCOMPARE(w.session()->report().fit.needed, r.fit.needed);
        QVERIFY(r.fit.needed < int64_t{24} << 30); // the 571 GiB of full fine-tuning is gone
        QVERIFY2(w.verdict()->text().contains(QStringLiteral("QLoRA")), qPrintable(w.verdict()->text()));
        // Llama's field names its own defaults
        QVERIFY(waitForModel(w, [&] { w.openFile(kLlama); }));
        QCOMPARE(targets->placeholderText(), QStringLiteral("default (q_proj, v_proj)"));
    }

    // Adapters PEFT refuses on the open model: the banner says so ("Does not start: ..."), the model stays, and
    // no "Cannot open the model" box (the error handler hears the one line).
    void refusedAdaptersAreTheVerdict()
    {
        QSettings().clear();
        MainWindow w;
        QStringList errors;
        w.setErrorHandler([&](const QString& m) { errors << m; });
        QVERIFY(waitForModel(
            w, [&] { w.openFile(QStringLiteral(HEADROOM_SOURCE_DIR "/resources/samples/tiny_gpt.onnx")); }));
        QVERIFY(waitForReport(w));
        w.setTask(Task::FineTune);
        QSignalSpy failed(&w, &MainWindow::loadFailed);
        w.controls()->fineTunePanel()->setMethod(FineTunePanel::Method::LoRA);
        QVERIFY(QTest::qWaitFor([&] { return !failed.isEmpty(); }, 120000));
        QCOMPARE(errors.size(), 1);
        QVERIFY2(w.verdict()->text().startsWith(QStringLiteral("Does not start: LoRA: ")),
                 qPrintable(w.verdict()->text()));
        QVERIFY(!w.verdict()->fits());
        QVERIFY(w.session()->model()->info.file.ends_with("tiny_gpt.onnx"));
    }

    void wheelDoesNotChangeFineTuning()
    {
        // The Configuration panel's wheel guard covers the fine-tuning controls: a wheel turn over an
        // unfocused combo scrolls the panel instead of changing the method.
        MainWindow w;
        w.resize(900, 500);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QComboBox* method = w.controls()->fineTunePanel()->methodBox();
        const int before = method->currentIndex();
        QVERIFY(method->focusPolicy() != Qt::WheelFocus);
        const QPoint at = method->rect().center();
        QWheelEvent wheel(at, method->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                          Qt::NoScrollPhase, false);
        QApplication::sendEvent(method, &wheel);
        QCOMPARE(method->currentIndex(), before);
    }
};

QTEST_MAIN(TestFineTunePanel)
#include "tst_finetunepanel.moc"
