#pragma once
#include "chart.h"

namespace gui {

// The N graph nodes that hold the most memory: saved-for-backward bytes when training, output bytes
// for inference (the engine's NodeCost figures, sorted). Per kind (the default), the nodes that repeat across
// numbered blocks ("layers.0" .. "layers.31") are one bar: "input_layernorm/Pow × 32 layers", their sum, with
// "32 MiB each, 1.0 GiB" written beside it. Bars are in the Activations colour of the breakdown: what a node
// saves for backward (or outputs) is activation memory.
class TopLayersChart : public Chart
{
    Q_OBJECT
public:
    struct Entry
    {
        QString path;      // the node's path; per kind with each block number as "*"
        int64_t total = 0; // bytes of all the nodes in the entry
        int64_t each = 0;  // the largest node's bytes
        int count = 1;     // nodes in the entry
    };
    explicit TopLayersChart(QWidget* parent = nullptr, int count = 10);
    void setReport(const headroom::Model& model, const headroom::Report& report) override;
    // Per kind (repeated blocks folded) or per layer (one bar per node).
    void setPerKind(bool perKind);
    bool perKind() const { return m_perKind; }
    // (node, bytes), biggest first: the per-layer list.
    const std::vector<std::pair<int, int64_t>>& top() const { return m_top; }
    // The bars shown, biggest first.
    const std::vector<Entry>& entries() const { return m_perKind ? m_kinds : m_nodes; }
    // The text beside each bar ("32 MiB each, 1.0 GiB" or "32 MiB"), biggest first.
    QStringList valueTexts() const;
    // The axis labels, biggest first (elided at the front, always distinct) and the full paths.
    QStringList labels() const { return m_labels; }
    QStringList paths() const { return m_paths; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void plotEntries();
    QString valueText(const Entry& e) const;

    QCPBars* m_bars;
    int m_count;
    bool m_perKind = true;
    bool m_training = true;
    std::vector<std::pair<int, int64_t>> m_top;
    std::vector<Entry> m_nodes, m_kinds;
    QStringList m_labels, m_paths;
};

// Labels for layer paths in `width` pixels: elided at the front so the last path component (the op, the
// module) stays; where two still read the same, the first differing component is kept in front.
QStringList distinctLabels(const QStringList& paths, const QFontMetrics& metrics, int width);
// A layer path with each numbered block ("layers.3", "h.11", "layer1.0") written "layers.*": the key that
// folds a repeated block's nodes into one kind.
QString blockPattern(const QString& path);

} // namespace gui
