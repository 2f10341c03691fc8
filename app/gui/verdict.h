#pragma once
// The verdict banner: "Fits on RTX 4090 (24.0 GiB) — 3.10 GiB headroom, max batch 96" or "Does not fit
// — needs 31.2 GiB; try bf16 (−9.80 GiB), ...". Every figure comes from computeFit() and advise().
#include "guiutil.h"

#include "headroom/memory/finetune_summary.h"
#include "headroom/report/report.h"

#include <QLabel>

namespace gui {

class ServingState;

// What the verdict judges: report.fit on one GPU; with several GPUs, the most loaded GPU of
// report.cluster (its need against the capacity minus the margin; maxBatch is then 0: not searched).
headroom::Fit shownFit(const headroom::Report& report);
QString verdictText(const headroom::Report& report, headroom::Units units);
// "Cannot tell: 721 tensors of unknown size, first at node m/model/layers.0/SplitToSequence": what the banner
// and the PDF say instead of a verdict while sizes are unknown (core's unknownFitText, translated).
QString unknownFitSentence(const headroom::Model& model, const headroom::Fit& fit);
// One piece of advice, translated by kind: "bf16 (−9.80 GiB)".
QString adviceText(const headroom::Advice& advice, const headroom::Model& model, headroom::Units units);

// With LoRA or QLoRA, where the fine-tuning memory goes (summarizeFineTune): frozen base, adapters, their
// gradients and optimizer state, the dequantization transient. Empty for full training.
QString fineTuneText(const headroom::Model& model, const headroom::Report& report, headroom::Units units);

class VerdictBanner : public QLabel
{
    Q_OBJECT
public:
    explicit VerdictBanner(QWidget* parent = nullptr);
    void setReport(const headroom::Model& model, const headroom::Report& report, headroom::Units units);
    // The Generate and Serve tasks of a config: the serving plan's verdict (ServingState's, the page's and the
    // CLI's words) on the serving GPU, in the banner's colours.
    void setServing(const ServingState& serving, headroom::Units units);
    void clear();
    // PEFT refused the panel's adapters for the open model (get_peft_model raises): "Does not start: why", red,
    // until the next report; the model stays open.
    void setRefused(const QString& why);
    bool fits() const { return m_fits; }
    bool unknown() const { return m_unknown; } // sizes unknown: amber, "cannot tell"

protected:
    void changeEvent(QEvent* event) override;

private:
    void applyColours();
    bool m_fits = false;
    bool m_unknown = false;
    bool m_empty = true;
};

} // namespace gui
