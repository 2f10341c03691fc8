#pragma once
#include "chart.h"

namespace gui {

// The N graph nodes that hold the most memory: saved-for-backward bytes when training, output bytes
// for inference (the engine's NodeCost figures, sorted).
class TopLayersChart : public Chart
{
    Q_OBJECT
public:
    explicit TopLayersChart(QWidget* parent = nullptr, int count = 10);
    void setReport(const headroom::Model& model, const headroom::Report& report) override;
    // (node, bytes), biggest first.
    const std::vector<std::pair<int, int64_t>>& top() const { return m_top; }
    // The axis labels, biggest first (elided at the front, always distinct) and the full paths.
    QStringList labels() const { return m_labels; }
    QStringList paths() const { return m_paths; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QCPBars* m_bars;
    int m_count;
    std::vector<std::pair<int, int64_t>> m_top;
    QStringList m_labels, m_paths;
};

// Labels for layer paths in `width` pixels: elided at the front so the last path component (the op, the
// module) stays; where two still read the same, the first differing component is kept in front.
QStringList distinctLabels(const QStringList& paths, const QFontMetrics& metrics, int width);

} // namespace gui
