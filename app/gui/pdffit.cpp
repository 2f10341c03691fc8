// Would it fit elsewhere: the verdict per GPU of a cluster, per GPU preset, and after each change the
// advisor tried.
#include "pdfsections.h"
#include "plantext.h"

#include "headroom/hardware/gpus.h"

namespace gui::pdf {

void PdfReport::gpuVerdicts(ReportDocument& doc)
{
    if (m_report.cluster.gpus.size() > 1)
        clusterVerdicts(doc);
    if (m_options.gpuTable && !m_report.fit.sizesUnknown)
        presetVerdicts(doc);
}

void PdfReport::clusterVerdicts(ReportDocument& doc)
{
    const headroom::Config& c = m_report.config;
    const headroom::ClusterEvaluation& cluster = m_report.cluster;
    doc.heading(tr("Verdict per GPU (%1)").arg(strategyName(c.strategy)));
    QList<QStringList> rows;
    // The core's need per GPU (GpuShare::needed: at capacity, what the allocator holds once it gives its cache
    // back), as the banner and the chart show it.
    for (const headroom::GpuShare& g : cluster.gpus) {
        const int64_t need = g.needed;
        const bool fits = c.gpu.capacity <= 0 || need + c.marginBytes <= c.gpu.capacity;
        rows.append({tr("GPU %1").arg(g.index), QString::number(g.batch), bytes(g.weights), bytes(g.gradients),
                     bytes(g.optimizer), bytes(g.activations), bytes(g.communication), bytes(g.peak), bytes(need),
                     fits ? tr("fits") : tr("does not fit")});
    }
    ReportDocument::TableStyle style;
    style.rowColor = [this](int r) {
        const int64_t need = m_report.cluster.gpus[static_cast<size_t>(r)].needed;
        return m_report.config.gpu.capacity <= 0 || need + m_report.config.marginBytes <= m_report.config.gpu.capacity
                   ? kGood
                   : kBad;
    };
    doc.table({{tr("GPU"), 0.9},
               {tr("Batch"), 0.8, Qt::AlignRight},
               {tr("Weights"), 1, Qt::AlignRight},
               {tr("Gradients"), 1, Qt::AlignRight},
               {tr("Optimizer"), 1, Qt::AlignRight},
               {tr("Activations"), 1, Qt::AlignRight},
               {tr("Communication"), 1.1, Qt::AlignRight},
               {tr("Peak"), 1, Qt::AlignRight},
               {tr("Needed"), 1, Qt::AlignRight},
               {tr("Verdict"), 1.1}},
              rows, style);
    for (const std::string& n : cluster.notes)
        doc.bullet(qs(n));
}

void PdfReport::presetVerdicts(ReportDocument& doc)
{
    const headroom::Config& c = m_report.config;
    doc.heading(tr("Would it fit on other GPUs?"));
    doc.paragraph(tr("The same configuration on each preset, with that GPU's own context and workspace defaults."), 8.5,
                  kMuted);
    QList<QStringList> rows;
    std::vector<bool> fits;
    // One plan for all presets: only the GPU's capacity, context and workspace change.
    const headroom::EnginePlan plan = headroom::makePlan(m_model, c);
    for (const headroom::GpuSpec& spec : headroom::gpuPresets()) {
        headroom::Config cc = c;
        cc.gpu = spec;
        const int64_t needed = headroom::neededBytes(cc, m_report.evaluation);
        const int64_t free = spec.capacity - needed;
        const bool ok = needed <= spec.capacity - cc.marginBytes;
        fits.push_back(ok);
        rows.append({qs(spec.name), bytes(spec.capacity), bytes(needed),
                     ok ? tr("fits, %1 free").arg(bytes(free)) : tr("short by %1").arg(bytes(-free)), [&] {
                         const int64_t mb = m_model.batchSymbol >= 0 ? headroom::maxBatch(plan, cc)
                                                                     : headroom::kUnknownMax;
                         return mb == headroom::kUnknownMax ? QStringLiteral("–") : QString::number(mb);
                     }()});
    }
    ReportDocument::TableStyle style;
    style.rowColor = [fits](int r) { return fits[static_cast<size_t>(r)] ? kGood : kBad; };
    doc.table({{tr("GPU"), 2.4},
               {tr("Capacity"), 1, Qt::AlignRight},
               {tr("Needed"), 1, Qt::AlignRight},
               {tr("Verdict"), 1.8},
               {tr("Largest batch"), 1, Qt::AlignRight}},
              rows, style);
}

void PdfReport::advice(ReportDocument& doc)
{
    // The plan that makes it fit, in the banner's words, before the changes one at a time.
    if (const QString plan = gui::planText(m_report.fitPlan, m_options.units); !plan.isEmpty()) {
        doc.heading(tr("What makes it fit"));
        doc.paragraph(plan);
    }
    if (m_report.advice.empty())
        return;
    doc.heading(tr("What would reduce it"));
    doc.paragraph(tr("Each change was re-evaluated with everything else kept; savings are measured, not assumed."), 8.5,
                  kMuted);
    QList<QStringList> rows;
    std::vector<bool> fits;
    for (const headroom::Advice& a : m_report.advice) {
        // A precision change names the policy in full: "bf16" alone does not say pure or AMP.
        const QString setting = a.kind == headroom::Advice::Kind::Dtype ? gui::dtypeName(a.changed.dtype)
                                                                        : qs(a.summary);
        rows.append({adviceKindName(a.kind), setting, bytes(a.saving()), bytes(a.needAfter),
                     a.fitsAfter ? tr("fits") : tr("does not fit")});
        fits.push_back(a.fitsAfter);
    }
    ReportDocument::TableStyle style;
    style.rowColor = [fits](int r) { return fits[static_cast<size_t>(r)] ? kGood : QColor(Qt::black); };
    doc.table({{tr("Change"), 1.6},
               {tr("Setting"), 1.8},
               {tr("Saves"), 1, Qt::AlignRight},
               {tr("Needed after"), 1, Qt::AlignRight},
               {tr("Verdict"), 1}},
              rows, style);
}

} // namespace gui::pdf
