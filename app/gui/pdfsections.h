#pragma once
// The PDF report's sections (private to the pdf*.cpp files): one PdfReport member per section, defined in
// the file named for what it draws. ReportDocument (reportdocument.h) is the layout engine they write into;
// reportcharts.h paints the charts. The tr() context stays "PdfReport" wherever a section lives.
#include "pdfreport.h"

#include "guiutil.h"
#include "reportdocument.h"

#include "headroom/base/config.h"
#include "headroom/base/model_name.h"
#include "headroom/probe/probe_protocol.h"
#include "headroom/report/report.h"

#include <QColor>
#include <QCoreApplication>
#include <QFileInfo>
#include <QString>

namespace gui::pdf {

const QColor kGood(0x1b, 0x7f, 0x3b);
const QColor kBad(0xb3, 0x26, 0x1e);
const QColor kUnknown(0xb0, 0x6d, 0x00); // amber: sizes unknown, no verdict
const QColor kMuted(0x5a, 0x62, 0x70);

class PdfReport
{
    Q_DECLARE_TR_FUNCTIONS(PdfReport)

public:
    PdfReport(const headroom::Model& model, const headroom::Report& report, const PdfReportOptions& options)
        : m_model(model), m_report(report), m_options(options)
    {
    }

    // The sections in reading order (pdfreport.cpp).
    void write(ReportDocument& doc);

private:
    QString bytes(int64_t b) const { return gui::bytesText(b, m_options.units); }
    static QString exact(int64_t b) { return QString::number(b); }
    QString bytesWithExact(int64_t b) const { return tr("%1 (%2 bytes)").arg(bytes(b), exact(b)); }
    // A checkpoint's folder (or Hub repo id) rather than "config.json" (headroom::modelDisplayName).
    QString modelName() const { return qs(headroom::modelDisplayName(m_model.info.file)); }
    int64_t batch() const;

    // pdfcover.cpp: title, fine-tuning line, verdict, where the memory goes
    void cover(ReportDocument& doc);
    void servingCover(ReportDocument& doc);
    QString fineTuneLine() const;
    void verdict(ReportDocument& doc);
    void memoryTable(ReportDocument& doc);
    // pdfsetup.cpp: what was evaluated
    void modelIdentity(ReportDocument& doc);
    void configuration(ReportDocument& doc);
    QString cliEquivalent() const;
    // pdffit.cpp: verdicts per GPU of a cluster and per preset, and the advisor's changes
    void gpuVerdicts(ReportDocument& doc);
    void clusterVerdicts(ReportDocument& doc);
    void presetVerdicts(ReportDocument& doc);
    void advice(ReportDocument& doc);
    // pdfcharts.cpp
    void charts(ReportDocument& doc);
    // pdflayers.cpp: the per-layer, per-node and per-tensor tables
    void topLayers(ReportDocument& doc);
    void peakCulprits(ReportDocument& doc);
    void layerTable(ReportDocument& doc);
    void nodeTable(ReportDocument& doc);
    // pdfprobe.cpp
    void probe(ReportDocument& doc);
    // pdfserving.cpp: the Serving mode's plan, when the options carry one
    void serving(ReportDocument& doc);
    // pdfassumptions.cpp: the formulas behind every figure, and the warnings
    void assumptions(ReportDocument& doc);
    void warnings(ReportDocument& doc);

    const headroom::Model& m_model;
    const headroom::Report& m_report;
    PdfReportOptions m_options;
};

// pdfnames.cpp: the core's enums as the report names them (context PdfReport).
QString lossName(headroom::Loss l);
QString strategyName(headroom::Strategy s);
QString allocatorName(headroom::AllocatorMode a);
QString phaseName(headroom::Phase p);
QString adviceKindName(headroom::Advice::Kind k);
QString probeStatusName(headroom::ProbeResult::Status s);
QString yesNo(bool b);
QString percent(int64_t part, int64_t whole);

} // namespace gui::pdf
