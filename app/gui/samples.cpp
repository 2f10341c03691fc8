#include "samples.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace gui {

QString findSampleModel()
{
    const QString name = QStringLiteral("resnet18.onnx");
    const QDir app(QCoreApplication::applicationDirPath());
    const QStringList candidates = {
        app.filePath(QStringLiteral("samples/") + name),
        app.filePath(QStringLiteral("../") + QStringLiteral(HEADROOM_INSTALL_DATADIR) +
                     QStringLiteral("/headroom/samples/") + name),
        QStringLiteral(HEADROOM_INSTALL_PREFIX "/" HEADROOM_INSTALL_DATADIR "/headroom/samples/") + name,
        QStringLiteral(HEADROOM_SOURCE_DIR "/resources/samples/") + name,
    };
    for (const QString& c : candidates)
        if (QFileInfo::exists(c))
            return QFileInfo(c).canonicalFilePath();
    return {};
}

} // namespace gui
