// The PDF report, headless: what pdftotext/pdfinfo/pdffonts read back from it (model name, the peak to
// the byte as toJson has it, the layer count, pages, Chinese text in a CJK font), and atomic failure.
#include "../core/vit_fixture.h"
#include "languageservice.h"
#include "pdfreport.h"

#include "headroom/hardware/gpus.h"
#include "headroom/load/loader.h"
#include "headroom/report/report.h"

#include <QApplication>
#include <QDir>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

namespace {

QString dataFile(const char* name) { return QStringLiteral(HEADROOM_TEST_DATA "/") + QLatin1String(name); }

// stdout of a poppler tool, or a null string when it is not installed.
QString run(const QString& tool, const QStringList& args)
{
    if (QStandardPaths::findExecutable(tool).isEmpty())
        return {};
    QProcess p;
    p.start(tool, args);
    if (!p.waitForFinished(60000) || p.exitCode() != 0)
        return QStringLiteral("<%1 failed: %2>").arg(tool, QString::fromLocal8Bit(p.readAllStandardError()));
    return QString::fromUtf8(p.readAllStandardOutput());
}

headroom::Config defaultConfig(const headroom::Model& model)
{
    headroom::Config c;
    c.symbols = model.defaultBindings();
    c.gpu = headroom::findGpu("4090").value_or(headroom::customGpu(int64_t{24} << 30));
    return c;
}

int pageCount(const QString& pdf)
{
    static const QRegularExpression pages(QStringLiteral("^Pages:\\s+(\\d+)"), QRegularExpression::MultilineOption);
    const QRegularExpressionMatch m = pages.match(run(QStringLiteral("pdfinfo"), {pdf}));
    return m.hasMatch() ? m.captured(1).toInt() : -1;
}

int cjkCount(const QString& text)
{
    int n = 0;
    for (QChar c : text)
        if (c.unicode() >= 0x4e00 && c.unicode() <= 0x9fff)
            ++n;
    return n;
}

} // namespace

