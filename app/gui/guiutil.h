#pragma once
// Small shared view helpers (hotspot's resultsutil.h): formatting and metatypes used by every page.
#include "headroom/base/config.h"
#include "headroom/base/format.h"
#include "headroom/import/model.h"
#include "headroom/memory/engine.h"

#include <QMetaType>
#include <QString>

#include <memory>

class QSettings;
class QTreeView;

namespace gui {

using ModelPtr = std::shared_ptr<const headroom::Model>;

inline QString qs(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }
inline QString bytesText(int64_t bytes, headroom::Units units) { return qs(headroom::formatBytes(bytes, units)); }
inline QString countText(int64_t count) { return qs(headroom::formatCount(count)); }

// "GeForce RTX 4090 24 GB" -> "GeForce RTX 4090": the capacity is shown separately, in the chosen units.
QString gpuDisplayName(const std::string& presetName);

// Translated names of the configuration choices (the CLI spellings stay untranslated in tooltips).
QString modeName(headroom::Mode m);
QString dtypeName(headroom::DtypePolicy d);
QString optimizerName(headroom::Optimizer o);
QString strategyName(headroom::Strategy s);
QString allocatorName(headroom::AllocatorMode a);

// Graph node -> the tensors produced by it that are live after timeline step `step`.
std::vector<int> liveTensorsAt(const headroom::Model& model, const std::vector<headroom::AllocEvent>& events, int step);

// Settings live in QSettings("Headroom", "Headroom"); tests point QSettings at a temporary directory.
void useSettingsDirectory(const QString& dir);

} // namespace gui

Q_DECLARE_METATYPE(gui::ModelPtr)
