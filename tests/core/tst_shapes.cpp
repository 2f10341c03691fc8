// Shapes acceptance: every tensor concrete at batch 1/8 (seq 16/64), outputs exact, fitted == fresh.
#include "headroom/import/synthetic.h"
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

Bindings bind(const Model& m, int64_t batch, int64_t seq)
{
    Bindings b = m.defaultBindings();
    for (size_t i = 0; i < m.symbols.size(); ++i)
        b[i] = m.symbols[i].isBatch ? batch : seq;
    return b;
}

} // namespace

class TestShapes : public QObject
{
    Q_OBJECT
private slots:
    void corpus_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<qlonglong>("batch");
        QTest::addColumn<qlonglong>("seq");
        QTest::addColumn<QList<qlonglong>>("outShape");
        const nlohmann::json t = truth();
        for (const auto& [key, m] : t.items()) {
            if (key == "method")
                continue;
            const bool tokens = m.at("kind").get<std::string>().rfind("seq", 0) == 0;
            for (const auto& [kind, file] : m.at("files").items()) {
                (void)kind;
                for (qlonglong batch : {1, 8})
                    for (qlonglong seq : tokens ? std::vector<qlonglong>{16, 64} : std::vector<qlonglong>{0}) {
                        QList<qlonglong> shape;
                        for (const auto& d : m.at("output").at("shape"))
                            shape << (d.is_string() ? (d.get<std::string>() == "batch" ? batch : seq)
                                                    : d.get<qlonglong>());
                        const QString f = QString::fromStdString(file.get<std::string>());
                        QTest::newRow(qPrintable(QStringLiteral("%1 b%2 s%3").arg(f).arg(batch).arg(seq)))
                            << f << batch << seq << shape;
                    }
            }
        }
    }
    void corpus()
    {
        QFETCH(QString, file);
        QFETCH(qlonglong, batch);
        QFETCH(qlonglong, seq);
        QFETCH(QList<qlonglong>, outShape);
        const std::string path = std::string(HEADROOM_TEST_DATA "/") + file.toStdString();
        const Model fitted = loadModel(path);
        const Bindings b = bind(fitted, batch, seq);
        // Fast path (fitted functions) and a fresh load bound at these values must both be complete.
        LoadOptions o;
        o.symbolValues = {{"batch", batch}};
        if (seq > 0)
            o.symbolValues.emplace_back("seq", seq);
        const Model fresh = loadModel(path, o);
        for (const Model* m : {&fitted, &fresh}) {
            const ShapeTable st = evaluateShapes(*m, b);
            QCOMPARE(st.unknown, int64_t(0));
            for (size_t t = 0; t < m->tensors.size(); ++t)
                QVERIFY2(st.numel[t] >= 0, m->tensors[t].name.c_str());
            QCOMPARE(m->outputs.size(), size_t(1));
            const auto dims = concreteDims(*m, m->outputs[0], b);
            QCOMPARE(QList<qlonglong>(dims.begin(), dims.end()), outShape);
        }
        for (size_t t = 0; t < fitted.tensors.size(); ++t)
            QCOMPARE(concreteDims(fitted, static_cast<int>(t), b), concreteDims(fresh, static_cast<int>(t), b));
    }

    // The fitted functions at a binding never sampled equal a fresh evaluation there.
    void fittedEqualsFresh_data()
    {
        QTest::addColumn<QString>("file");
        for (const char* f :
             {"tiny_gpt.onnx", "bert_like.onnx", "lstm_tagger.onnx", "resnet50.onnx", "mobilenet_v2.onnx"})
            QTest::newRow(f) << QString::fromLatin1(f);
    }
    void fittedEqualsFresh()
    {
        QFETCH(QString, file);
        const std::string path = std::string(HEADROOM_TEST_DATA "/") + file.toStdString();
        const Model fitted = loadModel(path);
        LoadOptions o;
        o.symbolValues = {{"batch", 5}, {"seq", 37}};
        const Model fresh = loadModel(path, o);
        const Bindings b = bind(fitted, 5, 37);
        const ShapeTable a = evaluateShapes(fitted, b);
        const ShapeTable c = evaluateShapes(fresh, fresh.defaultBindings());
        QCOMPARE(a.numel, c.numel);
        QCOMPARE(a.bytes, c.bytes);
        // A plan's tick evaluates each distinct shape once: the same table as the fresh inference.
        const ShapeClasses classes = classifyShapes(fitted);
        QVERIFY(classes.shapes.size() < fitted.tensors.size());
        const ShapeTable k = evaluateShapes(fitted, classes, b);
        QCOMPARE(k.numel, c.numel);
        QCOMPARE(k.bytes, c.bytes);
        QCOMPARE(k.unknown, a.unknown);
        int symbolic = 0;
        for (const Tensor& t : fitted.tensors) {
            QVERIFY(t.shape.state != TensorShape::State::Unknown);
            for (const DimExpr& d : t.shape.dims)
                symbolic += !d.isConstant();
        }
        QVERIFY(symbolic > 0);
    }

    void symbolicString()
    {
        const Model m = loadModel(HEADROOM_TEST_DATA "/tiny_gpt.onnx");
        QCOMPARE(shapeString(m, m.outputs[0], nullptr), std::string("[batch, seq, 8000]"));
        const Bindings b{8, 64};
        QCOMPARE(shapeString(m, m.outputs[0], &b), std::string("[8, 64, 8000]"));
        // The attention scores of a 4-head model: [batch, 4, seq, seq] holds for every binding.
        bool found = false;
        for (size_t t = 0; t < m.tensors.size() && !found; ++t)
            found = shapeString(m, static_cast<int>(t), nullptr) == "[batch, 4, seq, seq]";
        QVERIFY(found);
    }

    // A strided convolution on symbolic H/W is not multilinear: its tensors are re-inferred on demand.
    void reinfer()
    {
        const fixture::Graph g = fixture::smallConvNet(true);
        LoadOptions o;
        o.symbolValues = {{"N", 2}, {"H", 32}, {"W", 32}};
        const Model m = loadModelFromBytes(g.bytes(), "conv.onnx", o);
        int conv1 = -1;
        for (size_t t = 0; t < m.tensors.size(); ++t)
            if (m.tensors[t].name == "c1")
                conv1 = static_cast<int>(t);
        QVERIFY(conv1 >= 0);
        QCOMPARE(m.tensors[size_t(conv1)].shape.state, TensorShape::State::Reinfer);
        QVERIFY(m.oracle);
        const Bindings b{3, 33, 20}; // N, H, W
        QCOMPARE(concreteDims(m, conv1, b), (std::vector<int64_t>{3, 8, 17, 10}));
        const ShapeTable st = evaluateShapes(m, b);
        QCOMPARE(st.unknown, int64_t(0));
        QCOMPARE(st.numel[size_t(conv1)], int64_t(3 * 8 * 17 * 10));
        // The classifier head does not depend on H/W: exact, and fitted in N only.
        QCOMPARE(m.tensors[size_t(m.outputs[0])].shape.state, TensorShape::State::Exact);
        QCOMPARE(concreteDims(m, m.outputs[0], b), (std::vector<int64_t>{3, 10}));
    }

    void syntheticTransformer()
    {
        const Model m = loadModelFromBytes(makeSyntheticTransformer(120, 64, 4, 500), "synthetic.onnx");
        QVERIFY(m.nodes.size() >= 10000);
        QCOMPARE(m.symbols.size(), size_t(2));
        const Bindings b = bind(m, 4, 50);
        QCOMPARE(evaluateShapes(m, b).unknown, int64_t(0));
        QCOMPARE(concreteDims(m, m.outputs[0], b), (std::vector<int64_t>{4, 50, 500}));
        // Tied LM head: the embedding table is counted once.
        QCOMPARE(m.layers[0].params, m.params.trainable);
        const int64_t perLayer = 2 * 64 + 64 * 192 + 192 + 64 * 64 + 64 + 2 * 64 + 64 * 256 + 256 + 256 * 64 + 64;
        QCOMPARE(m.params.trainable, int64_t(500 * 64 + 4096 * 64 + 120 * perLayer + 2 * 64));
    }

    void fixedSpatialIsExact()
    {
        const fixture::Graph g = fixture::smallConvNet(false);
        const Model m = loadModelFromBytes(g.bytes(), "conv.onnx");
        for (const Tensor& t : m.tensors)
            QCOMPARE(t.shape.state, TensorShape::State::Exact);
        QCOMPARE(shapeString(m, m.outputs[0], nullptr), std::string("[N, 10]"));
        QCOMPARE(m.params.trainable, int64_t(8 * 27 + 8 + 16 * 8 + 10 * 16 + 10));
    }
};

QTEST_APPLESS_MAIN(TestShapes)
#include "tst_shapes.moc"
