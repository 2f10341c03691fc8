// Import acceptance: trainable params and buffers equal PyTorch's truth for every corpus model.
#include "headroom/base/error.h"
#include "headroom/load/loader.h"
#include "headroom/shapes/shapes.h"
#include "onnx_fixture.h"

#include <QtTest>

#include <nlohmann/json.hpp>

#include <fstream>

using namespace headroom;

namespace {

nlohmann::json truth()
{
    std::ifstream f(HEADROOM_TEST_DATA "/truth.json");
    return nlohmann::json::parse(f);
}

} // namespace

class TestImport : public QObject
{
    Q_OBJECT
private slots:
    void params_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<qlonglong>("trainable");
        QTest::addColumn<qlonglong>("buffers");
        QTest::addColumn<bool>("architectureOnly");
        const nlohmann::json t = truth();
        for (const auto& [key, m] : t.items()) {
            if (key == "method")
                continue;
            const auto trainable = m.at("trainable_params").get<qlonglong>();
            // The exporter drops BatchNorm's num_batches_tracked buffers (truth.json caveats).
            const auto buffers = m.at("buffers").get<qlonglong>() -
                                 m.at("num_batches_tracked_buffers").get<qlonglong>();
            for (const auto& [kind, file] : m.at("files").items()) {
                const QString f = QString::fromStdString(file.get<std::string>());
                if (kind == "folded_architecture_only") {
                    // Folded BN: every initializer is a conv/linear weight or bias (folded_variant counts).
                    const auto& fv = m.at("folded_variant").at("onnx_initializers");
                    QTest::newRow(qPrintable(f)) << f << fv.at("numel").get<qlonglong>() << 0LL << true;
                } else {
                    QTest::newRow(qPrintable(f)) << f << trainable << buffers << (kind == "architecture_only");
                }
            }
        }
    }
    void params()
    {
        QFETCH(QString, file);
        QFETCH(qlonglong, trainable);
        QFETCH(qlonglong, buffers);
        QFETCH(bool, architectureOnly);
        const Model m = loadModel(std::string(HEADROOM_TEST_DATA "/") + file.toStdString());
        QCOMPARE(qlonglong(m.params.trainable), trainable);
        QCOMPARE(qlonglong(m.params.buffers), buffers);
        QCOMPARE(qlonglong(m.params.trainableBytes), trainable * 4);
        QCOMPARE(m.info.externalDataMissing, architectureOnly);
        QCOMPARE(m.info.hasWeights, !architectureOnly);
        // Every stored tensor counted once: aliases point at their root, never at another alias.
        for (const Tensor& t : m.tensors)
            if (t.aliasOf >= 0)
                QCOMPARE(m.tensors[size_t(t.aliasOf)].aliasOf, -1);
    }

    void foldedInitializerCount()
    {
        const Model m = loadModel(HEADROOM_TEST_DATA "/resnet18.folded.onnx");
        int stored = 0;
        for (const Tensor& t : m.tensors)
            stored += t.producer < 0 && t.role == TensorRole::Parameter;
        QCOMPARE(stored, truth()["resnet18"]["folded_variant"]["onnx_initializers"]["count"].get<int>());
    }

    void tiedWeightsCountedOnce()
    {
        const Model m = loadModel(HEADROOM_TEST_DATA "/tiny_gpt.onnx");
        int idx = -1;
        for (size_t i = 0; i < m.tensors.size(); ++i)
            if (m.tensors[i].name == "tok_emb.weight")
                idx = static_cast<int>(i);
        QVERIFY(idx >= 0);
        const Tensor& emb = m.tensors[size_t(idx)];
        QCOMPARE(emb.role, TensorRole::Parameter);
        QCOMPARE(emb.consumers.size(), size_t(2)); // Gather and the LM head's Transpose
        QCOMPARE(m.nodes[size_t(emb.consumers[0])].op, std::string("Gather"));
        QCOMPARE(m.nodes[size_t(emb.consumers[1])].op, std::string("Transpose"));
    }

    void info()
    {
        const Model m = loadModel(HEADROOM_TEST_DATA "/resnet18.onnx");
        // sha256sum tests/data/resnet18.onnx
        QCOMPARE(m.info.sha256, std::string("bbfcd4cf957e1db8947cbc4b73e84ee7241b263e09d099e88c235e1247baab3e"));
        QCOMPARE(m.info.producer, std::string("pytorch 1.13.0"));
        QCOMPARE(m.info.irVersion, int64_t(7));
        QCOMPARE(m.info.opsets.size(), size_t(1));
        QCOMPARE(m.info.opsets[0], (std::pair<std::string, int64_t>("", 14)));
        QCOMPARE(m.info.fileSize, int64_t(24866));
        QCOMPARE(m.symbols.size(), size_t(1));
        QCOMPARE(m.symbols[0].name, std::string("batch"));
        QVERIFY(m.symbols[0].isBatch);
        QCOMPARE(m.batchSymbol, 0);
        QCOMPARE(m.inputs.size(), size_t(1));
        QCOMPARE(m.tensors[size_t(m.inputs[0])].role, TensorRole::Input);
        QCOMPARE(m.outputs.size(), size_t(1));
        QVERIFY(m.tensors[size_t(m.outputs[0])].isGraphOutput);
        // Topological order: every input of a node is produced earlier.
        for (size_t k = 0; k < m.nodes.size(); ++k)
            for (int in : m.nodes[k].inputs)
                if (in >= 0)
                    QVERIFY(m.tensors[size_t(in)].producer < static_cast<int>(k));
        // BatchNorm running stats are buffers; the full and architecture-only files agree.
        int buffers = 0;
        for (const Tensor& t : m.tensors)
            buffers += t.role == TensorRole::Buffer && t.name.find("running_") != std::string::npos;
        QCOMPARE(buffers, 40);
    }

    void fullMatchesArchitectureOnly()
    {
        const Model a = loadModel(HEADROOM_TEST_DATA "/squeezenet1_1.onnx");
        const Model b = loadModel(HEADROOM_TEST_DATA "/squeezenet1_1.full.onnx");
        QVERIFY(a.info.sha256 != b.info.sha256);
        QCOMPARE(a.nodes.size(), b.nodes.size());
        QCOMPARE(a.params.trainable, b.params.trainable);
        QVERIFY(!b.info.externalDataMissing);
    }

    void symbolValues()
    {
        LoadOptions o;
        o.symbolValues = {{"batch", 8}, {"seq", 64}, {"nope", 3}};
        const Model m = loadModel(HEADROOM_TEST_DATA "/tiny_gpt.onnx", o);
        QCOMPARE(m.symbols.size(), size_t(2));
        QCOMPARE(m.symbols[size_t(m.symbolIndex("batch"))].value, int64_t(8));
        QCOMPARE(m.symbols[size_t(m.symbolIndex("seq"))].value, int64_t(64));
        bool warned = false;
        for (const std::string& w : m.warnings)
            warned = warned || w.find("'nope'") != std::string::npos;
        QVERIFY(warned);
        const Model d = loadModel(HEADROOM_TEST_DATA "/tiny_gpt.onnx");
        QCOMPARE(d.symbols[size_t(d.symbolIndex("batch"))].value, int64_t(1));
        QCOMPARE(d.symbols[size_t(d.symbolIndex("seq"))].value, int64_t(128));
    }

    // Model-local functions are inlined with their nodes scoped under the calling node.
    void localFunction()
    {
        fixture::Graph g(14, 8);
        auto* dom = g.model.add_opset_import();
        dom->set_domain("local");
        dom->set_version(1);
        auto* f = g.model.add_functions();
        f->set_name("Block");
        f->set_domain("local");
        f->add_input("a");
        f->add_input("w");
        f->add_output("out");
        auto* o = f->add_opset_import();
        o->set_domain("");
        o->set_version(14);
        auto* mm = f->add_node();
        mm->set_op_type("MatMul");
        mm->add_input("a");
        mm->add_input("w");
        mm->add_output("h");
        auto* r = f->add_node();
        r->set_op_type("Relu");
        r->add_input("h");
        r->add_output("out");
        g.input("x", {std::string("batch"), int64_t(16)});
        g.weight("w1", {16, 32});
        g.node("Block", "/enc/block0", {"x", "w1"}, {"y"})->set_domain("local");
        g.output("y");
        const Model m = loadModelFromBytes(g.bytes(), "fn.onnx");
        QCOMPARE(m.nodes.size(), size_t(2));
        QCOMPARE(m.nodes[0].op, std::string("MatMul"));
        QCOMPARE(m.nodes[0].name, std::string("/enc/block0/MatMul"));
        QCOMPARE(m.params.trainable, int64_t(16 * 32));
        QCOMPARE(shapeString(m, m.outputs[0], nullptr), std::string("[batch, 32]"));
        QCOMPARE(m.layers[size_t(m.nodes[1].layer)].path, std::string("enc/block0"));
    }

    // Stored tensors inside If branches count; the If node carries the body.
    void subgraphInitializers()
    {
        fixture::Graph g;
        g.input("x", {int64_t(4), int64_t(8)});
        g.input("cond", {}, onnx::TensorProto::BOOL);
        auto* n = g.node("If", "/gate/If", {"cond"}, {"y"});
        for (const char* branch : {"then_branch", "else_branch"}) {
            auto* a = n->add_attribute();
            a->set_name(branch);
            a->set_type(onnx::AttributeProto::GRAPH);
            onnx::GraphProto* body = a->mutable_g();
            body->set_name(branch);
            auto* w = body->add_initializer();
            w->set_name(std::string(branch) + ".w");
            w->set_data_type(onnx::TensorProto::FLOAT);
            w->add_dims(8);
            w->add_dims(8);
            auto* mm = body->add_node();
            mm->set_op_type("MatMul");
            mm->add_input("x"); // outer-scope value
            mm->add_input(w->name());
            mm->add_output(std::string(branch) + ".out");
            auto* out = body->add_output();
            out->set_name(mm->output(0));
            fixture::Graph::setType(out, onnx::TensorProto::FLOAT, {int64_t(4), int64_t(8)});
        }
        g.output("y");
        const Model m = loadModelFromBytes(g.bytes(), "if.onnx");
        QCOMPARE(m.params.trainable, int64_t(2 * 64));
        int inBody = 0;
        for (const Tensor& t : m.tensors)
            inBody += t.inSubgraph;
        QCOMPARE(inBody, 2);
        QVERIFY(m.nodes[0].hasSubgraphs);
        QCOMPARE(m.nodes[0].implicitInputs, 1); // x, read by the bodies
        QCOMPARE(m.tensors[size_t(m.nodes[0].inputs.back())].name, std::string("x"));
    }

    void missingFile()
    {
        try {
            loadModel("/nonexistent/model.onnx");
            QFAIL("no error");
        } catch (const Error& e) {
            QVERIFY(std::string(e.what()).find("/nonexistent/model.onnx: ") == 0);
        }
    }
};

QTEST_APPLESS_MAIN(TestImport)
#include "tst_import.moc"
