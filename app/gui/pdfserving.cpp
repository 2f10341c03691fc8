// The serving section: the Serving mode's plan (vLLM's startup or generate()'s peak) when the report carries one
// (PdfReportOptions::serving), with the same verdict and split as the page.
#include "pdfsections.h"
#include "servingstate.h"

#include <QLocale>

namespace gui::pdf {

namespace {

QString count(int64_t n) { return QLocale().toString(static_cast<qlonglong>(n)); }

} // namespace

void PdfReport::serving(ReportDocument& doc)
{
    const ServingState* s = m_options.serving;
    if (!s || !s->hasModel())
        return;
    doc.heading(tr("Serving"));
    doc.paragraph(s->verdictText(m_options.units), 10, s->verdict() == ServingState::Verdict::Serves ? kGood : kBad,
                  true);
    QList<std::pair<QString, QString>> rows;
    if (const auto& p = s->snapshot().vllm) {
        rows.append({tr("Engine"), tr("vLLM %1 (V1 startup rules, docs/SERVING.md)").arg(qs(toString(p->version)))});
        rows.append(
            {tr("Settings"), tr("max_model_len %1, max_num_seqs %2, TP %3, KV cache %4, "
                                "gpu_memory_utilization %5")
                                 .arg(count(s->contextLength()), count(s->concurrency()))
                                 .arg(p->settings.tp)
                                 .arg(p->settings.kvCacheDtype == headroom::KvCacheDtype::Fp8 ? QStringLiteral("fp8")
                                                                                              : QStringLiteral("auto"))
                                 .arg(p->settings.gpuMemoryUtilization)});
        if (p->starts && *p->starts)
            rows.append({tr("KV cache"), tr("%1 = %2 blocks = %3 tokens; %4 requests of max_model_len at once")
                                             .arg(bytes(p->kvCache), count(p->kvBlocks), count(p->kvTokens))
                                             .arg(p->maxConcurrency, 0, 'f', 2)});
        if (!p->fix.empty())
            rows.append({tr("What changes it"), qs(p->fix)});
    } else if (const auto& h = s->snapshot().hf) {
        rows.append(
            {tr("Engine"),
             tr("Hugging Face generate() (transformers %1, sdpa, greedy)").arg(qs(headroom::kTransformersVersion))});
        rows.append({tr("Settings"), tr("prompt %1 + %2 new tokens, batch %3, %4 cache")
                                         .arg(count(h->settings.promptLen), count(h->settings.newTokens),
                                              count(h->settings.batch), qs(toString(h->settings.cache)))});
        rows.append({tr("Peak"),
                     tr("%1 at the prefill, %2 at the last step").arg(bytes(h->prefillPeak), bytes(h->decodePeak))});
        rows.append(
            {tr("KV cache"), tr("%1 after the prefill, %2 at the end").arg(bytes(h->kvPrefill), bytes(h->kvEnd))});
        rows.append({tr("Largest batch that fits"), count(h->maxBatch)});
    }
    rows.append({tr("Longest context"), s->longestText()});
    doc.keyValues(rows);
    QList<QStringList> split;
    for (const ServingSegment& seg : s->segments())
        split.append({ServingState::segmentName(seg.kind), bytes(seg.bytes), percent(seg.bytes, s->capacity())});
    doc.table({{tr("Where the memory goes"), 2.4},
               {tr("Size"), 1, Qt::AlignRight},
               {tr("Share of the device"), 1, Qt::AlignRight}},
              split);
}

} // namespace gui::pdf
