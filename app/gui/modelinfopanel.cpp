#include "modelinfopanel.h"

#include "headroom/base/model_name.h"

#include "warningtext.h"

#include "headroom/import/hfconfig.h"

#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QListWidget>

namespace gui {

ModelInfoPanel::ModelInfoPanel(QWidget* parent)
    : QWidget(parent), m_file(new QLabel(this)), m_producer(new QLabel(this)), m_opset(new QLabel(this)),
      m_nodes(new QLabel(this)), m_params(new QLabel(this)), m_warnings(new QListWidget(this))
{
    auto* form = new QFormLayout(this);
    form->addRow(tr("File:"), m_file);
    form->addRow(tr("Producer:"), m_producer);
    form->addRow(tr("Opset:"), m_opset);
    form->addRow(tr("Nodes:"), m_nodes);
    form->addRow(tr("Parameters:"), m_params);
    form->addRow(tr("Warnings:"), m_warnings);
    for (QLabel* l : {m_file, m_producer, m_opset, m_nodes, m_params}) {
        l->setTextInteractionFlags(Qt::TextSelectableByMouse);
        l->setWordWrap(true);
    }
    // Room for eight wrapped lines before it scrolls (three were too few to read a model's warnings).
    m_warnings->setMinimumHeight(fontMetrics().lineSpacing() * 3 + 8);
    m_warnings->setMaximumHeight(fontMetrics().lineSpacing() * 8 + 8);
    // Read-only: reachable by mouse and screen readers, not a Tab stop.
    m_warnings->setFocusPolicy(Qt::NoFocus);
    m_warnings->setWordWrap(true);
}

void ModelInfoPanel::setModel(const headroom::Model& model, const std::vector<std::string>& evaluationWarnings)
{
    if (m_model != &model)
        m_counts.reset();
    m_model = &model;
    m_evaluationWarnings = evaluationWarnings;
    refresh();
}

void ModelInfoPanel::setUnits(headroom::Units units)
{
    m_units = units;
    refresh();
}

QString ModelInfoPanel::fileText() const { return m_file->text(); }

void ModelInfoPanel::setParamCounts(const headroom::ParamCounts& counts, int64_t heldBytes, int64_t heldBufferBytes)
{
    m_counts = counts;
    m_heldBytes = heldBytes;
    m_heldBufferBytes = heldBufferBytes;
    refresh();
}

QString ModelInfoPanel::paramsText() const { return m_params->text(); }

void ModelInfoPanel::refresh()
{
    if (!m_model)
        return;
    const headroom::Model& m = *m_model;
    const QString path = QFile::decodeName(m.info.file.c_str());
    // A file without weights (the bundled samples, a config.json) is what Headroom needs, not a problem: said
    // beside the name, in the user's language, instead of leading the warnings.
    const bool architectureOnly = m.info.externalDataMissing || m.info.producer == headroom::kHfConfigProducer;
    const QString shown = qs(headroom::modelDisplayName(m.info.file)); // a checkpoint's folder, not "config.json"
    m_file->setText(architectureOnly ? tr("%1 (architecture only: no weights, none needed)").arg(shown) : shown);
    m_file->setToolTip(tr("%1\n%2, SHA-256 %3").arg(path, bytesText(m.info.fileSize, m_units), qs(m.info.sha256)));
    m_producer->setText(m.info.producer.empty() ? tr("unknown") : qs(m.info.producer));
    QStringList opsets;
    for (const auto& [domain, version] : m.info.opsets)
        opsets << (domain.empty() ? QString::number(version) : tr("%1 %2").arg(qs(domain)).arg(version));
    m_opset->setText(tr("%1 (IR version %2)").arg(opsets.join(QStringLiteral(", "))).arg(m.info.irVersion));
    m_nodes->setText(QString::number(m.nodes.size()));
    // "Trainable" means one thing everywhere: requires grad under this configuration (the banner's LoRA
    // line and the CLI say the same); the file's parameters are the total.
    if (m_counts)
        //: %1 trainable parameters, %2 frozen, %3 all of them, %4 their bytes, %5 buffer elements, %6 their bytes
        m_params->setText(
            tr("%1 trainable · %2 frozen · %3 total (%4), %5 buffers (%6)")
                .arg(countText(m_counts->trainable), countText(m_counts->frozen), countText(m_counts->total()),
                     bytesText(m_heldBytes >= 0 ? m_heldBytes : m.params.trainableBytes, m_units),
                     countText(m.params.buffers),
                     bytesText(m_heldBufferBytes >= 0 ? m_heldBufferBytes : m.params.bufferBytes, m_units)));
    else
        m_params->setText(tr("%1 total (%2), %3 buffers (%4)")
                              .arg(countText(m.params.trainable), bytesText(m.params.trainableBytes, m_units),
                                   countText(m.params.buffers), bytesText(m.params.bufferBytes, m_units)));
    m_warnings->clear();
    // Warnings name the file as it was opened; show its name only (a bundled sample's path is the
    // build or install machine's, which means nothing to the user). The full path is the File tooltip.
    const QString name = QFileInfo(path).fileName();
    for (const std::string& w : m.warnings)
        if (!(architectureOnly && w.find("architecture only") != std::string::npos))
            m_warnings->addItem(warningText(w).replace(path, name));
    for (const std::string& w : m_evaluationWarnings)
        m_warnings->addItem(warningText(w));
    if (m_warnings->count() == 0)
        m_warnings->addItem(tr("none"));
}

} // namespace gui
