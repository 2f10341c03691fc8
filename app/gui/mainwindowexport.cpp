// MainWindow's File > Export: the PDF report, and the same CSV, JSON and Netron bytes as headroom-cli.
#include "mainwindow.h"

#include "controlspanel.h"
#include "samples.h"
#include "servingpage.h"
#include "session.h"

#include "headroom/report/report.h"

#include "pdfreport.h"

#include <nlohmann/json.hpp>

#include <QCheckBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QMessageBox>
#include <QSaveFile>
#include <QStatusBar>
#include <QTabWidget>

namespace gui {

QString MainWindow::defaultExportPath(ExportKind kind) const
{
    static const char* const suffixes[] = {"-memory.pdf", "-layers.csv", "-report.json", ".onnx.netron.json"};
    const QFileInfo model(m_currentFile);
    QString folder = model.absolutePath();
    if (m_currentFile.isEmpty() || !QFileInfo(folder).isWritable() || m_currentFile == findSampleModel())
        folder = QDir::homePath();
    return QDir(folder).filePath(model.completeBaseName() + QLatin1String(suffixes[static_cast<int>(kind)]));
}

bool MainWindow::servingShown() const { return servingTask() && m_serving->state()->hasModel(); }

bool MainWindow::exportTo(ExportKind kind, const QString& file, QString* error, bool pdfAllNodes)
{
    const ModelPtr model = m_session->model();
    if (!model) {
        if (error)
            *error = tr("Open a model first.");
        return false;
    }
    if (kind == ExportKind::Pdf) {
        PdfReportOptions options;
        options.units = m_controls->units();
        options.allNodes = pdfAllNodes;
        if (servingShown()) { // the task's report: the serving plan's, as headroom-cli --task serve prints it
            options.serving = m_serving->state();
            options.servingOnly = true;
        }
        // Never a report without its sweep (the session leaves it out while its tab is hidden), and never one
        // built with other options than the banner's.
        return writePdfReport(file, *model, m_session->completeReport(), error, options);
    }
    // The same bytes as headroom-cli --csv / --json / --netron for this configuration.
    const headroom::ReportOptions ro;
    const headroom::Report report = m_session->completeReport();
    std::string text;
    switch (kind) {
    case ExportKind::Csv: text = headroom::toCsv(*model, report); break;
    case ExportKind::Json: {
        // A served task's JSON is headroom-cli --task serve --json's object (one GPU: the window's); the others'
        // is the training or forward-pass report.
        const nlohmann::json json = servingShown()
                                        ? nlohmann::json{{"schema", "headroom.serving/1"},
                                                         {"model", m_serving->state()->model()->file},
                                                         {"serving",
                                                          nlohmann::json::array({m_serving->state()->toJson()})}}
                                        : headroom::toJson(*model, report, ro);
        text = servingShown() ? json.dump(2) + "\n" : json.dump(1) + "\n";
        break;
    }
    case ExportKind::Netron: text = headroom::toNetronAttachment(*model, report).dump(1) + "\n"; break;
    case ExportKind::Pdf: break;
    }
    QSaveFile out(file);
    if (!out.open(QIODevice::WriteOnly) ||
        out.write(text.data(), static_cast<qint64>(text.size())) != static_cast<qint64>(text.size()) || !out.commit()) {
        if (error)
            *error = tr("%1: cannot write: %2").arg(QDir::toNativeSeparators(file), out.errorString());
        return false;
    }
    return true;
}

void MainWindow::exportFile(ExportKind kind)
{
    if (!m_session->model())
        return;
    const QStringList filters = {tr("PDF files (*.pdf)"), tr("CSV files (*.csv)"), tr("JSON files (*.json)"),
                                 tr("Netron attachments (*.json)")};
    QFileDialog dialog(this, tr("Export"), defaultExportPath(kind), filters[static_cast<int>(kind)]);
    dialog.setAcceptMode(QFileDialog::AcceptSave);
    dialog.setFileMode(QFileDialog::AnyFile);
    QCheckBox* allNodes = nullptr;
    if (kind == ExportKind::Pdf) {
        // Qt's own dialog, so the option sits inside it.
        dialog.setOption(QFileDialog::DontUseNativeDialog);
        allNodes = new QCheckBox(tr("List every graph node (long: one row per node, shape computations included)"),
                                 &dialog);
        allNodes->setObjectName(QStringLiteral("pdfAllNodes"));
        if (auto* grid = qobject_cast<QGridLayout*>(dialog.layout()))
            grid->addWidget(allNodes, grid->rowCount(), 0, 1, -1);
    }
    if (dialog.exec() != QDialog::Accepted || dialog.selectedFiles().isEmpty())
        return;
    const QString file = dialog.selectedFiles().front();
    QString error;
    if (exportTo(kind, file, &error, allNodes && allNodes->isChecked()))
        statusBar()->showMessage(tr("Wrote %1").arg(QDir::toNativeSeparators(file)), 6000);
    else if (m_errorHandler)
        m_errorHandler(error);
    else
        QMessageBox::warning(this, tr("Cannot export"), error);
}

void MainWindow::exportReport() { exportFile(ExportKind::Pdf); }

} // namespace gui
