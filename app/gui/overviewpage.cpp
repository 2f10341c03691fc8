#include "overviewpage.h"

#include "breakdownchart.h"
#include "toplayerschart.h"

#include <QLabel>
#include <QVBoxLayout>

namespace gui {

OverviewPage::OverviewPage(QWidget* parent)
    : QWidget(parent), m_breakdown(new BreakdownChart(this)), m_topLayers(new TopLayersChart(this))
{
    auto* layout = new QVBoxLayout(this);
    auto* title = new QLabel(tr("Where the memory goes at the peak"), this);
    layout->addWidget(title);
    layout->addWidget(m_breakdown, 2);
    layout->addWidget(new QLabel(tr("Largest layers"), this));
    layout->addWidget(m_topLayers, 3);
}

} // namespace gui
