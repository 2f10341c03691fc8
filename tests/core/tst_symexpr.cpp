#include "headroom/base/symexpr.h"

#include <QtTest>

#include <climits>

using namespace headroom;

class TestSymExpr : public QObject
{
    Q_OBJECT
private slots:
    void eval_data()
    {
        QTest::addColumn<int>("which");
        QTest::addColumn<qlonglong>("batch");
        QTest::addColumn<qlonglong>("seq");
        QTest::addColumn<qlonglong>("expected");
        QTest::addColumn<QString>("text");
        QTest::newRow("constant") << 0 << 8LL << 64LL << 3LL << "3";
        QTest::newRow("batch") << 1 << 8LL << 64LL << 8LL << "batch";
        QTest::newRow("batch*seq") << 2 << 8LL << 64LL << 512LL << "batch*seq";
        QTest::newRow("4*seq - 1") << 3 << 8LL << 64LL << 255LL << "4*seq - 1";
        QTest::newRow("12*batch*seq + 7*batch") << 4 << 2LL << 10LL << 254LL << "12*batch*seq + 7*batch";
    }
    void eval()
    {
        QFETCH(int, which);
        QFETCH(qlonglong, batch);
        QFETCH(qlonglong, seq);
        QFETCH(qlonglong, expected);
        QFETCH(QString, text);
        DimExpr e;
        switch (which) {
        case 0: e = DimExpr::constant(3); break;
        case 1: e = DimExpr::symbol(0); break;
        case 2: e.addTerm(3, 1); break;
        case 3:
            e.addTerm(2, 4);
            e.addTerm(0, -1);
            break;
        case 4:
            e.addTerm(3, 12);
            e.addTerm(1, 7);
            break;
        default: break;
        }
        QCOMPARE(e.eval({batch, seq}), std::optional<int64_t>(expected));
        QCOMPARE(QString::fromStdString(e.toString({"batch", "seq"})), text);
        QCOMPARE(e.isConstant(), which == 0);
    }
    void mergeAndCancel()
    {
        DimExpr e;
        e.addTerm(1, 2);
        e.addTerm(1, 3);
        QCOMPARE(e.terms().size(), size_t(1));
        QCOMPARE(e.terms()[0].coeff, int64_t(5));
        e.addTerm(1, -5);
        QVERIFY(e.terms().empty());
        QCOMPARE(e.constantValue(), std::optional<int64_t>(0));
        QCOMPARE(e.symbolMask(), 0u);
        DimExpr f;
        f.addTerm(5, 1);
        f.addTerm(2, 1);
        QCOMPARE(f.symbolMask(), 7u);
    }
    void overflow()
    {
        DimExpr e = DimExpr::constant(int64_t(1) << 62);
        e.addTerm(1, int64_t(1) << 62);
        QCOMPARE(e.eval({1}), std::nullopt); // 2^62 + 2^62 overflows
        DimExpr big;
        big.addTerm(3, int64_t(1) << 40);
        QCOMPARE(big.eval({int64_t(1) << 20, int64_t(1) << 10}), std::nullopt);
        QCOMPARE(checkedMul(INT64_MAX, 2), std::nullopt);
        QCOMPARE(checkedAdd(INT64_MAX, 1), std::nullopt);
        QCOMPARE(checkedMul(int64_t(1) << 31, int64_t(1) << 31), std::optional<int64_t>(int64_t(1) << 62));
        QCOMPARE(DimExpr::symbol(3).eval({1, 2}), std::nullopt); // missing binding
    }
};

QTEST_APPLESS_MAIN(TestSymExpr)
#include "tst_symexpr.moc"
