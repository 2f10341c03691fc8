#include "layertreemodel.h"

#include "headroom/memory/layercost.h"
#include "headroom/report/layer_tree.h"
#include "headroom/shapes/shapes.h"

#include <algorithm>

namespace gui {

// English has no plural forms without a translation loaded: one node is said apart.
QString shapeGroupName(size_t nodes)
{
    return nodes == 1 ? LayerTreeModel::tr("shape computations (1 node)")
                      : LayerTreeModel::tr("shape computations (%n nodes)", nullptr, static_cast<int>(nodes));
}

// Mask construction folded into one row (core treeEntries' maskNodes).
QString maskGroupName(size_t nodes)
{
    return nodes == 1 ? LayerTreeModel::tr("attention mask (1 node)")
                      : LayerTreeModel::tr("attention mask (%n nodes)", nullptr, static_cast<int>(nodes));
}

bool globMatch(std::string_view p, std::string_view t)
{
    // Iterative * and ? matching with one backtrack point ('*' spans '/': "layer1/*" freezes the subtree).
    size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
    while (ti < t.size()) {
        if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) {
            ++pi;
            ++ti;
        } else if (pi < p.size() && p[pi] == '*') {
            star = pi++;
            mark = ti;
        } else if (star != std::string_view::npos) {
            pi = star + 1;
            ti = ++mark;
        } else {
            return false;
        }
    }
    while (pi < p.size() && p[pi] == '*')
        ++pi;
    return pi == p.size();
}

LayerTreeModel::LayerTreeModel(QObject* parent) : TreeModel<LayerItem>(parent) {}

void LayerTreeModel::setModel(ModelPtr model)
{
    m_model = std::move(model);
    m_freeze.clear();
    m_values.clear();
    m_peak = 0;
    m_lastNodes.clear();
    m_lastPeakLive.clear();
    rebuild();
}

void LayerTreeModel::setShowShapeComputations(bool show)
{
    if (show == m_showShape)
        return;
    m_showShape = show;
    // The rows change, the figures do not: rebuild and re-aggregate the last report's node costs.
    const std::vector<std::string> freeze = m_freeze;
    rebuild();
    m_freeze = freeze;
    updateFrozen();
    if (!m_lastNodes.empty())
        aggregate();
}

void LayerTreeModel::rebuild()
{
    beginResetModel();
    m_items.clear();
    m_nodeItem.assign(m_model ? m_model->nodes.size() : 0, -1);
    if (m_model) {
        m_items.reserve(m_model->layers.size() + m_model->nodes.size() + 1);
        addItem(LayerItem{}, -1);
        if (!m_model->layers.empty()) {
            m_items[0].layer = 0;
            buildLayer(0, 0);
        }
        // Nodes the layer tree does not hold (or no tree at all) go under the root.
        for (size_t n = 0; n < m_model->nodes.size(); ++n) {
            if (m_nodeItem[n] >= 0)
                continue;
            LayerItem item;
            item.node = static_cast<int>(n);
            item.name = qs(m_model->nodes[n].name.empty() ? m_model->nodes[n].op : m_model->nodes[n].name);
            item.path = qs(m_model->nodePath(static_cast<int>(n)));
            m_nodeItem[n] = addItem(std::move(item), 0);
        }
    }
    endResetModel();
}

void LayerTreeModel::buildLayer(int layer, int parentItem)
{
    // The same rows as the CLI table and the PDF (core treeEntries): child layers and graph nodes in
    // topological order, the layer's shape computations folded into one last row unless shown.
    for (const headroom::TreeEntry& entry : headroom::treeEntries(*m_model, layer, m_showShape)) {
        if (entry.layer >= 0) {
            const headroom::LayerNode& c = m_model->layers[static_cast<size_t>(entry.layer)];
            LayerItem item;
            item.layer = entry.layer;
            item.name = qs(c.name);
            item.path = qs(c.path);
            if (c.children.empty() && c.nodes.size() == 1) {
                const int node = c.nodes.front();
                item.node = node;
                m_nodeItem[static_cast<size_t>(node)] = addItem(std::move(item), parentItem);
            } else {
                buildLayer(entry.layer, addItem(std::move(item), parentItem));
            }
        } else if (entry.node >= 0) {
            addNodeRow(entry.node, parentItem);
        } else {
            const bool mask = !entry.maskNodes.empty();
            const std::vector<int>& nodes = mask ? entry.maskNodes : entry.shapeNodes;
            LayerItem group;
            group.shapeGroup = true;
            group.maskGroup = mask;
            group.name = mask ? maskGroupName(nodes.size()) : shapeGroupName(nodes.size());
            group.path = qs(m_model->layers[static_cast<size_t>(layer)].path);
            const int g = addItem(std::move(group), parentItem);
            for (int n : nodes)
                addNodeRow(n, g);
        }
    }
}

