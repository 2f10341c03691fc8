// The exports carry the engine's numbers: the Netron attachment parses as JSON and has a metric for every
// node (matched by the node's name in the file), and the CSV has the JSON's layer rows, byte for byte.
#include "headroom/hardware/gpus.h"
#include "headroom/load/loader.h"
#include "headroom/report/report.h"

#include <QTest>

#include <map>
#include <sstream>
#include <string>

class TestExports : public QObject
{
    Q_OBJECT

private slots:
    void netron_data()
    {
        QTest::addColumn<QString>("file");
        for (const char* name : {"resnet18.onnx", "tiny_gpt.onnx", "bert_like.onnx", "lstm_tagger.onnx"})
            QTest::newRow(name) << QStringLiteral(HEADROOM_TEST_DATA "/") + QLatin1String(name);
    }

    void netron()
    {
        QFETCH(QString, file);
        const headroom::Model model = headroom::loadModel(file.toStdString());
        headroom::Config config;
        config.symbols = model.defaultBindings();
        config.gpu = headroom::findGpu("4090").value_or(headroom::customGpu(int64_t{24} << 30));
        headroom::ReportOptions options;
        options.sweep = false;
        const headroom::Report report = headroom::buildReport(model, config, options);

        // Round-trip through text, as Netron reads the sidecar file.
        const std::string text = headroom::toNetronAttachment(model, report).dump(2);
        const nlohmann::json j = nlohmann::json::parse(text);
        QCOMPARE(j.at("signature").get<std::string>(), std::string("netron:attachment"));
        QVERIFY(j.at("metrics").is_array());

        // target -> metric name -> value
        std::map<std::string, std::map<std::string, nlohmann::json>> metrics;
        for (const nlohmann::json& row : j.at("metrics")) {
            QVERIFY(row.contains("kind") && row.contains("target") && row.contains("name") && row.contains("value"));
            if (row.at("kind") == "node")
                metrics[row.at("target").get<std::string>()][row.at("name").get<std::string>()] = row.at("value");
        }
        QCOMPARE(report.evaluation.nodes.size(), model.nodes.size());
        for (size_t n = 0; n < model.nodes.size(); ++n) {
            const headroom::Node& node = model.nodes[n];
            // Netron matches a node row by the node's name in the file; unnamed nodes get their path.
            const std::string target = node.name.empty() ? model.nodePath(static_cast<int>(n)) : node.name;
            const auto it = metrics.find(target);
            QVERIFY2(it != metrics.end(), target.c_str());
            QVERIFY2(it->second.count("activation_bytes") && it->second.at("activation_bytes").is_number_integer(),
                     target.c_str());
            QCOMPARE(it->second.at("activation_bytes").get<int64_t>(), report.evaluation.nodes[n].outputBytes);
            QCOMPARE(it->second.at("saved_bytes").get<int64_t>(), report.evaluation.nodes[n].savedBytes);
        }
        // Node names are unique in these files, so there is one target per node.
        QCOMPARE(metrics.size(), model.nodes.size());
    }

    void csvMatchesJson()
    {
        const headroom::Model model = headroom::loadModel(HEADROOM_TEST_DATA "/tiny_gpt.onnx");
        headroom::Config config;
        config.symbols = model.defaultBindings();
        headroom::ReportOptions options;
        options.sweep = false;
        const headroom::Report report = headroom::buildReport(model, config, options);
        const nlohmann::json json = headroom::toJson(model, report, options);
        std::istringstream csv(headroom::toCsv(model, report));
        std::string line;
        std::getline(csv, line);
        QCOMPARE(line, std::string("path,op,output_shapes,params,activation_bytes,saved_bytes"));
        size_t row = 0;
        while (std::getline(csv, line)) {
            QVERIFY(row < json.at("layers").size());
            const nlohmann::json& layer = json.at("layers")[row];
            // The last three fields are plain integers (never quoted).
            const size_t c3 = line.rfind(','), c2 = line.rfind(',', c3 - 1), c1 = line.rfind(',', c2 - 1);
            QCOMPARE(std::stoll(line.substr(c1 + 1, c2 - c1 - 1)), layer.at("params").get<long long>());
            QCOMPARE(std::stoll(line.substr(c2 + 1, c3 - c2 - 1)), layer.at("activation_bytes").get<long long>());
            QCOMPARE(std::stoll(line.substr(c3 + 1)), layer.at("saved_bytes").get<long long>());
            ++row;
        }
        QCOMPARE(row, json.at("layers").size());
    }
};

QTEST_GUILESS_MAIN(TestExports)
#include "tst_exports.moc"
