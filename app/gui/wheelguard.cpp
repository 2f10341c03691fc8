#include "wheelguard.h"

#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QScrollArea>
#include <QScrollBar>
#include <QWheelEvent>

namespace gui {
namespace {

// The value-changing control that owns `w` (a spin box's line edit, a combo's view), if any.
QWidget* valueControl(QWidget* w)
{
    for (; w; w = w->parentWidget()) {
        if (qobject_cast<QComboBox*>(w) || qobject_cast<QAbstractSpinBox*>(w) || qobject_cast<QAbstractSlider*>(w))
            return w;
        if (w->isWindow())
            break;
    }
    return nullptr;
}

} // namespace

WheelGuard::WheelGuard(QScrollArea* area) : QObject(area), m_area(area)
{
    qApp->installEventFilter(this);
    // Widgets that exist already were polished before the guard: set their policy now.
    if (QWidget* content = area->widget())
        for (QWidget* w : content->findChildren<QWidget*>())
            if (valueControl(w) == w && w->focusPolicy() == Qt::WheelFocus)
                w->setFocusPolicy(Qt::StrongFocus);
}

bool WheelGuard::eventFilter(QObject* watched, QEvent* event)
{
    const QEvent::Type type = event->type();
    if (type != QEvent::Wheel && type != QEvent::Polish)
        return false;
    auto* widget = qobject_cast<QWidget*>(watched);
    QWidget* content = m_area->widget();
    if (!widget || !content || !content->isAncestorOf(widget))
        return false;
    QWidget* control = valueControl(widget);
    if (!control || control == m_area->verticalScrollBar())
        return false;
    if (type == QEvent::Polish) {
        // WheelFocus (Qt's default for these) would let a wheel turn take focus and then the value.
        if (control == widget && control->focusPolicy() == Qt::WheelFocus)
            control->setFocusPolicy(Qt::StrongFocus);
        return false;
    }
    if (control->hasFocus())
        return false;
    QCoreApplication::sendEvent(m_area->verticalScrollBar(), event);
    return true;
}

} // namespace gui
