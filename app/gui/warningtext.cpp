#include "warningtext.h"

#include <QCoreApplication>
#include <QRegularExpression>

#include <vector>

namespace gui {
namespace {

// Every warning sentence the core writes, with the file that writes it. %1, %2, ... are the values in
// their order of appearance in English (a translation may reorder them). Plural forms are separate rows
// because the core writes them as separate sentences.
const char* const kTemplates[] = {
    // import/import_model.cpp, load/loader.cpp
    QT_TRANSLATE_NOOP("CoreWarning",
                      "%1: external weight data is not present (architecture only); sizes come from dims and dtypes"),
    QT_TRANSLATE_NOOP("CoreWarning", "%1: built from a Hugging Face config.json (architecture only, no weights); "
                                     "sizes come from its hyper-parameters"),
    QT_TRANSLATE_NOOP("CoreWarning", "%1: no symbol named '%2' (the model has none)"),
    QT_TRANSLATE_NOOP("CoreWarning", "%1: no symbol named '%2' (symbols: %3)"),
    QT_TRANSLATE_NOOP("CoreWarning", "%1: value %2 for '%3' ignored (must be >= 1)"),
    QT_TRANSLATE_NOOP("CoreWarning", "%1: IR version %2 is outside the supported range 3-10; loading anyway"),
    QT_TRANSLATE_NOOP("CoreWarning", "%1: opset %2 is outside the supported range 7-18; loading anyway"),
    QT_TRANSLATE_NOOP("CoreWarning",
                      "%1: node '%2': custom op %3; its output shapes come from the file's declarations if any"),
    // import/onnx_stored.cpp, onnx_wiring.cpp, onnx_symbols.cpp
    QT_TRANSLATE_NOOP("CoreWarning", "%1: initializer '%2' is defined twice; the first definition is used"),
    QT_TRANSLATE_NOOP("CoreWarning",
                      "%1: initializer '%2': external data location '%3' is outside the model's folder; not followed"),
    QT_TRANSLATE_NOOP("CoreWarning", "%1: node '%2': Constant without a value"),
    QT_TRANSLATE_NOOP("CoreWarning", "%1: node '%2': output '%3' is already defined elsewhere; renamed"),
    QT_TRANSLATE_NOOP("CoreWarning", "%1: node '%2': input '%3' is not produced by any node, input or initializer"),
    QT_TRANSLATE_NOOP("CoreWarning", "%1: graph output '%2' is not produced by any node"),
    QT_TRANSLATE_NOOP("CoreWarning", "%1: input '%2' has no declared shape; tensors that depend on it stay unknown"),
    QT_TRANSLATE_NOOP("CoreWarning", "%1: more than 31 symbols; '%2' is fixed at 1"),
    // shapes/shape_fit.cpp
    QT_TRANSLATE_NOOP("CoreWarning", "%1: node '%2' (%3): %4; 1 tensor has an unknown shape"),
    QT_TRANSLATE_NOOP("CoreWarning", "%1: node '%2' (%3): %4; %5 tensors have an unknown shape"),
    QT_TRANSLATE_NOOP("CoreWarning", "%1: 1 tensor's declared shape (value_info) disagrees with Headroom's "
                                     "inference, first '%2'; the inferred shape is used"),
    QT_TRANSLATE_NOOP("CoreWarning", "%1: %2 tensors' declared shape (value_info) disagrees with Headroom's "
                                     "inference, first '%3'; the inferred shape is used"),
    QT_TRANSLATE_NOOP("CoreWarning", "%1: tensor '%2': its size overflows 64-bit bytes"),
    // memory/engine/engine_plan.cpp, engine/breakdown.cpp
    QT_TRANSLATE_NOOP("CoreWarning",
                      "no saved-for-backward rule for %1 (1 node, first %2): assumed it keeps its inputs and outputs"),
    QT_TRANSLATE_NOOP("CoreWarning", "no saved-for-backward rule for %1 (%2 nodes, first %3): assumed it keeps its "
                                     "inputs and outputs"),
    QT_TRANSLATE_NOOP("CoreWarning", "--grad-checkpoint layers: no decoder-layer list (model.layers.N) in the layer "
                                     "tree; nothing is checkpointed"),
    QT_TRANSLATE_NOOP("CoreWarning", "dtype policy %1 is weight-only inference: evaluated as inference"),
    QT_TRANSLATE_NOOP("CoreWarning", "%1 activation(s) have an unknown shape at this binding and count as 0 bytes"),
};

struct Compiled
{
    const char* source;
    QRegularExpression re;
};

// "%1: opset %2 is ..." -> ^(.+?): opset (.+?) is ...$ (values are at least one character).
const std::vector<Compiled>& compiled()
{
    static const std::vector<Compiled> all = [] {
        std::vector<Compiled> out;
        static const QRegularExpression placeholder(QStringLiteral("%\\d"));
        for (const char* t : kTemplates) {
            const QString s = QString::fromUtf8(t);
            QString pattern = QStringLiteral("^");
            qsizetype at = 0;
            for (auto it = placeholder.globalMatch(s); it.hasNext();) {
                const QRegularExpressionMatch m = it.next();
                pattern += QRegularExpression::escape(s.mid(at, m.capturedStart() - at)) + QStringLiteral("(.+?)");
                at = m.capturedEnd();
            }
            pattern += QRegularExpression::escape(s.mid(at)) + QStringLiteral("$");
            out.push_back({t, QRegularExpression(pattern, QRegularExpression::DotMatchesEverythingOption)});
        }
        return out;
    }();
    return all;
}

// One pass over the translation, so that a value holding "%2" is not filled in again.
QString fill(const QString& translated, const QStringList& values)
{
    QString out;
    for (qsizetype i = 0; i < translated.size(); ++i) {
        if (translated[i] == QLatin1Char('%') && i + 1 < translated.size() && translated[i + 1].isDigit()) {
            const int k = translated[i + 1].digitValue();
            if (k >= 1 && k <= values.size()) {
                out += values[k - 1];
                ++i;
                continue;
            }
        }
        out += translated[i];
    }
    return out;
}

} // namespace

QString warningText(const std::string& english)
{
    const QString w = QString::fromStdString(english);
    for (const Compiled& c : compiled()) {
        const QRegularExpressionMatch m = c.re.match(w);
        if (!m.hasMatch())
            continue;
        QStringList values;
        for (int i = 1; i <= m.lastCapturedIndex(); ++i)
            values << m.captured(i);
        return fill(QCoreApplication::translate("CoreWarning", c.source), values);
    }
    return w;
}

int warningTemplateCount() { return static_cast<int>(std::size(kTemplates)); }

const char* warningTemplate(int i) { return i >= 0 && i < warningTemplateCount() ? kTemplates[i] : nullptr; }

} // namespace gui
