// The PDF report's writer: the page set-up, the order of the sections (pdf*.cpp draw them into ReportDocument)
// and the atomic save.
#include "pdfreport.h"

#include "pdfsections.h"

#include "headroom/base/model_name.h"
#include "headroom/headroom_config.h"
#include "headroom/load/loader.h"
#include "headroom/report/report.h"

#include <QFileInfo>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>

#include <exception>

namespace gui::pdf {

int64_t PdfReport::batch() const
{
    const int b = m_model.batchSymbol;
    if (b >= 0 && static_cast<size_t>(b) < m_report.config.symbols.size())
        return m_report.config.symbols[static_cast<size_t>(b)];
    return 1;
}

void PdfReport::write(ReportDocument& doc)
{
    doc.setFooter(tr("Headroom memory report · %1").arg(modelName()));
    if (m_options.servingOnly && m_options.serving) {
        servingCover(doc);
        serving(doc);
        warnings(doc);
        doc.finish();
        return;
    }
    cover(doc);
    charts(doc);
    topLayers(doc);
    peakCulprits(doc);
    advice(doc);
    layerTable(doc);
    probe(doc);
    serving(doc);
    assumptions(doc);
    warnings(doc);
    doc.finish();
}

} // namespace gui::pdf

namespace {

constexpr int kDpi = 96; // device pixels = screen pixels, so the GUI's charts render at their own scale

} // namespace

using gui::pdf::PdfReport;

bool writePdfReport(const QString& file, const headroom::Model& model, const headroom::Config& config, QString* error,
                    const PdfReportOptions& options)
{
    headroom::Report report;
    try {
        // The question as headroom-cli and the window ask it: with the fit plan's LoRA step.
        headroom::ReportOptions ro;
        if (config.mode == headroom::Mode::Train && !config.finetune.lora.active())
            ro.loraVariant = headroom::peftDefaultLoraVariant(model.info.file, {});
        report = headroom::buildReport(model, config, ro);
    } catch (const std::exception& ex) {
        if (error)
            *error = QStringLiteral("%1: %2").arg(file, QString::fromUtf8(ex.what()));
        return false;
    }
    return writePdfReport(file, model, report, error, options);
}

bool writePdfReport(const QString& file, const headroom::Model& model, const headroom::Report& report, QString* error,
                    const PdfReportOptions& options)
{
    auto fail = [&](const QString& why) {
        if (error)
            *error = QStringLiteral("%1: %2").arg(file, why);
        return false;
    };
    QSaveFile out(file);
    if (!out.open(QIODevice::WriteOnly))
        return fail(out.errorString());

    {
        QPdfWriter writer(&out);
        writer.setResolution(kDpi);
        writer.setPageLayout(QPageLayout(QPageSize(QPageSize::A4), QPageLayout::Portrait, QMarginsF(16, 14, 16, 12),
                                         QPageLayout::Millimeter));
        writer.setCreator(QStringLiteral("Headroom " HEADROOM_VERSION));
        writer.setTitle(
            PdfReport::tr("GPU memory report: %1").arg(gui::qs(headroom::modelDisplayName(model.info.file))));
        QPainter painter;
        if (!painter.begin(&writer))
            return fail(PdfReport::tr("cannot start the PDF"));
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setRenderHint(QPainter::TextAntialiasing);
        try {
            gui::ReportDocument doc(writer, painter, gui::reportFont());
            PdfReport(model, report, options).write(doc);
            if (!doc.ok()) {
                painter.end();
                out.cancelWriting();
                return fail(PdfReport::tr("cannot add a page to the PDF"));
            }
        } catch (const std::exception& ex) {
            painter.end();
            out.cancelWriting();
            return fail(QString::fromUtf8(ex.what()));
        }
        if (!painter.end())
            return fail(PdfReport::tr("cannot finish the PDF"));
    }
    if (out.error() != QFileDevice::NoError)
        return fail(out.errorString());
    if (!out.commit())
        return fail(out.errorString());
    return true;
}
