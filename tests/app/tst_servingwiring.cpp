// The Serving tab in the main window: a config.json opened in the app reaches the Serving page, an ONNX file
// clears it, and in the Serving mode the JSON export carries the plan (the `serving` object of
// headroom-cli --serve ... --json) while elsewhere it stays the CLI's bytes.
#include "guiutil.h"
#include "mainwindow.h"
#include "modelinfopanel.h"
#include "servingpage.h"
#include "taskbar.h"
#include "timelinepage.h"
#include "verdict.h"

#include "headroom/hardware/gpus.h"
#include "headroom/serving/serving_json.h"

#include <QAbstractButton>
#include <QComboBox>
#include <QScrollArea>

#include <QDir>
#include <QFile>
#include <QLabel>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

using namespace gui;
using headroom::Task;

namespace {

bool openAndWait(MainWindow& w, const QString& file)
{
    QSignalSpy loaded(&w, &MainWindow::modelLoaded);
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    w.openFile(file);
    return QTest::qWaitFor([&] { return !loaded.isEmpty() || !failed.isEmpty(); }, 120000) && !loaded.isEmpty();
}

nlohmann::json exported(MainWindow& w, const QString& file)
{
    QString error;
    if (!w.exportTo(MainWindow::ExportKind::Json, file, &error))
        return {};
    QFile f(file);
    f.open(QIODevice::ReadOnly);
    return nlohmann::json::parse(f.readAll().toStdString());
}

} // namespace

