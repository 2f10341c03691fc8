// The report's chart pages: breakdown, timeline, batch sweep and checkpointing, each with its caption.
#include "pdfsections.h"

#include "reportcharts.h"

#include <algorithm>

namespace gui::pdf {

void PdfReport::charts(ReportDocument& doc)
{
    const headroom::Breakdown& m = m_report.evaluation.memory;
    const qreal chartHeight = doc.pt(230);
    const qreal captionRoom = doc.pt(50);

    doc.newPage();
    doc.heading(tr("Breakdown"), chartHeight + captionRoom);
    doc.paragraph(tr("Each category of the memory model at the peak of one iteration, next to what the GPU offers. "
                     "Weights, gradients, optimizer states and master weights persist; activations are those live at "
                     "the peak; workspace and context are the GPU's fixed overheads."),
                  8.5, kMuted);
    gui::paintBreakdownChart(doc.painter(), doc.reserve(chartHeight), m_model, m_report, m_options.units);

    const headroom::Evaluation& e = m_report.evaluation;
    if (!e.timeline.empty()) {
        doc.heading(tr("Timeline"), chartHeight + captionRoom);
        QString where;
        if (e.peakStep >= 0 && static_cast<size_t>(e.peakStep) < e.timeline.size()) {
            const headroom::TimelinePoint& p = e.timeline[static_cast<size_t>(e.peakStep)];
            where = p.node >= 0 ? tr("The peak (%1) is reached at step %2, during %3 of %4.")
                                      .arg(bytes(m.peak))
                                      .arg(p.step)
                                      .arg(phaseName(p.phase), qs(m_model.nodePath(p.node)))
                                : tr("The peak (%1) is reached at step %2, during the %3.")
                                      .arg(bytes(m.peak))
                                      .arg(p.step)
                                      .arg(phaseName(p.phase));
        }
        doc.paragraph(tr("Allocated bytes after every step of one simulated iteration (forward, loss, backward, "
                         "optimizer step). %1")
                          .arg(where),
                      8.5, kMuted);
        gui::paintTimelineChart(doc.painter(), doc.reserve(chartHeight), m_model, m_report, m_options.units);
    }

    if (!m_report.batchSweep.empty()) {
        doc.heading(tr("Batch size"), chartHeight + captionRoom);
        doc.paragraph(tr("Memory needed on the GPU against the batch size; the horizontal line is the GPU's capacity. "
                         "Every point is a full re-evaluation, not an extrapolation."),
                      8.5, kMuted);
        gui::paintBatchSweepChart(doc.painter(), doc.reserve(chartHeight), m_model, m_report, m_options.units);
    }

    if (!m_report.checkpointCurve.empty()) {
        doc.heading(tr("Activation checkpointing"), chartHeight + captionRoom);
        const auto best = std::find_if(
            m_report.checkpointCurve.begin(), m_report.checkpointCurve.end(),
            [&](const headroom::CheckpointPoint& p) { return p.k == m_report.bestCheckpoint; });
        QString bestText;
        if (best != m_report.checkpointCurve.end())
            bestText = tr("The lowest peak, %1, is at k = %2 segments, for %3 extra forward multiply-accumulates.")
                           .arg(bytes(best->peak))
                           .arg(best->k)
                           .arg(gui::countText(best->recomputeMacs));
        doc.paragraph(tr("Peak allocated memory and recompute cost against the number of checkpoint segments "
                         "(torch.utils.checkpoint.checkpoint_sequential). %1")
                          .arg(bestText),
                      8.5, kMuted);
        gui::paintCheckpointChart(doc.painter(), doc.reserve(chartHeight), m_model, m_report, m_options.units);
    }
}

} // namespace gui::pdf
