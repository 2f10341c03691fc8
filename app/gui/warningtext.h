#pragma once
#include <QString>

#include <string>

namespace gui {

// A warning from the core (always English: core/ knows nothing of Qt or languages) in the user's language.
// The core's warnings are a closed set of sentences with values in them; each is listed once here as its
// English template ("%1: opset %2 is outside ..."), matched against the warning, translated through the
// "CoreWarning" context and filled with the matched values. A sentence not listed is shown as it is.
QString warningText(const std::string& english);

// The English templates (for the tests: every one must be translated).
int warningTemplateCount();
const char* warningTemplate(int i);

} // namespace gui
