#pragma once
// Undo and redo for the Configuration panel: every combo box, check box and spin box the panel holds
// when attached records its changes on a QUndoStack (Edit > Undo, Ctrl+Z), so an accidental change of
// GPU, precision or optimizer is one keystroke away from being taken back.
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
    // Forget the history (a new model re-fills the panel; its old values mean nothing now).
    void reset();

    static QVariant valueOf(const QWidget* w);
    static void setValue(QWidget* w, const QVariant& value);

private:
    void changed(QWidget* w);
    void apply(QWidget* w, const QVariant& value);

    QUndoStack* m_stack;
    QHash<QWidget*, QVariant> m_last;
    bool m_applying = false;
};

} // namespace gui
