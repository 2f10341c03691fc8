// The shape-rule registry, one op at a time: a one- or two-node graph with a symbolic batch N, its output's dims
// at N = 3 against dims computed by hand from the ONNX operator spec (onnx/docs/Operators.md), and the one-line
// reason when a node cannot be sized.
#include "headroom/load/loader.h"
#include "headroom/shapes/shapes.h"
#include "onnx_fixture.h"

#include <QtTest>

#include <functional>

using namespace headroom;

using Dims = QList<qlonglong>;
using Build = std::function<void(fixture::Graph&)>;
Q_DECLARE_METATYPE(Build)

namespace {

constexpr int64_t kBatch = 3;

std::vector<fixture::Dim> withBatch(const Dims& d)
{
    std::vector<fixture::Dim> out;
    out.emplace_back(std::string("N"));
    for (qsizetype i = 1; i < d.size(); ++i)
        out.emplace_back(int64_t(d[i]));
    return out;
}

Model load(const fixture::Graph& g) { return loadModelFromBytes(g.bytes(), "rule.onnx"); }

Bindings atBatch(const Model& m)
{
    Bindings b = m.defaultBindings();
    const int n = m.symbolIndex("N");
    if (n >= 0)
        b[size_t(n)] = kBatch;
    return b;
}

Dims dimsOf(const Model& m, const std::string& name)
{
    for (size_t t = 0; t < m.tensors.size(); ++t)
        if (m.tensors[t].name == name) {
            Dims out;
            for (int64_t d : concreteDims(m, static_cast<int>(t), atBatch(m)))
                out << d;
            return out;
        }
    return {};
}

void ints(onnx::NodeProto* n, const char* name, std::initializer_list<int64_t> v)
{
    fixture::Graph::intsAttr(n, name, v);
}

void str(onnx::NodeProto* n, const char* name, const char* v)
{
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
}

} // namespace

class TestShapeRules : public QObject
{
    Q_OBJECT
private slots:
    // Unary ops keep input 0's shape (activations, normalizations, casts).
    void sameShape_data()
    {
        QTest::addColumn<QString>("op");
        QTest::addColumn<Dims>("in");
        QTest::addColumn<Dims>("out");
        for (const char* op :
             {"Relu", "Sigmoid", "Tanh", "Erf", "Gelu", "Softmax", "Identity", "Neg", "Not", "Dropout"})
            QTest::newRow(op) << op << Dims{3, 5, 7} << Dims{3, 5, 7};
    }
    void sameShape()
    {
        QFETCH(QString, op);
        QFETCH(Dims, in);
        QFETCH(Dims, out);
        fixture::Graph g;
        g.input("x", withBatch(in));
        g.node(op.toStdString(), "n", {"x"}, {"y"});
        g.output("y");
        QCOMPARE(dimsOf(load(g), "y"), out);
    }

