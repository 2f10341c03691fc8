// headroom: the desktop explorer. `headroom [--lang L] [--screenshot FILE] [MODEL.onnx]`
#include "controlspanel.h"
#include "languageservice.h"
#include "logslider.h"
#include "mainwindow.h"
#include "session.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QTabWidget>
#include <QTimer>

#include <cstdio>
#include <functional>

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("Headroom"));
    QApplication::setApplicationName(QStringLiteral("Headroom"));
    QApplication::setApplicationVersion(QStringLiteral(HEADROOM_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QApplication::translate("main", "Will this model fit on my GPU, and where does the memory go?"));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption lang(QStringLiteral("lang"),
                                  QApplication::translate("main", "User interface language (en, zh_CN)."),
                                  QApplication::translate("main", "language"));
    const QCommandLineOption screenshot(
        QStringLiteral("screenshot"),
        QApplication::translate("main", "Render the main window to a PNG file once the model is analysed, then quit."),
        QApplication::translate("main", "file"));
    const QCommandLineOption batch(QStringLiteral("batch"),
                                   QApplication::translate("main", "Batch size to start with."),
                                   QApplication::translate("main", "N"));
    const QCommandLineOption tab(QStringLiteral("tab"),
                                 QApplication::translate("main", "Tab to show: layers, breakdown, timeline, scaling."),
                                 QApplication::translate("main", "name"));
    parser.addOption(lang);
    parser.addOption(batch);
    parser.addOption(tab);
    parser.addOption(screenshot);
    parser.addPositionalArgument(QStringLiteral("model"),
                                 QApplication::translate("main", "ONNX model to open (default: the bundled sample)."),
                                 QStringLiteral("[MODEL.onnx]"));
    parser.process(app);

    LanguageService language;
    language.install(app, parser.value(lang));

    gui::MainWindow window;
    const QStringList tabs = {QStringLiteral("layers"), QStringLiteral("breakdown"), QStringLiteral("timeline"),
                              QStringLiteral("scaling")};
    if (parser.isSet(tab))
        window.tabs()->setCurrentIndex(std::max<int>(0, static_cast<int>(tabs.indexOf(parser.value(tab)))));
    if (parser.isSet(batch)) {
        const int value = parser.value(batch).toInt();
        QObject::connect(
            &window, &gui::MainWindow::modelLoaded, &window,
            [&window, value] {
                if (auto* slider = window.controls()->batchSlider(); slider && value > 0)
                    slider->setValue(value);
            },
            Qt::SingleShotConnection);
    }
    const QString shot = parser.value(screenshot);
    if (!shot.isEmpty()) {
        // Deterministic output for the screenshot script: a fixed size, figures computed synchronously.
        window.session()->setSynchronousDetails(true);
        window.resize(1500, 950);
        QObject::connect(
            &window, &gui::MainWindow::reportComplete, &window,
            [&window, shot] {
                QTimer::singleShot(500, &window, [&window, shot] {
                    const bool ok = window.grab().save(shot);
                    if (!ok)
                        std::fprintf(stderr, "headroom: cannot write %s\n", qPrintable(QDir::toNativeSeparators(shot)));
                    QCoreApplication::exit(ok ? 0 : 1);
                });
            },
            Qt::SingleShotConnection);
        QObject::connect(&window, &gui::MainWindow::loadFailed, &app, [](const QString& message) {
            std::fprintf(stderr, "headroom: %s\n", qPrintable(message));
            QCoreApplication::exit(1);
        });
        window.setErrorHandler([](const QString&) {});
    }
    // Help > Language: install the catalogue and rebuild the window in the new language, on the same
    // model and geometry (every page builds its texts with tr() once, so a rebuild is the honest switch).
    std::function<void(gui::MainWindow*)> wireLanguage = [&](gui::MainWindow* w) {
        QObject::connect(w, &gui::MainWindow::languageChangeRequested, w, [&, w](const QString& chosen) {
            language.installLanguage(app, chosen);
            w->controls()->saveSettings(); // the new window starts from this one's configuration
            auto* next = new gui::MainWindow;
            next->setAttribute(Qt::WA_DeleteOnClose);
            next->restoreGeometry(w->saveGeometry());
            next->restoreState(w->saveState());
            next->tabs()->setCurrentIndex(w->tabs()->currentIndex());
            wireLanguage(next);
            const QString file = w->currentFile();
            next->show();
            if (!file.isEmpty())
                next->openFile(file);
            w->hide();
            if (w != &window) // the first window lives on main's stack
                w->deleteLater();
        });
    };
    window.show();
    if (shot.isEmpty())
        wireLanguage(&window);

    const QStringList files = parser.positionalArguments();
    if (files.isEmpty())
        window.openSample();
    else
        window.openFile(files.front());
    return app.exec();
}
