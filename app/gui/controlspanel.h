#pragma once
// The configuration controls of the task the user chose (the window's task switch): one slider per symbol
// (batch on a log scale), dtype policy, optimizer, checkpoint segments, accumulation, inplace, target GPU(s) with
// the multi-GPU strategy, allocator model and safety margin, units, fine-tuning (FineTunePanel, the Fine-tune
// task's). Only the task's controls show. Persisted with QSettings: the machine's settings once, a model's per
// model and per task (docs/USER_GUIDE.md "Settings").
#include "guiutil.h"

#include "headroom/base/task.h"

#include <QWidget>

class QCheckBox;
class QSettings;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QGroupBox;
class QLayout;
class QLabel;
class QPushButton;
class QSpinBox;

namespace gui {

class FineTunePanel;
class LogSlider;

class ControlsPanel : public QWidget
{
    Q_OBJECT
public:
    explicit ControlsPanel(QWidget* parent = nullptr);

    // Sliders for the model's symbols. Settings belong to the model they were set on: the one shown before is
    // saved under its key, and `model` gets the task and the settings it had when last open (sizes, precision,
    // optimizer, fine-tuning, checkpointing), or the defaults; the machine's settings (GPU, count, strategy,
    // allocator, margin, units) stay.
    void setModel(const headroom::Model& model);
    // Which model the saved settings belong to: its file's SHA-256 (the path when there is none).
    static QString modelKey(const headroom::Model& model);
    // The task whose controls show and whose configuration config() describes; a task's settings are kept per
    // model: switching saves this task's and brings back the other's (or its defaults). One configChanged.
    void setTask(headroom::Task task);
    headroom::Task task() const { return m_task; }
    // "models/<key>": where the shown model's settings are kept (empty before a model).
    QString settingsGroup() const { return m_hasModel ? modelGroup() : QString(); }
    // The configuration the controls describe (symbols indexed like model.symbols).
    headroom::Config config() const;
    void setFreeze(std::vector<std::string> patterns) { m_freeze = std::move(patterns); }
    headroom::Units units() const;
    // Marks the best number of checkpoint segments (from the engine's curve; 0: unknown).
    void setBestCheckpoint(int k);
    // Marks each symbol slider's largest fitting value (Report::symbolMax; empty: no marks).
    void setSymbolMaxima(const std::vector<int64_t>& maxima);

    LogSlider* batchSlider() const { return m_batch; }
    QSpinBox* gpusBox() const { return m_gpus; }
    QComboBox* strategyBox() const { return m_strategy; }
    QSpinBox* gpu0BatchBox() const { return m_gpu0Batch; }
    QCheckBox* offloadBox() const { return m_offload; }
    QComboBox* allocatorBox() const { return m_allocator; }
    QSpinBox* marginBox() const { return m_margin; }
    LogSlider* symbolSlider(int symbol) const;
    // "Padded batches" under the sequence slider (Config::varySymbol); null when the model has no sequence size.
    QCheckBox* variesBox() const { return m_varies; }
    FineTunePanel* fineTunePanel() const { return m_finetune; }

    void saveSettings() const;
    // What a model symbol is, for a label: "Sequence length", "Image height", else its own name.
    static QString symbolMeaning(const headroom::Symbol& symbol);
    void restoreSettings();

signals:
    void configChanged();
    void unitsChanged(headroom::Units units);

private:
    void layoutControls();
    void addChoices();
    void describeControls();
    void connectControls();
    void changed();
    void updateGpuWidgets();
    void updateStrategyWidgets();
    void resetModelSettings();
    void showTaskControls();
    QString modelGroup() const; // "models/<key>" of the shown model
    void saveModelSettings(QSettings& s) const;
    void loadModelSettings(QSettings& s);
    void addVariesBox(int symbol, bool checked);

    QFormLayout* m_symbolsForm;
    std::vector<LogSlider*> m_symbolSliders; // indexed like model symbols
    std::vector<std::string> m_symbolNames;
    LogSlider* m_batch = nullptr;
    // Batches padded to their longest sample: the sequence symbol (m_varySymbol) varies step to step up to its
    // slider's value. Rebuilt with the sliders, so null while the model has no sequence symbol.
    QCheckBox* m_varies = nullptr;
    int m_varySymbol = -1;
    headroom::Task m_task = headroom::Task::Train;
    bool m_hasModel = false; // setModel has run: the controls hold a model's settings
    bool m_hfConfig = false; // the shown model is a config.json graph (it can be served)
    QGroupBox* m_sizes = nullptr;
    QGroupBox* m_training = nullptr; // "Training" / "Inference": the step's switches
    QLayout* m_checkpointRow = nullptr;
    QFormLayout* m_targetForm = nullptr;
    QComboBox* m_dtype;
    QComboBox* m_optimizer;
    QComboBox* m_loss;
    QSpinBox* m_checkpoint;
    QLabel* m_bestCheckpoint;
    QPushButton* m_useBest;
    QSpinBox* m_accumulate;
    QCheckBox* m_inplace;
    QCheckBox* m_offloadActivations; // torchtune's activation offloading (Config::offloadActivations)
    QComboBox* m_gpu;
    QDoubleSpinBox* m_capacity;
    QSpinBox* m_gpus;
    QComboBox* m_strategy;
    QSpinBox* m_gpu0Batch;
    QCheckBox* m_offload;
    QComboBox* m_allocator;
    QSpinBox* m_margin;
    QComboBox* m_units;
    QComboBox* m_attention;
    QComboBox* m_framework;    // a preset of the switches above (headroom::applyFramework)
    QComboBox* m_loop;         // what the training loop holds (Config::loopKeepsOutput)
    QCheckBox* m_oldLogits;    // transformers before 4.46 (Config::hfFp32Logits)
    FineTunePanel* m_finetune; // declared last: initialised last in the constructor
    std::vector<std::string> m_freeze;
    int m_best = 0;
    bool m_restoring = false;
    QString m_modelKey; // the model the controls' model settings belong to
};

} // namespace gui
