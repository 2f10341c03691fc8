#pragma once
#include "chart.h"

namespace gui {

// Allocated bytes over one simulated iteration (forward, loss, backward, optimizer), with the peak
// marked. Clicking selects a step: stepClicked() lets the layer tree show the tensors live there.
class TimelineChart : public Chart
{
    Q_OBJECT
public:
    explicit TimelineChart(QWidget* parent = nullptr);
    void setReport(const headroom::Model& model, const headroom::Report& report) override;
    void selectStep(int step);
    int selectedStep() const { return m_selected; }

signals:
    void stepClicked(int step);

private:
    QCPGraph* m_graph;
    QCPGraph* m_high;
    QCPItemStraightLine* m_cursor;
    QCPItemTracer* m_peak;
    QCPItemText* m_peakLabel;
    std::vector<QCPAbstractItem*> m_phaseItems;
    int m_steps = 0;
    int m_selected = -1;
};

} // namespace gui
