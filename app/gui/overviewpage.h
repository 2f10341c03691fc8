#pragma once
// The Overview tab: the breakdown against the GPU and the top layers.
#include <QWidget>

namespace gui {

class BreakdownChart;
class TopLayersChart;

class OverviewPage : public QWidget
{
    Q_OBJECT
public:
    explicit OverviewPage(QWidget* parent = nullptr);
    BreakdownChart* breakdown() const { return m_breakdown; }
    TopLayersChart* topLayers() const { return m_topLayers; }

private:
    BreakdownChart* m_breakdown;
    TopLayersChart* m_topLayers;
};

} // namespace gui
