#pragma once
// File, producer, opset, nodes, parameters and warnings of the loaded model.
#include "guiutil.h"

#include "headroom/memory/finetune_summary.h"

#include <optional>

#include <QWidget>

class QLabel;
class QListWidget;

namespace gui {

class ModelInfoPanel : public QWidget
{
    Q_OBJECT
public:
    explicit ModelInfoPanel(QWidget* parent = nullptr);
    void setModel(const headroom::Model& model, const std::vector<std::string>& evaluationWarnings);
    void setUnits(headroom::Units units);
    // Trainable and frozen under the current configuration (headroom::countParams), with the bytes the run holds
    // for the parameters and the buffers (Breakdown weights less buffers, and buffers: the dtype policy's, not the
    // file's); until it is set the panel shows the total and the file's bytes.
    void setParamCounts(const headroom::ParamCounts& counts, int64_t heldBytes = -1, int64_t heldBufferBytes = -1);
    QString paramsText() const;
    QString fileText() const;

private:
    void refresh();
    const headroom::Model* m_model = nullptr;
    std::vector<std::string> m_evaluationWarnings;
    std::optional<headroom::ParamCounts> m_counts;
    int64_t m_heldBytes = -1, m_heldBufferBytes = -1;
    headroom::Units m_units = headroom::Units::IEC;
    QLabel* m_file;
    QLabel* m_producer;
    QLabel* m_opset;
    QLabel* m_nodes;
    QLabel* m_params;
    QListWidget* m_warnings;
};

} // namespace gui
