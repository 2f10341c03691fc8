#include "scalingpage.h"

#include "batchsweepchart.h"
#include "checkpointchart.h"

#include <QLabel>
#include <QVBoxLayout>

namespace gui {

ScalingPage::ScalingPage(QWidget* parent)
    : QWidget(parent), m_sweep(new BatchSweepChart(this)), m_checkpoints(new CheckpointChart(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(tr("Memory needed against the batch size"), this));
    layout->addWidget(m_sweep, 1);
    layout->addWidget(new QLabel(tr("Peak and recomputation against checkpoint segments"), this));
    layout->addWidget(m_checkpoints, 1);
}

} // namespace gui
