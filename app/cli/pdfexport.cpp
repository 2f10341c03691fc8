#include "pdfexport.h"

#if HEADROOM_CLI_PDF
#include "languageservice.h"
#include "pdfreport.h"
#include <QApplication>
#include <cstdlib>
#endif

namespace headroom::cli {

std::optional<std::string> exportPdf(const std::string& file, const Model& model, const Report& report,
                                     const std::optional<std::string>& lang, int argc, char** argv, int depth,
                                     bool allNodes)
{
#if HEADROOM_CLI_PDF
    // QCustomPlot charts are widgets, so a QApplication is needed even headless: fall back to the
    // offscreen platform when there is no display, as CI has none.
    if (!std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY") && !std::getenv("QT_QPA_PLATFORM"))
        setenv("QT_QPA_PLATFORM", "offscreen", 1);
    QApplication app(argc, argv);
    LanguageService::install(lang ? QString::fromStdString(*lang) : QString());
    QString error;
    PdfReportOptions options;
    options.depth = depth;
    options.allNodes = allNodes;
    if (!writePdfReport(QString::fromStdString(file), model, report, &error, options))
        return error.toStdString();
    return std::nullopt;
#else
    (void)model;
    (void)report;
    (void)lang;
    (void)argc;
    (void)argv;
    (void)depth;
    (void)allNodes;
    return file + ": cannot write a PDF: headroom-cli was built without the GUI (HEADROOM_GUI=OFF)";
#endif
}

} // namespace headroom::cli