    // One node y = op(x, ...) built by the row; y's dims at N = 3, worked out by hand from the spec.
    void rule_data()
    {
        QTest::addColumn<Dims>("in");
        QTest::addColumn<Build>("build");
        QTest::addColumn<Dims>("out");
        // layout and shape arithmetic
        QTest::newRow("Add broadcasts [N,1,4] + [5,1]") << Dims{3, 1, 4} << Build([](fixture::Graph& g) {
            g.weight("b", {5, 1});
            g.node("Add", "n", {"x", "b"}, {"y"});
        }) << Dims{3, 5, 4};
        QTest::newRow("Reshape [0, -1]") << Dims{3, 4, 6} << Build([](fixture::Graph& g) {
            g.ints("s", {0, -1});
            g.node("Reshape", "n", {"x", "s"}, {"y"});
        }) << Dims{3, 24};
        QTest::newRow("Transpose perm 2,0,1") << Dims{3, 4, 6} << Build([](fixture::Graph& g) {
            ints(g.node("Transpose", "n", {"x"}, {"y"}), "perm", {2, 0, 1});
        }) << Dims{6, 3, 4};
        QTest::newRow("Flatten axis 2") << Dims{3, 4, 5, 6} << Build([](fixture::Graph& g) {
            fixture::Graph::intAttr(g.node("Flatten", "n", {"x"}, {"y"}), "axis", 2);
        }) << Dims{12, 30};
        QTest::newRow("Unsqueeze axes [1] (input, opset 13+)") << Dims{3, 4} << Build([](fixture::Graph& g) {
            g.ints("a", {1});
            g.node("Unsqueeze", "n", {"x", "a"}, {"y"});
        }) << Dims{3, 1, 4};
        QTest::newRow("Squeeze axes [1]") << Dims{3, 1, 4} << Build([](fixture::Graph& g) {
            g.ints("a", {1});
            g.node("Squeeze", "n", {"x", "a"}, {"y"});
        }) << Dims{3, 4};
        QTest::newRow("Concat axis 1") << Dims{3, 4} << Build([](fixture::Graph& g) {
            g.weight("w", {3, 5});
            fixture::Graph::intAttr(g.node("Concat", "n", {"x", "w"}, {"y"}), "axis", 1);
        }) << Dims{3, 9};
        QTest::newRow("Slice 1:-1 on axis 2") << Dims{3, 4, 10} << Build([](fixture::Graph& g) {
            g.ints("s", {1});
            g.ints("e", {-1});
            g.ints("a", {2});
            g.node("Slice", "n", {"x", "s", "e", "a"}, {"y"});
        }) << Dims{3, 4, 8};
        QTest::newRow("Slice -1::-2 (9, 7, 5, 3, 1)") << Dims{3, 10} << Build([](fixture::Graph& g) {
            g.ints("s", {-1});
            g.ints("e", {-100});
            g.ints("a", {1});
            g.ints("st", {-2});
            g.node("Slice", "n", {"x", "s", "e", "a", "st"}, {"y"});
        }) << Dims{3, 5};
        QTest::newRow("Split [2, 6], second output") << Dims{3, 8} << Build([](fixture::Graph& g) {
            g.ints("sp", {2, 6});
            fixture::Graph::intAttr(g.node("Split", "n", {"x", "sp"}, {"y0", "y"}), "axis", 1);
        }) << Dims{3, 6};
        QTest::newRow("Gather axis 1, indices [2]") << Dims{3, 10, 5} << Build([](fixture::Graph& g) {
            g.ints("i", {0, 4});
            fixture::Graph::intAttr(g.node("Gather", "n", {"x", "i"}, {"y"}), "axis", 1);
        }) << Dims{3, 2, 5};
        QTest::newRow("Expand [N,1,4] to [1,5,4]") << Dims{3, 1, 4} << Build([](fixture::Graph& g) {
            g.ints("s", {1, 5, 4});
            g.node("Expand", "n", {"x", "s"}, {"y"});
        }) << Dims{3, 5, 4};
        QTest::newRow("Tile 2,3") << Dims{3, 4} << Build([](fixture::Graph& g) {
            g.ints("r", {2, 3});
            g.node("Tile", "n", {"x", "r"}, {"y"});
        }) << Dims{6, 12};
        QTest::newRow("Pad 0,1,0,2") << Dims{3, 4} << Build([](fixture::Graph& g) {
            g.ints("p", {0, 1, 0, 2});
            g.node("Pad", "n", {"x", "p"}, {"y"});
        }) << Dims{3, 7};
        QTest::newRow("Shape -> Concat -> Reshape (values folded)") << Dims{3, 4, 6} << Build([](fixture::Graph& g) {
            g.node("Shape", "sh", {"x"}, {"s"});
            g.ints("i", {0});
            fixture::Graph::intAttr(g.node("Gather", "ga", {"s", "i"}, {"n0"}), "axis", 0);
            g.ints("m", {-1});
            fixture::Graph::intAttr(g.node("Concat", "c", {"n0", "m"}, {"t"}), "axis", 0);
            g.node("Reshape", "n", {"x", "t"}, {"y"});
        }) << Dims{3, 24};
        // compute ops
        QTest::newRow("MatMul [N,4,5] x [5,6]") << Dims{3, 4, 5} << Build([](fixture::Graph& g) {
            g.weight("w", {5, 6});
            g.node("MatMul", "n", {"x", "w"}, {"y"});
        }) << Dims{3, 4, 6};
        QTest::newRow("Gemm transB") << Dims{3, 16} << Build([](fixture::Graph& g) {
            g.weight("w", {10, 16});
            fixture::Graph::intAttr(g.node("Gemm", "n", {"x", "w"}, {"y"}), "transB", 1);
        }) << Dims{3, 10};
        QTest::newRow("Conv 3x3 stride 2 pad 1: 32 -> 16") << Dims{3, 3, 32, 32} << Build([](fixture::Graph& g) {
            g.weight("w", {8, 3, 3, 3});
            auto* n = g.node("Conv", "n", {"x", "w"}, {"y"});
            ints(n, "strides", {2, 2});
            ints(n, "pads", {1, 1, 1, 1});
        }) << Dims{3, 8, 16, 16};
        QTest::newRow("ConvTranspose 4x4 stride 2 pad 1: 5 -> 10") << Dims{3, 8, 5, 5} << Build([](fixture::Graph& g) {
            g.weight("w", {8, 4, 4, 4});
            auto* n = g.node("ConvTranspose", "n", {"x", "w"}, {"y"});
            ints(n, "strides", {2, 2});
            ints(n, "pads", {1, 1, 1, 1});
        }) << Dims{3, 4, 10, 10};
        QTest::newRow("MaxPool 3 stride 2 ceil_mode: 16 -> 8") << Dims{3, 8, 16, 16} << Build([](fixture::Graph& g) {
            auto* n = g.node("MaxPool", "n", {"x"}, {"y"});
            ints(n, "kernel_shape", {3, 3});
            ints(n, "strides", {2, 2});
            fixture::Graph::intAttr(n, "ceil_mode", 1);
        }) << Dims{3, 8, 8, 8};
        QTest::newRow("MaxPool 3 stride 2 floor: 16 -> 7") << Dims{3, 8, 16, 16} << Build([](fixture::Graph& g) {
            auto* n = g.node("MaxPool", "n", {"x"}, {"y"});
            ints(n, "kernel_shape", {3, 3});
            ints(n, "strides", {2, 2});
        }) << Dims{3, 8, 7, 7};
        QTest::newRow("GlobalAveragePool")
            << Dims{3, 8, 7, 7} << Build([](fixture::Graph& g) { g.node("GlobalAveragePool", "n", {"x"}, {"y"}); })
            << Dims{3, 8, 1, 1};
        QTest::newRow("ReduceSum axes [1] keepdims 0") << Dims{3, 4, 5} << Build([](fixture::Graph& g) {
            g.ints("a", {1});
            fixture::Graph::intAttr(g.node("ReduceSum", "n", {"x", "a"}, {"y"}), "keepdims", 0);
        }) << Dims{3, 5};
        QTest::newRow("ReduceMean axes attribute (before opset 18)") << Dims{3, 4, 5} << Build([](fixture::Graph& g) {
            ints(g.node("ReduceMean", "n", {"x"}, {"y"}), "axes", {2});
        }) << Dims{3, 4, 1};
        QTest::newRow("ArgMax axis 1 keepdims 0") << Dims{3, 4, 5} << Build([](fixture::Graph& g) {
            auto* n = g.node("ArgMax", "n", {"x"}, {"y"});
            fixture::Graph::intAttr(n, "axis", 1);
            fixture::Graph::intAttr(n, "keepdims", 0);
        }) << Dims{3, 5};
        QTest::newRow("LSTM bidirectional, Y [T, dirs, N, H]") << Dims{3, 5, 8} << Build([](fixture::Graph& g) {
            // X is [T, N, I]: here the symbolic dim is T = 3 and the batch is 5
            g.weight("W", {2, 64, 8});
            g.weight("R", {2, 64, 16});
            auto* n = g.node("LSTM", "n", {"x", "W", "R"}, {"y"});
            fixture::Graph::intAttr(n, "hidden_size", 16);
            str(n, "direction", "bidirectional");
        }) << Dims{3, 2, 5, 16};
        QTest::newRow("Einsum bij,bjk->bik") << Dims{3, 4, 5} << Build([](fixture::Graph& g) {
            g.weight("w", {3, 5, 6});
            str(g.node("Einsum", "n", {"x", "w"}, {"y"}), "equation", "bij,bjk->bik");
        }) << Dims{3, 4, 6};
        QTest::newRow("Einsum implicit ij,jk (-> ik)") << Dims{3, 5} << Build([](fixture::Graph& g) {
            g.weight("w", {5, 6});
            str(g.node("Einsum", "n", {"x", "w"}, {"y"}), "equation", "ij,jk");
        }) << Dims{3, 6};
        // sequences: unbind along axis 1 (6 tensors of [N]), then stack them on a new axis 0
        QTest::newRow("SplitToSequence -> ConcatFromSequence") << Dims{3, 6} << Build([](fixture::Graph& g) {
            auto* s = g.node("SplitToSequence", "s", {"x"}, {"seq"});
            fixture::Graph::intAttr(s, "axis", 1);
            fixture::Graph::intAttr(s, "keepdims", 0);
            auto* c = g.node("ConcatFromSequence", "n", {"seq"}, {"y"});
            fixture::Graph::intAttr(c, "axis", 0);
            fixture::Graph::intAttr(c, "new_axis", 1);
        }) << Dims{6, 3};
    }
    void rule()
    {
        QFETCH(Dims, in);
        QFETCH(Build, build);
        QFETCH(Dims, out);
        fixture::Graph g;
        g.input("x", withBatch(in));
        build(g);
        g.output("y");
        QCOMPARE(dimsOf(load(g), "y"), out);
    }

