#include "configundo.h"

#include <QAbstractButton>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QSpinBox>
#include <QUndoCommand>
#include <QUndoStack>

#include <functional>

namespace gui {
namespace {

class ChangeCommand : public QUndoCommand
{
public:
    ChangeCommand(QWidget* w, QVariant before, QVariant after, std::function<void(QWidget*, const QVariant&)> apply)
        : m_widget(w), m_before(std::move(before)), m_after(std::move(after)), m_apply(std::move(apply))
    {
        const QString name = w->accessibleName().isEmpty() ? w->toolTip().section(QLatin1Char('.'), 0, 0)
                                                           : w->accessibleName();
        setText(name);
    }
    void undo() override
    {
        if (m_widget)
            m_apply(m_widget, m_before);
    }
    void redo() override
    {
        // The first redo is the user's own change, already made.
        if (m_first) {
            m_first = false;
            return;
        }
        if (m_widget)
            m_apply(m_widget, m_after);
    }

private:
    QPointer<QWidget> m_widget;
    QVariant m_before, m_after;
    std::function<void(QWidget*, const QVariant&)> m_apply;
    bool m_first = true;
};

} // namespace

ConfigUndo::ConfigUndo(QWidget* panel, QUndoStack* stack) : QObject(panel), m_stack(stack)
{
    for (QWidget* w : panel->findChildren<QWidget*>()) {
        if (auto* combo = qobject_cast<QComboBox*>(w))
            connect(combo, &QComboBox::currentIndexChanged, this, [this, w] { changed(w); });
        else if (auto* button = qobject_cast<QAbstractButton*>(w); button && button->isCheckable())
            connect(button, &QAbstractButton::toggled, this, [this, w] { changed(w); });
        else if (auto* spin = qobject_cast<QSpinBox*>(w))
            connect(spin, &QSpinBox::valueChanged, this, [this, w] { changed(w); });
        else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(w))
            connect(dspin, &QDoubleSpinBox::valueChanged, this, [this, w] { changed(w); });
        else
            continue;
        m_last.insert(w, valueOf(w));
    }
}

void ConfigUndo::reset()
{
    m_stack->clear();
    for (auto it = m_last.begin(); it != m_last.end(); ++it)
        it.value() = valueOf(it.key());
}

QVariant ConfigUndo::valueOf(const QWidget* w)
{
    if (auto* combo = qobject_cast<const QComboBox*>(w))
        return combo->currentIndex();
    if (auto* button = qobject_cast<const QAbstractButton*>(w))
        return button->isChecked();
    if (auto* spin = qobject_cast<const QSpinBox*>(w))
        return spin->value();
    if (auto* dspin = qobject_cast<const QDoubleSpinBox*>(w))
        return dspin->value();
    return {};
}

void ConfigUndo::setValue(QWidget* w, const QVariant& value)
{
    if (auto* combo = qobject_cast<QComboBox*>(w))
        combo->setCurrentIndex(value.toInt());
    else if (auto* button = qobject_cast<QAbstractButton*>(w))
        button->setChecked(value.toBool());
    else if (auto* spin = qobject_cast<QSpinBox*>(w))
        spin->setValue(value.toInt());
    else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(w))
        dspin->setValue(value.toDouble());
}

void ConfigUndo::apply(QWidget* w, const QVariant& value)
{
    m_applying = true;
    setValue(w, value);
    m_last[w] = valueOf(w);
    m_applying = false;
}

void ConfigUndo::changed(QWidget* w)
{
    const QVariant now = valueOf(w);
    const QVariant before = m_last.value(w);
    m_last[w] = now;
    if (m_applying || before == now)
        return;
    m_stack->push(new ChangeCommand(w, before, now, [this](QWidget* target, const QVariant& v) { apply(target, v); }));
}

} // namespace gui
