#pragma once
// The task switch at the top of the window (docs/USER_GUIDE.md "Tasks"): Train, Fine-tune, Generate, Serve, the
// question the banner answers and the Configuration panel's controls are for. headroom-cli --task names the
// same four; core's routeTask says which engine answers each, and a task the model cannot answer (serving an
// ONNX graph) is disabled with core's reason as its tooltip.
#include "headroom/base/task.h"

#include <QStringList>
#include <QWidget>

class QAbstractButton;
class QButtonGroup;

namespace gui {

class TaskBar : public QWidget
{
    Q_OBJECT
public:
    explicit TaskBar(QWidget* parent = nullptr);

    headroom::Task task() const { return m_task; }
    // Checks `task`'s button without a taskChanged (the window follows the controls' task, not the reverse).
    void setTask(headroom::Task task);
    // The tasks the open model can answer: a config.json serves, an ONNX graph does not.
    void setModelKind(bool hfConfig);
    QAbstractButton* button(headroom::Task task) const;
    static QString taskName(headroom::Task task);

signals:
    void taskChanged(headroom::Task task);

private:
    QButtonGroup* m_group;
    QStringList m_tips; // by task
    headroom::Task m_task = headroom::Task::Train;
};

} // namespace gui