    // Output element types (the ONNX schemas' type constraints): tensor t, read by y = Identity(t).
    void outputType_data()
    {
        QTest::addColumn<Build>("build");
        QTest::addColumn<int>("dtype");
        QTest::newRow("Shape: int64") << Build([](fixture::Graph& g) { g.node("Shape", "n", {"x"}, {"t"}); })
                                      << int(DType::Int64);
        QTest::newRow("Equal: bool") << Build([](fixture::Graph& g) {
            g.node("Equal", "n", {"x", "x"}, {"t"});
        }) << int(DType::Bool);
        QTest::newRow("Cast to=10: float16")
            << Build([](fixture::Graph& g) { fixture::Graph::intAttr(g.node("Cast", "n", {"x"}, {"t"}), "to", 10); })
            << int(DType::Float16);
        QTest::newRow("TopK indices: int64") << Build([](fixture::Graph& g) {
            g.ints("k", {2});
            g.node("TopK", "n", {"x", "k"}, {"v", "t"});
        }) << int(DType::Int64);
        QTest::newRow("Dropout mask: bool") << Build([](fixture::Graph& g) {
            g.node("Dropout", "n", {"x"}, {"d", "t"});
        }) << int(DType::Bool);
        QTest::newRow("Relu: input's type")
            << Build([](fixture::Graph& g) { g.node("Relu", "n", {"x"}, {"t"}); }) << int(DType::Float32);
    }
    void outputType()
    {
        QFETCH(Build, build);
        QFETCH(int, dtype);
        fixture::Graph g;
        g.input("x", withBatch({3, 4}));
        build(g);
        g.node("Identity", "out", {"t"}, {"y"});
        g.output("y");
        const Model m = load(g);
        int found = -1;
        for (const Tensor& t : m.tensors)
            if (t.name == "t")
                found = int(t.dtype);
        QCOMPARE(found, dtype);
    }

