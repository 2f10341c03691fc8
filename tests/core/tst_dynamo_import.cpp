// Today's exports (PyTorch's dynamo exporter, Hugging Face): module paths from metadata_props or parameter
// names, sequence ops, Shape start/end, value_info dim expressions, and no verdict while sizes are unknown.
#include "headroom/hardware/multigpu.h"
#include "headroom/load/loader.h"
#include "headroom/memory/engine.h"
#include "headroom/memory/kvcache.h"
#include "headroom/report/report.h"
#include "headroom/shapes/shapes.h"
#include "onnx_fixture.h"

#include <QFile>
#include <QtTest>

using namespace headroom;

namespace {

const std::vector<std::string> kSymbols{"batch", "seq"};

// metadata_props (NodeProto field 9, ONNX 1.16) written the way a newer ONNX writes it: ONNX 1.12's classes
// do not have the field, so it goes in as unknown length-delimited field 9 holding a StringStringEntryProto.
void addMetadata(onnx::NodeProto* n, const std::string& key, const std::string& value)
{
    onnx::StringStringEntryProto e;
    e.set_key(key);
    e.set_value(value);
    n->mutable_unknown_fields()->AddLengthDelimited(9, e.SerializeAsString());
}

std::string layerPath(const Model& m, size_t node) { return m.layers[size_t(m.nodes[node].layer)].path; }

int tensorIndex(const Model& m, const std::string& name)
{
    for (size_t i = 0; i < m.tensors.size(); ++i)
        if (m.tensors[i].name == name)
            return static_cast<int>(i);
    return -1;
}

const LayerNode* findLayer(const Model& m, const std::string& path)
{
    for (const LayerNode& l : m.layers)
        if (l.path == path)
            return &l;
    return nullptr;
}

QList<qlonglong> dimsAt(const Model& m, const std::string& tensor, const Bindings& b)
{
    QList<qlonglong> out;
    const int t = tensorIndex(m, tensor);
    if (t < 0)
        return {-2};
    for (int64_t d : concreteDims(m, t, b))
        out << d;
    return out;
}

// Scalar / 1-D int64 Constant node.
void constInts(fixture::Graph& g, const std::string& name, const std::vector<int64_t>& v, bool scalar = false)
{
    auto* n = g.node("Constant", "c_" + name, {}, {name});
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    auto* t = a->mutable_t();
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar)
        t->add_dims(static_cast<int64_t>(v.size()));
    for (int64_t x : v)
        t->add_int64_data(x);
}

Config onGpu(const Model& m, int64_t capacity, Mode mode = Mode::Train)
{
    Config c;
    c.symbols = m.defaultBindings();
    c.mode = mode;
    c.gpu.name = "test";
    c.gpu.capacity = capacity;
    c.gpu.context = 0; // only the model's own bytes: the boundaries below are computed from them
    c.gpu.workspace = 0;
    c.allocator = AllocatorMode::Exact;
    return c;
}

} // namespace

