#include "configundo.h"

#include "logslider.h"

#include <QAbstractButton>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QSlider>
#include <QSpinBox>
#include <QUndoCommand>
#include <QUndoStack>

#include <functional>

namespace gui {
namespace {

class ChangeCommand : public QUndoCommand
{
public:
    ChangeCommand(QWidget* w, QVariant before, QVariant after, std::function<void(QWidget*, const QVariant&)> apply,
                  bool continuesDrag = false)
        : m_widget(w), m_before(std::move(before)), m_after(std::move(after)), m_apply(std::move(apply)),
          m_continuesDrag(continuesDrag)
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

    // The stops a slider passes during one drag fold into the drag's first change.
    int id() const override { return 1; }
    bool mergeWith(const QUndoCommand* other) override
    {
        const auto* o = static_cast<const ChangeCommand*>(other);
        if (!o->m_continuesDrag || o->m_widget != m_widget)
            return false;
        m_after = o->m_after;
        return true;
    }

private:
    QPointer<QWidget> m_widget;
    QVariant m_before, m_after;
    std::function<void(QWidget*, const QVariant&)> m_apply;
    bool m_continuesDrag = false;
    bool m_first = true;
};

} // namespace

ConfigUndo::ConfigUndo(QWidget* panel, QUndoStack* stack) : QObject(panel), m_panel(panel), m_stack(stack) { attach(); }

void ConfigUndo::attach()
{
    for (QWidget* w : m_panel->findChildren<QWidget*>()) {
        if (m_last.contains(w))
            continue;
        if (auto* slider = qobject_cast<LogSlider*>(w)) {
            connect(slider, &LogSlider::valueChanged, this, [this, w] { changed(w); });
            connect(slider->slider(), &QSlider::sliderPressed, this, [this, w] { m_dragStarted[w] = true; });
        } else if (qobject_cast<LogSlider*>(w->parentWidget())) {
            continue; // the slider's own spin box: recorded as the slider
        } else if (auto* combo = qobject_cast<QComboBox*>(w)) {
            connect(combo, &QComboBox::currentIndexChanged, this, [this, w] { changed(w); });
        } else if (auto* button = qobject_cast<QAbstractButton*>(w); button && button->isCheckable()) {
            connect(button, &QAbstractButton::toggled, this, [this, w] { changed(w); });
        } else if (auto* spin = qobject_cast<QSpinBox*>(w)) {
            connect(spin, &QSpinBox::valueChanged, this, [this, w] { changed(w); });
        } else if (auto* dspin = qobject_cast<QDoubleSpinBox*>(w)) {
            connect(dspin, &QDoubleSpinBox::valueChanged, this, [this, w] { changed(w); });
        } else {
            continue;
        }
        m_last.insert(w, valueOf(w));
        connect(w, &QObject::destroyed, this, [this, w] {
            m_last.remove(w);
            m_dragStarted.remove(w);
        });
    }
}

void ConfigUndo::reset()
{
    m_stack->clear();
    attach();
    for (auto it = m_last.begin(); it != m_last.end(); ++it)
        it.value() = valueOf(it.key());
}

QVariant ConfigUndo::valueOf(const QWidget* w)
{
    if (auto* slider = qobject_cast<const LogSlider*>(w))
        return slider->value();
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
    if (auto* slider = qobject_cast<LogSlider*>(w)) {
        slider->setValue(value.toInt());
        return;
    }
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
    // While a slider is held, every change after the first of this drag continues it.
    const auto* slider = qobject_cast<LogSlider*>(w);
    const bool continues = slider && slider->slider()->isSliderDown() && !m_dragStarted.value(w);
    m_dragStarted.remove(w);
    m_stack->push(new ChangeCommand(
        w, before, now, [this](QWidget* target, const QVariant& v) { apply(target, v); }, continues));
}

} // namespace gui
