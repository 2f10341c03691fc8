#pragma once
#include <QStyledItemDelegate>

namespace gui {

// Paints a share bar behind a cost cell: SortRole / MaxCostRole of the model (heaptrack's CostDelegate).
class CostDelegate : public QStyledItemDelegate
{
    Q_OBJECT
public:
    CostDelegate(int sortRole, int maxCostRole, QObject* parent = nullptr);
    void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override;

private:
    int m_sortRole;
    int m_maxCostRole;
};

} // namespace gui
