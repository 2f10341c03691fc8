#include "overviewpage.h"

#include "breakdownchart.h"
#include "toplayerschart.h"

#include <QButtonGroup>
#include <QHBoxLayout>
#include <QLabel>
#include <QRadioButton>
#include <QVBoxLayout>

namespace gui {

OverviewPage::OverviewPage(QWidget* parent)
    : QWidget(parent), m_breakdown(new BreakdownChart(this)), m_topLayers(new TopLayersChart(this))
{
    auto* layout = new QVBoxLayout(this);
    auto* title = new QLabel(tr("Where the memory goes at the peak"), this);
    layout->addWidget(title);
    // The bar's figures in words (the verdict's, with the plan to fit), readable without hovering.
    auto* summary = new QLabel(this);
    summary->setObjectName(QStringLiteral("breakdownSummary"));
    summary->setWordWrap(true);
    summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    connect(m_breakdown, &BreakdownChart::summaryChanged, summary, &QLabel::setText);
    layout->addWidget(summary);
    layout->addWidget(m_breakdown, 2);
    // Per kind folds the nodes a repeated block has in every copy (an LLM's 32 identical decoder layers)
    // into one bar; per layer lists the nodes one by one.
    auto* header = new QHBoxLayout;
    header->addWidget(new QLabel(tr("Largest layers"), this));
    header->addStretch();
    auto* perKind = new QRadioButton(tr("Per kind"), this);
    auto* perLayer = new QRadioButton(tr("Per layer"), this);
    perKind->setObjectName(QStringLiteral("topLayersPerKind"));
    perLayer->setObjectName(QStringLiteral("topLayersPerLayer"));
    perKind->setToolTip(tr("One bar for a layer that repeats in every block, with its size per block and in all"));
    perLayer->setToolTip(tr("One bar per graph node"));
    perKind->setChecked(true);
    auto* group = new QButtonGroup(this);
    group->addButton(perKind);
    group->addButton(perLayer);
    header->addWidget(perKind);
    header->addWidget(perLayer);
    connect(perKind, &QRadioButton::toggled, m_topLayers, &TopLayersChart::setPerKind);
    layout->addLayout(header);
    layout->addWidget(m_topLayers, 3);
}

} // namespace gui
