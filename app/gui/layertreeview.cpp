#include "layertreeview.h"

namespace gui {

void LayerTreeView::dataChanged(const QModelIndex& topLeft, const QModelIndex& bottomRight, const QList<int>& roles)
{
    if (!uniformRowHeights()) {
        QTreeView::dataChanged(topLeft, bottomRight, roles);
        return;
    }
    viewport()->update(); // coalesced into one repaint of the visible rows
}

void LayerTreeView::openLevels(int levels)
{
    collapseAll();
    // With a complete relayout pending, QTreeView::expand() only stores the index (qtreeview.cpp).
    scheduleDelayedItemsLayout();
    if (levels > 0)
        expandAbove({}, levels);
}

void LayerTreeView::expandAbove(const QModelIndex& parent, int levels)
{
    const QAbstractItemModel* m = model();
    const int rows = m->rowCount(parent);
    for (int r = 0; r < rows; ++r) {
        const QModelIndex index = m->index(r, 0, parent);
        if (!m->hasChildren(index))
            continue;
        expand(index);
        if (levels > 1)
            expandAbove(index, levels - 1);
    }
}

} // namespace gui
