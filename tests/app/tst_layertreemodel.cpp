// The layer tree model and its proxy: structure, figures, dataChanged without reset, freeze, filter, sort.
#include "layerfiltermodel.h"
#include "layertreemodel.h"

#include "../core/vit_fixture.h"
#include "headroom/hardware/gpus.h"
#include "headroom/load/loader.h"
#include "headroom/report/report.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

using namespace gui;

namespace {
ModelPtr load(const char* name)
{
    return std::make_shared<const headroom::Model>(headroom::loadModel(std::string(HEADROOM_TEST_DATA "/") + name));
}

headroom::Config configAt(const headroom::Model& m, int64_t batch)
{
    headroom::Config c;
    c.symbols = m.defaultBindings();
    if (m.batchSymbol >= 0)
        c.symbols[static_cast<size_t>(m.batchSymbol)] = batch;
    c.gpu = *headroom::findGpu("4090");
    return c;
}
} // namespace

class TestLayerTreeModel : public QObject
{
    Q_OBJECT
private slots:
    void globMatch_data()
    {
        QTest::addColumn<QString>("pattern");
        QTest::addColumn<QString>("path");
        QTest::addColumn<bool>("match");
        QTest::newRow("exact") << "layer1"
                               << "layer1" << true;
        QTest::newRow("subtree") << "layer1/*"
                                 << "layer1/layer1.0/conv1" << true;
        QTest::newRow("not sibling") << "layer1/*"
                                     << "layer10/conv" << false;
        QTest::newRow("question") << "layer?"
                                  << "layer2" << true;
        QTest::newRow("prefix only") << "layer1"
                                     << "layer1/conv" << false;
        QTest::newRow("star middle") << "*conv*"
                                     << "layer1/layer1.0/conv2" << true;
    }
    void globMatch()
    {
        QFETCH(QString, pattern);
        QFETCH(QString, path);
        QFETCH(bool, match);
        QCOMPARE(gui::globMatch(pattern.toStdString(), path.toStdString()), match);
    }

