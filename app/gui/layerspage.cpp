#include "layerspage.h"

#include "costdelegate.h"
#include "layerfiltermodel.h"
#include "layertreemodel.h"

#include "layertreeview.h"
#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>

#include <QTreeView>
#include <QVBoxLayout>

#include <algorithm>

namespace gui {

LayersPage::LayersPage(QWidget* parent)
    : QWidget(parent), m_model(new LayerTreeModel(this)), m_proxy(new LayerFilterModel(this)),
      m_view(new LayerTreeView(this)), m_filter(new QLineEdit(this)), m_depth(new QSpinBox(this)),
      m_showShape(new QCheckBox(tr("Show shape computations"), this))
{
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    m_filter->setPlaceholderText(tr("Filter by layer name or op (Ctrl+F)"));
    m_filter->setClearButtonEnabled(true);
    m_filter->setToolTip(tr("Shows the layers whose name or operator contains this text, with their parents."));
    bar->addWidget(m_filter, 1);
    auto* depthLabel = new QLabel(tr("Depth:"), this);
    depthLabel->setBuddy(m_depth);
    bar->addWidget(depthLabel);
    m_depth->setRange(0, 16);
    m_depth->setValue(3);
    m_depth->setToolTip(tr("How many levels of the layer tree are open; the PDF report's layer table uses depth 3."));
    depthLabel->setToolTip(m_depth->toolTip());
    bar->addWidget(m_depth);
    m_showShape->setObjectName(QStringLiteral("showShapeComputations"));
    m_showShape->setToolTip(tr("List the exporter's shape arithmetic (Shape, Gather, Concat, Unsqueeze, ... on "
                               "shape-sized integers) in place instead of one folded row per layer."));
    bar->addWidget(m_showShape);
    layout->addLayout(bar);
    layout->addWidget(m_view, 1);

    m_proxy->setSourceModel(m_model);
    m_view->setModel(m_proxy);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(-1, Qt::AscendingOrder); // topological order until the user sorts
    m_view->setUniformRowHeights(true);
    m_view->setIndentation(std::max(12, m_view->fontMetrics().horizontalAdvance(QLatin1Char('M'))));
    m_view->setAlternatingRowColors(true);
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setObjectName(QStringLiteral("layerTree"));
    auto* delegate = new CostDelegate(LayerTreeModel::SortRole, LayerTreeModel::MaxCostRole, this);
    for (int c : {LayerTreeModel::ActivationColumn, LayerTreeModel::SavedColumn, LayerTreeModel::ShareColumn})
        m_view->setItemDelegateForColumn(c, delegate);

    connect(m_filter, &QLineEdit::textChanged, this, [this](const QString& text) {
        m_proxy->setFilterRegularExpression(
            QRegularExpression(QRegularExpression::escape(text), QRegularExpression::CaseInsensitiveOption));
        if (!text.isEmpty())
            m_view->expandAll();
    });
    connect(m_depth, &QSpinBox::valueChanged, this, &LayersPage::expandToDepth);
    connect(m_showShape, &QCheckBox::toggled, m_model, &LayerTreeModel::setShowShapeComputations);
    connect(m_model, &QAbstractItemModel::modelReset, this, &LayersPage::modelReset);
}

void LayersPage::expandToDepth() { m_view->openLevels(m_depth->value()); }

void LayersPage::modelReset()
{
    expandToDepth();
    // Figures sized to their content, the name column takes what is left: the byte columns stay on screen.
    QHeaderView* header = m_view->header();
    header->setStretchLastSection(false);
    header->setMinimumSectionSize(48);
    // Measured once per model, not per slider tick (ResizeToContents would re-measure on every dataChanged).
    // Op and shape are capped (elided, full text in the tooltip) so the names keep the room they need.
    const int em = m_view->fontMetrics().horizontalAdvance(QLatin1Char('M'));
    for (int c = LayerTreeModel::OpColumn; c < LayerTreeModel::NUM_COLUMNS; ++c) {
        header->setSectionResizeMode(c, QHeaderView::Interactive);
        m_view->resizeColumnToContents(c);
        int width = std::max(m_view->columnWidth(c), header->sectionSizeHint(c));
        // Before the first figures arrive (and with short translated headers) the contents say little:
        // room for a typical figure, with the cost bar's margin.
        const QFontMetrics fm = m_view->fontMetrics();
        if (c >= LayerTreeModel::ParamsColumn)
            width = std::max(width, fm.horizontalAdvance(QStringLiteral("8888.8 MiB")) + em);
        else if (c == LayerTreeModel::ShapeColumn)
            width = std::max(width, fm.horizontalAdvance(QStringLiteral("[64, 768, 14, 14]")) + em / 2);
        if (c == LayerTreeModel::OpColumn)
            width = std::min(width, 9 * em);
        else if (c == LayerTreeModel::ShapeColumn)
            width = std::min(width,
                             std::max(11 * em, fm.horizontalAdvance(QStringLiteral("[64, 768, 14, 14]")) + em / 2));
        m_view->setColumnWidth(c, width);
    }
    header->setSectionResizeMode(LayerTreeModel::NameColumn, QHeaderView::Stretch);
}

void LayersPage::selectNodes(const std::vector<int>& nodes)
{
    QItemSelection selection;
    QModelIndex first;
    for (int n : nodes) {
        const QModelIndex source = m_model->indexForNode(n);
        const QModelIndex index = m_proxy->mapFromSource(source);
        if (!index.isValid())
            continue;
        selection.select(index, index.siblingAtColumn(LayerTreeModel::NUM_COLUMNS - 1));
        for (QModelIndex p = index.parent(); p.isValid(); p = p.parent())
            m_view->expand(p);
        if (!first.isValid())
            first = index;
    }
    m_view->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect);
    if (first.isValid())
        m_view->scrollTo(first);
}

} // namespace gui
