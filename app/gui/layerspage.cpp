#include "layerspage.h"

#include "costdelegate.h"
#include "layerfiltermodel.h"
#include "layertreemodel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include "layertreeview.h"

#include <QTreeView>
#include <QVBoxLayout>

namespace gui {

LayersPage::LayersPage(QWidget* parent)
    : QWidget(parent)
    , m_model(new LayerTreeModel(this))
    , m_proxy(new LayerFilterModel(this))
    , m_view(new LayerTreeView(this))
    , m_filter(new QLineEdit(this))
    , m_depth(new QSpinBox(this))
{
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    m_filter->setPlaceholderText(tr("Filter by layer name or op"));
    m_filter->setClearButtonEnabled(true);
    bar->addWidget(m_filter, 1);
    bar->addWidget(new QLabel(tr("Expand to depth:"), this));
    m_depth->setRange(0, 16);
    m_depth->setValue(2);
    bar->addWidget(m_depth);
    layout->addLayout(bar);
    layout->addWidget(m_view, 1);

    m_proxy->setSourceModel(m_model);
    m_view->setModel(m_proxy);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(-1, Qt::AscendingOrder); // topological order until the user sorts
    m_view->setUniformRowHeights(true);
    m_view->setAlternatingRowColors(true);
    m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_view->setObjectName(QStringLiteral("layerTree"));
    auto* delegate = new CostDelegate(LayerTreeModel::SortRole, LayerTreeModel::MaxCostRole, this);
    for (int c : {LayerTreeModel::ActivationColumn, LayerTreeModel::SavedColumn, LayerTreeModel::ShareColumn})
        m_view->setItemDelegateForColumn(c, delegate);

    connect(m_filter, &QLineEdit::textChanged, this, [this](const QString& text) {
        m_proxy->setFilterRegularExpression(QRegularExpression(QRegularExpression::escape(text),
                                                               QRegularExpression::CaseInsensitiveOption));
        if (!text.isEmpty())
            m_view->expandAll();
    });
    connect(m_depth, &QSpinBox::valueChanged, this, &LayersPage::expandToDepth);
    connect(m_model, &QAbstractItemModel::modelReset, this, &LayersPage::modelReset);
}

void LayersPage::expandToDepth()
{
    m_view->collapseAll();
    if (m_depth->value() > 0)
        m_view->expandToDepth(m_depth->value() - 1);
}

void LayersPage::modelReset()
{
    expandToDepth();
    QHeaderView* header = m_view->header();
    header->setStretchLastSection(false);
    m_view->setColumnWidth(LayerTreeModel::NameColumn, 260);
    m_view->setColumnWidth(LayerTreeModel::OpColumn, 130);
    m_view->setColumnWidth(LayerTreeModel::ShapeColumn, 150);
    for (int c = LayerTreeModel::ParamsColumn; c < LayerTreeModel::NUM_COLUMNS; ++c)
        m_view->setColumnWidth(c, 110);
    m_view->setColumnWidth(LayerTreeModel::SavedColumn, 140);
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
