#include "servingbar.h"

#include "guiutil.h"

#include <QPainter>

namespace gui {

ServingBar::ServingBar(QWidget* parent) : QWidget(parent) { setObjectName(QStringLiteral("servingBar")); }

QColor ServingBar::colour(ServingSegment::Kind kind)
{
    // the Breakdown chart's hues: weights blue, activations orange; the KV cache green as free memory put to use
    switch (kind) {
    case ServingSegment::Weights: return {0x3b, 0x6e, 0xc8};
    case ServingSegment::Activation: return {0xe0, 0x8a, 0x2c};
    case ServingSegment::Graphs: return {0x8e, 0x5c, 0xb8};
    case ServingSegment::KvCache: return {0x2f, 0x9e, 0x5a};
    case ServingSegment::Other: return {0x7d, 0x85, 0x91};
    case ServingSegment::Unused: return {0xdd, 0xe1, 0xe6};
    }
    return Qt::gray;
}

void ServingBar::setSegments(const QList<ServingSegment>& segments, headroom::Units units)
{
    m_segments = segments;
    QStringList tip;
    for (const ServingSegment& s : segments)
        tip << ServingState::segmentName(s.kind) + QStringLiteral(": ") + bytesText(s.bytes, units);
    setToolTip(tip.join(QLatin1Char('\n')));
    update();
}

void ServingBar::paintEvent(QPaintEvent* /*event*/)
{
    QPainter p(this);
    const QRectF box = QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5);
    int64_t total = 0;
    for (const ServingSegment& s : m_segments)
        total += s.bytes;
    if (total <= 0) {
        p.setPen(palette().color(QPalette::Mid));
        p.drawRect(box);
        return;
    }
    qreal x = box.left();
    for (const ServingSegment& s : m_segments) {
        const qreal w = box.width() * static_cast<qreal>(s.bytes) / static_cast<qreal>(total);
        p.fillRect(QRectF(x, box.top(), w, box.height()), colour(s.kind));
        x += w;
    }
    p.setPen(palette().color(QPalette::Mid));
    p.drawRect(box);
}

} // namespace gui
