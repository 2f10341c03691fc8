#pragma once
// The tree plumbing written once (hotspot's treemodel.h): items live contiguously in a vector, item 0 is
// the invisible root, every item knows its parent and its row; an index's internalId is the item number.
// Subclasses fill m_items in pre-order (parents before children) and implement columnCount()/data().
#include <QAbstractItemModel>

#include <vector>

namespace gui {

struct TreeItem
{
    int parent = -1;
    int row = 0;
    std::vector<int> children;
};

template <typename Item> class TreeModel : public QAbstractItemModel
{
public:
    using QAbstractItemModel::QAbstractItemModel;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override
    {
        if (row < 0 || column < 0 || column >= columnCount(parent) || m_items.empty())
            return {};
        const Item& p = m_items[static_cast<size_t>(itemOf(parent))];
        if (static_cast<size_t>(row) >= p.children.size())
            return {};
        return createIndex(row, column, static_cast<quintptr>(p.children[static_cast<size_t>(row)]));
    }

    QModelIndex parent(const QModelIndex& child) const override
    {
        if (!child.isValid())
            return {};
        const int p = m_items[child.internalId()].parent;
        return p <= 0 ? QModelIndex() : createIndex(m_items[static_cast<size_t>(p)].row, 0, static_cast<quintptr>(p));
    }

    int rowCount(const QModelIndex& parent = {}) const override
    {
        if (m_items.empty() || parent.column() > 0)
            return 0;
        return static_cast<int>(m_items[static_cast<size_t>(itemOf(parent))].children.size());
    }

    // The index of item `item` in `column` (invalid for the root).
    QModelIndex indexOfItem(int item, int column = 0) const
    {
        if (item <= 0 || static_cast<size_t>(item) >= m_items.size())
            return {};
        return createIndex(m_items[static_cast<size_t>(item)].row, column, static_cast<quintptr>(item));
    }
    int itemOf(const QModelIndex& index) const { return index.isValid() ? static_cast<int>(index.internalId()) : 0; }
    int itemCount() const { return static_cast<int>(m_items.size()); }

protected:
    // Adds an item under `parent` (pre-order) and returns its number.
    int addItem(Item item, int parent)
    {
        item.parent = parent;
        const int id = static_cast<int>(m_items.size());
        if (parent >= 0) {
            auto& siblings = m_items[static_cast<size_t>(parent)].children;
            item.row = static_cast<int>(siblings.size());
            siblings.push_back(id);
        }
        m_items.push_back(std::move(item));
        return id;
    }

    // dataChanged for columns first..last of every row, one signal per parent (no reset: expansion,
    // selection and the proxy's mapping survive).
    void emitColumnsChanged(int first, int last, const QList<int>& roles = {})
    {
        for (size_t i = 0; i < m_items.size(); ++i) {
            const auto& children = m_items[i].children;
            if (children.empty())
                continue;
            emit dataChanged(
                createIndex(0, first, static_cast<quintptr>(children.front())),
                createIndex(static_cast<int>(children.size()) - 1, last, static_cast<quintptr>(children.back())),
                roles);
        }
    }

    std::vector<Item> m_items;
};

} // namespace gui
