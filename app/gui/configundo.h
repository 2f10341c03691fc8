#pragma once
// Undo and redo for the Configuration panel: every combo box, check box, spin box and batch / sequence
// slider the panel holds records its changes on a QUndoStack (Edit > Undo, Ctrl+Z), so an accidental change
// of GPU, precision, optimizer or batch is one keystroke away from being taken back. One drag of a slider is
// one step of the history.
#include <QHash>
#include <QObject>
#include <QPointer>
#include <QVariant>

class QUndoStack;
class QWidget;

namespace gui {

class ConfigUndo : public QObject
{
    Q_OBJECT
public:
    ConfigUndo(QWidget* panel, QUndoStack* stack);
    // Forget the history (a new model re-fills the panel; its old values mean nothing now) and watch the
    // controls the panel holds now (a model's sliders are made when it loads).
    void reset();

    static QVariant valueOf(const QWidget* w);
    static void setValue(QWidget* w, const QVariant& value);

private:
    void attach();
    void changed(QWidget* w);
    void apply(QWidget* w, const QVariant& value);

    QWidget* m_panel;
    QUndoStack* m_stack;
    QHash<QWidget*, QVariant> m_last;
    QHash<QWidget*, bool> m_dragStarted; // a slider pressed since its last recorded change
    bool m_applying = false;
};

} // namespace gui