void LayerTreeModel::addNodeRow(int n, int parentItem)
{
    if (n < 0 || static_cast<size_t>(n) >= m_nodeItem.size() || m_nodeItem[static_cast<size_t>(n)] >= 0)
        return;
    const headroom::Node& node = m_model->nodes[static_cast<size_t>(n)];
    LayerItem item;
    item.node = n;
    const auto slash = node.name.find_last_of('/');
    item.name = qs(node.name.empty() ? node.op
                                     : (slash == std::string::npos ? node.name : node.name.substr(slash + 1)));
    if (item.name.isEmpty())
        item.name = qs(node.op);
    item.path = qs(m_model->nodePath(n));
    m_nodeItem[static_cast<size_t>(n)] = addItem(std::move(item), parentItem);
}

void LayerTreeModel::setReport(const headroom::Report& report)
{
    if (!m_model || m_items.empty())
        return;
    const headroom::Evaluation& e = report.evaluation;
    m_lastNodes = e.nodes;
    m_lastPeakLive.clear();
    for (size_t i = 0; i < e.peakLive.size() && i < e.peakLiveBytes.size(); ++i) {
        // A weight (and its gradient) belongs to the layer that uses it first, as its parameters do
        // (NodeCost::params): at an optimizer-step peak those are what is live, not the activations.
        const headroom::Tensor& t = m_model->tensors[static_cast<size_t>(e.peakLive[i])];
        const int owner = t.producer >= 0 ? t.producer : t.consumers.empty() ? -1 : t.consumers.front();
        if (owner >= 0)
            m_lastPeakLive.emplace_back(owner, e.peakLiveBytes[i]);
    }
    aggregate();
    m_values = e.shapes.values;
    m_peak = e.memory.peak;
    const bool freezeChanged = m_freeze != report.config.freeze;
    m_freeze = report.config.freeze;
    if (freezeChanged)
        updateFrozen();
    // The roles the figures change, named: with "all roles" the proxy (recursive filtering) also re-checks
    // each parent's ancestors for its filter role on every signal, which on the 100k-node chain's 25k
    // parents is most of a tick's GUI time (QSortFilterProxyModelPrivate::_q_sourceDataChanged; perf).
    if (freezeChanged)
        emitColumnsChanged(NameColumn, ShareColumn);
    else
        emitColumnsChanged(ShapeColumn, ShareColumn, {Qt::DisplayRole, Qt::ToolTipRole, SortRole, MaxCostRole});
}

void LayerTreeModel::aggregate()
{
    for (LayerItem& item : m_items)
        item.params = item.activationBytes = item.savedBytes = item.peakLiveBytes = 0;
    for (size_t n = 0; n < m_lastNodes.size() && n < m_nodeItem.size(); ++n) {
        LayerItem& item = m_items[static_cast<size_t>(m_nodeItem[n])];
        item.params += m_lastNodes[n].params;
        item.activationBytes += m_lastNodes[n].outputBytes;
        item.savedBytes += m_lastNodes[n].savedBytes;
    }
    for (const auto& [producer, bytes] : m_lastPeakLive)
        if (static_cast<size_t>(producer) < m_nodeItem.size())
            m_items[static_cast<size_t>(m_nodeItem[static_cast<size_t>(producer)])].peakLiveBytes += bytes;
    // Pre-order storage: children come after their parent, so one backward pass aggregates.
    for (size_t i = m_items.size() - 1; i > 0; --i) {
        LayerItem& p = m_items[static_cast<size_t>(m_items[i].parent)];
        p.params += m_items[i].params;
        p.activationBytes += m_items[i].activationBytes;
        p.savedBytes += m_items[i].savedBytes;
        p.peakLiveBytes += m_items[i].peakLiveBytes;
    }
}

void LayerTreeModel::updateFrozen()
{
    for (size_t i = 1; i < m_items.size(); ++i) {
        const std::string path = m_items[i].path.toStdString();
        m_items[i].frozen = std::any_of(m_freeze.begin(), m_freeze.end(),
                                        [&](const std::string& p) { return globMatch(p, path); });
    }
}

void LayerTreeModel::setUnits(headroom::Units units)
{
    if (units == m_units)
        return;
    m_units = units;
    emitColumnsChanged(ActivationColumn, SavedColumn, {Qt::DisplayRole});
}

QModelIndex LayerTreeModel::indexForNode(int node, int column) const
{
    if (node < 0 || static_cast<size_t>(node) >= m_nodeItem.size())
        return {};
    return indexOfItem(m_nodeItem[static_cast<size_t>(node)], column);
}

int LayerTreeModel::columnCount(const QModelIndex& parent) const { return parent.column() > 0 ? 0 : NUM_COLUMNS; }

int64_t LayerTreeModel::columnValue(const LayerItem& item, int column) const
{
    switch (column) {
    case ParamsColumn: return item.params;
    case ActivationColumn: return item.activationBytes;
    case SavedColumn: return item.savedBytes;
    case ShareColumn: return item.peakLiveBytes;
    default: return 0;
    }
}

