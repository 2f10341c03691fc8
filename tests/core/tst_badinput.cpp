// Bad input never crashes or hangs: a one-line Error "<file>: <problem>" or a warning naming the node.
#include "headroom/base/error.h"
#include "headroom/load/loader.h"
#include "headroom/shapes/shapes.h"
#include "onnx_fixture.h"

#include <nlohmann/json.hpp>

#include <QtTest>

#include <chrono>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace headroom;
using fixture::Graph;

namespace {

std::string readFile(const std::string& p)
{
    std::ifstream f(p, std::ios::binary);
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

Graph relu(const std::vector<fixture::Dim>& dims)
{
    Graph g;
    g.input("x", dims);
    g.node("Relu", "/act/Relu", {"x"}, {"y"});
    g.output("y");
    return g;
}

std::string build(const QString& which)
{
    if (which == "empty")
        return {};
    if (which == "text")
        return "this is not an ONNX file at all, just some text\n";
    if (which == "truncated") {
        const std::string b = readFile(HEADROOM_TEST_DATA "/resnet18.onnx");
        return b.substr(0, b.size() / 2);
    }
    if (which == "truncated-tail") {
        const std::string b = readFile(HEADROOM_TEST_DATA "/tiny_gpt.onnx");
        return b.substr(0, b.size() - 7);
    }
    if (which == "no-graph") {
        Graph g;
        g.model.clear_graph();
        return g.bytes();
    }
    if (which == "empty-graph") {
        Graph g;
        g.input("x", {int64_t(1)});
        return g.bytes();
    }
    if (which == "cycle") {
        Graph g;
        g.input("x", {int64_t(4)});
        g.node("Add", "loop_a", {"x", "b"}, {"a"});
        g.node("Relu", "loop_b", {"a"}, {"b"});
        g.output("b");
        return g.bytes();
    }
    if (which == "dangling") {
        Graph g;
        g.input("x", {int64_t(4)});
        g.node("Add", "adder", {"x", "ghost"}, {"y"});
        g.output("y");
        return g.bytes();
    }
    if (which == "custom-op") {
        Graph g;
        auto* o = g.model.add_opset_import();
        o->set_domain("com.acme");
        o->set_version(1);
        g.input("x", {int64_t(2), int64_t(4)});
        g.node("Frobnicate", "frob", {"x"}, {"f"})->set_domain("com.acme");
        g.node("Relu", "after", {"f"}, {"y"});
        g.output("y");
        return g.bytes();
    }
    if (which == "negative-dim") {
        Graph g = relu({int64_t(4)});
        g.weight("w", {4})->set_dims(0, -3);
        return g.bytes();
    }
    if (which == "overflow-dims") {
        Graph g = relu({int64_t(4)});
        auto* t = g.g->add_initializer();
        t->set_name("huge");
        t->set_data_type(onnx::TensorProto::FLOAT);
        t->add_dims(int64_t(1) << 40);
        t->add_dims(int64_t(1) << 40);
        return g.bytes();
    }
    if (which == "dim-2^62")
        return relu({int64_t(1) << 62}).bytes();
    if (which == "negative-input-dim")
        return relu({int64_t(-5), int64_t(3)}).bytes();
    if (which == "external-escape" || which == "external-absolute") {
        Graph g = relu({int64_t(4)});
        auto* t = g.g->add_initializer();
        t->set_name("w");
        t->set_data_type(onnx::TensorProto::FLOAT);
        t->add_dims(4);
        t->set_data_location(onnx::TensorProto::EXTERNAL);
        auto* kv = t->add_external_data();
        kv->set_key("location");
        kv->set_value(which == "external-escape" ? "../../etc/passwd" : "/etc/passwd");
        return g.bytes();
    }
    if (which == "bad-reshape") {
        Graph g;
        g.input("x", {int64_t(2), int64_t(3)});
        g.ints("target", {4, 4});
        g.node("Reshape", "/bad/Reshape", {"x", "target"}, {"y"});
        g.output("y");
        return g.bytes();
    }
    if (which == "recursive-function") {
        Graph g = relu({int64_t(4)});
        auto* f = g.model.add_functions();
        f->set_name("Self");
        f->set_domain("local");
        f->add_input("a");
        f->add_output("b");
        auto* n = f->add_node();
        n->set_op_type("Self");
        n->set_domain("local");
        n->add_input("a");
        n->add_output("b");
        g.node("Self", "call", {"y"}, {"z"})->set_domain("local");
        return g.bytes();
    }
    if (which == "missing-output") {
        Graph g = relu({int64_t(4)});
        g.output("nowhere");
        return g.bytes();
    }
    if (which == "bad-conv") {
        Graph g;
        g.input("x", {int64_t(1), int64_t(3), int64_t(2), int64_t(2)});
        g.weight("w", {8, 3, 7, 7});
        g.node("Conv", "/tiny/Conv", {"x", "w"}, {"y"});
        g.output("y");
        return g.bytes();
    }
    if (which == "garbage-attrs") {
        Graph g;
        g.input("x", {int64_t(2), int64_t(3)});
        auto* n = g.node("Transpose", "/t/Transpose", {"x"}, {"y"});
        Graph::intsAttr(n, "perm", {5, -9});
        auto* s = g.node("Split", "/t/Split", {"y"}, {"a", "b"});
        Graph::intAttr(s, "axis", 99);
        g.output("a");
        return g.bytes();
    }
    return {};
}

} // namespace

class TestBadInput : public QObject
{
    Q_OBJECT
private slots:
    void bytes_data()
    {
        QTest::addColumn<QString>("which");
        QTest::addColumn<bool>("isError");
        QTest::addColumn<QString>("mentions"); // in the error, or in a warning
        QTest::newRow("empty bytes") << "empty" << true << "empty";
        QTest::newRow("text") << "text" << true << "not an ONNX model";
        QTest::newRow("truncated") << "truncated" << true << "not an ONNX model";
        QTest::newRow("truncated tail") << "truncated-tail" << true << "not an ONNX model";
        QTest::newRow("no graph") << "no-graph" << true << "no graph";
        QTest::newRow("empty graph") << "empty-graph" << true << "no nodes";
        QTest::newRow("cycle") << "cycle" << true << "cycle through node 'loop_";
        QTest::newRow("dangling input") << "dangling" << false << "node 'adder': input 'ghost'";
        QTest::newRow("custom op") << "custom-op" << false << "node 'frob'";
        QTest::newRow("negative dim") << "negative-dim" << true << "negative dimension";
        QTest::newRow("overflowing dims") << "overflow-dims" << true << "64-bit";
        QTest::newRow("dim 2^62") << "dim-2^62" << false << "overflows";
        QTest::newRow("negative input dim") << "negative-input-dim" << false << "";
        QTest::newRow("external ..") << "external-escape" << false << "outside the model's folder";
        QTest::newRow("external absolute") << "external-absolute" << false << "outside the model's folder";
        QTest::newRow("bad reshape") << "bad-reshape" << false << "node '/bad/Reshape'";
        QTest::newRow("recursive function") << "recursive-function" << true << "nests deeper";
        QTest::newRow("missing output") << "missing-output" << false << "'nowhere'";
        QTest::newRow("conv input too small") << "bad-conv" << false << "node '/tiny/Conv'";
        QTest::newRow("garbage attributes") << "garbage-attrs" << false << "node '/t/Transpose'";
    }
    void bytes()
    {
        QFETCH(QString, which);
        QFETCH(bool, isError);
        QFETCH(QString, mentions);
        const std::string name = "bad.onnx";
        try {
            const Model m = loadModelFromBytes(build(which), name);
            QVERIFY2(!isError, "expected an error");
            const ShapeTable st = evaluateShapes(m, m.defaultBindings());
            bool found = mentions.isEmpty();
            for (const std::string& w : m.warnings) {
                QVERIFY2(w.rfind(name + ": ", 0) == 0, w.c_str());
                QVERIFY2(w.find('\n') == std::string::npos, w.c_str());
                found = found || w.find(mentions.toStdString()) != std::string::npos;
            }
            QVERIFY2(found, qPrintable(QStringLiteral("no warning mentions '%1'").arg(mentions)));
            // Unknown sizes are counted, never zero.
            for (size_t t = 0; t < m.tensors.size(); ++t)
                if (m.tensors[t].shape.state == TensorShape::State::Unknown &&
                    m.tensors[t].role == TensorRole::Activation)
                    QCOMPARE(st.numel[t], int64_t(-1));
        } catch (const Error& e) {
            const std::string msg = e.what();
            QVERIFY2(isError, msg.c_str());
            QVERIFY2(msg.rfind(name + ": ", 0) == 0, msg.c_str());
            QVERIFY2(msg.find('\n') == std::string::npos, msg.c_str());
            QVERIFY2(msg.find(mentions.toStdString()) != std::string::npos, msg.c_str());
        }
    }