    // A node that cannot be sized leaves its output unknown and says why in one line.
    void invalidNodeIsNamed_data()
    {
        QTest::addColumn<Dims>("in");
        QTest::addColumn<Build>("build");
        QTest::addColumn<QString>("reason");
        QTest::newRow("Reshape changes the count") << Dims{3, 4, 6} << Build([](fixture::Graph& g) {
            g.ints("s", {5, 5});
            g.node("Reshape", "n", {"x", "s"}, {"y"});
        }) << "Reshape changes the element count";
        QTest::newRow("MatMul inner dims") << Dims{3, 4} << Build([](fixture::Graph& g) {
            g.weight("w", {5, 6});
            g.node("MatMul", "n", {"x", "w"}, {"y"});
        }) << "MatMul inner dims differ: 4 vs 5";
        QTest::newRow("NonZero is data-dependent")
            << Dims{3, 4} << Build([](fixture::Graph& g) { g.node("NonZero", "n", {"x"}, {"y"}); })
            << "NonZero has a data-dependent output size";
    }
    void invalidNodeIsNamed()
    {
        QFETCH(Dims, in);
        QFETCH(Build, build);
        QFETCH(QString, reason);
        fixture::Graph g;
        g.input("x", withBatch(in));
        build(g);
        g.output("y");
        const Model m = load(g);
        QVERIFY(dimsOf(m, "y").isEmpty());
        bool named = false;
        for (const std::string& w : m.warnings)
            named = named || QString::fromStdString(w).contains(reason);
        QVERIFY2(named, qPrintable("no warning contains: " + reason));
    }
};

QTEST_GUILESS_MAIN(TestShapeRules)
#include "tst_shape_rules.moc"
