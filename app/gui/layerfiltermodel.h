#pragma once
#include <QSortFilterProxyModel>

namespace gui {

// Sorts by raw numbers (the source's SortRole) and keeps rows whose name or op match the filter, with
// their ancestors (recursive filtering) so matches stay in context.
class LayerFilterModel : public QSortFilterProxyModel
{
    Q_OBJECT
public:
    explicit LayerFilterModel(QObject* parent = nullptr);
    // Sorts again by the current sort column (figures changed); a layout change, not a reset.
    void resortIfSorted();

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;
};

} // namespace gui
