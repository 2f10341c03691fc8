#pragma once
// The PDF memory report (docs/DESIGN.md "The report"): a document a team lead can read without the app.
#include "headroom/base/format.h"

#include <QString>

namespace gui {
class ServingState;
}
namespace headroom {
struct Config;
struct Model;
struct Report;
} // namespace headroom

struct PdfReportOptions
{
    headroom::Units units = headroom::Units::IEC;
    bool gpuTable = true;  // the "would it fit on ..." table over the GPU presets (costs one fit each)
    int depth = 3;         // layer table depth, as the GUI's tree opens
    bool allNodes = false; // the full per-node table instead (every graph node, shape computations included)
    const gui::ServingState* serving = nullptr; // the Serving mode's plan: a serving section (pdfserving.cpp)
    // The Generate and Serve tasks of a config: the report is that plan's (title, the serving section, the
    // model's warnings), not the training step's verdict beside it.
    bool servingOnly = false;
};

// Writes the report for `config` to `file` (A4, vector charts drawn by the GUI's own chart classes,
// paginated tables). Text goes through tr(), so the installed translator decides the language; a CJK font
// is chosen when QLocale's default language needs one (LanguageService sets it).
// The file is written atomically (QSaveFile): on failure nothing is left at `file`, the function returns
// false and *error (if given) holds one line naming the file and the problem.
// Needs a QApplication (the charts are widgets); headless callers use the offscreen platform.
bool writePdfReport(const QString& file, const headroom::Model& model, const headroom::Config& config, QString* error,
                    const PdfReportOptions& options = {});
// The same from a report computed already (buildReport with sweep on, so the curves are there).
bool writePdfReport(const QString& file, const headroom::Model& model, const headroom::Report& report, QString* error,
                    const PdfReportOptions& options = {});