class TestDynamoImport : public QObject
{
    Q_OBJECT
private slots:
    // value_info dims as the dynamo exporter prints them (sympy), at batch 3, seq 11.
    void formula_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("parses");
        QTest::addColumn<qlonglong>("value"); // -1: no integral value
        QTest::newRow("product") << "batch*seq" << true << 33LL;
        QTest::newRow("scaled") << "2*seq" << true << 22LL;
        QTest::newRow("plus one") << "seq + 1" << true << 12LL;
        QTest::newRow("floor") << "floor(seq/2)" << true << 5LL;
        QTest::newRow("ceiling") << "ceiling(seq/2)" << true << 6LL;
        QTest::newRow("floordiv") << "(seq//4)" << true << 2LL;
        QTest::newRow("Max") << "Max(1, seq - 20)" << true << 1LL;
        QTest::newRow("nested") << "batch*(seq - 1)" << true << 30LL;
        QTest::newRow("mod") << "Mod(seq, 4)" << true << 3LL;
        QTest::newRow("constant") << "64" << true << 64LL;
        QTest::newRow("non-integral") << "seq/2" << true << -1LL;
        QTest::newRow("unknown symbol") << "s77*batch" << false << -1LL;
        QTest::newRow("dangling operator") << "batch*" << false << -1LL;
    }
    void formula()
    {
        QFETCH(QString, text);
        QFETCH(bool, parses);
        QFETCH(qlonglong, value);
        const auto f = DimFormula::parse(text.toStdString(), kSymbols);
        QCOMPARE(f.has_value(), parses);
        if (!f)
            return;
        const auto v = f->eval({3, 11});
        QCOMPARE(v ? qlonglong(*v) : -1LL, value);
    }

    // The multilinear ones become DimExprs (the slider's fast path); divisions do not.
    void formulaPolynomial_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("poly"); // "" : not a DimExpr
        QTest::newRow("product") << "batch*seq"
                                 << "batch*seq";
        QTest::newRow("affine") << "2*seq + 1"
                                << "2*seq + 1";
        QTest::newRow("expanded") << "batch*(seq - 1)"
                                  << "batch*seq - batch";
        QTest::newRow("square") << "seq*seq"
                                << "";
        QTest::newRow("floor") << "floor(seq/2)"
                               << "";
    }
    void formulaPolynomial()
    {
        QFETCH(QString, text);
        QFETCH(QString, poly);
        const auto f = DimFormula::parse(text.toStdString(), kSymbols);
        QVERIFY(f);
        const auto e = f->polynomial();
        QCOMPARE(e ? QString::fromStdString(e->toString(kSymbols)) : QString(), poly);
    }

    void metadataModules_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("path");
        QTest::newRow("name_scopes, decoder") << "pkg.torch.onnx.name_scopes"
                                              << "['', 'model', 'model.layers.3', 'model.layers.3.self_attn', "
                                                 "'model.layers.3.self_attn.q_proj', 'linear']"
                                              << "model/layers.3/self_attn/q_proj";
        // A called Sequential's child keeps the container's name, as TorchScript's "/layer1/layer1.0/conv1".
        QTest::newRow("name_scopes, resnet") << "pkg.torch.onnx.name_scopes"
                                             << "['', 'layer1', 'layer1.0', 'layer1.0.conv1', 'conv2d']"
                                             << "layer1/layer1.0/conv1";
        QTest::newRow("namespace") << "namespace"
                                   << ": __main__.Wrapper/model: LlamaModel/model.layers.3: LlamaDecoderLayer/"
                                      "model.layers.3.mlp: LlamaMLP/model.layers.3.mlp.up_proj: Linear/linear: "
                                      "aten.linear.default"
                                   << "model/layers.3/mlp/up_proj";
        QTest::newRow("no module (hook)") << "pkg.torch.onnx.name_scopes"
                                          << "['_empty_nn_module_stack_from_metadata_hook', 'sym_size_int_65']"
                                          << "";
    }
    void metadataModules()
    {
        QFETCH(QString, key);
        QFETCH(QString, value);
        QFETCH(QString, path);
        fixture::Graph g(18, 10);
        g.input("x", {std::string("batch"), int64_t(8)});
        g.weight("val_3", {8, 8}); // the dynamo exporter's own initializer names say nothing
        auto* mm = g.node("MatMul", "node_MatMul_0", {"x", "val_3"}, {"y"});
        addMetadata(mm, "pkg.torch.onnx.class_hierarchy", "['torch.nn.modules.linear.Linear', 'aten.linear.default']");
        addMetadata(mm, key.toStdString(), value.toStdString());
        g.output("y");
        const Model m = loadModelFromBytes(g.bytes(), "meta.onnx");
        QCOMPARE(QString::fromStdString(layerPath(m, 0)), path);
        QCOMPARE(QString::fromStdString(m.nodePath(0)), path.isEmpty() ? QString("node_MatMul_0") : path + "/MatMul");
        QVERIFY(m.nodes[0].moduleFromMetadata);
    }

    // Without metadata (the exporter's optimizer dropped it): the state_dict names of the parameters a node
    // consumes, and for parameter-free nodes the modules their neighbours share.
    void parameterNames()
    {
        fixture::Graph g(18, 10);
        g.input("x", {std::string("batch"), int64_t(8)});
        g.weight("transformer.h.0.attn.c_attn.weight", {8, 8});
        g.weight("transformer.h.0.attn.c_attn.bias", {8});
        g.weight("transformer.h.0.attn.c_proj.weight", {8, 8});
        g.weight("transformer.h.1.mlp.c_fc.weight", {8, 8});
        g.node("MatMul", "node_MatMul_0", {"x", "transformer.h.0.attn.c_attn.weight"}, {"a"});
        g.node("Add", "node_Add_1", {"a", "transformer.h.0.attn.c_attn.bias"}, {"b"});
        g.node("Relu", "node_Relu_2", {"b"}, {"c"});
        g.node("MatMul", "node_MatMul_3", {"c", "transformer.h.0.attn.c_proj.weight"}, {"d"});
        g.node("Relu", "node_Relu_4", {"d"}, {"e"});
        g.node("MatMul", "node_MatMul_5", {"e", "transformer.h.1.mlp.c_fc.weight"}, {"f"});
        g.output("f");
        const Model m = loadModelFromBytes(g.bytes(), "gpt2ish.onnx");
        const std::vector<std::string> expected{"transformer/h.0/attn/c_attn",
                                                "transformer/h.0/attn/c_attn",
                                                "transformer/h.0/attn",
                                                "transformer/h.0/attn/c_proj",
                                                "transformer",
                                                "transformer/h.1/mlp/c_fc"};
        QCOMPARE(m.nodes.size(), expected.size());
        for (size_t k = 0; k < expected.size(); ++k)
            QCOMPARE(layerPath(m, k), expected[k]);
        const LayerNode* attn = findLayer(m, "transformer/h.0/attn");
        QVERIFY(attn);
        QCOMPARE(attn->params, int64_t(8 * 8 + 8 + 8 * 8));
        QCOMPARE(m.nodePath(2), std::string("transformer/h.0/attn/Relu"));
        QVERIFY(!m.nodes[0].moduleFromMetadata);
    }

    // The same Hugging Face export with its metadata stripped (what another tool's pass leaves). Its optimizer
    // folded each Linear weight's transpose into an unnamed initializer ("val_146") and merged the equal
    // all-ones norm weights into one tensor that every norm reads: names that would mislead. What stays
    // honest: the embedding (one reader, its own name), and no node put in a module by a shared tensor.
    void parameterNamesOnLlama()
    {
        QFile f(QStringLiteral(HEADROOM_TEST_DATA "/hf/llama_small.onnx"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray bytes = f.readAll();
        onnx::ModelProto mp;
        QVERIFY(mp.ParseFromArray(bytes.constData(), int(bytes.size())));
        for (onnx::NodeProto& n : *mp.mutable_graph()->mutable_node())
            n.mutable_unknown_fields()->Clear();
        const Model m = loadModelFromBytes(mp.SerializeAsString(), "llama_no_metadata.onnx");
        bool embedding = false;
        for (size_t k = 0; k < m.nodes.size(); ++k) {
            QVERIFY(!m.nodes[k].moduleFromMetadata);
            QVERIFY2(layerPath(m, k).find("input_layernorm") == std::string::npos, m.nodePath(int(k)).c_str());
            embedding = embedding || (m.nodes[k].op == "Gather" && layerPath(m, k) == "m/model/embed_tokens");
        }
        QVERIFY(embedding);
    }

    // Sequence ops (optimize=False exports) and Shape start/end, at two bindings.
    void sequenceOps_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QList<qlonglong>>("at3x10");
        QTest::addColumn<QList<qlonglong>>("at5x7");
        QTest::newRow("split list, SequenceAt 1") << "at" << QList<qlonglong>{3, 10, 32} << QList<qlonglong>{5, 7, 32};
        QTest::newRow("split scalar 40, SequenceAt -1")
            << "chunk" << QList<qlonglong>{3, 10, 16} << QList<qlonglong>{5, 7, 16};
        QTest::newRow("unbind seq, SequenceAt 4") << "unbind" << QList<qlonglong>{3, 96} << QList<qlonglong>{5, 96};
        QTest::newRow("ConcatFromSequence") << "concat" << QList<qlonglong>{3, 10, 96} << QList<qlonglong>{5, 7, 96};
        QTest::newRow("ConcatFromSequence new_axis")
            << "stack" << QList<qlonglong>{2, 3, 10, 48} << QList<qlonglong>{2, 5, 7, 48};
        QTest::newRow("Empty, Insert, Erase") << "insert" << QList<qlonglong>{3, 20, 96} << QList<qlonglong>{5, 14, 96};
        QTest::newRow("SequenceLength feeds Reshape")
            << "length" << QList<qlonglong>{960, 3} << QList<qlonglong>{1120, 3};
        QTest::newRow("SequenceConstruct") << "construct" << QList<qlonglong>{3, 10, 96} << QList<qlonglong>{5, 7, 96};
        QTest::newRow("Shape start 1 end -1") << "shape" << QList<qlonglong>{288, 10} << QList<qlonglong>{480, 7};
    }
    void sequenceOps()
    {
        QFETCH(QString, kind);
        QFETCH(QList<qlonglong>, at3x10);
        QFETCH(QList<qlonglong>, at5x7);
        fixture::Graph g(18, 10);
        g.input("x", {std::string("batch"), std::string("seq"), int64_t(96)});
        auto setInt = [](onnx::NodeProto* n, const char* a, int64_t v) { fixture::Graph::intAttr(n, a, v); };
        if (kind == "at" || kind == "chunk" || kind == "unbind") {
            onnx::NodeProto* s = nullptr;
            if (kind == "at") {
                constInts(g, "split", {32, 32, 32});
                s = g.node("SplitToSequence", "split", {"x", "split"}, {"s"});
                setInt(s, "axis", 2);
                constInts(g, "pos", {1}, true);
            } else if (kind == "chunk") {
                constInts(g, "split", {40}, true);
                s = g.node("SplitToSequence", "split", {"x", "split"}, {"s"});
                setInt(s, "axis", -1);
                constInts(g, "pos", {-1}, true);
            } else {
                s = g.node("SplitToSequence", "split", {"x"}, {"s"});
                setInt(s, "axis", 1);
                setInt(s, "keepdims", 0);
                constInts(g, "pos", {4}, true);
            }
            g.node("SequenceAt", "at", {"s", "pos"}, {"y"});
        } else if (kind == "concat" || kind == "stack") {
            constInts(g, "split", kind == "concat" ? std::vector<int64_t>{32, 64} : std::vector<int64_t>{48, 48});
            setInt(g.node("SplitToSequence", "split", {"x", "split"}, {"s"}), "axis", 2);
            auto* c = g.node("ConcatFromSequence", "cat", {"s"}, {"y"});
            setInt(c, "axis", kind == "concat" ? 2 : 0);
            if (kind == "stack")
                setInt(c, "new_axis", 1);
        } else if (kind == "insert") {
            setInt(g.node("SequenceEmpty", "empty", {}, {"e"}), "dtype", onnx::TensorProto::FLOAT);
            g.node("SequenceInsert", "ins1", {"e", "x"}, {"s1"});
            g.node("SequenceInsert", "ins2", {"s1", "x"}, {"s2"});
            g.node("SequenceInsert", "ins3", {"s2", "x"}, {"s3"});
            constInts(g, "pos", {0}, true);
            g.node("SequenceErase", "erase", {"s3", "pos"}, {"s4"});
            setInt(g.node("ConcatFromSequence", "cat", {"s4"}, {"y"}), "axis", 1);
        } else if (kind == "length") {
            constInts(g, "split", {32, 32, 32});
            setInt(g.node("SplitToSequence", "split", {"x", "split"}, {"s"}), "axis", 2);
            g.node("SequenceLength", "len", {"s"}, {"n"});
            constInts(g, "zero", {0});
            g.node("Unsqueeze", "unsq", {"n", "zero"}, {"n1"});
            constInts(g, "minus1", {-1});
            setInt(g.node("Concat", "target", {"minus1", "n1"}, {"t"}), "axis", 0);
            g.node("Reshape", "reshape", {"x", "t"}, {"y"});
        } else if (kind == "construct") {
            g.node("Relu", "relu", {"x"}, {"r"});
            g.node("SequenceConstruct", "seq", {"x", "r"}, {"s"});
            constInts(g, "pos", {1}, true);
            g.node("SequenceAt", "at", {"s", "pos"}, {"y"});
        } else if (kind == "shape") {
            auto* sh = g.node("Shape", "shape", {"x"}, {"sh"});
            setInt(sh, "start", 1);
            setInt(sh, "end", -1);
            constInts(g, "minus1", {-1});
            setInt(g.node("Concat", "target", {"minus1", "sh"}, {"t"}), "axis", 0);
            g.node("Reshape", "reshape", {"x", "t"}, {"y"});
        }
        g.output("y");
        const Model m = loadModelFromBytes(g.bytes(), "seq.onnx");
        QCOMPARE(dimsAt(m, "y", {3, 10}), at3x10);
        QCOMPARE(dimsAt(m, "y", {5, 7}), at5x7);
        QCOMPARE(evaluateShapes(m, {3, 10}).unknown, int64_t(0));
        QCOMPARE(evaluateShapes(m, {5, 7}).unknown, int64_t(0));
    }

    // Opset 18-23 ops that ONNX 1.12's own inference does not know at the file's opset: the evaluator's rules.
    void newerOps_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<QList<qlonglong>>("expected"); // output dims at batch 3, seq 10
        QTest::newRow("GridSample") << "GridSample" << QList<qlonglong>{3, 4, 5, 6};
        QTest::newRow("AffineGrid") << "AffineGrid" << QList<qlonglong>{3, 7, 9, 2};
        QTest::newRow("CenterCropPad") << "CenterCropPad" << QList<qlonglong>{3, 4, 5, 5};
        QTest::newRow("Col2Im") << "Col2Im" << QList<qlonglong>{3, 1, 5, 5};
        QTest::newRow("HannWindow") << "HannWindow" << QList<qlonglong>{16};
        // Real signals [batch, 4, seq, 1] along seq, onesided: seq/2 + 1 = 6 bins of (re, im).
        QTest::newRow("DFT onesided") << "DFT" << QList<qlonglong>{3, 4, 6, 2};
        QTest::newRow("RMSNormalization") << "RMSNormalization" << QList<qlonglong>{3, 4, 10, 10};
        QTest::newRow("RotaryEmbedding") << "RotaryEmbedding" << QList<qlonglong>{3, 4, 10, 10};
        // No rule of ours: ONNX 1.12's inference, asked at the newest opset it knows.
        QTest::newRow("Det (ONNX's inference)") << "Det" << QList<qlonglong>{3, 10};
    }
    void newerOps()
    {
        QFETCH(QString, op);
        QFETCH(QList<qlonglong>, expected);
        fixture::Graph g(op == "RMSNormalization" || op == "RotaryEmbedding" || op == "Det" ? 23 : 20, 10);
        g.input("x", {std::string("batch"), int64_t(4), std::string("seq"), int64_t(10)});
        const std::string o = op.toStdString();
        if (op == "GridSample") {
            g.input("grid", {std::string("batch"), int64_t(5), int64_t(6), int64_t(2)});
            g.node(o, "n", {"x", "grid"}, {"y"});
        } else if (op == "AffineGrid") {
            g.input("theta", {std::string("batch"), int64_t(2), int64_t(3)});
            auto* sh = g.node("Shape", "shape", {"x"}, {"n"});
            fixture::Graph::intAttr(sh, "end", 2);
            constInts(g, "hw", {7, 9});
            fixture::Graph::intAttr(g.node("Concat", "size", {"n", "hw"}, {"size"}), "axis", 0);
            g.node(o, "n", {"theta", "size"}, {"y"});
        } else if (op == "CenterCropPad") {
            constInts(g, "crop", {5, 5});
            auto* n = g.node(o, "n", {"x", "crop"}, {"y"});
            fixture::Graph::intsAttr(n, "axes", {2, 3});
        } else if (op == "Col2Im") {
            g.input("cols", {std::string("batch"), int64_t(4), int64_t(16)}); // C * 2 * 2 = 4 -> C = 1; 4x4 blocks
            constInts(g, "image", {5, 5});
            constInts(g, "block", {2, 2});
            g.node(o, "n", {"cols", "image", "block"}, {"y"});
        } else if (op == "Det") {
            g.input("mats", {std::string("batch"), std::string("seq"), int64_t(5), int64_t(5)});
            g.node(o, "n", {"mats"}, {"y"});
        } else if (op == "DFT") {
            g.input("sig", {std::string("batch"), int64_t(4), std::string("seq"), int64_t(1)});
            constInts(g, "axis", {2}, true);
            auto* n = g.node(o, "n", {"sig", "", "axis"}, {"y"});
            fixture::Graph::intAttr(n, "onesided", 1);
        } else if (op == "HannWindow") {
            constInts(g, "size", {16}, true);
            g.node(o, "n", {"size"}, {"y"});
        } else {
            g.weight("scale", {10});
            g.node(o, "n", {"x", "scale"}, {"y"});
        }
        g.output("y");
        const Model m = loadModelFromBytes(g.bytes(), "newer.onnx");
        QCOMPARE(dimsAt(m, "y", {3, 10}), expected);
    }

    // The exporter's value_info fills what inference cannot (a custom op here) and is checked against it.
    void valueInfo_data()
    {
        QTest::addColumn<QStringList>("declared"); // dims of the custom op's output; "#n" = dim_value n
        QTest::addColumn<QList<qlonglong>>("at3x10");
        QTest::addColumn<QList<qlonglong>>("at5x7");
        QTest::newRow("batch*seq, 2*seq")
            << QStringList{"batch*seq", "2*seq"} << QList<qlonglong>{30, 20} << QList<qlonglong>{35, 14};
        QTest::newRow("seq + 1") << QStringList{"seq + 1"} << QList<qlonglong>{11} << QList<qlonglong>{8};
        QTest::newRow("floor(seq/2), 4") << QStringList{"floor(seq/2)", "#4"} << QList<qlonglong>{5, 4}
                                         << QList<qlonglong>{3, 4};
        QTest::newRow("a symbol no input has") << QStringList{"s99", "#4"} << QList<qlonglong>{} << QList<qlonglong>{};
    }
    void valueInfo()
    {
        QFETCH(QStringList, declared);
        QFETCH(QList<qlonglong>, at3x10);
        QFETCH(QList<qlonglong>, at5x7);
        fixture::Graph g(18, 10);
        g.input("x", {std::string("batch"), std::string("seq")});
        auto* dom = g.model.add_opset_import();
        dom->set_domain("com.example");
        dom->set_version(1);
        auto* n = g.node("Mystery", "node_Mystery_0", {"x"}, {"y"});
        n->set_domain("com.example");
        g.node("Relu", "node_Relu_1", {"y"}, {"z"});
        std::vector<fixture::Dim> dims;
        for (const QString& d : declared)
            dims.push_back(d.startsWith('#') ? fixture::Dim(int64_t(d.mid(1).toLongLong()))
                                             : fixture::Dim(d.toStdString()));
        auto* vi = g.g->add_value_info();
        vi->set_name("y");
        fixture::Graph::setType(vi, onnx::TensorProto::FLOAT, dims);
        g.output("z");
        const Model m = loadModelFromBytes(g.bytes(), "vi.onnx");
        QCOMPARE(dimsAt(m, "z", {3, 10}), at3x10);
        QCOMPARE(dimsAt(m, "z", {5, 7}), at5x7);
        QCOMPARE(evaluateShapes(m, {3, 10}).unknown, at3x10.isEmpty() ? int64_t(2) : int64_t(0));
    }

    // Where the file and the inference disagree, the inference is used and the user is told.
    void valueInfoDisagrees()
    {
        fixture::Graph g(18, 10);
        g.input("x", {std::string("batch"), std::string("seq")});
        g.node("Relu", "node_Relu_0", {"x"}, {"y"});
        auto* vi = g.g->add_value_info();
        vi->set_name("y");
        fixture::Graph::setType(vi, onnx::TensorProto::FLOAT, {std::string("batch"), std::string("seq + 1")});
        g.output("y");
        const Model m = loadModelFromBytes(g.bytes(), "vi_bad.onnx");
        QCOMPARE(dimsAt(m, "y", {3, 10}), (QList<qlonglong>{3, 10}));
        bool warned = false;
        for (const std::string& w : m.warnings)
            warned = warned || (w.find("disagrees") != std::string::npos && w.find("'y'") != std::string::npos);
        QVERIFY(warned);
    }

    // A Reshape whose target is an absent external initializer: sizes after it cannot be known, so there is
    // no verdict and no max batch, in the core result and in the JSON.
    void absentDataMeansUnknownFit()
    {
        const Model m = loadModel(HEADROOM_TEST_DATA "/exports/reshape_absent.onnx");
        const Config c = onGpu(m, int64_t(24) << 30);
        const Report r = buildReport(m, c);
        QVERIFY(r.fit.sizesUnknown);
        QVERIFY(!r.fit.fits);
        QCOMPARE(r.fit.maxBatch, kUnknownMax);
        QCOMPARE(r.fit.unknownTensors, int64_t(2)); // the Reshape's output and the Relu after it
        QCOMPARE(m.nodePath(r.fit.unknownNode), std::string("net/Reshape"));
        QCOMPARE(unknownFitText(m, r.fit),
                 std::string("cannot tell: 2 tensors of unknown size, first at node net/Reshape"));
        QCOMPARE(maxBatch(m, c), kUnknownMax);
        const nlohmann::json j = toJson(m, r);
        QVERIFY(j["fit"]["fits"].is_null());
        QVERIFY(j["fit"]["max_batch"].is_null());
        QCOMPARE(j["fit"]["unknown"]["tensors"].get<int64_t>(), int64_t(2));
        QVERIFY(r.advice.empty());
        QVERIFY(r.batchSweep.empty());
        Config ddp = c;
        ddp.gpus = 2;
        ddp.strategy = Strategy::DDP;
        const Report rd = buildReport(m, ddp);
        QVERIFY(rd.fit.sizesUnknown);
        QCOMPARE(rd.fit.maxBatch, kUnknownMax);
        QCOMPARE(maxGlobalBatch(makePlan(m), ddp), kUnknownMax);
    }

    // A need that stays under capacity up to the search limit gives no number (never the limit itself).
    void maxBatchNeverTheLimit()
    {
        fixture::Graph g;
        g.input("x", {std::string("batch"), int64_t(1)});
        g.node("Relu", "relu", {"x"}, {"y"});
        g.output("y");
        const Model m = loadModelFromBytes(g.bytes(), "tiny.onnx");
        Config c = onGpu(m, int64_t(1) << 40, Mode::Infer);
        QCOMPARE(maxBatch(m, c), kUnknownMax);
        Config ddp = c; // the global-batch search of several GPUs alike
        ddp.gpus = 2;
        ddp.strategy = Strategy::DDP;
        ddp.allocator = AllocatorMode::Caching;
        QCOMPARE(maxGlobalBatch(makePlan(m), ddp), kUnknownMax);
        c.gpu.capacity = int64_t(4) << 20; // 4 MiB: now a real boundary exists (input + output at ~512k)
        const int64_t mb = maxBatch(m, c);
        QVERIFY2(mb > 0, qPrintable(QString::number(mb)));
        QVERIFY(neededBytes(c, evaluate(m, [&] {
                                Config k = c;
                                k.symbols[0] = mb;
                                return k;
                            }())) <= c.gpu.capacity);
        QVERIFY(neededBytes(c, evaluate(m, [&] {
                                Config k = c;
                                k.symbols[0] = mb + 1;
                                return k;
                            }())) > c.gpu.capacity);
    }

    // --max SYMBOL: the largest value that fits, checked against the need one step above it.
    void maxSymbol_data()
    {
        QTest::addColumn<QString>("symbol");
        QTest::addColumn<qlonglong>("capacity");
        QTest::addColumn<int>("allocator");
        QTest::newRow("seq, 256 MiB, exact") << "seq" << qlonglong(256) * (1 << 20) << int(AllocatorMode::Exact);
        QTest::newRow("seq, 1 GiB, caching") << "seq" << (qlonglong(1) << 30) << int(AllocatorMode::Caching);
        QTest::newRow("batch, 512 MiB, exact") << "batch" << qlonglong(512) * (1 << 20) << int(AllocatorMode::Exact);
    }
    void maxSymbol()
    {
        QFETCH(QString, symbol);
        QFETCH(qlonglong, capacity);
        QFETCH(int, allocator);
        fixture::Graph g;
        g.input("x", {std::string("batch"), std::string("seq"), int64_t(256)});
        g.weight("proj.weight", {256, 256});
        g.node("MatMul", "/proj/MatMul", {"x", "proj.weight"}, {"h"});
        g.node("Relu", "/act/Relu", {"h"}, {"y"});
        g.output("y");
        const Model m = loadModelFromBytes(g.bytes(), "lm.onnx");
        Config c = onGpu(m, capacity);
        c.allocator = static_cast<AllocatorMode>(allocator);
        c.symbols = {4, 128};
        const int s = m.symbolIndex(symbol.toStdString());
        const EnginePlan plan = makePlan(m);
        const int64_t v = maxSymbolValue(plan, c, s);
        QVERIFY2(v > 1, qPrintable(QString::number(v)));
        auto needAt = [&](int64_t value) {
            Config k = c;
            k.symbols[size_t(s)] = value;
            return neededBytes(k, evaluate(plan, k));
        };
        QVERIFY(needAt(v) <= c.gpu.capacity);
        QVERIFY(needAt(v + 1) > c.gpu.capacity);
        if (symbol == "batch")
            QCOMPARE(v, maxBatch(plan, c));
        ReportOptions ro;
        ro.maxSymbol = s;
        const nlohmann::json j = toJson(m, buildReport(plan, c, ro), ro);
        QCOMPARE(QString::fromStdString(j["fit"]["max"]["symbol"].get<std::string>()), symbol);
        QCOMPARE(j["fit"]["max"]["value"].get<int64_t>(), v);
    }

    // KV-cache planning: decoder exports that take the past keys/values as inputs.
    void kvCachePerToken_data()
    {
        QTest::addColumn<int>("layers");
        QTest::addColumn<int>("kvHeads");
        QTest::addColumn<int>("headDim");
        QTest::addColumn<int>("elem");
        QTest::addColumn<qlonglong>("perTokenPerLayer"); // keys + values: 2 * heads * head_dim * bytes
        QTest::newRow("llama-style GQA, fp16") << 2 << 4 << 64 << int(onnx::TensorProto::FLOAT16) << 2LL * 4 * 64 * 2;
        QTest::newRow("gpt2-style MHA, fp32") << 3 << 12 << 64 << int(onnx::TensorProto::FLOAT) << 2LL * 12 * 64 * 4;
    }
    void kvCachePerToken()
    {
        QFETCH(int, layers);
        QFETCH(int, kvHeads);
        QFETCH(int, headDim);
        QFETCH(int, elem);
        QFETCH(qlonglong, perTokenPerLayer);
        fixture::Graph g(18, 10);
        g.input("input_ids", {std::string("batch"), std::string("seq")}, onnx::TensorProto::INT64);
        for (int l = 0; l < layers; ++l)
            for (const char* kind : {"key", "value"}) {
                const std::string in = "past_key_values." + std::to_string(l) + "." + kind;
                g.input(in,
                        {std::string("batch"), int64_t(kvHeads), std::string("past_sequence_length"), int64_t(headDim)},
                        elem);
                const std::string out = "present." + std::to_string(l) + "." + kind;
                g.node("Identity", "node_Identity_" + out, {in}, {out});
                g.output(out, elem);
            }
        const Model m = loadModelFromBytes(g.bytes(), "decoder.onnx");
        const auto kv = kvCache(m);
        QVERIFY(kv);
        QCOMPARE(kv->layers, layers);
        QCOMPARE(qlonglong(kv->bytesPerTokenPerLayer), perTokenPerLayer);
        QCOMPARE(qlonglong(kv->bytesPerToken), perTokenPerLayer * layers);
        QCOMPARE(m.symbols[size_t(kv->pastSymbol)].name, std::string("past_sequence_length"));
        const nlohmann::json j = toJson(m, buildReport(m, onGpu(m, int64_t(24) << 30, Mode::Infer)));
        QCOMPARE(j["kv_cache"]["bytes_per_token_per_layer"].get<int64_t>(), int64_t(perTokenPerLayer));
        QVERIFY(!kvCache(loadModel(HEADROOM_TEST_DATA "/hf/llama_small.onnx"))); // exported without a cache
    }

    // Acceptance: the Hugging Face dynamo exports leave no shape unknown at two bindings, and their layer tree
    // is named by modules.
    void huggingFace_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("layer");
        QTest::addColumn<qlonglong>("params");
        QTest::newRow("llama_small q_proj") << "llama_small.onnx"
                                            << "m/model/layers.0/self_attn/q_proj" << 768LL * 768;
        QTest::newRow("llama_small k_proj (GQA)") << "llama_small.onnx"
                                                  << "m/model/layers.11/self_attn/k_proj" << 768LL * 256;
        QTest::newRow("llama_small mlp") << "llama_small.onnx"
                                         << "m/model/layers.3/mlp" << 3LL * 768 * 2048;
        // The exporter's optimizer merged equal initializers: every all-zero bias of this random-weight export is
        // one tensor ("m.bert.embeddings.LayerNorm.bias"), counted once, at the embeddings' LayerNorm.
        QTest::newRow("bert_base query") << "bert_base.onnx"
                                         << "m/bert/encoder/layer.0/attention/self/query" << 768LL * 768;
        QTest::newRow("bert_base classifier") << "bert_base.onnx"
                                              << "m/classifier" << 768LL * 2;
        QTest::newRow("bert_base embeddings") << "bert_base.onnx"
                                              << "m/bert/embeddings/word_embeddings" << 30522LL * 768;
    }
    void huggingFace()
    {
        QFETCH(QString, file);
        QFETCH(QString, layer);
        QFETCH(qlonglong, params);
        const Model m = loadModel(HEADROOM_TEST_DATA "/hf/" + file.toStdString());
        const int batch = m.symbolIndex("batch"), seq = m.symbolIndex("seq");
        QVERIFY(batch >= 0 && seq >= 0);
        for (const auto& [b, s] : {std::pair<int64_t, int64_t>{2, 128}, {8, 512}}) {
            Bindings v = m.defaultBindings();
            v[size_t(batch)] = b;
            v[size_t(seq)] = s;
            QCOMPARE(evaluateShapes(m, v).unknown, int64_t(0));
        }
        const LayerNode* l = findLayer(m, layer.toStdString());
        QVERIFY2(l, qPrintable(layer));
        QCOMPARE(qlonglong(l->params), params);
        for (const LayerNode& ln : m.layers)
            QVERIFY2(ln.name.rfind("matmul_", 0) != 0 && ln.name.rfind("gemm_", 0) != 0, ln.path.c_str());
    }
};

QTEST_APPLESS_MAIN(TestDynamoImport)
#include "tst_dynamo_import.moc"
