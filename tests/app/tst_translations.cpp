// translations/headroom_zh_CN.ts is complete (no unfinished, empty or copied entries; placeholders kept),
// it is compiled into headroom_ui's resources, and LanguageService picks the language as Heimer does.
#include "languageservice.h"
#include "warningtext.h"

#include "headroom/load/loader.h"
#include "headroom/memory/engine.h"

#include <QCoreApplication>
#include <QFile>
#include <QRegularExpression>
#include <QSet>
#include <QTest>
#include <QTranslator>
#include <QXmlStreamReader>

namespace {

struct Message
{
    QString context, source, type;
    QStringList translations; // one, or one per numerus form
    bool numerus = false;
};

QList<Message> readTs(const QString& path, QString* error)
{
    QList<Message> out;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        *error = f.errorString();
        return out;
    }
    QXmlStreamReader xml(&f);
    QString context;
    Message m;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement()) {
            const auto name = xml.name();
            if (name == QLatin1String("context")) {
                context.clear();
            } else if (name == QLatin1String("name") && context.isEmpty()) {
                context = xml.readElementText();
            } else if (name == QLatin1String("message")) {
                m = Message{};
                m.context = context;
                m.numerus = xml.attributes().value(QLatin1String("numerus")) == QLatin1String("yes");
            } else if (name == QLatin1String("source")) {
                m.source = xml.readElementText();
            } else if (name == QLatin1String("translation")) {
                m.type = xml.attributes().value(QLatin1String("type")).toString();
                if (!m.numerus)
                    m.translations << xml.readElementText();
            } else if (name == QLatin1String("numerusform")) {
                m.translations << xml.readElementText();
            }
        } else if (xml.isEndElement() && xml.name() == QLatin1String("message")) {
            out << m;
        }
    }
    if (xml.hasError())
        *error = xml.errorString();
    return out;
}

bool hasCjk(const QString& s)
{
    for (QChar c : s)
        if (c.unicode() >= 0x4e00 && c.unicode() <= 0x9fff)
            return true;
    return false;
}

// %1..%99 and %n, as a sorted multiset.
QStringList placeholders(const QString& s)
{
    static const QRegularExpression re(QStringLiteral("%(\\d{1,2}|n)"));
    QStringList out;
    for (auto it = re.globalMatch(s); it.hasNext();)
        out << it.next().captured(0);
    out.sort();
    out.removeDuplicates();
    return out;
}

// Sources that read the same in Chinese: product, API and format names, units and pure placeholders.
bool mayStayUntranslated(const QString& source)
{
    static const QRegularExpression re(QStringLiteral(
        "^([%\\d\\s.,:;()×·/+\\-–—≥#]|%n|FP32|FP16|BF16|INT8|INT4|SGD|Adam|AdamW|Adagrad|RMSprop|Adadelta|Lion|LAMB|"
        "Adafactor|FSDP|ONNX|SHA-256|GPU|CUDA|CPU|JSON|CSV|PDF|Netron|MACs?|KiB|MiB|GiB|IEC|SI|OK|DDP|ZeRO|Headroom|"
        "cuBLAS|cuDNN|nvidia-smi|headroom-cli|headroom-probe|B|kB|MB|GB|Op|ops?|\\w+\\.onnx|"
        "Hugging Face|Trainer|PEFT|torchtune|litgpt)*$"));
    return re.match(source).hasMatch();
}

} // namespace

