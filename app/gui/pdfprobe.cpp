// The measured-on-a-GPU section: headroom-probe's replay set beside the prediction.
#include "pdfsections.h"

#include <algorithm>
#include <exception>

namespace gui::pdf {

void PdfReport::probe(ReportDocument& doc)
{
    if (!m_report.probe)
        return;
    headroom::ProbeResult r;
    try {
        r = headroom::probeResultFromJson(*m_report.probe);
    } catch (const std::exception& ex) {
        doc.heading(tr("Measured on a GPU"));
        doc.paragraph(tr("The probe's result could not be read: %1").arg(QString::fromUtf8(ex.what())));
        return;
    }
    doc.heading(tr("Measured on a GPU"));
    if (r.status != headroom::ProbeResult::Status::Ok) {
        doc.paragraph(tr("The probe did not measure (%1): %2").arg(probeStatusName(r.status), qs(r.message)));
        return;
    }
    const headroom::Breakdown& m = m_report.evaluation.memory;
    doc.paragraph(
        tr("headroom-probe replayed this configuration's allocations on %1 (%2) with real cudaMalloc/cudaFree "
           "and read the device's memory after every event.")
            .arg(qs(r.deviceName), bytes(r.totalBytes)),
        8.5, kMuted);
    auto diff = [this](int64_t measured, int64_t predicted) {
        return measured < 0 ? QStringLiteral("–") : bytes(measured - predicted);
    };
    QList<QStringList> rows;
    rows.append({tr("Peak allocated (exact replay)"), bytes(m.peak), bytes(r.exactPeak), diff(r.exactPeak, m.peak)});
    rows.append({tr("Reserved peak (caching replay)"), bytes(m.reservedPeak), bytes(r.cachingPeak),
                 diff(r.cachingPeak, m.reservedPeak)});
    rows.append({tr("CUDA context"), bytes(m_report.config.gpu.context), bytes(r.contextBytes),
                 diff(r.contextBytes, m_report.config.gpu.context)});
    if (r.cublasWorkspace >= 0 || r.cudnnWorkspace >= 0) {
        const int64_t ws = std::max<int64_t>(r.cublasWorkspace, 0) + std::max<int64_t>(r.cudnnWorkspace, 0);
        rows.append({tr("Workspace (cuBLAS + cuDNN)"), bytes(m_report.config.gpu.workspace), bytes(ws),
                     diff(ws, m_report.config.gpu.workspace)});
    }
    if (r.measuredMaxBatch >= 0 && m_model.batchSymbol >= 0)
        rows.append({tr("Largest batch that fits"), QString::number(m_report.fit.maxBatch),
                     r.maxBatchIsLowerBound ? tr("≥ %1").arg(r.measuredMaxBatch) : QString::number(r.measuredMaxBatch),
                     QString::number(r.measuredMaxBatch - m_report.fit.maxBatch)});
    doc.table({{tr("Figure"), 2.4},
               {tr("Predicted"), 1, Qt::AlignRight},
               {tr("Measured"), 1, Qt::AlignRight},
               {tr("Difference"), 1, Qt::AlignRight}},
              rows);
    if (!r.peakByCategory.empty()) {
        doc.subheading(tr("Measured peak by category"));
        QList<QStringList> cats;
        for (const auto& [name, b] : r.peakByCategory)
            cats.append({qs(name), bytes(b), QString::number(b)});
        doc.table({{tr("Category"), 2}, {tr("Size"), 1, Qt::AlignRight}, {tr("Bytes"), 1.4, Qt::AlignRight}}, cats);
    }
    if (r.oom)
        doc.paragraph(tr("The plan at batch %1 ran out of memory on the device.").arg(batch()), 9, kBad);
    doc.paragraph(tr("Measured bytes are device memory above the baseline before the replay (cudaMemGetInfo); the "
                     "difference to the prediction is allocator rounding, driver-side allocations and anything "
                     "else running on the GPU."),
                  8.5, kMuted);
    for (const std::string& w : r.warnings)
        doc.bullet(qs(w));
}

} // namespace gui::pdf
