#pragma once
#include <QString>

namespace gui {

// The bundled sample model (resnet18.onnx): beside the executable, in the installed data directory
// (CMAKE_INSTALL_DATADIR/headroom/samples), or in the source tree. Empty if none is found.
QString findSampleModel();

} // namespace gui
