#pragma once
// The Serving mode's bar: the device split into weights, activation, CUDA graphs, KV cache, other and unused,
// each segment as wide as its bytes (servingstate.h's segments()).
#include "servingstate.h"

#include <QWidget>

namespace gui {

class ServingBar : public QWidget
{
    Q_OBJECT
public:
    explicit ServingBar(QWidget* parent = nullptr);
    void setSegments(const QList<ServingSegment>& segments, headroom::Units units);
    const QList<ServingSegment>& segments() const { return m_segments; }
    static QColor colour(ServingSegment::Kind kind);
    QSize sizeHint() const override { return {480, 34}; }
    QSize minimumSizeHint() const override { return {160, 24}; }

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    QList<ServingSegment> m_segments;
};

} // namespace gui