QVariant LayerTreeModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const LayerItem& item = m_items[index.internalId()];
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case NameColumn: return item.name;
        case OpColumn: // a MoE block says "128 experts, 8 active per token" there (core layerNote)
            return item.node >= 0 ? qs(m_model->nodes[static_cast<size_t>(item.node)].op)
                                  : qs(headroom::layerNote(*m_model, item.layer));
        case ShapeColumn: {
            if (item.node < 0)
                return QString();
            const auto& outputs = m_model->nodes[static_cast<size_t>(item.node)].outputs;
            QStringList shapes;
            for (int t : outputs)
                if (t >= 0)
                    shapes << qs(headroom::shapeString(*m_model, t, &m_values));
            return shapes.join(QStringLiteral(", "));
        }
        case ParamsColumn: return item.params ? countText(item.params) : QString();
        case ActivationColumn: return bytesText(item.activationBytes, m_units);
        case SavedColumn: return bytesText(item.savedBytes, m_units);
        case ShareColumn:
            return m_peak > 0
                       ? tr("%1 %").arg(100.0 * static_cast<double>(item.peakLiveBytes) / static_cast<double>(m_peak),
                                        0, 'f', 1)
                       : QString();
        }
        break;
    case SortRole:
        if (column <= ShapeColumn)
            return data(index, Qt::DisplayRole);
        return QVariant::fromValue<qlonglong>(columnValue(item, column));
    case MaxCostRole:
        if (column == ShareColumn)
            return QVariant::fromValue<qlonglong>(m_peak);
        return QVariant::fromValue<qlonglong>(m_items.empty() ? 0 : columnValue(m_items.front(), column));
    case NodeRole: return item.node;
    case LayerPathRole: return item.path;
    case FilterRole:
        return item.node >= 0 ? item.name + QLatin1Char(' ') + qs(m_model->nodes[static_cast<size_t>(item.node)].op)
                              : item.name;
    case Qt::CheckStateRole:
        if (column == NameColumn && !item.shapeGroup)
            return item.frozen ? Qt::Checked : Qt::Unchecked;
        break;
    case Qt::ToolTipRole:
        if (column == NameColumn && item.maskGroup)
            return tr("The attention mask (and position ids) the model's forward builds from the inputs alone "
                      "before its first layer: no parameters; its [batch, 1, seq, seq] tensors grow with the "
                      "square of the sequence.");
        if (column == NameColumn && item.shapeGroup)
            return tr("The exporter's shape arithmetic (Shape, Gather, Concat, ... on shape-sized integers): no "
                      "memory to speak of. View > Show Shape Computations lists them in place.");
        if (column == NameColumn)
            return tr("%1\nTick to freeze: its parameters get no gradient and no optimizer state "
                      "(fine-tuning).")
                .arg(item.path);
        if (column == ShapeColumn || column == OpColumn)
            return data(index, Qt::DisplayRole);
        break;
    case Qt::TextAlignmentRole:
        if (column >= ParamsColumn)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        break;
    default: break;
    }
    return {};
}

bool LayerTreeModel::setData(const QModelIndex& index, const QVariant& value, int role)
{
    if (role != Qt::CheckStateRole || index.column() != NameColumn ||
        !checkIndex(index, CheckIndexOption::IndexIsValid))
        return false;
    const std::string path = m_items[index.internalId()].path.toStdString();
    const std::string subtree = path + "/*";
    std::vector<std::string> patterns = m_freeze;
    std::erase_if(patterns, [&](const std::string& p) { return p == path || p == subtree; });
    if (value.value<Qt::CheckState>() == Qt::Checked) {
        patterns.push_back(path);
        patterns.push_back(subtree);
    }
    if (patterns == m_freeze)
        return false;
    m_freeze = std::move(patterns);
    updateFrozen();
    emitColumnsChanged(NameColumn, NameColumn, {Qt::CheckStateRole});
    emit freezeChanged(m_freeze);
    return true;
}

Qt::ItemFlags LayerTreeModel::flags(const QModelIndex& index) const
{
    Qt::ItemFlags f = TreeModel<LayerItem>::flags(index);
    if (index.isValid() && index.column() == NameColumn && !m_items[index.internalId()].shapeGroup)
        f |= Qt::ItemIsUserCheckable;
    return f;
}

QVariant LayerTreeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::DisplayRole) {
        switch (section) {
        case NameColumn: return tr("Freeze · Layer");
        case OpColumn: return tr("Op");
        case ShapeColumn: return tr("Output shape");
        case ParamsColumn: return tr("Params");
        case ActivationColumn: return tr("Activations");
        case SavedColumn: return tr("Saved");
        case ShareColumn: return tr("Of peak");
        }
    } else if (role == Qt::ToolTipRole) {
        switch (section) {
        case NameColumn:
            return tr(
                "Module path from the node names. Tick a layer to freeze it: frozen parameters get no gradient or optimizer state.");
        case OpColumn: return tr("ONNX operator of the graph node.");
        case ShapeColumn: return tr("Output shape at the current symbol values.");
        case ParamsColumn: return tr("Trainable parameter elements owned by the layer.");
        case ActivationColumn: return tr("Bytes of the layer's outputs at this configuration.");
        case SavedColumn: return tr("Bytes the layer keeps for the backward pass (shared tensors counted once).");
        case ShareColumn:
            return tr("Share of the peak held by this layer's tensors that are live at the moment of peak.");
        }
    }
    return {};
}

} // namespace gui
