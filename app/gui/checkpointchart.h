#pragma once
#include "chart.h"

namespace gui {

// Peak memory (bars) and extra recompute (line, right axis) against checkpoint segments, with the
// best number of segments marked (Report::checkpointCurve, Report::bestCheckpoint).
class CheckpointChart : public Chart
{
    Q_OBJECT
public:
    explicit CheckpointChart(QWidget* parent = nullptr);
    void setReport(const headroom::Model& model, const headroom::Report& report) override;
    const std::vector<headroom::CheckpointPoint>& points() const { return m_points; }

private:
    QCPBars* m_peaks;
    QCPBars* m_best;
    QCPGraph* m_recompute;
    std::vector<headroom::CheckpointPoint> m_points;
};

} // namespace gui