class TestPdfReport : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        if (QStandardPaths::findExecutable(QStringLiteral("pdftotext")).isEmpty() ||
            QStandardPaths::findExecutable(QStringLiteral("pdfinfo")).isEmpty())
            QSKIP("poppler-utils (pdftotext, pdfinfo) are not installed");
        QVERIFY(m_dir.isValid());
        m_language.installLanguage(*qApp, QStringLiteral("en"));
    }

    void report_data()
    {
        QTest::addColumn<QString>("file");
        QTest::newRow("resnet50") << dataFile("resnet50.onnx");
        QTest::newRow("tiny_gpt") << dataFile("tiny_gpt.onnx");
    }

    void report()
    {
        QFETCH(QString, file);
        const headroom::Model model = headroom::loadModel(file.toStdString());
        const headroom::Config config = defaultConfig(model);
        const headroom::Report r = headroom::buildReport(model, config);
        const nlohmann::json json = headroom::toJson(model, r);
        const int64_t peak = json.at("memory").at("peak").get<int64_t>();
        const auto layers = static_cast<qsizetype>(json.at("layers").size());
        QCOMPARE(peak, r.evaluation.memory.peak);

        const QString pdf = m_dir.filePath(QFileInfo(file).baseName() + QStringLiteral(".pdf"));
        QString error;
        PdfReportOptions everyNode; // the per-node table is on request (the default is the layer tree)
        everyNode.allNodes = true;
        QVERIFY2(writePdfReport(pdf, model, r, &error, everyNode), qPrintable(error));
        QVERIFY(error.isEmpty());

        const QString text = run(QStringLiteral("pdftotext"), {QStringLiteral("-layout"), pdf, QStringLiteral("-")});
        QVERIFY2(text.contains(QFileInfo(file).fileName()), "the model's file name");
        // The peak as printed (formatBytes) with the exact byte count, equal to the JSON's memory.peak.
        const QString peakLine = QStringLiteral("Peak allocated: %1 (%2 bytes)")
                                     .arg(QString::fromStdString(headroom::formatBytes(peak)))
                                     .arg(peak);
        QVERIFY2(text.contains(peakLine), qPrintable(peakLine));
        const QString layerLine = QStringLiteral("Layer table (%1 layers)").arg(layers);
        QVERIFY2(text.contains(layerLine), qPrintable(layerLine));
        QVERIFY(text.contains(QString::fromStdString(model.info.sha256)));
        // The parameters as the JSON counts them (params.trainable / frozen), with the bytes the run holds
        const QString params = QStringLiteral("elements: %1 trainable, %2 frozen; %3 held")
                                   .arg(json.at("params").at("trainable").get<int64_t>())
                                   .arg(json.at("params").at("frozen").get<int64_t>())
                                   .arg(QString::fromStdString(headroom::formatBytes(r.evaluation.memory.weights -
                                                                                     r.evaluation.memory.buffers)));
        QVERIFY2(text.contains(params), qPrintable(params));
        // The full layer table: every node's row number appears (rows are never dropped or clipped away).
        QVERIFY2(text.contains(QRegularExpression(QStringLiteral("\\n\\s*%1\\s+\\S").arg(layers))), "last table row");
        QVERIFY(text.contains(QStringLiteral("Assumptions and formulas")));
        QVERIFY(pageCount(pdf) >= 4);
    }

    // The default report: the layer tree at depth 3 with shape computations folded, never longer than
    // 15 pages for a ViT-B/16-sized transformer at batch 256 (1,600+ nodes; 47 pages when every node was
    // listed) nor for the samples the package ships; the cover says whether the fit is known.
    void readableLength_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("batch");
        QTest::newRow("vit_b_16 (fixture) b256") << QString() << 256;
        const QDir samples(QStringLiteral(HEADROOM_SOURCE_DIR "/resources/samples"));
        for (const QString& f : samples.entryList({QStringLiteral("*.onnx")}))
            QTest::newRow(qPrintable(f)) << samples.filePath(f) << 256;
    }
    void readableLength()
    {
        QFETCH(QString, file);
        QFETCH(int, batch);
        const headroom::Model model = file.isEmpty()
                                          ? headroom::loadModelFromBytes(fixture::vitB16().bytes(), "vit_b_16.onnx")
                                          : headroom::loadModel(file.toStdString());
        headroom::Config config = defaultConfig(model);
        if (model.batchSymbol >= 0)
            config.symbols[static_cast<size_t>(model.batchSymbol)] = batch;
        const headroom::Report r = headroom::buildReport(model, config);
        const QString pdf = m_dir.filePath(QStringLiteral("length-%1.pdf")
                                               .arg(QString::fromUtf8(QTest::currentDataTag()))
                                               .replace(QLatin1Char(' '), QLatin1Char('_')));
        QString error;
        QVERIFY2(writePdfReport(pdf, model, r, &error), qPrintable(error));
        const int pages = pageCount(pdf);
        QVERIFY2(pages >= 4 && pages <= 15, qPrintable(QString::number(pages)));
        const QString text = run(QStringLiteral("pdftotext"), {QStringLiteral("-layout"), pdf, QStringLiteral("-")});
        QVERIFY(text.contains(QRegularExpression(QStringLiteral("Layer table \\(\\d+ rows\\)"))));
        QVERIFY(text.contains(QStringLiteral("Fit known")) || text.contains(QStringLiteral("Fit unknown")));
        if (file.isEmpty()) {
            // The ViT's modules are rows; its shape arithmetic is folded, not listed.
            QVERIFY(text.contains(QStringLiteral("conv_proj")));
            QVERIFY(text.contains(QStringLiteral("encoder_layer_11")));
            QVERIFY(text.contains(QStringLiteral("shape computations (35 nodes)")));
            QVERIFY(!text.contains(QStringLiteral("/Shape")));
        }
    }

    void chinese()
    {
        QCOMPARE(m_language.installLanguage(*qApp, QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
        const headroom::Model model = headroom::loadModel(dataFile("tiny_gpt.onnx").toStdString());
        const QString pdf = m_dir.filePath(QStringLiteral("zh.pdf"));
        QString error;
        const bool ok = writePdfReport(pdf, model, defaultConfig(model), &error);
        m_language.installLanguage(*qApp, QStringLiteral("en"));
        QVERIFY2(ok, qPrintable(error));

        const QString text = run(QStringLiteral("pdftotext"), {pdf, QStringLiteral("-")});
        QVERIFY2(cjkCount(text) > 200, qPrintable(text.left(400)));
        QVERIFY(text.contains(QStringLiteral("GPU 显存报告")));
        // Drawn with a font that has the glyphs (not boxes): a CJK font is embedded.
        const QString fonts = run(QStringLiteral("pdffonts"), {pdf});
        if (!fonts.isNull())
            QVERIFY2(fonts.contains(QStringLiteral("CJK")), qPrintable(fonts));
        QVERIFY(pageCount(pdf) >= 4);
    }

    void failedWriteLeavesNothing_data()
    {
        QTest::addColumn<QString>("target");
        QTest::newRow("missing directory") << QStringLiteral("no/such/dir/r.pdf");
        QTest::newRow("a directory") << QStringLiteral("adir");
    }

    void failedWriteLeavesNothing()
    {
        QFETCH(QString, target);
        QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("adir")));
        const QString path = m_dir.filePath(target);
        const headroom::Model model = headroom::loadModel(dataFile("tiny_gpt.onnx").toStdString());
        headroom::ReportOptions fast;
        fast.sweep = false;
        const headroom::Report r = headroom::buildReport(model, defaultConfig(model), fast);
        const QStringList before = QDir(m_dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot);
        QString error;
        QVERIFY(!writePdfReport(path, model, r, &error));
        QVERIFY(!error.isEmpty());
        QVERIFY2(!error.contains(QLatin1Char('\n')), qPrintable(error));
        QVERIFY2(error.contains(path), qPrintable(error));
        if (target != QLatin1String("adir"))
            QVERIFY(!QFileInfo::exists(path));
        QCOMPARE(QDir(m_dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), before);
    }

    void overwriteIsAtomic()
    {
        // An existing report is replaced whole; the writer never leaves a temporary file beside it.
        const QString path = m_dir.filePath(QStringLiteral("again.pdf"));
        QFile old(path);
        QVERIFY(old.open(QIODevice::WriteOnly));
        old.write("old");
        old.close();
        const headroom::Model model = headroom::loadModel(dataFile("tiny_gpt.onnx").toStdString());
        QString error;
        QVERIFY2(writePdfReport(path, model, defaultConfig(model), &error), qPrintable(error));
        QFile now(path);
        QVERIFY(now.open(QIODevice::ReadOnly));
        QVERIFY(now.read(5) == "%PDF-");
        const QStringList leftovers =
            QDir(m_dir.path()).entryList({QStringLiteral("again.pdf.*"), QStringLiteral("*.tmp")}, QDir::Files);
        QVERIFY2(leftovers.isEmpty(), qPrintable(leftovers.join(QLatin1Char(' '))));
    }

private:
    QTemporaryDir m_dir;
    LanguageService m_language;
};

QTEST_MAIN(TestPdfReport)
#include "tst_pdfreport.moc"
