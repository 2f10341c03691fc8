// The layer tree mirrors the exporter's module scopes and aggregates parameters.
#include "headroom/load/loader.h"
#include "headroom/memory/layercost.h"
#include "headroom/report/layer_tree.h"
#include "onnx_fixture.h"
#include "vit_fixture.h"

#include <QtTest>

#include <functional>

using namespace headroom;

namespace {

const LayerNode* find(const Model& m, const std::string& path)
{
    for (const LayerNode& l : m.layers)
        if (l.path == path)
            return &l;
    return nullptr;
}

// "root(params)\n  child(params)..." for comparing whole trees.
void print(const Model& m, int idx, int depth, std::string& out)
{
    const LayerNode& l = m.layers[size_t(idx)];
    out += std::string(size_t(depth) * 2, ' ') + (idx == 0 ? std::string("<root>") : l.name) + " " +
           std::to_string(l.params) + " [" + std::to_string(l.firstNode) + "," + std::to_string(l.lastNode) + "]\n";
    for (int c : l.children)
        print(m, c, depth + 1, out);
}

} // namespace

class TestLayerTree : public QObject
{
    Q_OBJECT
private slots:
    void handBuilt()
    {
        const fixture::Graph g = fixture::smallConvNet(false);
        const Model m = loadModelFromBytes(g.bytes(), "small.onnx");
        std::string tree;
        print(m, 0, 0, tree);
        QCOMPARE(tree, std::string("<root> 522 [0,5]\n"
                                   "  stem 224 [0,1]\n"
                                   "  block 128 [2,2]\n"
                                   "    conv 128 [2,2]\n"
                                   "  pool 0 [3,3]\n"
                                   "  fc 170 [5,5]\n"));
        QCOMPARE(m.nodePath(0), std::string("stem/Conv"));
        QCOMPARE(m.layers[size_t(m.nodes[2].layer)].path, std::string("block/conv"));
        QCOMPARE(m.nodes[4].layer, 0); // "/Flatten" sits at the root
    }

    void scopes_data()
    {
        QTest::addColumn<QStringList>("names");
        QTest::addColumn<QStringList>("paths");
        QTest::newRow("tensorflow") << QStringList{"bert/encoder/layer_0/attention/MatMul", "bert/encoder/layer_0/Relu",
                                                   "bert/pooler/Tanh"}
                                    << QStringList{"bert/encoder/layer_0/attention", "bert/encoder/layer_0",
                                                   "bert/pooler"};
        QTest::newRow("unscoped") << QStringList{"", "", "", ""}
                                  << QStringList{"matmul_0", "matmul_0", "matmul_1", "matmul_1"};
    }
    void scopes()
    {
        QFETCH(QStringList, names);
        QFETCH(QStringList, paths);
        fixture::Graph g;
        g.input("x", {int64_t(2), int64_t(4)});
        std::string prev = "x";
        for (int i = 0; i < names.size(); ++i) {
            const std::string out = "t" + std::to_string(i);
            const bool mm = names[i].endsWith(QLatin1String("MatMul")) || (names[i].isEmpty() && i % 2 == 0);
            if (mm) {
                const std::string w = "w" + std::to_string(i);
                g.weight(w, {4, 4});
                g.node("MatMul", names[i].toStdString(), {prev, w}, {out});
            } else {
                g.node(names[i].endsWith(QLatin1String("Tanh")) ? "Tanh" : "Relu", names[i].toStdString(), {prev},
                       {out});
            }
            prev = out;
        }
        g.output(prev);
        const Model m = loadModelFromBytes(g.bytes(), "scoped.onnx");
        for (int i = 0; i < paths.size(); ++i)
            QCOMPARE(QString::fromStdString(m.layers[size_t(m.nodes[size_t(i)].layer)].path), paths[i]);
    }