    void figures_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("resnet18") << "resnet18.onnx";
        QTest::newRow("tiny_gpt") << "tiny_gpt.onnx";
        QTest::newRow("lstm_tagger") << "lstm_tagger.onnx";
        QTest::newRow("bert_like") << "bert_like.onnx";
    }
    void figures()
    {
        QFETCH(QString, file);
        const ModelPtr m = load(qPrintable(file));
        LayerTreeModel tree;
        QAbstractItemModelTester tester(&tree, QAbstractItemModelTester::FailureReportingMode::QtTest);
        LayerFilterModel proxy;
        proxy.setSourceModel(&tree);
        QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        tree.setModel(m);
        const headroom::Report r = headroom::buildReport(*m, configAt(*m, 4), {.timeline = false, .sweep = false});
        tree.setReport(r);

        // Every graph node has a row; a top-level sum equals the engine's per-node sum.
        int64_t saved = 0, activations = 0, params = 0;
        for (size_t n = 0; n < m->nodes.size(); ++n) {
            QVERIFY(tree.indexForNode(static_cast<int>(n)).isValid());
            saved += r.evaluation.nodes[n].savedBytes;
            activations += r.evaluation.nodes[n].outputBytes;
            params += r.evaluation.nodes[n].params;
        }
        int64_t topSaved = 0, topActivations = 0, topParams = 0;
        for (int row = 0; row < tree.rowCount(); ++row) {
            topSaved += tree.index(row, LayerTreeModel::SavedColumn).data(LayerTreeModel::SortRole).toLongLong();
            topActivations +=
                tree.index(row, LayerTreeModel::ActivationColumn).data(LayerTreeModel::SortRole).toLongLong();
            topParams += tree.index(row, LayerTreeModel::ParamsColumn).data(LayerTreeModel::SortRole).toLongLong();
        }
        QCOMPARE(topSaved, saved);
        QCOMPARE(topActivations, activations);
        QCOMPARE(topParams, params);
        QCOMPARE(tree.index(0, LayerTreeModel::SavedColumn).data(LayerTreeModel::MaxCostRole).toLongLong(), saved);
        // Display text is the formatted byte count.
        const QModelIndex first = tree.index(0, LayerTreeModel::ActivationColumn);
        QCOMPARE(first.data().toString(),
                 bytesText(first.data(LayerTreeModel::SortRole).toLongLong(), headroom::Units::IEC));
        tree.setUnits(headroom::Units::SI);
        QCOMPARE(first.data().toString(),
                 bytesText(first.data(LayerTreeModel::SortRole).toLongLong(), headroom::Units::SI));
        for (int c = 0; c < LayerTreeModel::NUM_COLUMNS; ++c) {
            QVERIFY(!tree.headerData(c, Qt::Horizontal).toString().isEmpty());
            QVERIFY(!tree.headerData(c, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty());
        }
    }

    void newReportIsDataChangedOnly()
    {
        const ModelPtr m = load("resnet18.onnx");
        LayerTreeModel tree;
        QAbstractItemModelTester tester(&tree, QAbstractItemModelTester::FailureReportingMode::QtTest);
        tree.setModel(m);
        tree.setReport(headroom::buildReport(*m, configAt(*m, 1), {.timeline = false, .sweep = false}));
        const QPersistentModelIndex row = tree.index(0, 0);
        const qlonglong before = tree.index(row.row(), LayerTreeModel::SavedColumn, row.parent())
                                     .data(LayerTreeModel::SortRole)
                                     .toLongLong();
        QSignalSpy resets(&tree, &QAbstractItemModel::modelReset);
        QSignalSpy layout(&tree, &QAbstractItemModel::layoutChanged);
        QSignalSpy changed(&tree, &QAbstractItemModel::dataChanged);
        tree.setReport(headroom::buildReport(*m, configAt(*m, 16), {.timeline = false, .sweep = false}));
        QCOMPARE(resets.count(), 0);
        QCOMPARE(layout.count(), 0);
        QVERIFY(changed.count() > 0);
        for (const auto& args : changed) {
            QVERIFY(args.at(0).toModelIndex().column() >= LayerTreeModel::ShapeColumn);
            QCOMPARE(args.at(1).toModelIndex().column(), int(LayerTreeModel::ShareColumn));
        }
        QVERIFY(row.isValid());
        QCOMPARE(tree.index(row.row(), LayerTreeModel::SavedColumn, row.parent())
                     .data(LayerTreeModel::SortRole)
                     .toLongLong(),
                 before * 16);
    }

    void freezeEmitsPatterns()
    {
        const ModelPtr m = load("resnet18.onnx");
        LayerTreeModel tree;
        QAbstractItemModelTester tester(&tree, QAbstractItemModelTester::FailureReportingMode::QtTest);
        tree.setModel(m);
        QSignalSpy spy(&tree, &LayerTreeModel::freezeChanged);
        const QModelIndex layer = tree.index(0, LayerTreeModel::NameColumn);
        QVERIFY(tree.flags(layer) & Qt::ItemIsUserCheckable);
        QVERIFY(tree.setData(layer, Qt::Checked, Qt::CheckStateRole));
        QCOMPARE(spy.count(), 1);
        const auto patterns = spy.front().front().value<std::vector<std::string>>();
        QVERIFY(!patterns.empty());
        QCOMPARE(QString::fromStdString(patterns.front()), layer.data(LayerTreeModel::LayerPathRole).toString());
        QCOMPARE(layer.data(Qt::CheckStateRole).value<Qt::CheckState>(), Qt::Checked);
        QVERIFY(tree.setData(layer, Qt::Unchecked, Qt::CheckStateRole));
        QVERIFY(tree.freezePatterns().empty());
    }

    // A 1,600-node ViT-B/16 export: the tree's top level is the model's modules and real ops, the
    // exporter's shape arithmetic one folded row at the end; the toggle lists those nodes in place.
    void transformerTopLevel()
    {
        auto model = std::make_shared<const headroom::Model>(
            headroom::loadModelFromBytes(fixture::vitB16().bytes(), "vit_b_16.onnx"));
        QVERIFY(model->nodes.size() >= 1500);
        LayerTreeModel tree;
        QAbstractItemModelTester tester(&tree, QAbstractItemModelTester::FailureReportingMode::QtTest);
        tree.setModel(model);
        tree.setReport(headroom::buildReport(*model, configAt(*model, 8), headroom::ReportOptions{false, false}));
        const QModelIndex root; // the top-level rows
        const QStringList shapeOps =
            QStringLiteral("Shape Constant Gather Cast Div Unsqueeze Concat ConstantOfShape Equal Where Mul")
                .split(QLatin1Char(' '));
        auto opOf = [&](const QModelIndex& i) {
            return tree.index(i.row(), LayerTreeModel::OpColumn, i.parent()).data().toString();
        };
        QStringList names;
        for (int r = 0; r < tree.rowCount(root); ++r) {
            const QModelIndex i = tree.index(r, 0, root);
            names << i.data().toString();
            // A graph-node row at the top level is a real op: its output is an activation, not a shape.
            const int node = i.data(LayerTreeModel::NodeRole).toInt();
            if (node >= 0)
                QVERIFY2(!model->nodes[size_t(node)].shapeComputation, qPrintable(names.last()));
        }
        QCOMPARE(names.first(), QStringLiteral("conv_proj"));
        QVERIFY(names.contains(QStringLiteral("encoder")) && names.contains(QStringLiteral("heads")));
        QCOMPARE(names.last(), QStringLiteral("shape computations (35 nodes)"));
        QCOMPARE(names.size(), 9);
        // The folded row holds its nodes and adds nothing to the figures (0-32 B each).
        const QModelIndex folded = tree.index(names.size() - 1, 0, root);
        QCOMPARE(tree.rowCount(folded), 35);
        QVERIFY(!(tree.flags(folded) & Qt::ItemIsUserCheckable));
        auto topTotal = [&] {
            qlonglong sum = 0;
            for (int r = 0; r < tree.rowCount(root); ++r)
                sum +=
                    tree.index(r, LayerTreeModel::ActivationColumn, root).data(LayerTreeModel::SortRole).toLongLong();
            return sum;
        };
        const qlonglong total = topTotal();
        QVERIFY(total > 0);

        QSignalSpy reset(&tree, &QAbstractItemModel::modelReset);
        tree.setShowShapeComputations(true);
        QCOMPARE(reset.size(), 1);
        QCOMPARE(tree.rowCount(root), 8 + 35);
        QCOMPARE(opOf(tree.index(1, 0, root)), QStringLiteral("Shape"));
        int shapeRows = 0;
        for (int r = 0; r < tree.rowCount(root); ++r)
            shapeRows += shapeOps.contains(opOf(tree.index(r, 0, root)));
        QVERIFY(shapeRows >= 35);
        // Same figures either way.
        QCOMPARE(topTotal(), total);
        tree.setShowShapeComputations(false);
        QCOMPARE(tree.rowCount(root), 9);
    }

    void filterAndSort()
    {
        const ModelPtr m = load("resnet18.onnx");
        LayerTreeModel tree;
        tree.setModel(m);
        tree.setReport(headroom::buildReport(*m, configAt(*m, 8), {.timeline = false, .sweep = false}));
        LayerFilterModel proxy;
        proxy.setSourceModel(&tree);
        QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        proxy.setFilterRegularExpression(
            QRegularExpression(QStringLiteral("MaxPool"), QRegularExpression::CaseInsensitiveOption));
        QVERIFY(proxy.rowCount() > 0);
        QVERIFY(proxy.rowCount() < tree.rowCount());
        proxy.setFilterRegularExpression(QRegularExpression());
        proxy.sort(LayerTreeModel::SavedColumn, Qt::DescendingOrder);
        for (int row = 1; row < proxy.rowCount(); ++row)
            QVERIFY(proxy.index(row - 1, LayerTreeModel::SavedColumn).data(LayerTreeModel::SortRole).toLongLong() >=
                    proxy.index(row, LayerTreeModel::SavedColumn).data(LayerTreeModel::SortRole).toLongLong());
    }
};

QTEST_MAIN(TestLayerTreeModel)
#include "tst_layertreemodel.moc"
