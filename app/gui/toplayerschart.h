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

private:
    QCPBars* m_bars;
    int m_count;
    std::vector<std::pair<int, int64_t>> m_top;
};

} // namespace gui
