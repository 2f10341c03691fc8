#pragma once
// The Layers tab: filter box, expand-to-depth, and the layer tree with cost bars.
#include "guiutil.h"
#include "layertreeview.h"

#include <QWidget>

class QCheckBox;
class QLineEdit;
class QSpinBox;
class QTreeView;

namespace gui {

class LayerFilterModel;
class LayerTreeModel;

class LayersPage : public QWidget
{
    Q_OBJECT
public:
    explicit LayersPage(QWidget* parent = nullptr);
    LayerTreeModel* model() const { return m_model; }
    LayerFilterModel* proxy() const { return m_proxy; }
    QTreeView* view() const { return m_view; }
    QLineEdit* filterEdit() const { return m_filter; }
    QCheckBox* shapeToggle() const { return m_showShape; }

    // After a model reset: expand to the chosen depth and size the columns.
    void modelReset();
    // Selects the rows of these graph nodes (the tensors live at a timeline step) and shows the first.
    void selectNodes(const std::vector<int>& nodes);

private:
    void expandToDepth();

    LayerTreeModel* m_model;
    LayerFilterModel* m_proxy;
    LayerTreeView* m_view;
    QLineEdit* m_filter;
    QSpinBox* m_depth;
    QCheckBox* m_showShape;
};

} // namespace gui
