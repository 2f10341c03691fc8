#include "finetunepanel.h"

#include "guiutil.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSpinBox>
#include <QStandardItemModel>

namespace gui {

namespace {
void selectData(QComboBox* box, const QVariant& data)
{
    const int i = box->findData(data);
    if (i >= 0)
        box->setCurrentIndex(i);
}

void setItemEnabled(QComboBox* box, int index, bool enabled)
{
    if (auto* model = qobject_cast<QStandardItemModel*>(box->model()); model && index >= 0)
        if (QStandardItem* item = model->item(index))
            item->setEnabled(enabled);
}
} // namespace

FineTunePanel::FineTunePanel(QWidget* parent)
    : QGroupBox(tr("Fine-tuning"), parent), m_method(new QComboBox(this)), m_rank(new QSpinBox(this)),
      m_alpha(new QDoubleSpinBox(this)), m_dropout(new QDoubleSpinBox(this)), m_targets(new QLineEdit(this)),
      m_adapterDtype(new QComboBox(this)), m_dora(new QCheckBox(tr("DoRA (magnitude and direction)"), this)),
      m_quant(new QComboBox(this)), m_doubleQuant(new QCheckBox(tr("Double quantization"), this)),
      m_computeDtype(new QComboBox(this)), m_kbitPrep(new QCheckBox(tr("Prepare for k-bit training"), this)),
      m_layerCheckpoint(new QCheckBox(tr("Checkpoint every decoder layer"), this)),
      m_peft(new QPushButton(tr("PEFT defaults"), this)), m_qlora(new QPushButton(tr("QLoRA paper"), this))
{
    setObjectName(QStringLiteral("fineTunePanel"));
    m_method->setObjectName(QStringLiteral("fineTuneMethod"));
    m_peft->setObjectName(QStringLiteral("peftRecipe"));
    m_qlora->setObjectName(QStringLiteral("qloraRecipe"));
    m_method->addItem(tr("Full fine-tuning"), static_cast<int>(Method::Full));
    m_method->addItem(tr("LoRA"), static_cast<int>(Method::LoRA));
    m_method->addItem(tr("QLoRA"), static_cast<int>(Method::QLoRA));
    //: PEFT's IA3 method: trained vectors scale some layers' outputs (or inputs)
    m_method->addItem(tr("IA3"), static_cast<int>(Method::IA3));
    m_rank->setRange(1, 4096);
    m_rank->setValue(8);
    m_alpha->setRange(0.01, 100000);
    m_alpha->setDecimals(2);
    m_alpha->setValue(8);
    m_dropout->setRange(0, 0.99);
    m_dropout->setDecimals(2);
    m_dropout->setSingleStep(0.05);
    m_defaultLora = {QStringLiteral("q_proj"), QStringLiteral("v_proj")};
    m_defaultIa3 = {QStringLiteral("k_proj"), QStringLiteral("v_proj"), QStringLiteral("down_proj")};
    m_targets->setClearButtonEnabled(true);
    m_quant->addItem(tr("NF4 (4-bit)"), static_cast<int>(headroom::Quant::NF4));
    m_quant->addItem(tr("FP4 (4-bit)"), static_cast<int>(headroom::Quant::FP4));
    m_quant->addItem(tr("INT8 (LLM.int8)"), static_cast<int>(headroom::Quant::Int8));
    for (const char* d : {"bf16", "fp16", "fp32"})
        m_computeDtype->addItem(QString::fromLatin1(d).toUpper(), QString::fromLatin1(d));
    m_kbitPrep->setChecked(true);
    m_adapterDtype->setObjectName(QStringLiteral("adapterDtype"));
    for (const char* d : {"fp32", "bf16", "fp16"})
        m_adapterDtype->addItem(QString::fromLatin1(d).toUpper(), QString::fromLatin1(d));

    auto* form = new QFormLayout(this);
    form->addRow(tr("Method:"), m_method);
    auto* recipes = new QHBoxLayout;
    recipes->addWidget(m_peft);
    recipes->addWidget(m_qlora);
    form->addRow(tr("Recipe:"), recipes);
    auto* rankRow = new QHBoxLayout;
    rankRow->addWidget(m_rank);
    rankRow->addWidget(new QLabel(tr("alpha"), this));
    rankRow->addWidget(m_alpha);
    form->addRow(tr("Rank:"), rankRow);
    form->addRow(tr("Dropout:"), m_dropout);
    form->addRow(tr("Targets:"), m_targets);
    form->addRow(tr("Adapter weights:"), m_adapterDtype);
    m_dora->setObjectName(QStringLiteral("dora"));
    form->addRow(QString(), m_dora);
    form->addRow(tr("Quantization:"), m_quant);
    form->addRow(QString(), m_doubleQuant);
    form->addRow(tr("Compute dtype:"), m_computeDtype);
    form->addRow(QString(), m_kbitPrep);
    form->addRow(QString(), m_layerCheckpoint);

    // Tooltips say what each setting changes in the accounting, in the user's words.
    m_method->setToolTip(tr("Full: every parameter trains (gradients and optimizer state for all). LoRA: the model is "
                            "frozen and small adapter matrices train beside the chosen layers. QLoRA: LoRA on a model "
                            "whose linear layers are stored in 4 or 8 bits."));
    m_peft->setToolTip(tr("PEFT's LoraConfig() defaults: rank 8, alpha 8, no dropout, the model's default layers "
                          "(q_proj and v_proj for Llama-style models)."));
    m_qlora->setToolTip(
        tr("The QLoRA paper's setup: NF4 with double quantization, BF16 compute, rank 64, alpha 16, "
           "dropout 0.1 on every linear layer, paged 32-bit AdamW and a checkpoint per decoder layer."));
    m_rank->setToolTip(tr("LoRA rank r: each adapted layer gets r × (inputs + outputs) trainable parameters. "
                          "Changing it reloads the model."));
    m_alpha->setToolTip(tr("LoRA alpha: scales the adapters' output by alpha / r. It changes no memory."));
    m_dropout->setToolTip(tr("Dropout in front of each adapter: above 0 every adapter keeps its own dropped copy of "
                             "its input and a 1-byte mask for backward."));
    m_targets->setToolTip(tr("Layers that get adapters, by module name, comma separated (q_proj, v_proj), or "
                             "all-linear for every linear layer but the output layer. Empty: PEFT's default for "
                             "the model type (a config.json only; an ONNX file needs names here)."));
    m_adapterDtype->setToolTip(tr("The adapters' weights, gradients and optimizer state. FP32 is PEFT's default, "
                                  "also on a 16-bit model, where each adapted layer then makes an FP32 copy of its "
                                  "input for backward; BF16/FP16 adapters (autocast_adapter_dtype=False) need no "
                                  "copy. Changing it reloads the model."));
    m_dora->setToolTip(tr("LoraConfig(use_dora=True): a trained magnitude per output of each adapted layer. Its "
                          "forward keeps the base layer's output and the adapter's for backward, about two "
                          "activations more per adapted layer. Changing it reloads the model."));
    m_quant->setToolTip(tr("bitsandbytes storage of the frozen linear layers: NF4/FP4 about half a byte per weight "
                           "plus a scale per 64 weights; INT8 one byte per weight plus a scale per row."));
    m_doubleQuant->setToolTip(tr("Quantize the 4-bit scales too: about 0.52 instead of 0.56 bytes per weight."));
    m_computeDtype->setToolTip(tr("Each 4-bit layer unpacks its whole weight into this dtype while it runs; the "
                                  "largest such copy counts at the peak."));
    m_kbitPrep->setToolTip(tr("prepare_model_for_kbit_training: the weights that stay unquantized (embeddings, "
                              "norms, output layer) are cast to FP32, 4 bytes each."));
    m_layerCheckpoint->setToolTip(tr("Hugging Face gradient_checkpointing_enable(): every decoder layer keeps only "
                                     "its input, and its activations are rebuilt during backward. Replaces the "
                                     "checkpoint segments above."));
    for (QWidget* w :
         std::initializer_list<QWidget*>{m_method, m_rank, m_alpha, m_dropout, m_targets, m_adapterDtype, m_dora,
                                         m_quant, m_doubleQuant, m_computeDtype, m_kbitPrep, m_layerCheckpoint})
        w->setWhatsThis(w->toolTip());

    connect(m_method, &QComboBox::currentIndexChanged, this, [this] {
        updateEnabled();
        emitChanged();
    });
    connect(m_rank, &QSpinBox::valueChanged, this, &FineTunePanel::emitChanged);
    connect(m_alpha, &QDoubleSpinBox::valueChanged, this, &FineTunePanel::emitChanged);
    connect(m_dropout, &QDoubleSpinBox::valueChanged, this, &FineTunePanel::emitChanged);
    // A reload per keystroke would be wasteful: the targets apply when editing ends.
    connect(m_targets, &QLineEdit::editingFinished, this, &FineTunePanel::emitChanged);
    connect(m_quant, &QComboBox::currentIndexChanged, this, [this] {
        updateEnabled();
        emitChanged();
    });
    connect(m_computeDtype, &QComboBox::currentIndexChanged, this, &FineTunePanel::emitChanged);
    connect(m_adapterDtype, &QComboBox::currentIndexChanged, this, &FineTunePanel::emitChanged);
    for (QCheckBox* box : {m_dora, m_doubleQuant, m_kbitPrep, m_layerCheckpoint})
        connect(box, &QCheckBox::toggled, this, &FineTunePanel::emitChanged);
    connect(m_peft, &QPushButton::clicked, this, &FineTunePanel::applyPeftDefaults);
    connect(m_qlora, &QPushButton::clicked, this, &FineTunePanel::applyQLoraPaper);
    updateEnabled();
}

FineTunePanel::Method FineTunePanel::method() const { return static_cast<Method>(m_method->currentData().toInt()); }

void FineTunePanel::setMethod(Method m) { selectData(m_method, static_cast<int>(m)); }

void FineTunePanel::updateEnabled()
{
    const Method m = method();
    const bool lora = m == Method::LoRA || m == Method::QLoRA;
    const bool adapters = m != Method::Full;
    const bool quant = m == Method::QLoRA;
    // IA3 has no rank, alpha, dropout or DoRA: its targets and the vectors' dtype only
    for (QWidget* w : std::initializer_list<QWidget*>{m_rank, m_alpha, m_dropout})
        w->setEnabled(lora);
    for (QWidget* w : std::initializer_list<QWidget*>{m_targets, m_adapterDtype})
        w->setEnabled(adapters);
    showTargetsPlaceholder();
    m_dora->setEnabled(lora && m_doraAllowed);
    m_quant->setEnabled(quant);
    m_kbitPrep->setEnabled(quant);
    // Double quantization and the compute dtype belong to the 4-bit formats (BitsAndBytesConfig's bnb_4bit_*).
    const bool fourBit = quant && static_cast<headroom::Quant>(m_quant->currentData().toInt()) != headroom::Quant::Int8;
    m_doubleQuant->setEnabled(fourBit);
    m_computeDtype->setEnabled(fourBit);
}

void FineTunePanel::emitChanged()
{
    if (!m_quiet)
        emit changed();
}

void FineTunePanel::setModelDefaults(const QString& modelType, const QStringList& lora, const QStringList& ia3)
{
    m_modelType = modelType;
    m_defaultLora = lora;
    m_defaultIa3 = ia3;
    showTargetsPlaceholder();
}

// What an empty Targets field means for the open model, in the field itself.
void FineTunePanel::showTargetsPlaceholder()
{
    const QStringList& defaults = method() == Method::IA3 ? m_defaultIa3 : m_defaultLora;
    if (!defaults.isEmpty())
        //: placeholder of the targets field: empty means PEFT's default modules for the model type, listed
        m_targets->setPlaceholderText(tr("default (%1)").arg(defaults.join(QStringLiteral(", "))));
    else if (!m_modelType.isEmpty() && method() != Method::IA3)
        //: placeholder of the LoRA targets field for a model type PEFT has no default targets for
        m_targets->setPlaceholderText(tr("all-linear (PEFT has no default targets for %1)").arg(m_modelType));
    else
        //: placeholder of the targets field when PEFT has no default for the model: the user must name them
        m_targets->setPlaceholderText(tr("module names (PEFT has no default for this model)"));
}

headroom::FineTune FineTunePanel::fineTune() const
{
    headroom::FineTune f;
    f.layerCheckpoint = m_layerCheckpoint->isChecked();
    const Method m = method();
    if (m == Method::Full)
        return f;
    if (m == Method::IA3) {
        // --ia3 targets=...: PEFT's feedforward modules for the model_type (IA3Config's unset list)
        f.lora.method = headroom::PeftMethod::IA3;
        for (const QString& t :
             m_targets->text().split(QRegularExpression(QStringLiteral("[,\\s]+")), Qt::SkipEmptyParts))
            f.lora.targets.push_back(t.toStdString());
        f.lora.dtype = m_adapterDtype->currentData().toString().toStdString();
        return f;
    }
    f.lora.r = m_rank->value();
    f.lora.alpha = m_alpha->value();
    f.lora.dropout = m_dropout->value();
    for (const QString& t : m_targets->text().split(QRegularExpression(QStringLiteral("[,\\s]+")), Qt::SkipEmptyParts))
        f.lora.targets.push_back(t.toStdString());
    if (f.lora.targets.empty() && m_defaultLora.isEmpty() && !m_modelType.isEmpty())
        f.lora.targets = {"all-linear"}; // PEFT has no default for this model type (setModelDefaults)
    f.lora.dtype = m_adapterDtype->currentData().toString().toStdString();
    f.lora.dora = m_doraAllowed && m_dora->isChecked();
    if (m == Method::QLoRA) {
        f.quant = static_cast<headroom::Quant>(m_quant->currentData().toInt());
        f.kbitPrep = m_kbitPrep->isChecked();
        if (f.quant != headroom::Quant::Int8) {
            f.doubleQuant = m_doubleQuant->isChecked();
            f.computeDtype = m_computeDtype->currentData().toString().toStdString();
            f.computeBytes = f.computeDtype == "fp32" ? 4 : 2;
        }
    }
    return f;
}

void FineTunePanel::applyPeftDefaults()
{
    // LoraConfig() defaults: r=8, lora_alpha=8, lora_dropout=0, the model_type's default targets.
    m_quiet = true;
    if (method() == Method::Full)
        setMethod(Method::LoRA);
    m_rank->setValue(8);
    m_alpha->setValue(8);
    m_dropout->setValue(0);
    m_targets->clear();
    selectData(m_adapterDtype, QStringLiteral("fp32"));
    m_dora->setChecked(false);
    m_quiet = false;
    emit changed();
}

void FineTunePanel::resetToDefaults()
{
    m_quiet = true;
    const headroom::FineTune d;
    setMethod(Method::Full);
    m_rank->setValue(8);
    m_alpha->setValue(8);
    m_dropout->setValue(0);
    m_targets->clear();
    selectData(m_adapterDtype, QStringLiteral("fp32"));
    m_dora->setChecked(false);
    m_doubleQuant->setChecked(d.doubleQuant);
    selectData(m_computeDtype, qs(d.computeDtype));
    m_kbitPrep->setChecked(d.kbitPrep);
    m_layerCheckpoint->setChecked(d.layerCheckpoint);
    updateEnabled();
    m_quiet = false;
}

void FineTunePanel::applyFrameworkSwitches(const headroom::FineTune& f, bool doraAllowed)
{
    m_quiet = true;
    m_doraAllowed = doraAllowed;
    if (!doraAllowed && method() == Method::IA3)
        setMethod(Method::LoRA);
    setItemEnabled(m_method, m_method->findData(static_cast<int>(Method::IA3)), doraAllowed);
    m_layerCheckpoint->setChecked(f.layerCheckpoint);
    m_kbitPrep->setChecked(f.kbitPrep);
    m_doubleQuant->setChecked(f.doubleQuant);
    selectData(m_adapterDtype, qs(f.lora.dtype));
    updateEnabled();
    m_quiet = false;
    emit changed();
}

void FineTunePanel::applyQLoraPaper()
{
    // Dettmers et al. 2023 (QLoRA), section 4, as the CLI's --recipe qlora-paper: NF4 + double
    // quantization, bf16 compute, r=64, alpha=16, dropout 0.1, every linear layer, gradient checkpointing,
    // paged 32-bit AdamW.
    m_quiet = true;
    setMethod(Method::QLoRA);
    selectData(m_quant, static_cast<int>(headroom::Quant::NF4));
    m_doubleQuant->setChecked(true);
    selectData(m_computeDtype, QStringLiteral("bf16"));
    m_kbitPrep->setChecked(true);
    m_rank->setValue(64);
    m_alpha->setValue(16);
    m_dropout->setValue(0.1);
    m_targets->setText(QStringLiteral("all-linear"));
    selectData(m_adapterDtype, QStringLiteral("fp32")); // PEFT's default, as the CLI recipe
    m_layerCheckpoint->setChecked(true);
    m_quiet = false;
    emit optimizerRequested(headroom::Optimizer::PagedAdamW);
    // qlora.py's --bf16: TrainingArguments(bf16=True), autocast to the compute dtype.
    emit precisionRequested(headroom::DtypePolicy::AmpBF16);
    emit changed();
}

void FineTunePanel::saveSettings(QSettings& s) const
{
    s.beginGroup(QStringLiteral("finetune"));
    s.setValue(QStringLiteral("method"), static_cast<int>(method()));
    s.setValue(QStringLiteral("rank"), m_rank->value());
    s.setValue(QStringLiteral("alpha"), m_alpha->value());
    s.setValue(QStringLiteral("dropout"), m_dropout->value());
    s.setValue(QStringLiteral("targets"), m_targets->text());
    s.setValue(QStringLiteral("adapterDtype"), m_adapterDtype->currentData().toString());
    s.setValue(QStringLiteral("dora"), m_dora->isChecked());
    s.setValue(QStringLiteral("quant"),
               qs(headroom::toString(static_cast<headroom::Quant>(m_quant->currentData().toInt()))));
    s.setValue(QStringLiteral("doubleQuant"), m_doubleQuant->isChecked());
    s.setValue(QStringLiteral("computeDtype"), m_computeDtype->currentData().toString());
    s.setValue(QStringLiteral("kbitPrep"), m_kbitPrep->isChecked());
    s.setValue(QStringLiteral("layerCheckpoint"), m_layerCheckpoint->isChecked());
    s.endGroup();
}

void FineTunePanel::restoreSettings(QSettings& s)
{
    m_quiet = true;
    s.beginGroup(QStringLiteral("finetune"));
    const int m = s.value(QStringLiteral("method"), 0).toInt();
    if (m >= 0 && m <= static_cast<int>(Method::IA3))
        setMethod(static_cast<Method>(m));
    m_rank->setValue(s.value(QStringLiteral("rank"), 8).toInt());
    m_alpha->setValue(s.value(QStringLiteral("alpha"), 8.0).toDouble());
    m_dropout->setValue(s.value(QStringLiteral("dropout"), 0.0).toDouble());
    m_targets->setText(s.value(QStringLiteral("targets")).toString());
    selectData(m_adapterDtype, s.value(QStringLiteral("adapterDtype"), QStringLiteral("fp32")));
    m_dora->setChecked(s.value(QStringLiteral("dora"), false).toBool());
    if (auto q = headroom::parseQuant(s.value(QStringLiteral("quant")).toString().toStdString());
        q && *q != headroom::Quant::None)
        selectData(m_quant, static_cast<int>(*q));
    m_doubleQuant->setChecked(s.value(QStringLiteral("doubleQuant"), false).toBool());
    selectData(m_computeDtype, s.value(QStringLiteral("computeDtype"), QStringLiteral("bf16")));
    m_kbitPrep->setChecked(s.value(QStringLiteral("kbitPrep"), true).toBool());
    m_layerCheckpoint->setChecked(s.value(QStringLiteral("layerCheckpoint"), false).toBool());
    s.endGroup();
    updateEnabled();
    m_quiet = false;
}

} // namespace gui
