#pragma once
#include "headroom/import/model.h"
#include "headroom/report/report.h"

#include <optional>
#include <string>

namespace headroom::cli {

// Writes the PDF of `report` (the one the table and the JSON print: one question, one answer) through the GUI
// library's writer (Qt), creating an offscreen application when needed. Returns an error line, or nothing on
// success. Without the GUI build: "built without the GUI".
std::optional<std::string> exportPdf(const std::string& file, const Model& model, const Report& report,
                                     const std::optional<std::string>& lang, int argc, char** argv, int depth = 3,
                                     bool allNodes = false);

} // namespace headroom::cli
