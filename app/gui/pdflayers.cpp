// The per-layer tables: top layers by memory, the tensors live at the peak, and the layer tree (or every
// graph node on request).
#include "pdfsections.h"

#include "layertreemodel.h"
#include "reportcharts.h"

#include "headroom/memory/layercost.h"
#include "headroom/report/layer_tree.h"
#include "headroom/shapes/shapes.h"

#include <algorithm>
#include <functional>

namespace gui::pdf {

void PdfReport::topLayers(ReportDocument& doc)
{
    // The same ranking as the GUI's top-layers chart: saved-for-backward bytes when training, output bytes
    // for inference, per graph node.
    const headroom::Evaluation& e = m_report.evaluation;
    const bool train = m_report.config.mode == headroom::Mode::Train;
    auto key = [&](size_t n) { return train ? e.nodes[n].savedBytes : e.nodes[n].outputBytes; };
    std::vector<size_t> order;
    for (size_t n = 0; n < m_model.nodes.size() && n < e.nodes.size(); ++n)
        if (key(n) > 0)
            order.push_back(n);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) > key(b); });
    if (order.size() > 15)
        order.resize(15);
    const int64_t total = train ? e.memory.activationsSaved : e.memory.activationsPeak;

    doc.newPage();
    doc.heading(tr("Top layers by memory"));
    doc.paragraph(train ? tr("The layers whose tensors autograd keeps for backward hold the most; the share is of all "
                             "saved activations.")
                        : tr("The layers with the largest outputs; the share is of the activations live at the peak."),
                  8.5, kMuted);
    gui::paintTopLayersChart(doc.painter(), doc.reserve(doc.pt(220)), m_model, m_report, m_options.units);
    QList<QStringList> rows;
    int rank = 1;
    for (size_t n : order) {
        const headroom::NodeCost& cost = e.nodes[n];
        rows.append({QString::number(rank++), qs(m_model.nodePath(static_cast<int>(n))), qs(m_model.nodes[n].op),
                     cost.params > 0 ? gui::countText(cost.params) : QString(), bytes(cost.outputBytes),
                     bytes(cost.savedBytes), percent(key(n), total)});
    }
    doc.table({{tr("#"), 0.35, Qt::AlignRight},
               {tr("Layer"), 3.2},
               {tr("Op"), 1.6},
               {tr("Params"), 0.8, Qt::AlignRight},
               {tr("Activation"), 1, Qt::AlignRight},
               {tr("Saved"), 1, Qt::AlignRight},
               {tr("Share"), 0.7, Qt::AlignRight}},
              rows);
}

void PdfReport::peakCulprits(ReportDocument& doc)
{
    const headroom::Evaluation& e = m_report.evaluation;
    if (e.peakLive.empty())
        return;
    doc.heading(tr("Tensors live at the peak"));
    QList<QStringList> rows;
    for (size_t i = 0; i < e.peakLive.size() && i < 12; ++i) {
        const int t = e.peakLive[i];
        const headroom::Tensor& tensor = m_model.tensors[static_cast<size_t>(t)];
        const int64_t b = static_cast<size_t>(t) < e.shapes.bytes.size() ? e.shapes.bytes[static_cast<size_t>(t)] : -1;
        QString origin;
        if (tensor.producer >= 0)
            origin = qs(m_model.nodePath(tensor.producer));
        else if (tensor.role == headroom::TensorRole::Parameter)
            origin = tr("(parameter)");
        else if (tensor.role == headroom::TensorRole::Buffer || tensor.role == headroom::TensorRole::Constant)
            origin = tr("(buffer)");
        else
            origin = tr("(model input)");
        rows.append({qs(tensor.name), origin, qs(headroom::shapeString(m_model, t, &e.shapes.values)),
                     b >= 0 ? bytes(b) : tr("unknown")});
    }
    doc.table({{tr("Tensor"), 2}, {tr("Produced by"), 3}, {tr("Shape"), 1.6}, {tr("Bytes"), 0.9, Qt::AlignRight}},
              rows);
}

