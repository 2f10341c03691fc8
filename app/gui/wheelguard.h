#pragma once
// Scrolling a settings panel must never change a setting: a wheel turn over a combo box, spin box or
// slider that the user has not focused scrolls the panel instead. Applies to every such widget inside
// the scroll area, present or added later, whoever adds it.
#include <QObject>

class QScrollArea;

namespace gui {

class WheelGuard : public QObject
{
    Q_OBJECT
public:
    // Installs itself on the application (wheel events reach the widget under the mouse first).
    explicit WheelGuard(QScrollArea* area);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QScrollArea* m_area;
};

} // namespace gui
