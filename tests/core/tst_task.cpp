// The task table (core/base task.cpp): which engine answers each task for a graph and for a config, the names
// the CLI and the settings use, the task a configuration runs; and the name a model is shown by (model_name.cpp).
#include "headroom/base/model_name.h"
#include "headroom/base/task.h"

#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <fstream>

using namespace headroom;

Q_DECLARE_METATYPE(headroom::Task)
Q_DECLARE_METATYPE(headroom::TaskEngine)

class TestTask : public QObject
{
    Q_OBJECT

private slots:
    void routes_data()
    {
        QTest::addColumn<Task>("task");
        QTest::addColumn<bool>("hfConfig");
        QTest::addColumn<TaskEngine>("engine");
        QTest::newRow("train graph") << Task::Train << false << TaskEngine::Training;
        QTest::newRow("train config") << Task::Train << true << TaskEngine::Training;
        QTest::newRow("finetune graph") << Task::FineTune << false << TaskEngine::Training;
        QTest::newRow("finetune config") << Task::FineTune << true << TaskEngine::Training;
        QTest::newRow("generate graph") << Task::Generate << false << TaskEngine::Inference;
        QTest::newRow("generate config") << Task::Generate << true << TaskEngine::HfGenerate;
        QTest::newRow("serve graph") << Task::Serve << false << TaskEngine::None;
        QTest::newRow("serve config") << Task::Serve << true << TaskEngine::Vllm;
    }
    void routes()
    {
        QFETCH(Task, task);
        QFETCH(bool, hfConfig);
        QFETCH(TaskEngine, engine);
        const TaskRoute r = routeTask(task, hfConfig);
        QVERIFY(r.engine == engine);
        // a refusal always says why, an answer never carries one
        QCOMPARE(r.refusal.empty(), engine != TaskEngine::None);
    }

    void names()
    {
        for (const Task t : kTasks)
            QVERIFY(parseTask(toString(t)) == t);
        QVERIFY(parseTask("fine-tune") == Task::FineTune);
        QVERIFY(!parseTask("pretrain"));
        QVERIFY(!parseTask(""));
        QCOMPARE(std::string(toString(Task::FineTune)), std::string("finetune"));
    }

    void taskOfConfig()
    {
        Config c;
        QVERIFY(taskOf(c) == Task::Train);
        c.finetune.lora.r = 8;
        QVERIFY(taskOf(c) == Task::FineTune);
        c.finetune = {};
        c.finetune.quant = Quant::NF4;
        QVERIFY(taskOf(c) == Task::FineTune);
        c.mode = Mode::Infer;
        QVERIFY(taskOf(c) == Task::Generate);
    }

    void displayNames_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("name");
        QTest::newRow("onnx") << "/models/resnet18.onnx"
                              << "resnet18.onnx";
        QTest::newRow("named config") << "/x/Qwen3-30B-A3B.config.json"
                                      << "Qwen3-30B-A3B.config.json";
        QTest::newRow("checkpoint folder") << "/ckpt/Qwen3-30B-A3B/config.json"
                                           << "Qwen3-30B-A3B";
        QTest::newRow("upper case") << "/ckpt/Mixtral-8x7B-v0.1/CONFIG.JSON"
                                    << "Mixtral-8x7B-v0.1";
        QTest::newRow("folder with slash") << "/ckpt/Llama-3.1-8B/"
                                           << "Llama-3.1-8B";
        // huggingface_hub's cache: models--ORG--NAME/snapshots/REVISION/config.json (file_download.py)
        QTest::newRow("hub cache") << "/home/u/.cache/huggingface/hub/models--Qwen--Qwen3-30B-A3B/snapshots/"
                                      "ad44e777bcd18fa416d9da3bd8f70d33ebb85d39/config.json"
                                   << "Qwen/Qwen3-30B-A3B";
        QTest::newRow("hub cache, no org") << "/c/models--gpt2/snapshots/607a30d783dfa663caf39e06633721c8d4cfcd7e/"
                                           << "gpt2";
        QTest::newRow("snapshots elsewhere") << "/data/snapshots/v2/config.json"
                                             << "v2";
    }
    void displayNames()
    {
        QFETCH(QString, path);
        QFETCH(QString, name);
        QCOMPARE(QString::fromStdString(modelDisplayName(path.toStdString())), name);
    }

    // A folder given without a trailing slash is known by being one; "config.json" alone, in the working
    // directory, by the directory's name.
    void displayNameOfRealFolders()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString folder = dir.filePath(QStringLiteral("Phi-3-mini-4k-instruct"));
        QVERIFY(QDir().mkpath(folder));
        std::ofstream(QDir(folder).filePath(QStringLiteral("config.json")).toStdString()) << "{}";
        QCOMPARE(QString::fromStdString(modelDisplayName(folder.toStdString())),
                 QStringLiteral("Phi-3-mini-4k-instruct"));
        const QString before = QDir::currentPath();
        QVERIFY(QDir::setCurrent(folder));
        const std::string bare = modelDisplayName("config.json");
        QDir::setCurrent(before);
        QCOMPARE(QString::fromStdString(bare), QStringLiteral("Phi-3-mini-4k-instruct"));
    }
};

QTEST_MAIN(TestTask)
#include "tst_task.moc"