    void dim2pow62CountsAsUnknown()
    {
        const Model m = loadModelFromBytes(build("dim-2^62"), "big.onnx");
        const ShapeTable st = evaluateShapes(m, m.defaultBindings());
        const size_t y = size_t(m.outputs[0]);
        QCOMPARE(st.numel[y], int64_t(1) << 62);
        QCOMPARE(st.bytes[y], int64_t(-1)); // 2^64 bytes do not fit
        QCOMPARE(st.unknown, int64_t(1));
    }

    void fileOver2GiB()
    {
        QTemporaryDir dir;
        const std::string p = dir.filePath(QStringLiteral("huge.onnx")).toStdString();
        std::ofstream(p).put('x');
        std::filesystem::resize_file(p, (uintmax_t(1) << 31) + 10); // sparse: no disk used
        try {
            loadModel(p);
            QFAIL("no error");
        } catch (const Error& e) {
            const std::string msg = e.what();
            QVERIFY2(msg.rfind(p + ": ", 0) == 0, msg.c_str());
            QVERIFY2(msg.find("2 GiB") != std::string::npos, msg.c_str());
        }
    }

    void externalFilePresentIsNotMissing()
    {
        QTemporaryDir dir;
        Graph g = relu({int64_t(4)});
        auto* t = g.g->add_initializer();
        t->set_name("w");
        t->set_data_type(onnx::TensorProto::FLOAT);
        t->add_dims(4);
        t->set_data_location(onnx::TensorProto::EXTERNAL);
        auto* kv = t->add_external_data();
        kv->set_key("location");
        kv->set_value("w.bin");
        std::ofstream(dir.filePath(QStringLiteral("m.onnx")).toStdString(), std::ios::binary) << g.bytes();
        const Model absent = loadModel(dir.filePath(QStringLiteral("m.onnx")).toStdString());
        QVERIFY(absent.info.externalDataMissing);
        std::ofstream(dir.filePath(QStringLiteral("w.bin")).toStdString()) << "0123456789abcdef";
        const Model present = loadModel(dir.filePath(QStringLiteral("m.onnx")).toStdString());
        QVERIFY(!present.info.externalDataMissing);
    }

