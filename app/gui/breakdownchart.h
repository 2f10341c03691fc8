#pragma once
#include "chart.h"

namespace gui {

// The breakdown as stacked horizontal bars (one per GPU) against the GPU's capacity. The segments of
// a bar add up to the engine's Fit::needed (per GPU: GpuShare::needed, its peak or reserved peak +
// workspace + context).
class BreakdownChart : public Chart
{
    Q_OBJECT
public:
    struct Segment
    {
        QString label;
        int64_t bytes = 0;
    };
    explicit BreakdownChart(QWidget* parent = nullptr);
    void setReport(const headroom::Model& model, const headroom::Report& report) override;

    const std::vector<std::vector<Segment>>& bars() const { return m_bars; }
    int64_t capacity() const { return m_capacity; }
    // Per bar: the allocated peak (the bar up to the allocator cache segment).
    const std::vector<int64_t>& allocated() const { return m_allocated; }

private:
    void addClusterBars(const headroom::Report& report); // one bar per GPU of a multi-GPU strategy
    void addSingleBar(const headroom::Report& report);
    void plotBars(const headroom::Report& report);

    std::vector<std::vector<Segment>> m_bars;
    std::vector<int64_t> m_allocated;
    int64_t m_capacity = 0;
};

} // namespace gui