    void paddle()
    {
        fixture::Graph g;
        g.input("x", {int64_t(1), int64_t(3), int64_t(8), int64_t(8)});
        g.weight("conv2d_0.w_0", {4, 3, 3, 3});
        g.node("Conv", "p2o.Conv.0", {"x", "conv2d_0.w_0"}, {"conv2d_0.tmp_0"});
        g.node("Relu", "p2o.Relu.0", {"conv2d_0.tmp_0"}, {"relu_0.tmp_0"});
        g.output("relu_0.tmp_0");
        const Model m = loadModelFromBytes(g.bytes(), "paddle.onnx");
        QCOMPARE(m.layers[size_t(m.nodes[0].layer)].path, std::string("conv2d_0"));
        QCOMPARE(m.layers[size_t(m.nodes[1].layer)].path, std::string("relu_0"));
        QCOMPARE(m.layers[size_t(m.nodes[0].layer)].params, int64_t(4 * 3 * 3 * 3));
    }

    void resnet18_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<qlonglong>("params");
        // conv1 64x64x3x3; bn1 weight+bias; the block's two convs and two BNs.
        QTest::newRow("conv") << "layer1/layer1.0/conv1" << 36864LL;
        QTest::newRow("bn") << "layer1/layer1.0/bn1" << 128LL;
        QTest::newRow("block") << "layer1/layer1.0" << 2LL * (36864 + 128);
        QTest::newRow("stage") << "layer1" << 4LL * (36864 + 128);
        QTest::newRow("downsample") << "layer2/layer2.0/downsample/downsample.0" << 128LL * 64;
        QTest::newRow("fc") << "fc" << 512LL * 1000 + 1000;
        QTest::newRow("root") << "" << 11689512LL;
    }
    void resnet18()
    {
        QFETCH(QString, path);
        QFETCH(qlonglong, params);
        const Model m = loadModel(HEADROOM_TEST_DATA "/resnet18.onnx");
        const LayerNode* l = find(m, path.toStdString());
        QVERIFY(l);
        QCOMPARE(qlonglong(l->params), params);
        QVERIFY(l->firstNode >= 0 && l->firstNode <= l->lastNode);
        if (!path.isEmpty()) {
            const LayerNode& parent = m.layers[size_t(l->parent)];
            QVERIFY(parent.firstNode <= l->firstNode && parent.lastNode >= l->lastNode);
            QCOMPARE(l->depth, parent.depth + 1);
        }
    }

    // The exporter's shape arithmetic folds into one trailing row per layer; the model's modules and real
    // ops stay, in order. Hand-counted from vit_fixture.h: at the root, x.shape[0] (Shape, Constant,
    // Gather) = 3; n_h and n_w (x.shape[2] // p, x.shape[3] // p: 2 x (3 + Constant + Div)) and their
    // product = 11; the reshape target (2 x (Constant axes, Unsqueeze), Constant 768, Concat) = 6; the class
    // token's expand target (3 + 2 + Constant, Constant, Concat, Constant, ConstantOfShape, Constant, Mul,
    // Equal, Where) = 14; x[:, 0]'s index Constant = 1: 35 in all.
    void vitTopLevel()
    {
        const fixture::Graph g = fixture::vitB16();
        const Model m = loadModelFromBytes(g.bytes(), "vit_b_16.onnx");
        QVERIFY2(m.nodes.size() >= 1500, std::to_string(m.nodes.size()).c_str());
        QCOMPARE(m.params.trainable, int64_t(86567656)); // torchvision's vit_b_16
        QCOMPARE(m.symbols.size(), size_t(1));

        auto describe = [&](const std::vector<TreeEntry>& entries) {
            QStringList out;
            for (const TreeEntry& e : entries)
                out << (e.layer >= 0  ? QString::fromStdString(m.layers[size_t(e.layer)].name)
                        : e.node >= 0 ? QString::fromStdString(m.nodes[size_t(e.node)].op)
                                      : QStringLiteral("<shape computations %1>").arg(e.shapeNodes.size()));
            return out;
        };
        QCOMPARE(describe(treeEntries(m, 0, false)),
                 (QStringList{"conv_proj", "Reshape", "Transpose", "Expand", "Concat", "encoder", "Gather", "heads",
                              "<shape computations 35>"}));
        // Shown: the same 35 nodes in their places, the first being x.shape[0]'s Shape.
        const QStringList all = describe(treeEntries(m, 0, true));
        QCOMPARE(all.size(), 8 + 35);
        QCOMPARE(all.first(), QStringLiteral("conv_proj"));
        QCOMPARE(all.at(1), QStringLiteral("Shape"));

        // Inside an attention block: only the real ops, then the folded row.
        const LayerNode* sa = find(m, "encoder/layers/encoder_layer_3/self_attention");
        QVERIFY(sa);
        const QStringList inner = describe(treeEntries(m, int(sa - m.layers.data()), false));
        const QStringList leftover = inner.filter(
            QRegularExpression("^(Shape|Constant|Concat|ConstantOfShape|Equal|Where|Slice|Cast|Sqrt|Div)$"));
        QVERIFY2(leftover.isEmpty(), qPrintable(inner.join(QLatin1Char(' '))));
        QVERIFY(inner.last().startsWith("<shape computations"));
        QCOMPARE(inner.count("MatMul"), 3);
        QCOMPARE(inner.count("Reshape"), 6);
        QCOMPARE(inner.count("Gemm"), 1);
        QCOMPARE(inner.count("Mul"), 2);       // q and k times sqrt(scale); the scale itself is folded
        QCOMPARE(inner.count("Unsqueeze"), 1); // unflatten's, on the data; the shape ones are folded
        // Hand-counted: 3 x dim (9), unflatten target (13), unsqueeze and squeeze axes (2), 3 Gather indices,
        // q/k/v view targets (11 + 14 + 14), SDPA scale (9), the two output reshape targets (5 + 6).
        QCOMPARE(inner.last(), QStringLiteral("<shape computations 86>"));
    }

    // Whatever the exporter, no op that moves activations is folded, and every Shape is.
    void shapeComputationFlags_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("bert_like") << QStringLiteral(HEADROOM_TEST_DATA "/bert_like.onnx");
        QTest::newRow("tiny_gpt") << QStringLiteral(HEADROOM_TEST_DATA "/tiny_gpt.onnx");
        QTest::newRow("hf bert_base") << QStringLiteral(HEADROOM_TEST_DATA "/hf/bert_base.onnx");
        QTest::newRow("resnet18") << QStringLiteral(HEADROOM_TEST_DATA "/resnet18.onnx");
    }
    void shapeComputationFlags()
    {
        QFETCH(QString, file);
        if (!QFileInfo::exists(file))
            QSKIP("test data missing");
        const Model m = loadModel(file.toStdString());
        for (const Node& n : m.nodes) {
            if (n.op == "Shape")
                QVERIFY2(n.shapeComputation, n.name.c_str());
            if (n.op == "MatMul" || n.op == "Gemm" || n.op == "Conv" || n.op == "Softmax" ||
                n.op == "LayerNormalization" || n.op == "Relu")
                QVERIFY2(!n.shapeComputation, n.name.c_str());
            // A folded node's outputs are shape-sized, never the model's output.
            if (n.shapeComputation)
                for (int t : n.outputs)
                    if (t >= 0)
                        QVERIFY2(!m.tensors[size_t(t)].isGraphOutput && m.tensors[size_t(t)].shape.dims.size() <= 1,
                                 n.name.c_str());
        }
        // Folding hides rows, never figures: the root still covers every node.
        int64_t listed = 0;
        std::function<void(int)> count = [&](int layer) {
            for (const TreeEntry& e : treeEntries(m, layer, false)) {
                if (e.layer >= 0)
                    count(e.layer);
                listed += e.node >= 0 ? 1 : static_cast<int64_t>(e.shapeNodes.size() + e.maskNodes.size());
            }
        };
        count(0);
        QCOMPARE(listed, int64_t(m.nodes.size()));
    }

    // Today's exporter (torch.onnx dynamo, transformers 4.5x) writes the causal/padding mask and the
    // positions as loose nodes of the top module (create_causal_mask, get_extended_attention_mask): one
    // "attention mask" row where the first of them runs, before the first block; nothing in it reads a
    // parameter or an activation, and it holds the [batch, 1, seq, seq]-like mask. ~20 rows otherwise.
    void maskRowFolded_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("layer");
        QTest::addColumn<QString>("firstBlock");
        QTest::newRow("llama_small") << QStringLiteral(HEADROOM_TEST_DATA "/hf/llama_small.onnx")
                                     << QStringLiteral("m/model") << QStringLiteral("layers.0");
        QTest::newRow("bert_base") << QStringLiteral(HEADROOM_TEST_DATA "/hf/bert_base.onnx")
                                   << QStringLiteral("m/bert") << QStringLiteral("encoder");
    }
    void maskRowFolded()
    {
        QFETCH(QString, file);
        QFETCH(QString, layer);
        QFETCH(QString, firstBlock);
        const Model m = loadModel(file.toStdString());
        const LayerNode* l = find(m, layer.toStdString());
        QVERIFY(l);
        const std::vector<TreeEntry> entries = treeEntries(m, int(l - m.layers.data()), false);
        int masks = 0, maskAt = -1, blockAt = -1;
        size_t folded = 0;
        bool rank4 = false;
        for (size_t i = 0; i < entries.size(); ++i) {
            const TreeEntry& e = entries[i];
            if (e.layer >= 0 && m.layers[size_t(e.layer)].name == firstBlock.toStdString())
                blockAt = int(i);
            if (e.node >= 0)
                QVERIFY2(!m.nodes[size_t(e.node)].fromInputsOnly, m.nodes[size_t(e.node)].name.c_str());
            if (e.maskNodes.empty())
                continue;
            ++masks;
            maskAt = int(i);
            folded = e.maskNodes.size();
            for (int n : e.maskNodes)
                for (int t : m.nodes[size_t(n)].inputs) {
                    QVERIFY(t < 0 || m.tensors[size_t(t)].role != TensorRole::Parameter);
                    QVERIFY(t < 0 || isInteger(m.tensors[size_t(t)].dtype) ||
                            m.tensors[size_t(t)].dtype == DType::Bool ||
                            m.tensors[size_t(t)].role != TensorRole::Input);
                }
            for (int n : e.maskNodes)
                for (int t : m.nodes[size_t(n)].outputs)
                    rank4 = rank4 || (t >= 0 && m.tensors[size_t(t)].shape.dims.size() == 4);
        }
        QCOMPARE(masks, 1);
        QVERIFY2(folded >= 5, std::to_string(folded).c_str());
        QVERIFY(rank4);
        QVERIFY(blockAt >= 0);
        QVERIFY(maskAt < blockAt);
        // Shown in place when asked for: no mask row then.
        for (const TreeEntry& e : treeEntries(m, int(l - m.layers.data()), true))
            QVERIFY(e.maskNodes.empty());
    }

    // A config.json's graph (built by hfconfig.cpp) keeps its "mask" module, a leaf, as it is; its lone
    // positions Range is not a mask and stays a node; rotary_emb (cos/sin from the positions, no parameter) is
    // no mask either: no mask row anywhere in the tree.
    void noMaskRowWithoutMask()
    {
        const Model m = loadModel(HEADROOM_TEST_DATA "/hf/llama_small.config.json");
        QVERIFY(find(m, "mask") && find(m, "model/rotary_emb"));
        for (size_t l = 0; l < m.layers.size(); ++l)
            for (const TreeEntry& e : treeEntries(m, int(l), false))
                QVERIFY2(e.maskNodes.empty(), m.layers[l].path.c_str());
    }

    void tiedEmbeddingCountedOnce()
    {
        const Model m = loadModel(HEADROOM_TEST_DATA "/tiny_gpt.onnx");
        QCOMPARE(m.layers[0].params, m.params.trainable);
        QCOMPARE(find(m, "tok_emb")->params, int64_t(8000 * 256));
        QCOMPARE(find(m, "lm_head")->params, int64_t(0));
    }
};

QTEST_APPLESS_MAIN(TestLayerTree)
#include "tst_layertree.moc"
