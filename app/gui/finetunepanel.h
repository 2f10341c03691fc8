#pragma once
// The fine-tuning controls of the Configuration panel: method (full / LoRA / QLoRA / IA3), the adapters,
// bitsandbytes quantization, Hugging Face per-layer checkpointing and the two one-click recipes of the
// CLI's --recipe. LoRA rewrites the graph when the model loads (LoadOptions::lora), so the main window
// reloads the model when fineTune().lora changes; everything else only changes the Config.
#include "headroom/base/config.h"
#include "headroom/base/finetune.h"

#include <QGroupBox>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSettings;
class QSpinBox;

namespace gui {

class FineTunePanel : public QGroupBox
{
    Q_OBJECT
public:
    enum class Method { Full, LoRA, QLoRA, IA3 };

    explicit FineTunePanel(QWidget* parent = nullptr);

    // What the controls describe; Full gives FineTune{} with only the per-layer checkpointing.
    headroom::FineTune fineTune() const;
    Method method() const;
    void setMethod(Method m);

    // The CLI's --recipe peft-defaults / qlora-paper (app/cli/options.cpp); the QLoRA paper's optimizer
    // (paged 32-bit AdamW) and precision (bf16 autocast) are asked of the owner through optimizerRequested
    // and precisionRequested: a recipe sets every field it implies.
    void applyPeftDefaults();
    // Full fine-tuning with every LoRA/QLoRA control at its default, without a change signal (a new model).
    void resetToDefaults();
    void applyQLoraPaper();
    // A framework preset's fine-tuning switches (headroom::applyFramework): per-layer checkpointing, k-bit
    // preparation, double quantization and the adapters' dtype; one change signal.
    // doraAllowed: false under lit-gpt's model code, whose LoRA classes have no DoRA and which has no IA3 (the CLI
    // refuses both): the DoRA box and the IA3 method are turned off, IA3 becoming LoRA
    void applyFrameworkSwitches(const headroom::FineTune& f, bool doraAllowed = true);

    // The open model's PEFT defaults (peftDefaultTargets, peftIa3Defaults for its model_type): the Targets field
    // says what an empty field means for this model. A config whose model type PEFT has no LoRA default for (the
    // MoE types) trains "all-linear" when the field is empty, as the fit plan's LoRA step does; an ONNX file
    // without one must name its targets.
    void setModelDefaults(const QString& modelType, const QStringList& lora, const QStringList& ia3);
    void saveSettings(QSettings& settings) const;
    void restoreSettings(QSettings& settings);

    QComboBox* methodBox() const { return m_method; }
    QComboBox* quantBox() const { return m_quant; }
    QCheckBox* layerCheckpointBox() const { return m_layerCheckpoint; }
    QPushButton* peftButton() const { return m_peft; }
    QPushButton* qloraButton() const { return m_qlora; }

signals:
    void changed();
    void optimizerRequested(headroom::Optimizer optimizer);
    void precisionRequested(headroom::DtypePolicy dtype); // a recipe's compute precision

private:
    void updateEnabled();
    void emitChanged();

    QComboBox* m_method;
    QSpinBox* m_rank;
    QDoubleSpinBox* m_alpha;
    QDoubleSpinBox* m_dropout;
    QLineEdit* m_targets;
    QComboBox* m_adapterDtype;
    QCheckBox* m_dora;
    QComboBox* m_quant;
    QCheckBox* m_doubleQuant;
    QComboBox* m_computeDtype;
    QCheckBox* m_kbitPrep;
    QCheckBox* m_layerCheckpoint;
    QPushButton* m_peft;
    QPushButton* m_qlora;
    bool m_doraAllowed = true;
    QString m_modelType; // "" for an ONNX file without one
    QStringList m_defaultLora, m_defaultIa3;
    void showTargetsPlaceholder();
    bool m_quiet = false; // a recipe sets many controls: one change signal at the end
};

} // namespace gui
