#pragma once
#include <QTreeView>

namespace gui {

// The layer tree's view. A slider tick emits dataChanged once per parent row (~1,000 on a 10k-node
// graph); QTreeView (Qt 6.4) answers each with linear searches of its visible rows (a row-height cache
// and the update rectangle: 175 ms per tick there). With uniform row heights nothing but the pixels
// depends on the figures, so this view just schedules one repaint of the viewport.
class LayerTreeView : public QTreeView
{
    Q_OBJECT
public:
    using QTreeView::QTreeView;

protected:
    void dataChanged(const QModelIndex& topLeft, const QModelIndex& bottomRight, const QList<int>& roles = {}) override;
};

} // namespace gui
