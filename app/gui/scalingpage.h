#pragma once
// The Batch & checkpoints tab: the batch sweep with the fit region, and the checkpoint curve.
#include <QWidget>

namespace gui {

class BatchSweepChart;
class CheckpointChart;

class ScalingPage : public QWidget
{
    Q_OBJECT
public:
    explicit ScalingPage(QWidget* parent = nullptr);
    BatchSweepChart* sweep() const { return m_sweep; }
    CheckpointChart* checkpoints() const { return m_checkpoints; }

private:
    BatchSweepChart* m_sweep;
    CheckpointChart* m_checkpoints;
};

} // namespace gui
