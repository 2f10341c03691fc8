#include "taskbar.h"

#include "guiutil.h"

#include <QButtonGroup>
#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

namespace gui {

QString TaskBar::taskName(headroom::Task task)
{
    switch (task) {
    case headroom::Task::Train: return tr("Train");
    case headroom::Task::FineTune: return tr("Fine-tune");
    case headroom::Task::Generate: return tr("Generate");
    case headroom::Task::Serve: return tr("Serve");
    }
    return {};
}

TaskBar::TaskBar(QWidget* parent) : QWidget(parent), m_group(new QButtonGroup(this))
{
    setObjectName(QStringLiteral("taskBar"));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(new QLabel(tr("Task:"), this));
    m_tips = {
        tr("Training from scratch: every weight trains; gradients, optimizer states and what backward keeps."),
        tr("Fine-tuning: full, LoRA, QLoRA or IA3, with the fine-tuning recipes."),
        tr("Generation: an ONNX graph's forward pass at the sizes set; a Hugging Face config's generate() with "
           "its KV cache."),
        tr("Serving: vLLM's startup plan for a Hugging Face config (weights, profile peak, KV cache, concurrency)."),
    };
    for (const headroom::Task task : headroom::kTasks) {
        auto* b = new QToolButton(this);
        b->setText(taskName(task));
        b->setCheckable(true);
        b->setAutoRaise(true);
        b->setToolTip(m_tips[static_cast<int>(task)]);
        b->setObjectName(QStringLiteral("task_") + qs(headroom::toString(task)));
        b->setToolButtonStyle(Qt::ToolButtonTextOnly);
        m_group->addButton(b, static_cast<int>(task));
        layout->addWidget(b);
    }
    layout->addStretch(1);
    m_group->button(static_cast<int>(m_task))->setChecked(true);
    connect(m_group, &QButtonGroup::idClicked, this, [this](int id) {
        const auto task = static_cast<headroom::Task>(id);
        if (task == m_task)
            return;
        m_task = task;
        emit taskChanged(task);
    });
}

QAbstractButton* TaskBar::button(headroom::Task task) const { return m_group->button(static_cast<int>(task)); }

void TaskBar::setTask(headroom::Task task)
{
    m_task = task;
    m_group->button(static_cast<int>(task))->setChecked(true);
}

void TaskBar::setModelKind(bool hfConfig)
{
    for (const headroom::Task task : headroom::kTasks) {
        const headroom::TaskRoute route = headroom::routeTask(task, hfConfig);
        QAbstractButton* b = button(task);
        b->setEnabled(route.engine != headroom::TaskEngine::None);
        // Core's reason in the user's language (the same English words as task.cpp's), on the disabled button.
        b->setToolTip(b->isEnabled() ? m_tips[static_cast<int>(task)]
                                     : tr("serving needs a Hugging Face config.json or checkpoint folder: vLLM plans "
                                          "its startup from the config, and an ONNX graph has none"));
    }
}

} // namespace gui
