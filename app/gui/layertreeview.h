#pragma once
#include <QTreeView>

namespace gui {

// The layer tree's view. A slider tick emits dataChanged once per parent row (~1,000 on a 10k-node
// graph); QTreeView (Qt 6.4) answers each with linear searches of its visible rows (a row-height cache
// and the update rectangle: 175 ms per tick there). With uniform row heights nothing but the pixels
// depends on the figures, so this view just schedules one repaint of the viewport.
// Opening the tree to a depth: QTreeView::expandToDepth() lays out each row it opens at once, inserting its
// children into the middle of the visible-row vector, which is quadratic (0.85 s on the 100k-node chain's
// 25k parents, perf); openLevels() records the rows and lets one relayout place them all.
class LayerTreeView : public QTreeView
{
    Q_OBJECT
public:
    using QTreeView::QTreeView;

    // Collapses everything, then opens the rows of the first `levels` levels (QTreeView::expandToDepth(levels
    // - 1)) with one layout pass instead of one per opened row.
    void openLevels(int levels);

protected:
    void dataChanged(const QModelIndex& topLeft, const QModelIndex& bottomRight, const QList<int>& roles = {}) override;

private:
    void expandAbove(const QModelIndex& parent, int levels);
};

} // namespace gui