void PdfReport::layerTable(ReportDocument& doc)
{
    if (m_options.allNodes) {
        nodeTable(doc);
        return;
    }
    // The GUI's tree to its opening depth, shape computations folded: a ViT's 1,600 nodes would otherwise
    // fill 40 pages that nobody reads; the per-node rows stay in the CSV and behind allNodes.
    const headroom::Evaluation& e = m_report.evaluation;
    const std::vector<headroom::LayerCost> costs = headroom::aggregateLayers(m_model, e);
    QList<QStringList> rows;
    std::function<void(int, int)> walk = [&](int layer, int level) {
        for (const headroom::TreeEntry& entry : headroom::treeEntries(m_model, layer, false)) {
            const QString indent(2 * level, QChar(0x2007));
            if (entry.layer >= 0) {
                const headroom::LayerCost& c = costs[static_cast<size_t>(entry.layer)];
                const headroom::LayerNode& l = m_model.layers[static_cast<size_t>(entry.layer)];
                const bool single = c.nodes == 1 && c.lastNode >= 0;
                rows.append({indent + qs(l.name),
                             single ? qs(m_model.nodes[static_cast<size_t>(c.lastNode)].op)
                                    : qs(headroom::layerNote(m_model, entry.layer)),
                             c.params > 0 ? gui::countText(c.params) : QString(),
                             c.unknownShape ? tr("unknown") : bytes(c.outputBytes),
                             c.savedBytes > 0 ? bytes(c.savedBytes) : QString()});
                if (l.depth < m_options.depth)
                    walk(entry.layer, level + 1);
                continue;
            }
            // Graph nodes directly under a layer are summed into one row per layer, like the CLI table.
            if (entry.node >= 0)
                continue;
            const bool mask = !entry.maskNodes.empty();
            const std::vector<int>& nodes = mask ? entry.maskNodes : entry.shapeNodes;
            int64_t out = 0, saved = 0;
            for (int n : nodes)
                if (static_cast<size_t>(n) < e.nodes.size()) {
                    out += e.nodes[static_cast<size_t>(n)].outputBytes;
                    saved += e.nodes[static_cast<size_t>(n)].savedBytes;
                }
            rows.append({indent + (mask ? maskGroupName(nodes.size()) : shapeGroupName(nodes.size())), QString(),
                         QString(), bytes(out), saved > 0 ? bytes(saved) : QString()});
        }
    };
    if (!m_model.layers.empty())
        walk(0, 0);
    doc.newPage();
    doc.heading(tr("Layer table (%n rows)", nullptr, static_cast<int>(rows.size())));
    doc.paragraph(tr("The layer tree to depth %1, as the app opens it; the exporter's shape arithmetic (Shape, Gather, "
                     "Concat, ... on shape-sized integers) is folded into one row per layer. Activation: the layer's "
                     "outputs; saved: what it keeps for backward. The CSV export lists every graph node in bytes.")
                      .arg(m_options.depth),
                  8.5, kMuted);
    ReportDocument::TableStyle style;
    style.pointSize = 7;
    doc.table({{tr("Layer"), 4.6},
               {tr("Op"), 1.65},
               {tr("Params"), 0.9, Qt::AlignRight},
               {tr("Activation"), 1.05, Qt::AlignRight},
               {tr("Saved"), 0.9, Qt::AlignRight}},
              rows, style);
}

void PdfReport::nodeTable(ReportDocument& doc)
{
    const headroom::Evaluation& e = m_report.evaluation;
    const int layers = static_cast<int>(m_model.nodes.size());
    doc.newPage();
    doc.heading(tr("Layer table (%n layers)", nullptr, layers));
    doc.paragraph(tr("Every graph node in topological order, at this configuration. Activation: the node's outputs; "
                     "saved: what it keeps for backward (a tensor saved by several nodes is counted once, at the "
                     "first). The CSV and JSON exports carry the same rows in bytes."),
                  8.5, kMuted);
    QList<QStringList> rows;
    rows.reserve(layers);
    for (int n = 0; n < layers; ++n) {
        const headroom::Node& node = m_model.nodes[static_cast<size_t>(n)];
        const headroom::NodeCost cost = static_cast<size_t>(n) < e.nodes.size() ? e.nodes[static_cast<size_t>(n)]
                                                                                : headroom::NodeCost{};
        QStringList shapes;
        for (int t : node.outputs)
            if (t >= 0)
                shapes << qs(headroom::shapeString(m_model, t, &e.shapes.values));
        rows.append({QString::number(n + 1), qs(m_model.nodePath(n)), qs(node.op), shapes.join(QStringLiteral(" ")),
                     cost.params > 0 ? gui::countText(cost.params) : QString(),
                     cost.unknownShape ? tr("unknown") : bytes(cost.outputBytes),
                     cost.savedBytes > 0 ? bytes(cost.savedBytes) : QString()});
    }
    ReportDocument::TableStyle style;
    style.pointSize = 7;
    doc.table({{tr("#"), 0.45, Qt::AlignRight},
               {tr("Layer"), 3.6},
               {tr("Op"), 1.65},
               {tr("Output shape"), 1.95},
               {tr("Params"), 0.75, Qt::AlignRight},
               {tr("Activation"), 1.05, Qt::AlignRight},
               {tr("Saved"), 0.9, Qt::AlignRight}},
              rows, style);
}

} // namespace gui::pdf
