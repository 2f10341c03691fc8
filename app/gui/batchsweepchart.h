#pragma once
#include "chart.h"

namespace gui {

// The GPU memory needed against the batch size (log scale), the capacity, the region that fits and
// the largest batch that fits (Report::batchSweep, Fit::maxBatch).
class BatchSweepChart : public Chart
{
    Q_OBJECT
public:
    explicit BatchSweepChart(QWidget* parent = nullptr);
    void setReport(const headroom::Model& model, const headroom::Report& report) override;
    const std::vector<std::pair<int64_t, int64_t>>& points() const { return m_points; }
    int64_t maxBatch() const { return m_maxBatch; }

private:
    QCPGraph* m_graph;
    QCPGraph* m_current;
    std::vector<std::pair<int64_t, int64_t>> m_points;
    int64_t m_maxBatch = 0;
};

} // namespace gui
