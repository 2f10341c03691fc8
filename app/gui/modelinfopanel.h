#pragma once
// File, producer, opset, nodes, parameters and warnings of the loaded model.
#include "guiutil.h"

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
    QString fileText() const;

private:
    void refresh();
    const headroom::Model* m_model = nullptr;
    std::vector<std::string> m_evaluationWarnings;
    headroom::Units m_units = headroom::Units::IEC;
    QLabel* m_file;
    QLabel* m_producer;
    QLabel* m_opset;
    QLabel* m_nodes;
    QLabel* m_params;
    QListWidget* m_warnings;
};

} // namespace gui