class TestServingWiring : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QVERIFY(m_settings.isValid());
        useSettingsDirectory(m_settings.path());
    }

    void configReachesTheServingTab()
    {
        MainWindow w;
        w.setErrorHandler([](const QString&) {});
        const QString file = QStringLiteral(HEADROOM_TEST_DATA "/external/meta-llama--Llama-3.1-8B-Instruct.json");
        QVERIFY(openAndWait(w, file));
        w.setTask(Task::Train);
        ServingPage* page = w.servingPage();
        QVERIFY(page->state()->hasModel());
        QCOMPARE(page->state()->model()->hidden, int64_t{4096});
        const QString json = m_settings.filePath(QStringLiteral("report.json"));
        const nlohmann::json training = exported(w, json);
        QVERIFY(!training.contains("serving")); // the Train task: the CLI's training report
        QCOMPARE(training["schema"].get<std::string>(), std::string("headroom.report/1"));
        QVERIFY(!w.tabs()->isTabVisible(w.tabs()->indexOf(page)));
        // The Serve task: its tab, its knobs in the panel, its verdict in the banner, its JSON the CLI's
        // `--task serve --json` object (the window's GPU, the H100, and vLLM's defaults, as the CLI's).
        w.setTask(Task::Serve);
        QVERIFY(w.tabs()->isTabVisible(w.tabs()->indexOf(page)));
        QCOMPARE(w.tabs()->currentWidget(), page);
        QVERIFY(!w.tabs()->isTabVisible(w.tabs()->indexOf(w.timelinePage())));
        QVERIFY(!page->engineBox()->isVisibleTo(page->form()));
        QVERIFY(page->form()->isVisibleTo(w.controlsScroll()->widget()));
        QCOMPARE(w.verdict()->text().section(QStringLiteral(" \u00b7 "), 0, 0), page->state()->verdictText());
        QVERIFY2(w.verdict()->text().startsWith(QStringLiteral("Serves ")), qPrintable(w.verdict()->text()));
        const nlohmann::json served = exported(w, json);
        QCOMPARE(served["schema"].get<std::string>(), std::string("headroom.serving/1"));
        const headroom::ServeModel model = headroom::loadServeModel(file.toStdString());
        const nlohmann::json cli = headroom::toJson(headroom::planVllm(model, {}, *headroom::findGpu("H100")));
        QCOMPARE(served["serving"][0].dump(), cli.dump());
        // Generate on a config: generate()'s plan, the tab named for it.
        w.setTask(Task::Generate);
        QCOMPARE(w.tabs()->tabText(w.tabs()->indexOf(page)), QStringLiteral("Generation"));
        const nlohmann::json generated = exported(w, json);
        QCOMPARE(generated["serving"][0]["engine"].get<std::string>(), std::string("hf-generate"));
        QCOMPARE(generated["serving"][0].dump(),
                 headroom::toJson(headroom::planHfGenerate(model, {}, *headroom::findGpu("H100"))).dump());
        // An ONNX graph cannot be served: the task falls back to Train, Serve is disabled with the reason.
        w.setTask(Task::Serve);
        QVERIFY(openAndWait(w, QStringLiteral(HEADROOM_TEST_DATA "/tiny_gpt.onnx")));
        QVERIFY(!page->state()->hasModel());
        QVERIFY(w.task() == Task::Train);
        QVERIFY(!w.taskBar()->button(Task::Serve)->isEnabled());
        QVERIFY(w.taskBar()->button(Task::Serve)->toolTip().contains(QStringLiteral("config.json")));
        QVERIFY(!w.tabs()->isTabVisible(w.tabs()->indexOf(page)));
        // The config again: the task it was left on comes back with it.
        QVERIFY(openAndWait(w, file));
        QVERIFY(w.task() == Task::Serve);
        QVERIFY(w.tabs()->isTabVisible(w.tabs()->indexOf(page)));
    }

    // The serving settings belong to the model too: TP 2 at 16k on Llama, another config opens at the engines'
    // defaults (TP 1, its own max_model_len), and Llama reopened is TP 2 at 16k again.
    void servingSettingsPerModel()
    {
        MainWindow w;
        w.setErrorHandler([](const QString&) {});
        const QString llama = QStringLiteral(HEADROOM_TEST_DATA "/external/meta-llama--Llama-3.1-8B-Instruct.json");
        QVERIFY(openAndWait(w, llama));
        w.setTask(Task::Serve);
        ServingState* state = w.servingPage()->state();
        state->setTensorParallel(2);
        state->setContextLength(16384);
        QCOMPARE(state->tensorParallel(), 2);
        QVERIFY(openAndWait(w, QStringLiteral(HEADROOM_SOURCE_DIR "/resources/samples/Qwen2.5-7B.json")));
        QCOMPARE(state->tensorParallel(), 1);
        QCOMPARE(state->contextLength(), state->model()->maxPositions);
        QVERIFY(openAndWait(w, llama));
        QCOMPARE(state->tensorParallel(), 2);
        QCOMPARE(state->contextLength(), int64_t{16384});
        QCOMPARE(w.servingPage()->tpBox()->currentData().toInt(), 2);
    }

    // A checkpoint's config is always config.json: the window, the Model panel, the Serving header and the PDF
    // name the model by its folder (Qwen3 and Mixtral were both "config.json").
    void checkpointFolderIsNamed()
    {
        const QString folder = m_settings.filePath(QStringLiteral("Qwen3-30B-A3B"));
        QVERIFY(QDir().mkpath(folder));
        const QString config = QDir(folder).filePath(QStringLiteral("config.json"));
        QVERIFY(QFile::copy(QStringLiteral(HEADROOM_TEST_DATA "/moe/Qwen3-30B-A3B.config.json"), config));
        MainWindow w;
        w.setErrorHandler([](const QString& m) { QFAIL(qPrintable(m)); });
        QVERIFY(openAndWait(w, config));
        QCOMPARE(w.windowTitle(), QStringLiteral("Qwen3-30B-A3B \u2014 Headroom"));
        QVERIFY2(w.modelInfo()->fileText().startsWith(QStringLiteral("Qwen3-30B-A3B")),
                 qPrintable(w.modelInfo()->fileText()));
        w.setTask(Task::Serve);
        QVERIFY(w.servingPage()->findChildren<QLabel*>().size() > 0);
        bool header = false;
        for (const QLabel* l : w.servingPage()->findChildren<QLabel*>())
            header |= l->text() == QStringLiteral("Qwen3-30B-A3B");
        QVERIFY(header);
    }

private:
    QTemporaryDir m_settings;
};

QTEST_MAIN(TestServingWiring)
#include "tst_servingwiring.moc"