    // Absurd sizes in a config.json (issue 22 item 7): one line naming the file and the field, in well under a
    // second, before a graph is built (10^12 layers took minutes before). Llama-3.1-405B's fields on top.
    void absurdConfig_data()
    {
        QTest::addColumn<QString>("field");
        QTest::addColumn<qint64>("value");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("10^12 layers") << "num_hidden_layers" << qint64(1000000000000) << "'num_hidden_layers'";
        QTest::newRow("hidden 10^9") << "hidden_size" << qint64(1000000000) << "'hidden_size'";
        QTest::newRow("vocab 10^10") << "vocab_size" << qint64(10000000000) << "'vocab_size'";
        QTest::newRow("heads 10^7") << "num_attention_heads" << qint64(10000000) << "'num_attention_heads'";
        QTest::newRow("intermediate 10^9") << "intermediate_size" << qint64(1000000000) << "'intermediate_size'";
        // each field under its limit, their product past 10^14 parameters (hidden 10^6 x intermediate 10^7)
        QTest::newRow("product") << "intermediate_size" << qint64(9000000) << "parameters";
    }
    void absurdConfig()
    {
        QFETCH(QString, field);
        QFETCH(qint64, value);
        QFETCH(QString, mentions);
        QTemporaryDir dir;
        const std::string p = dir.filePath(QStringLiteral("config.json")).toStdString();
        nlohmann::json j = llama405b();
        j[field.toStdString()] = value;
        if (QTest::currentDataTag() == QStringLiteral("product")) {
            j["hidden_size"] = 900000; // not a multiple of 128 heads: head_dim given, as such configs do
            j["head_dim"] = 7030;
        }
        std::ofstream(p) << j.dump();
        const auto t0 = std::chrono::steady_clock::now();
        try {
            loadModel(p);
            QFAIL("no error");
        } catch (const Error& e) {
            const std::string msg = e.what();
            QVERIFY2(msg.rfind(p + ": ", 0) == 0, msg.c_str());
            QVERIFY2(msg.find('\n') == std::string::npos, msg.c_str());
            QVERIFY2(msg.find(mentions.toStdString()) != std::string::npos, msg.c_str());
        }
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        QVERIFY2(s < 0.5, qPrintable(QString::number(s)));
    }

    // The largest dense config.json published opens: meta-llama/Llama-3.1-405B (config.json fields below),
    // 405,853,388,800 parameters (the Hub's safetensors metadata total).
    void largeRealConfigOpens()
    {
        QTemporaryDir dir;
        const std::string p = dir.filePath(QStringLiteral("config.json")).toStdString();
        std::ofstream(p) << llama405b().dump();
        const Model m = loadModel(p);
        QCOMPARE(m.params.trainable, int64_t(405853388800));
    }

private:
    static nlohmann::json llama405b()
    {
        return nlohmann::json::parse(R"({"model_type": "llama", "hidden_size": 16384, "intermediate_size": 53248,
            "num_hidden_layers": 126, "num_attention_heads": 128, "num_key_value_heads": 8, "vocab_size": 128256,
            "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
            "tie_word_embeddings": false})");
    }
};

QTEST_APPLESS_MAIN(TestBadInput)
#include "tst_badinput.moc"
