#include "costdelegate.h"

#include <QApplication>
#include <QPainter>

#include <algorithm>

namespace gui {

CostDelegate::CostDelegate(int sortRole, int maxCostRole, QObject* parent)
    : QStyledItemDelegate(parent), m_sortRole(sortRole), m_maxCostRole(maxCostRole)
{
}

void CostDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const
{
    const qlonglong cost = index.data(m_sortRole).toLongLong();
    const qlonglong total = index.data(m_maxCostRole).toLongLong();
    if (cost <= 0 || total <= 0) {
        QStyledItemDelegate::paint(painter, option, index);
        return;
    }
    const double fraction = std::clamp(static_cast<double>(cost) / static_cast<double>(total), 0.0, 1.0);
    const QStyle* style = option.widget ? option.widget->style() : QApplication::style();
    // Background (selection) first, then the bar, then the text on top.
    style->drawPrimitive(QStyle::PE_PanelItemViewItem, &option, painter, option.widget);

    QColor bar = option.palette.color(QPalette::Highlight);
    bar.setAlphaF(option.state & QStyle::State_Selected ? 0.35f : 0.25f);
    QRect rect = option.rect.adjusted(1, 2, -1, -2);
    rect.setWidth(std::max(1, static_cast<int>(rect.width() * fraction)));
    painter->save();
    painter->setPen(Qt::NoPen);
    painter->setBrush(bar);
    painter->drawRect(rect);
    painter->restore();

    QStyleOptionViewItem text = option;
    initStyleOption(&text, index);
    text.backgroundBrush = Qt::NoBrush;
    text.state &= ~QStyle::State_Selected;
    text.palette.setColor(QPalette::Text, option.state & QStyle::State_Selected
                                              ? option.palette.color(QPalette::HighlightedText)
                                              : option.palette.color(QPalette::Text));
    style->drawControl(QStyle::CE_ItemViewItem, &text, painter, option.widget);
}

} // namespace gui
