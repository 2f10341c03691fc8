// No verdict while sizes are unknown, in the GUI: the banner turns amber and says "Cannot tell: ..." with the
// node behind it (offscreen), and the PDF cover says the same (read back with pdftotext).
#include "pdfreport.h"
#include "verdict.h"

#include "headroom/load/loader.h"
#include "headroom/report/report.h"

#include <QApplication>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

namespace {

headroom::Config onGpu(const headroom::Model& model)
{
    headroom::Config c;
    c.symbols = model.defaultBindings();
    c.gpu.name = "RTX 4090";
    c.gpu.capacity = int64_t(24) << 30;
    return c;
}

} // namespace

class TestUnknownFit : public QObject
{
    Q_OBJECT

private slots:
    void banner_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<bool>("unknown");
        QTest::addColumn<QString>("text");
        QTest::newRow("absent reshape target") << "exports/reshape_absent.onnx" << true
                                               << "Cannot tell: 2 tensors of unknown size, first at node net/Reshape";
        QTest::newRow("every size known") << "resnet18.onnx" << false << "Fits on";
    }
    void banner()
    {
        QFETCH(QString, file);
        QFETCH(bool, unknown);
        QFETCH(QString, text);
        const headroom::Model m = headroom::loadModel(std::string(HEADROOM_TEST_DATA "/") + file.toStdString());
        const headroom::Report r = headroom::buildReport(m, onGpu(m));
        QWidget parent;
        gui::VerdictBanner banner(&parent);
        banner.setReport(m, r, headroom::Units::IEC);
        QCOMPARE(banner.unknown(), unknown);
        QVERIFY2(banner.text().startsWith(text), qPrintable(banner.text()));
        // Amber: the tint leans to red and green, away from blue (green alone would read "fits").
        const QColor tint = banner.palette().color(QPalette::Window);
        const QColor window = parent.palette().color(QPalette::Window);
        if (unknown) {
            QVERIFY(tint.red() >= window.red() - 10 && tint.blue() < window.blue());
            QVERIFY(tint.red() > tint.blue() && tint.green() > tint.blue());
        }
    }

    void pdfCover()
    {
        if (QStandardPaths::findExecutable(QStringLiteral("pdftotext")).isEmpty())
            QSKIP("poppler-utils (pdftotext) is not installed");
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const headroom::Model m = headroom::loadModel(HEADROOM_TEST_DATA "/exports/reshape_absent.onnx");
        const QString pdf = dir.filePath(QStringLiteral("absent.pdf"));
        QString error;
        QVERIFY2(writePdfReport(pdf, m, onGpu(m), &error), qPrintable(error));
        QProcess p;
        p.start(QStringLiteral("pdftotext"), {pdf, QStringLiteral("-")});
        QVERIFY(p.waitForFinished(60000));
        // Without whitespace and with the "fi" ligature undone: the sentence may wrap on the page.
        QString text = QString::fromUtf8(p.readAllStandardOutput());
        text.replace(QChar(0xfb01), QLatin1String("fi"));
        text.remove(QRegularExpression(QStringLiteral("\\s")));
        QVERIFY2(text.contains(QLatin1String("Cannottell:2tensorsofunknownsize,firstatnodenet/Reshape")),
                 qPrintable(text.left(400)));
        QVERIFY(!text.contains(QLatin1String("Fitson")));
        QVERIFY(!text.contains(QLatin1String("Doesnotfiton")));
    }
};

QTEST_MAIN(TestUnknownFit)
#include "tst_unknownfit.moc"
