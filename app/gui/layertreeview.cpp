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

} // namespace gui
