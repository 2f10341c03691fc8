#pragma once
#include <QLocale>
#include <QString>
#include <QStringList>

class QCoreApplication;
class QTranslator;

// Chooses the UI language and installs the translators, as Heimer does: the --lang flag first, then the
// language saved in the settings, then the system language. Qt's own catalogue (dialog buttons, ...) is
// installed beside ours. English is the source language and needs no catalogue.
class LanguageService
{
public:
    // Settings key under which the GUI stores the user's choice; an empty value means "follow the system".
    static QString settingsKey();

    // Languages with a catalogue, as locale names ("en", "zh_CN"); "en" first.
    static QStringList availableLanguages();
    // The language's own name for itself ("English", "简体中文"), for the settings combo box.
    static QString nativeName(const QString& language);

    // Normalises what a user types ("zh", "zh-CN", "zh_CN.UTF-8", "C") to a locale name ("zh_CN", "en_US").
    static QString normalize(const QString& language);
    // The choice itself, without side effects: flag, else saved setting, else the system locale's name.
    static QString choose(const QString& commandLine, const QString& saved, const QLocale& system);

    // The saved setting (QSettings under settingsKey()); empty when the user follows the system.
    static QString savedLanguage();
    static void setSavedLanguage(const QString& language);

    // Picks the language (choose() with savedLanguage() and QLocale::system()), installs Qt's translator
    // and ours into `app`, and sets QLocale's default so numbers follow the language. Returns the language
    // in effect ("zh_CN"); an unknown language falls back to English without failing. Call once, after the
    // application object exists; calling again replaces the previously installed translators.
    QString install(QCoreApplication& app, const QString& commandLine = {});
    // The same for callers that install once and never switch (the CLI's --pdf): into the running
    // QCoreApplication, translators owned by it.
    static QString install(const QString& commandLine);
    // Installs exactly `language` (already chosen), replacing earlier translators.
    QString installLanguage(QCoreApplication& app, const QString& language);

    QString activeLanguage() const { return m_active; }
    // True when the active language writes with CJK characters (the PDF then needs a CJK font).
    static bool needsCjkFont(const QLocale& locale);

private:
    QTranslator* m_qtTranslator = nullptr;
    QTranslator* m_appTranslator = nullptr;
    QString m_active = QStringLiteral("en_US");
};