class TestTranslations : public QObject
{
    Q_OBJECT

private slots:
    void tsIsComplete()
    {
        QString error;
        const QList<Message> messages = readTs(QStringLiteral(HEADROOM_SOURCE_DIR "/translations/headroom_zh_CN.ts"),
                                               &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(messages.size() > 100);
        QStringList problems;
        for (const Message& m : messages) {
            const QString where = m.context + QStringLiteral(": \"") + m.source + QLatin1Char('"');
            if (m.type == QLatin1String("unfinished"))
                problems << QStringLiteral("unfinished ") + where;
            else if (m.type == QLatin1String("vanished") || m.type == QLatin1String("obsolete"))
                problems << QStringLiteral("obsolete ") + where;
            if (m.translations.isEmpty())
                problems << QStringLiteral("no translation ") + where;
            for (const QString& t : m.translations) {
                if (t.trimmed().isEmpty() && !m.source.trimmed().isEmpty())
                    problems << QStringLiteral("empty ") + where;
                else if (!hasCjk(t) && !mayStayUntranslated(m.source))
                    problems << QStringLiteral("copied, not translated ") + where + QStringLiteral(" -> ") + t;
                if (placeholders(t) != placeholders(m.source))
                    problems << QStringLiteral("placeholders differ ") + where + QStringLiteral(" -> ") + t;
            }
        }
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
    }

    void catalogueIsCompiledIn()
    {
        QTranslator translator;
        QVERIFY(translator.load(QStringLiteral(":/i18n/headroom_zh_CN.qm")));
        QVERIFY(!translator.isEmpty());
        QVERIFY(hasCjk(translator.translate("PdfReport", "GPU memory report: %1")));
    }

    // The core's warnings (English, no Qt) reach a Chinese user in Chinese: every template is matched by the
    // sentence it describes and translated with its values kept; real warnings from a load and an
    // evaluation come out translated, with the file name in them.
    void coreWarnings()
    {
        LanguageService service;
        QCOMPARE(service.installLanguage(*QCoreApplication::instance(), QStringLiteral("zh_CN")),
                 QStringLiteral("zh_CN"));
        QVERIFY(gui::warningTemplateCount() >= 20);
        for (int i = 0; i < gui::warningTemplateCount(); ++i) {
            QString english = QString::fromUtf8(gui::warningTemplate(i));
            QStringList values;
            for (int k = 1; k <= 9; ++k)
                if (english.contains(QStringLiteral("%%1").arg(k))) {
                    values << QStringLiteral("v%1x").arg(k);
                    english.replace(QStringLiteral("%%1").arg(k), values.last());
                }
            const QString shown = gui::warningText(english.toStdString());
            QVERIFY2(hasCjk(shown), qPrintable(english + QStringLiteral(" -> ") + shown));
            for (const QString& v : values)
                QVERIFY2(shown.contains(v), qPrintable(shown));
        }
        const headroom::Model m = headroom::loadModel(HEADROOM_TEST_DATA "/hf/llama_small.onnx");
        QVERIFY(!m.warnings.empty());
        for (const std::string& w : m.warnings) {
            const QString shown = gui::warningText(w);
            QVERIFY2(hasCjk(shown) && shown.contains(QStringLiteral("llama_small.onnx")), qPrintable(shown));
        }
        headroom::Config c;
        c.symbols = m.defaultBindings();
        c.dtype = headroom::DtypePolicy::INT8; // weight-only inference policy in training mode: a warning
        const headroom::Evaluation e = headroom::evaluate(m, c);
        QVERIFY(!e.warnings.empty());
        for (const std::string& w : e.warnings)
            QVERIFY2(hasCjk(gui::warningText(w)), w.c_str());
        // Untranslated text passes through unchanged.
        QCOMPARE(gui::warningText("something new"), QStringLiteral("something new"));
        QCOMPARE(service.installLanguage(*QCoreApplication::instance(), QStringLiteral("en")), QStringLiteral("en_US"));
        QCOMPARE(gui::warningText(m.warnings.front()), QString::fromStdString(m.warnings.front()));
    }

    void install()
    {
        LanguageService service;
        QCOMPARE(service.installLanguage(*QCoreApplication::instance(), QStringLiteral("zh_CN")),
                 QStringLiteral("zh_CN"));
        QVERIFY(hasCjk(QCoreApplication::translate("PdfReport", "Layer table (%n layers)", nullptr, 3)));
        QCOMPARE(QLocale().language(), QLocale::Chinese);
        // A language without a catalogue falls back to English, without failing.
        QCOMPARE(service.installLanguage(*QCoreApplication::instance(), QStringLiteral("tlh")),
                 QStringLiteral("en_US"));
        QCOMPARE(QCoreApplication::translate("PdfReport", "Layer table (%n layers)", nullptr, 3),
                 QStringLiteral("Layer table (3 layers)"));
        QCOMPARE(service.installLanguage(*QCoreApplication::instance(), QStringLiteral("en")), QStringLiteral("en_US"));
    }

    void choose_data()
    {
        QTest::addColumn<QString>("flag");
        QTest::addColumn<QString>("saved");
        QTest::addColumn<QString>("system");
        QTest::addColumn<QString>("expected");
        QTest::newRow("system only") << QString() << QString() << QStringLiteral("zh_CN") << QStringLiteral("zh_CN");
        QTest::newRow("saved beats system")
            << QString() << QStringLiteral("en") << QStringLiteral("zh_CN") << QStringLiteral("en_US");
        QTest::newRow("flag beats saved")
            << QStringLiteral("zh_CN") << QStringLiteral("en") << QStringLiteral("en_US") << QStringLiteral("zh_CN");
        QTest::newRow("flag spelled zh-CN")
            << QStringLiteral("zh-CN") << QString() << QStringLiteral("en_US") << QStringLiteral("zh_CN");
        QTest::newRow("flag spelled zh") << QStringLiteral("zh") << QString() << QStringLiteral("en_US")
                                         << QStringLiteral("zh_CN");
        QTest::newRow("POSIX locale string")
            << QStringLiteral("zh_CN.UTF-8") << QString() << QStringLiteral("C") << QStringLiteral("zh_CN");
        QTest::newRow("C locale is English")
            << QString() << QString() << QStringLiteral("C") << QStringLiteral("en_US");
    }

    void choose()
    {
        QFETCH(QString, flag);
        QFETCH(QString, saved);
        QFETCH(QString, system);
        QFETCH(QString, expected);
        QCOMPARE(LanguageService::choose(flag, saved, QLocale(system)), expected);
    }

    void names()
    {
        QCOMPARE(LanguageService::availableLanguages().constFirst(), QStringLiteral("en"));
        QVERIFY(LanguageService::availableLanguages().contains(QStringLiteral("zh_CN")));
        QCOMPARE(LanguageService::nativeName(QStringLiteral("zh_CN")), QStringLiteral("简体中文"));
        QCOMPARE(LanguageService::nativeName(QStringLiteral("en")), QStringLiteral("English"));
    }
};

QTEST_MAIN(TestTranslations)
#include "tst_translations.moc"
