#include "languageservice.h"

#include <QCoreApplication>
#include <QLibraryInfo>
#include <QSettings>
#include <QTranslator>

#include <memory>

QString LanguageService::settingsKey() { return QStringLiteral("ui/language"); }

QStringList LanguageService::availableLanguages() { return {QStringLiteral("en"), QStringLiteral("zh_CN")}; }

QString LanguageService::nativeName(const QString& language)
{
    const QLocale locale(normalize(language));
    if (locale.language() == QLocale::Chinese && locale.script() != QLocale::TraditionalChineseScript)
        return QStringLiteral("简体中文");
    if (locale.language() == QLocale::English)
        return QStringLiteral("English");
    QString name = locale.nativeLanguageName();
    if (!name.isEmpty())
        name[0] = name[0].toUpper();
    return name.isEmpty() ? language : name;
}

QString LanguageService::normalize(const QString& language)
{
    QString l = language.trimmed();
    // POSIX forms: "zh_CN.UTF-8", "de_DE@euro"; "C"/"POSIX" mean untranslated.
    l = l.section(QLatin1Char('.'), 0, 0).section(QLatin1Char('@'), 0, 0);
    if (l.isEmpty())
        return {};
    if (l == QLatin1String("C") || l == QLatin1String("POSIX"))
        return QStringLiteral("en_US");
    l.replace(QLatin1Char('-'), QLatin1Char('_'));
    const QLocale locale(l);
    if (locale.language() == QLocale::C)
        return QStringLiteral("en_US");
    return locale.name();
}

QString LanguageService::choose(const QString& commandLine, const QString& saved, const QLocale& system)
{
    if (const QString l = normalize(commandLine); !l.isEmpty())
        return l;
    if (const QString l = normalize(saved); !l.isEmpty())
        return l;
    if (const QString l = normalize(system.name()); !l.isEmpty())
        return l;
    return QStringLiteral("en_US");
}

namespace {

// The GUI's settings; the CLI (which may not name its organisation) reads the same file.
std::unique_ptr<QSettings> settings()
{
    if (QCoreApplication::organizationName().isEmpty())
        return std::make_unique<QSettings>(QSettings::defaultFormat(), QSettings::UserScope, QStringLiteral("Headroom"),
                                           QStringLiteral("Headroom"));
    return std::make_unique<QSettings>();
}

} // namespace

QString LanguageService::savedLanguage() { return settings()->value(settingsKey()).toString(); }

void LanguageService::setSavedLanguage(const QString& language)
{
    const auto s = settings();
    if (language.isEmpty())
        s->remove(settingsKey());
    else
        s->setValue(settingsKey(), language);
}

QString LanguageService::install(QCoreApplication& app, const QString& commandLine)
{
    return installLanguage(app, choose(commandLine, savedLanguage(), QLocale::system()));
}

QString LanguageService::install(const QString& commandLine)
{
    QCoreApplication* app = QCoreApplication::instance();
    if (!app)
        return QStringLiteral("en_US");
    LanguageService service;
    return service.install(*app, commandLine);
}

QString LanguageService::installLanguage(QCoreApplication& app, const QString& language)
{
    for (QTranslator** t : {&m_qtTranslator, &m_appTranslator}) {
        if (*t) {
            QCoreApplication::removeTranslator(*t);
            delete *t;
            *t = nullptr;
        }
    }

    QLocale locale(normalize(language));
    m_active = locale.name();

    // Ours first decides whether the language is supported at all: without a catalogue the UI stays in
    // English and so must Qt's own strings and the number formatting.
    auto* ours = new QTranslator(&app);
    const bool english = locale.language() == QLocale::English || locale.language() == QLocale::C;
    if (!english && !ours->load(locale, QStringLiteral("headroom"), QStringLiteral("_"), QStringLiteral(":/i18n"))) {
        delete ours;
        locale = QLocale(QLocale::English, QLocale::UnitedStates);
        m_active = locale.name();
    } else if (english) {
        delete ours;
    } else {
        QCoreApplication::installTranslator(ours);
        m_appTranslator = ours;

        auto* qt = new QTranslator(&app);
        if (qt->load(locale, QStringLiteral("qtbase"), QStringLiteral("_"),
                     QLibraryInfo::path(QLibraryInfo::TranslationsPath))) {
            QCoreApplication::installTranslator(qt);
            m_qtTranslator = qt;
        } else {
            delete qt;
        }
    }
    QLocale::setDefault(locale);
    return m_active;
}

bool LanguageService::needsCjkFont(const QLocale& locale)
{
    switch (locale.language()) {
    case QLocale::Chinese:
    case QLocale::Japanese:
    case QLocale::Korean: return true;
    default: return false;
    }
}
