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
    // What a segment holds; its colour is the category's everywhere (the Largest layers chart's bars too).
    enum Category : uint8_t {
        Weights,
        Gradients,
        Optimizer,
        MasterWeights,
        Activations,
        Communication,
        Other,
        AllocatorCache,
        Workspace,
        Context
    };
    struct Segment
    {
        QString label;
        int64_t bytes = 0;
        Category category = Other;
    };
    static QColor color(Category c) { return categoryColor(static_cast<int>(c)); }
    explicit BreakdownChart(QWidget* parent = nullptr);
    void setReport(const headroom::Model& model, const headroom::Report& report) override;

    const std::vector<std::vector<Segment>>& bars() const { return m_bars; }
    int64_t capacity() const { return m_capacity; }
    // Per bar: the allocated peak (the bar up to the allocator cache segment).
    const std::vector<int64_t>& allocated() const { return m_allocated; }
    // "Weights: 15.0 GiB (16,106,127,360 bytes), 51% of the need": the tooltip of a segment, and the legend's
    // text "Weights 15.0 GiB" (one bar: its figures without hovering).
    QString segmentToolTip(size_t bar, size_t segment) const;
    QString legendText(size_t segment) const;
    // The bar's figures in one sentence, with the plan to fit when it does not ("Needs 29.2 GiB of 23.6 GiB:
    // weights 15.0 GiB, activations 12.8 GiB, … To fit: per-layer checkpointing (−9.28 GiB) → …").
    QString summary() const { return m_summary; }
    // The segment under a point of the plot, or {-1, -1}.
    std::pair<int, int> segmentAt(QPoint pos) const;
    // The value labels drawn on the bars at the current size.
    QStringList visibleValueLabels() const;

signals:
    void summaryChanged(const QString& summary);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void addValueLabels();
    void makeSummary(const headroom::Report& report);
    void fitValueLabels();
    void addClusterBars(const headroom::Report& report); // one bar per GPU of a multi-GPU strategy
    void addSingleBar(const headroom::Report& report);
    void plotBars(const headroom::Report& report);

    std::vector<std::vector<Segment>> m_bars;
    std::vector<int64_t> m_allocated;
    int64_t m_capacity = 0;
    std::vector<std::pair<QCPItemText*, int64_t>> m_valueLabels;
    QString m_summary;
};

} // namespace gui
