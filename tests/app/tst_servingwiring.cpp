// The Serving tab in the main window: a config.json opened in the app reaches the Serving page, an ONNX file
// clears it, and in the Serving mode the JSON export carries the plan (the `serving` object of
// headroom-cli --serve ... --json) while elsewhere it stays the CLI's bytes.
#include "guiutil.h"
#include "mainwindow.h"
#include "servingpage.h"

#include <QFile>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

using namespace gui;

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
        QVERIFY(openAndWait(w, QStringLiteral(HEADROOM_TEST_DATA "/external/meta-llama--Llama-3.1-8B-Instruct.json")));
        ServingPage* page = w.servingPage();
        QVERIFY(page->state()->hasModel());
        QCOMPARE(page->state()->model()->hidden, int64_t{4096});
        const QString json = m_settings.filePath(QStringLiteral("report.json"));
        QVERIFY(!exported(w, json).contains("serving")); // not in the Serving mode: the CLI's bytes
        w.tabs()->setCurrentWidget(page);
        const nlohmann::json withPlan = exported(w, json);
        QVERIFY(withPlan.contains("serving"));
        QCOMPARE(withPlan["serving"]["engine"].get<std::string>(), std::string("vllm"));
        QVERIFY(openAndWait(w, QStringLiteral(HEADROOM_TEST_DATA "/tiny_gpt.onnx")));
        QVERIFY(!page->state()->hasModel());
    }

private:
    QTemporaryDir m_settings;
};

QTEST_MAIN(TestServingWiring)
#include "tst_servingwiring.moc"
