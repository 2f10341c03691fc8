#pragma once
// The layer tree: a thin adapter over the model's LayerNode tree and the engine's per-node costs. Leaf
// layers holding a single graph node show that node; others list their graph nodes as children.
#include "guiutil.h"
#include "treemodel.h"

#include "headroom/report/report.h"

namespace gui {

// "shape computations (N nodes)", "(1 node)" for one: the folded row's name in the tree and the PDF.
QString shapeGroupName(size_t nodes);
QString maskGroupName(size_t nodes);

struct LayerItem : TreeItem
{
    int layer = -1;          // LayerNode, or -1 for a graph-node row
    int node = -1;           // graph node shown by this row, or -1 for an aggregate layer
    bool shapeGroup = false; // the folded "shape computations" row of a layer (its nodes are children)
    bool maskGroup = false;  // ... or its folded "attention mask" row (shapeGroup set too: no freeze box)
    QString name;
    QString path; // what freezing this row adds to Config::freeze
    int64_t params = 0;
    int64_t activationBytes = 0;
    int64_t savedBytes = 0;
    int64_t peakLiveBytes = 0; // bytes of this subtree's tensors live at the peak
    bool frozen = false;
};

class LayerTreeModel : public TreeModel<LayerItem>
{
    Q_OBJECT
public:
    enum Columns {
        NameColumn,
        OpColumn,
        ShapeColumn,
        ParamsColumn,
        ActivationColumn,
        SavedColumn,
        ShareColumn,
        NUM_COLUMNS
    };
    enum Roles {
        SortRole = Qt::UserRole, // raw numbers (bytes, elements, share)
        MaxCostRole,             // the column's total, for the share bar
        NodeRole,                // graph node index, -1 for aggregate rows
        LayerPathRole,           // the path freezing uses
        FilterRole,              // "name op" for the filter box
    };

    explicit LayerTreeModel(QObject* parent = nullptr);

    // A new model: resets the tree (a reset, like the toggle below).
    void setModel(ModelPtr model);
    // Shape computations as their own rows in place (true) or folded into one row per layer (default).
    void setShowShapeComputations(bool show);
    bool showShapeComputations() const { return m_showShape; }
    // A new evaluation of the same model: dataChanged on the figure columns only.
    void setReport(const headroom::Report& report);
    void setUnits(headroom::Units units);

    const headroom::Model* model() const { return m_model.get(); }
    // The row showing graph node `node` (or the closest aggregate holding it).
    QModelIndex indexForNode(int node, int column = 0) const;
    // The layer paths checked as frozen, as Config::freeze patterns.
    std::vector<std::string> freezePatterns() const { return m_freeze; }

    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

signals:
    // The user (un)froze a row: the new Config::freeze list.
    void freezeChanged(const std::vector<std::string>& patterns);

private:
    void buildLayer(int layer, int parentItem);
    void addNodeRow(int node, int parentItem);
    void rebuild();
    void aggregate();
    int64_t columnValue(const LayerItem& item, int column) const;
    void updateFrozen();

    ModelPtr m_model;
    headroom::Units m_units = headroom::Units::IEC;
    std::vector<int> m_nodeItem; // graph node -> row
    std::vector<std::string> m_freeze;
    headroom::Bindings m_values;
    int64_t m_peak = 0;
    bool m_showShape = false;
    std::vector<headroom::NodeCost> m_lastNodes;         // the last report's per-node figures
    std::vector<std::pair<int, int64_t>> m_lastPeakLive; // (producer node, bytes) live at the peak
};

bool globMatch(std::string_view pattern, std::string_view text);

} // namespace gui
