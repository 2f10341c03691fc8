#include "timelinepage.h"

#include "timelinechart.h"

#include <QLabel>
#include <QVBoxLayout>

namespace gui {

TimelinePage::TimelinePage(QWidget* parent)
    : QWidget(parent), m_chart(new TimelineChart(this)), m_info(new QLabel(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_chart, 1);
    layout->addWidget(m_info);
    m_info->setWordWrap(true);
    setStepInfo(tr("Click the timeline to select the layers whose tensors are live at that step."));
}

void TimelinePage::setStepInfo(const QString& text) { m_info->setText(text); }

} // namespace gui
