#include "controlspanel.h"

#include "finetunepanel.h"
#include "logslider.h"

#include "headroom/hardware/gpus.h"
#include "headroom/import/hfconfig.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCryptographicHash>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace gui {

namespace {
constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
constexpr int64_t MiB = int64_t{1} << 20;

bool isZero(headroom::Strategy s)
{
    using S = headroom::Strategy;
    return s == S::ZeRO1 || s == S::ZeRO2 || s == S::ZeRO3 || s == S::FSDP;
}

template <typename E> void addEnum(QComboBox* box, E value, const QString& text)
{
    box->addItem(text, static_cast<int>(value));
}

template <typename E> E enumOf(const QComboBox* box) { return static_cast<E>(box->currentData().toInt()); }

void selectData(QComboBox* box, const QVariant& data)
{
    const int i = box->findData(data);
    if (i >= 0)
        box->setCurrentIndex(i);
}
} // namespace

ControlsPanel::ControlsPanel(QWidget* parent)
    : QWidget(parent), m_dtype(new QComboBox(this)), m_optimizer(new QComboBox(this)), m_loss(new QComboBox(this)),
      m_checkpoint(new QSpinBox(this)), m_bestCheckpoint(new QLabel(this)),
      m_useBest(new QPushButton(tr("Use best"), this)), m_accumulate(new QSpinBox(this)),
      m_inplace(new QCheckBox(tr("Inplace activations"), this)),
      m_offloadActivations(new QCheckBox(tr("Offload activations to the host"), this)), m_gpu(new QComboBox(this)),
      m_capacity(new QDoubleSpinBox(this)), m_gpus(new QSpinBox(this)), m_strategy(new QComboBox(this)),
      m_gpu0Batch(new QSpinBox(this)), m_offload(new QCheckBox(tr("CPU offload"), this)),
      m_allocator(new QComboBox(this)), m_margin(new QSpinBox(this)), m_units(new QComboBox(this)),
      m_attention(new QComboBox(this)), m_framework(new QComboBox(this)), m_loop(new QComboBox(this)),
      m_oldLogits(new QCheckBox(tr("transformers < 4.46 (fp32 logits)"), this)), m_finetune(new FineTunePanel(this))
{
    layoutControls();
    addChoices();
    describeControls();
    connectControls();
    updateGpuWidgets();
    updateStrategyWidgets();
}

// Sizes, training, fine-tuning and target, top to bottom.
void ControlsPanel::layoutControls()
{
    auto* layout = new QVBoxLayout(this);
    auto* symbols = new QGroupBox(tr("Sizes"), this);
    m_sizes = symbols;
    m_symbolsForm = new QFormLayout(symbols);
    layout->addWidget(symbols);

    auto* training = new QGroupBox(tr("Training"), this);
    m_training = training;
    auto* form = new QFormLayout(training);
    form->addRow(tr("Framework:"), m_framework);
    form->addRow(tr("Precision:"), m_dtype);
    form->addRow(tr("Optimizer:"), m_optimizer);
    form->addRow(tr("Loss:"), m_loss);
    form->addRow(tr("Training loop:"), m_loop);
    form->addRow(QString(), m_oldLogits);
    auto* checkpointRow = new QHBoxLayout;
    m_checkpointRow = checkpointRow;
    checkpointRow->addWidget(m_checkpoint);
    checkpointRow->addWidget(m_bestCheckpoint, 1);
    checkpointRow->addWidget(m_useBest);
    form->addRow(tr("Checkpoint segments:"), checkpointRow);
    form->addRow(tr("Gradient accumulation:"), m_accumulate);
    form->addRow(tr("Attention:"), m_attention);
    form->addRow(QString(), m_inplace);
    form->addRow(QString(), m_offloadActivations);
    layout->addWidget(training);
    layout->addWidget(m_finetune);

    auto* target = new QGroupBox(tr("Target"), this);
    auto* targetForm = new QFormLayout(target);
    m_targetForm = targetForm;
    targetForm->addRow(tr("GPU:"), m_gpu);
    targetForm->addRow(tr("Capacity:"), m_capacity);
    // Count and strategy share a row, and so do the two strategy options (one applies to balanced
    // DataParallel, the other to ZeRO/FSDP), so the panel fits beside the model info without scrolling.
    auto* gpusRow = new QHBoxLayout;
    gpusRow->addWidget(m_gpus);
    gpusRow->addWidget(m_strategy, 1);
    targetForm->addRow(tr("GPUs:"), gpusRow);
    auto* strategyRow = new QHBoxLayout;
    strategyRow->addWidget(m_gpu0Batch);
    strategyRow->addWidget(m_offload, 1);
    targetForm->addRow(tr("GPU 0 batch:"), strategyRow);
    targetForm->addRow(tr("Allocator:"), m_allocator);
    targetForm->addRow(tr("Safety margin:"), m_margin);
    targetForm->addRow(tr("Units:"), m_units);
    layout->addWidget(target);
    layout->addStretch(1);
}

// Ranges, and tooltips that say what a control changes in the accounting, in the user's words.
void ControlsPanel::describeControls()
{
    m_dtype->setToolTip(tr(
        "Precision policy. Pure FP16/BF16: everything in 2 bytes. AMP (torch.autocast): FP32 "
        "weights, gradients and optimizer, 16-bit matmul/conv outputs. Mixed: 16-bit weights plus FP32 master copies."));
    m_optimizer->setToolTip(
        tr("Optimizer states per trainable parameter: SGD none, momentum 4 bytes, Adam/AdamW 8 bytes "
           "(two FP32 moments), 8-bit Adam 2 bytes. Paged AdamW (bitsandbytes) keeps the state of large tensors in "
           "unified memory that can move to the host: shown beside the peak, not in it."));
    m_loss->setToolTip(tr("Loss on the first output: cross-entropy keeps the log-probabilities for backward (large for "
                          "language models); None when the graph computes its own loss. Chunked: torchtune's "
                          "CEWithChunkedOutputLoss. Fused linear: Liger's kernel, which never makes the logits."));
    m_gpu->setObjectName(QStringLiteral("gpuCombo"));
    m_dtype->setObjectName(QStringLiteral("dtypeCombo"));
    m_optimizer->setObjectName(QStringLiteral("optimizerCombo"));
    m_framework->setObjectName(QStringLiteral("frameworkCombo"));
    m_loss->setObjectName(QStringLiteral("lossCombo"));
    m_offloadActivations->setObjectName(QStringLiteral("offloadActivationsCheck"));
    m_loop->setObjectName(QStringLiteral("loopCombo"));
    m_oldLogits->setObjectName(QStringLiteral("oldLogitsCheck"));
    m_loop->setToolTip(tr("What the training loop holds while backward runs. Hugging Face Trainer returns the loss "
                          "alone, so the model's output goes before backward. A custom loop (output = model(...); "
                          "loss.backward(); optimizer.step()) keeps the output's logits to the end of the step."));
    m_oldLogits->setToolTip(tr("Before transformers 4.46 a causal language model trained with labels returned its "
                               "logits in fp32 and took the loss on a second, shifted fp32 copy: at a large "
                               "vocabulary that is gigabytes more at the loss, and more still when the loop keeps "
                               "the output."));
    m_gpu->setToolTip(tr("The GPU the verdict is for. Every preset's capacity is the device total PyTorch reports "
                         "(torch.cuda.mem_get_info, the \"total capacity\" of its out-of-memory message), a few "
                         "hundred MiB below nvidia-smi's; the CUDA context comes off it."));
    m_capacity->setToolTip(tr("Memory of a GPU not in the list, in GiB."));
    m_units->setToolTip(
        tr("IEC units (1 GiB = 1024³ bytes, what PyTorch and nvidia-smi show) or SI units (1 GB = 10⁹ bytes)."));
    for (QWidget* w :
         std::initializer_list<QWidget*>{m_dtype, m_optimizer, m_loss, m_loop, m_oldLogits, m_gpu, m_capacity, m_units})
        w->setWhatsThis(w->toolTip());
    m_checkpoint->setRange(0, 64);
    m_checkpoint->setSpecialValueText(tr("off"));
    m_checkpoint->setToolTip(
        tr("torch.utils.checkpoint_sequential segments: fewer saved activations, more recomputation."));
    m_accumulate->setRange(1, 4096);
    m_accumulate->setToolTip(tr("Micro-batches per optimizer step: activations at batch / steps, gradients persist."));
    m_inplace->setToolTip(
        tr("ReLU(inplace=True) and friends: changes the transient peak, not what is saved for backward."));
    m_offloadActivations->setToolTip(
        tr("torchtune's enable_activation_offloading: each checkpointed layer's input goes to pinned host memory "
           "after its forward and comes back when the layer is recomputed. Needs checkpointing, as torchtune's "
           "recipes do; the host memory is shown beside the peak, not in it."));
    m_capacity->setRange(0.25, 4096);
    m_capacity->setDecimals(2);
    m_capacity->setSuffix(tr(" GiB"));
    m_gpus->setRange(1, 64);
    m_gpus->setToolTip(tr("Number of GPUs the global batch is spread over."));
    m_strategy->setToolTip(tr("How the GPUs share the work; the verdict is for the most loaded GPU."));
    m_strategy->setAccessibleName(tr("Strategy"));
    m_gpu0Batch->setRange(0, 1 << 20);
    m_gpu0Batch->setSpecialValueText(tr("auto"));
    m_gpu0Batch->setToolTip(
        tr("Balanced DataParallel: samples GPU 0 processes (auto: the batch that evens the GPUs)."));
    m_offload->setToolTip(tr("ZeRO and FSDP: keep optimizer states (and ZeRO-3/FSDP parameters) in host memory."));
    m_attention->setToolTip(
        tr("How attention runs, as Hugging Face's attn_implementation names it. SDPA: PyTorch 2's "
           "scaled_dot_product_attention picks flash, memory-efficient or math by dtype, head size and mask; only "
           "math keeps the [batch, heads, seq, seq] matrix. Eager: written out with matmul and softmax. Flash "
           "Attention 2: 16-bit only, casts fp32 inputs. Flex: flex_attention with a block mask."));
    m_framework->setToolTip(
        tr("Sets the switches the framework's recipes use; change any of them afterwards. Hugging Face: none. "
           "torchtune: bf16, AdamW, chunked cross-entropy, a checkpoint per layer, bf16 adapters, NF4 with "
           "quantized scales. litgpt: bf16, AdamW (paged with 4-bit weights), 16-bit chunked cross-entropy, no "
           "checkpointing, bf16 adapters."));
    m_allocator->setToolTip(
        tr("What must fit: the exact allocated peak, or what PyTorch's caching allocator reserves."));
    m_margin->setRange(0, 1 << 20);
    m_margin->setSingleStep(256);
    m_margin->setSuffix(tr(" MiB"));
    m_margin->setToolTip(tr("Memory kept free on each GPU (other processes, fragmentation you expect)."));
    m_useBest->setEnabled(false);
    setBestCheckpoint(0);
}

// Every control reports a change; the GPU and strategy controls first update the ones they govern.
void ControlsPanel::connectControls()
{
    for (QComboBox* box : {m_dtype, m_optimizer, m_loss, m_loop, m_allocator, m_attention})
        connect(box, &QComboBox::currentIndexChanged, this, &ControlsPanel::changed);
    connect(m_oldLogits, &QCheckBox::toggled, this, &ControlsPanel::changed);
    connect(m_gpus, &QSpinBox::valueChanged, this, [this] {
        updateStrategyWidgets();
        changed();
    });
    connect(m_strategy, &QComboBox::currentIndexChanged, this, [this] {
        updateStrategyWidgets();
        changed();
    });
    connect(m_gpu0Batch, &QSpinBox::valueChanged, this, &ControlsPanel::changed);
    connect(m_offload, &QCheckBox::toggled, this, &ControlsPanel::changed);
    connect(m_margin, &QSpinBox::valueChanged, this, &ControlsPanel::changed);
    connect(m_checkpoint, &QSpinBox::valueChanged, this, &ControlsPanel::changed);
    connect(m_accumulate, &QSpinBox::valueChanged, this, &ControlsPanel::changed);
    connect(m_inplace, &QCheckBox::toggled, this, &ControlsPanel::changed);
    connect(m_offloadActivations, &QCheckBox::toggled, this, &ControlsPanel::changed);
    connect(m_capacity, &QDoubleSpinBox::valueChanged, this, &ControlsPanel::changed);
    connect(m_gpu, &QComboBox::currentIndexChanged, this, [this] {
        updateGpuWidgets();
        changed();
    });
    connect(m_finetune, &FineTunePanel::changed, this, [this] {
        // Hugging Face per-layer checkpointing replaces checkpoint_sequential (the CLI refuses both).
        m_checkpoint->setEnabled(!m_finetune->fineTune().layerCheckpoint);
        changed();
    });
    connect(m_framework, &QComboBox::currentIndexChanged, this, [this] {
        if (m_restoring)
            return;
        // the preset written into the controls, which stay the user's to change (the CLI: flags win)
        headroom::Config c = config();
        headroom::applyFramework(enumOf<headroom::Framework>(m_framework), c);
        const QSignalBlocker b1(m_dtype), b2(m_optimizer), b3(m_loss), b4(m_offloadActivations);
        m_offloadActivations->setChecked(c.offloadActivations);
        selectData(m_dtype, static_cast<int>(c.dtype));
        selectData(m_optimizer, static_cast<int>(c.optimizer));
        selectData(m_loss, static_cast<int>(c.loss));
        // its change signal recomputes; lit-gpt's model code has no DoRA
        m_finetune->applyFrameworkSwitches(c.finetune, c.modelCode != headroom::ModelCode::Litgpt);
    });
    connect(m_finetune, &FineTunePanel::optimizerRequested, this, [this](headroom::Optimizer o) {
        const QSignalBlocker block(m_optimizer); // the recipe's own change signal follows
        selectData(m_optimizer, static_cast<int>(o));
    });
    connect(m_finetune, &FineTunePanel::precisionRequested, this, [this](headroom::DtypePolicy d) {
        const QSignalBlocker block(m_dtype);
        selectData(m_dtype, static_cast<int>(d));
    });
    connect(m_useBest, &QPushButton::clicked, this, [this] { m_checkpoint->setValue(m_best); });
    connect(m_units, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_restoring)
            saveSettings();
        emit unitsChanged(units());
    });
}

void ControlsPanel::addChoices()
{
    using namespace headroom;
    for (DtypePolicy d :
         {DtypePolicy::FP32, DtypePolicy::FP16, DtypePolicy::BF16, DtypePolicy::AmpFP16, DtypePolicy::AmpBF16,
          DtypePolicy::MixedFP16, DtypePolicy::MixedBF16, DtypePolicy::INT8, DtypePolicy::INT4})
        addEnum(m_dtype, d, dtypeName(d));
    for (Optimizer o : {Optimizer::SGD, Optimizer::Momentum, Optimizer::Adam, Optimizer::AdamW, Optimizer::Adagrad,
                        Optimizer::RMSprop, Optimizer::Adadelta, Optimizer::Lion, Optimizer::LAMB, Optimizer::Adam8bit,
                        Optimizer::Adafactor, Optimizer::PagedAdamW, Optimizer::PagedAdamW8bit})
        addEnum(m_optimizer, o, optimizerName(o));
    addEnum(m_loss, Loss::CrossEntropy, tr("Cross-entropy"));
    addEnum(m_loss, Loss::MSE, tr("Mean squared error"));
    addEnum(m_loss, Loss::None, tr("None (the graph computes it)"));
    addEnum(m_loss, Loss::ChunkedCE, tr("Chunked cross-entropy (torchtune)"));
    addEnum(m_loss, Loss::FusedLinearCE, tr("Fused linear cross-entropy (Liger)"));
    addEnum(m_loss, Loss::ChunkedCE16, tr("Chunked cross-entropy, 16-bit (litgpt)"));
    m_loop->addItem(tr("HF Trainer (drops outputs)"), false);
    m_loop->addItem(tr("Custom (keeps outputs)"), true);
    selectData(m_optimizer, static_cast<int>(Optimizer::Adam));
    for (const GpuSpec& g : gpuPresets())
        m_gpu->addItem(tr("%1 (%2)").arg(gpuDisplayName(g.name), bytesText(g.capacity, Units::IEC)), qs(g.name));
    m_gpu->addItem(tr("Custom capacity"), QString());
    const int rtx4090 = m_gpu->findData(QStringLiteral("GeForce RTX 4090 24 GB"));
    m_gpu->setCurrentIndex(rtx4090 >= 0 ? rtx4090 : 0);
    for (Strategy st : {Strategy::DDP, Strategy::DP, Strategy::BalancedDP, Strategy::ZeRO1, Strategy::ZeRO2,
                        Strategy::ZeRO3, Strategy::FSDP, Strategy::FSDPNoShard})
        addEnum(m_strategy, st, strategyName(st));
    for (AllocatorMode a : {AllocatorMode::Exact, AllocatorMode::Caching, AllocatorMode::Expandable})
        addEnum(m_allocator, a, allocatorName(a));
    selectData(m_allocator, static_cast<int>(Config{}.allocator));
    addEnum(m_attention, Attention::SDPA, tr("SDPA (fused kernels)"));
    addEnum(m_attention, Attention::Eager, tr("Eager (matmul + softmax)"));
    addEnum(m_attention, Attention::Flash2, tr("Flash Attention 2"));
    addEnum(m_attention, Attention::Flex, tr("Flex attention"));
    selectData(m_attention, static_cast<int>(Config{}.attention));
    addEnum(m_framework, Framework::HF, tr("Hugging Face Trainer / PEFT"));
    addEnum(m_framework, Framework::Torchtune, tr("torchtune"));
    addEnum(m_framework, Framework::Litgpt, tr("litgpt"));
    m_units->addItem(tr("IEC (KiB, MiB, GiB)"), static_cast<int>(Units::IEC));
    m_units->addItem(tr("SI (kB, MB, GB)"), static_cast<int>(Units::SI));
}

void ControlsPanel::updateGpuWidgets()
{
    const QString name = m_gpu->currentData().toString();
    const bool custom = name.isEmpty();
    m_capacity->setEnabled(custom);
    if (!custom) {
        if (const auto g = headroom::findGpu(name.toStdString())) {
            const QSignalBlocker block(m_capacity);
            m_capacity->setValue(static_cast<double>(g->capacity) / GiB);
        }
    }
}

void ControlsPanel::updateStrategyWidgets()
{
    const bool multi = m_gpus->value() > 1;
    const auto strategy = enumOf<headroom::Strategy>(m_strategy);
    m_strategy->setEnabled(multi);
    m_gpu0Batch->setEnabled(multi && strategy == headroom::Strategy::BalancedDP);
    m_offload->setEnabled(multi && isZero(strategy));
}

QString ControlsPanel::symbolMeaning(const headroom::Symbol& s)
{
    // From the symbol's name and the input axis it first appears on (Symbol::origin, "input_ids[1]").
    const QString name = qs(s.name).toLower();
    const QString origin = qs(s.origin).toLower();
    auto has = [&](std::initializer_list<const char*> words) {
        return std::any_of(words.begin(), words.end(), [&](const char* w) { return name.contains(QLatin1String(w)); });
    };
    if (has({"seq", "len", "token", "time", "context", "past"}) ||
        (origin.contains(QLatin1String("ids")) && origin.endsWith(QLatin1String("[1]"))) ||
        (origin.contains(QLatin1String("mask")) && origin.endsWith(QLatin1String("[1]"))))
        return tr("Sequence length");
    if (has({"height"}) || name == QLatin1String("h"))
        return tr("Image height");
    if (has({"width"}) || name == QLatin1String("w"))
        return tr("Image width");
    if (has({"channel"}))
        return tr("Channels");
    return qs(s.name);
}

QString ControlsPanel::modelKey(const headroom::Model& model)
{
    return model.info.sha256.empty() ? QFile::decodeName(model.info.file.c_str()) : qs(model.info.sha256);
}

void ControlsPanel::resetModelSettings()
{
    const bool restoring = m_restoring;
    m_restoring = true;
    const headroom::Config d;
    selectData(m_dtype, static_cast<int>(d.dtype));
    selectData(m_optimizer, static_cast<int>(d.optimizer));
    selectData(m_loss, static_cast<int>(d.loss));
    selectData(m_attention, static_cast<int>(d.attention));
    selectData(m_framework, static_cast<int>(d.framework));
    m_checkpoint->setValue(0);
    m_accumulate->setValue(1);
    m_inplace->setChecked(false);
    m_offloadActivations->setChecked(false);
    selectData(m_loop, d.loopKeepsOutput);
    m_oldLogits->setChecked(d.hfFp32Logits);
    m_finetune->resetToDefaults();
    m_checkpoint->setEnabled(true);
    m_restoring = restoring;
}

void ControlsPanel::setModel(const headroom::Model& model)
{
    QSettings settings;
    const QString thisModel = modelKey(model);
    // The model shown until now keeps what was set on it, for when it is opened again (the same model, reloaded
    // with new adapters, keeps it too).
    if (m_hasModel)
        saveModelSettings(settings);
    m_hasModel = true;
    m_modelKey = thisModel;
    m_hfConfig = model.info.producer.starts_with(headroom::kHfConfigProducer);
    settings.beginGroup(modelGroup());
    const bool known = settings.contains(QStringLiteral("task"));
    if (const auto t = headroom::parseTask(settings.value(QStringLiteral("task")).toString().toStdString()))
        m_task = *t;
    if (headroom::routeTask(m_task, m_hfConfig).engine == headroom::TaskEngine::None)
        m_task = headroom::Task::Train; // a graph cannot be served
    {
        const std::string& type = model.info.modelType;
        QStringList lora, ia3;
        for (const std::string& t : headroom::peftDefaultTargets(type))
            lora << qs(t);
        for (const std::string& t : headroom::peftIa3Defaults(type).targets)
            ia3 << qs(t);
        m_finetune->setModelDefaults(qs(type), lora, ia3);
    }
    loadModelSettings(settings);
    while (m_symbolsForm->rowCount() > 0)
        m_symbolsForm->removeRow(0);
    m_symbolSliders.clear();
    m_symbolNames.clear();
    m_batch = nullptr;
    m_varies = nullptr; // removeRow deleted it
    m_varySymbol = -1;
    const bool sameModel = known;
    for (size_t i = 0; i < model.symbols.size(); ++i) {
        const headroom::Symbol& s = model.symbols[i];
        const bool isBatch = static_cast<int>(i) == model.batchSymbol;
        const bool isSequence = !isBatch && symbolMeaning(s) == tr("Sequence length");
        auto* slider = new LogSlider(this, isBatch      ? LogSlider::Snap::PowerOfTwo
                                           : isSequence ? LogSlider::Snap::Multiple128
                                                        : LogSlider::Snap::Quarter);
        slider->setObjectName(isBatch ? QStringLiteral("batchSlider") : QStringLiteral("symbol_") + qs(s.name));
        slider->setRange(1, std::max<int>(65536, static_cast<int>(std::min<int64_t>(s.value, 1 << 30))));
        const QString key = QStringLiteral("symbols/") + qs(s.name);
        slider->setValue(sameModel ? settings.value(key, QVariant::fromValue<qlonglong>(s.value)).toInt()
                                   : static_cast<int>(std::min<int64_t>(s.value, 1 << 30)));
        // Name the size for what it is ("sequence length"), keep the file's symbol name as a detail.
        const QString meaning = isBatch ? tr("Batch size") : symbolMeaning(s);
        slider->setToolTip(
            isBatch
                ? tr("Samples per step. Drag it to see where the model stops fitting. (Input size '%1' in the file.)")
                      .arg(qs(s.name))
                : tr("%1 of the model's input. Drag it to see how memory grows with it. (Input size '%2' in the file.)")
                      .arg(meaning, qs(s.name)));
        slider->setWhatsThis(slider->toolTip());
        const QString label = meaning.isEmpty() ? tr("%1:").arg(qs(s.name)) : tr("%1:").arg(meaning);
        m_symbolsForm->addRow(label, slider);
        connect(slider, &LogSlider::valueChanged, this, &ControlsPanel::changed);
        m_symbolSliders.push_back(slider);
        m_symbolNames.push_back(s.name);
        if (isBatch)
            m_batch = slider;
        if (isSequence && !m_varies)
            addVariesBox(static_cast<int>(i),
                         sameModel && settings.value(QStringLiteral("varies/") + qs(s.name)).toBool());
    }
    if (model.symbols.empty())
        m_symbolsForm->addRow(new QLabel(tr("This model has fixed input sizes."), this));
    settings.endGroup();
    showTaskControls();
}

// Hugging Face's DataCollatorWithPadding and most fine-tuning loops pad each batch to its longest sample, so the
// length changes from step to step and the caching allocator keeps the segments every length made: the reserved
// figure becomes the highest any of those steps makes (headroom::Config::varySymbol, the CLI's --vary).
void ControlsPanel::addVariesBox(int symbol, bool checked)
{
    m_varySymbol = symbol;
    m_varies = new QCheckBox(tr("Padded batches: the length varies up to this"), this);
    m_varies->setObjectName(QStringLiteral("variesCheck"));
    m_varies->setChecked(checked);
    m_varies->setToolTip(tr("Each batch is padded to its longest sample, so the sequence length changes from step "
                            "to step up to the value above. The allocator keeps the memory every length reserved: "
                            "the reserved peak is the highest of those steps. The verdict stays the longest "
                            "step's, since the allocator gives its cache back before it runs out."));
    m_varies->setWhatsThis(m_varies->toolTip());
    m_symbolsForm->addRow(QString(), m_varies);
    connect(m_varies, &QCheckBox::toggled, this, &ControlsPanel::changed);
}

void ControlsPanel::setSymbolMaxima(const std::vector<int64_t>& maxima)
{
    for (size_t i = 0; i < m_symbolSliders.size(); ++i)
        m_symbolSliders[i]->setMaxMark(i < maxima.size() ? maxima[i] : 0);
}

LogSlider* ControlsPanel::symbolSlider(int symbol) const
{
    return symbol >= 0 && static_cast<size_t>(symbol) < m_symbolSliders.size()
               ? m_symbolSliders[static_cast<size_t>(symbol)]
               : nullptr;
}

headroom::Config ControlsPanel::config() const
{
    headroom::Config c;
    for (LogSlider* s : m_symbolSliders)
        c.symbols.push_back(s->value());
    // The task decides the step: Train and Fine-tune train, Generate on a graph is its forward pass (a config's
    // generate() and serving plans are ServingState's).
    c.mode = m_task == headroom::Task::Train || m_task == headroom::Task::FineTune ? headroom::Mode::Train
                                                                                   : headroom::Mode::Infer;
    c.dtype = enumOf<headroom::DtypePolicy>(m_dtype);
    c.optimizer = enumOf<headroom::Optimizer>(m_optimizer);
    c.loss = enumOf<headroom::Loss>(m_loss);
    c.framework = enumOf<headroom::Framework>(m_framework);
    c.modelCode = headroom::presetModelCode(c.framework);
    c.bnbKeepsMatmulInput = headroom::presetBnbKeepsMatmulInput(c.framework);
    // Fabric's FSDP (use_orig_params, no_backward_sync) with the litgpt framework; they act under FSDP only
    c.fsdpOrigParams = headroom::presetFsdpOrigParams(c.framework);
    c.fsdpNoSync = headroom::presetFsdpNoSync(c.framework);
    // Only the Fine-tune task has adapters, quantized bases and Hugging Face's per-layer checkpointing.
    c.finetune = m_task == headroom::Task::FineTune ? m_finetune->fineTune() : headroom::FineTune{};
    c.checkpointSegments = c.finetune.layerCheckpoint ? 0 : m_checkpoint->value();
    c.accumulate = m_accumulate->value();
    c.inplace = m_inplace->isChecked();
    c.offloadActivations = m_offloadActivations->isChecked();
    c.loopKeepsOutput = m_loop->currentData().toBool();
    c.hfFp32Logits = m_oldLogits->isChecked();
    c.freeze = m_freeze;
    if (c.finetune.lora.active()) // only the adapters train, as the CLI's --lora and --ia3
        for (const std::string& p : headroom::adapterFreezePatterns(c.finetune.lora))
            c.freeze.push_back(p);
    const QString gpu = m_gpu->currentData().toString();
    const auto preset = gpu.isEmpty() ? std::nullopt : headroom::findGpu(gpu.toStdString());
    c.gpu = preset ? *preset : headroom::customGpu(static_cast<int64_t>(std::llround(m_capacity->value() * GiB)));
    // Only what applies reaches the engine (the CLI rejects --gpu0-batch without balanced-dp), so a
    // disabled control never changes a figure.
    c.gpus = m_gpus->value();
    c.strategy = c.gpus > 1 ? enumOf<headroom::Strategy>(m_strategy) : headroom::Strategy::Single;
    c.gpu0Batch = c.strategy == headroom::Strategy::BalancedDP && m_gpu0Batch->value() > 0 ? m_gpu0Batch->value() : -1;
    c.offload = isZero(c.strategy) && m_offload->isChecked();
    c.allocator = enumOf<headroom::AllocatorMode>(m_allocator);
    c.attention = enumOf<headroom::Attention>(m_attention);
    c.marginBytes = int64_t{m_margin->value()} * MiB;
    if (m_varies && m_varies->isChecked())
        c.varySymbol = m_varySymbol;
    return c;
}

headroom::Units ControlsPanel::units() const { return enumOf<headroom::Units>(m_units); }

void ControlsPanel::setBestCheckpoint(int k)
{
    m_best = k;
    m_bestCheckpoint->setText(k > 0 ? tr("best: %1").arg(k) : QString());
    m_useBest->setEnabled(k > 0 && k != m_checkpoint->value());
}

void ControlsPanel::changed()
{
    m_useBest->setEnabled(m_best > 0 && m_best != m_checkpoint->value());
    if (m_restoring)
        return;
    emit configChanged();
}

QString ControlsPanel::modelGroup() const
{
    // A SHA-256 is a safe group name as it is; a path (a model without one) is hashed, since '/' nests groups.
    const bool hex = m_modelKey.size() == 64 && !m_modelKey.contains(QLatin1Char('/'));
    return QStringLiteral("models/") +
           (hex ? m_modelKey
                : QString::fromLatin1(
                      QCryptographicHash::hash(m_modelKey.toUtf8(), QCryptographicHash::Sha256).toHex()));
}

// The shown model's settings: the task last shown, each task's switches, the sizes (shared by the tasks).
void ControlsPanel::saveModelSettings(QSettings& s) const
{
    s.beginGroup(modelGroup());
    s.setValue(QStringLiteral("task"), qs(headroom::toString(m_task)));
    s.beginGroup(qs(headroom::toString(m_task)));
    s.setValue(QStringLiteral("dtype"), qs(headroom::toString(enumOf<headroom::DtypePolicy>(m_dtype))));
    s.setValue(QStringLiteral("optimizer"), qs(headroom::toString(enumOf<headroom::Optimizer>(m_optimizer))));
    s.setValue(QStringLiteral("loss"), qs(headroom::toString(enumOf<headroom::Loss>(m_loss))));
    s.setValue(QStringLiteral("checkpoint"), m_checkpoint->value());
    s.setValue(QStringLiteral("accumulate"), m_accumulate->value());
    s.setValue(QStringLiteral("inplace"), m_inplace->isChecked());
    s.setValue(QStringLiteral("offloadActivations"), m_offloadActivations->isChecked());
    s.setValue(QStringLiteral("loopKeepsOutput"), m_loop->currentData().toBool());
    s.setValue(QStringLiteral("transformersFp32Logits"), m_oldLogits->isChecked());
    s.setValue(QStringLiteral("attention"), qs(headroom::toString(enumOf<headroom::Attention>(m_attention))));
    s.setValue(QStringLiteral("framework"), qs(headroom::toString(enumOf<headroom::Framework>(m_framework))));
    m_finetune->saveSettings(s);
    s.endGroup();
    for (size_t i = 0; i < m_symbolSliders.size(); ++i)
        s.setValue(QStringLiteral("symbols/") + qs(m_symbolNames[i]), m_symbolSliders[i]->value());
    if (m_varies)
        s.setValue(QStringLiteral("varies/") + qs(m_symbolNames[static_cast<size_t>(m_varySymbol)]),
                   m_varies->isChecked());
    s.endGroup();
}

// `s` is in the model's group: the task's switches as saved, or the defaults when this task was never set.
void ControlsPanel::loadModelSettings(QSettings& s)
{
    resetModelSettings();
    const QString task = qs(headroom::toString(m_task));
    if (!s.childGroups().contains(task))
        return;
    const bool restoring = m_restoring;
    m_restoring = true;
    s.beginGroup(task);
    auto text = [&](const char* key) { return s.value(QLatin1String(key)).toString().toStdString(); };
    if (auto v = headroom::parseFramework(text("framework")))
        selectData(m_framework, static_cast<int>(*v));
    if (auto v = headroom::parseDtype(text("dtype")))
        selectData(m_dtype, static_cast<int>(*v));
    if (auto v = headroom::parseOptimizer(text("optimizer")))
        selectData(m_optimizer, static_cast<int>(*v));
    if (auto v = headroom::parseLoss(text("loss")))
        selectData(m_loss, static_cast<int>(*v));
    if (auto v = headroom::parseAttention(text("attention")))
        selectData(m_attention, static_cast<int>(*v));
    m_checkpoint->setValue(s.value(QStringLiteral("checkpoint"), 0).toInt());
    m_accumulate->setValue(s.value(QStringLiteral("accumulate"), 1).toInt());
    m_inplace->setChecked(s.value(QStringLiteral("inplace"), false).toBool());
    m_offloadActivations->setChecked(s.value(QStringLiteral("offloadActivations"), false).toBool());
    selectData(m_loop, s.value(QStringLiteral("loopKeepsOutput"), false).toBool());
    m_oldLogits->setChecked(s.value(QStringLiteral("transformersFp32Logits"), false).toBool());
    m_finetune->restoreSettings(s);
    s.endGroup();
    m_restoring = restoring;
}

void ControlsPanel::setTask(headroom::Task task)
{
    if (task == m_task)
        return;
    QSettings settings;
    if (m_hasModel)
        saveModelSettings(settings);
    m_task = task;
    if (m_hasModel) {
        settings.beginGroup(modelGroup());
        loadModelSettings(settings);
        settings.endGroup();
    }
    showTaskControls();
    changed();
}

// Each task's controls only: training's switches for Train and Fine-tune, the fine-tuning methods for Fine-tune,
// precision and attention for a graph's forward pass; a served config's knobs are the Serving tab's (the whole
// panel hides then: MainWindow shows ServingPage's form in its place).
void ControlsPanel::showTaskControls()
{
    using headroom::Task;
    const bool training = m_task == Task::Train || m_task == Task::FineTune;
    const headroom::TaskEngine engine = headroom::routeTask(m_task, m_hfConfig).engine;
    m_training->setTitle(training ? tr("Training") : tr("Inference"));
    auto* form = static_cast<QFormLayout*>(m_training->layout());
    for (QWidget* w : std::initializer_list<QWidget*>{m_optimizer, m_loss, m_loop, m_oldLogits, m_accumulate,
                                                      m_offloadActivations, m_framework})
        form->setRowVisible(w, training);
    form->setRowVisible(m_checkpointRow, training);
    m_finetune->setVisible(m_task == Task::FineTune);
    m_checkpoint->setEnabled(m_task != Task::FineTune || !m_finetune->fineTune().layerCheckpoint);
    // A served config: the graph's sizes and the training GPU do not apply (the Serving form has its own GPU and
    // lengths); the units stay, they are how every figure reads.
    const bool graphTask = engine == headroom::TaskEngine::Training || engine == headroom::TaskEngine::Inference;
    m_sizes->setVisible(graphTask);
    m_training->setVisible(graphTask);
    for (int row = 0; row < m_targetForm->rowCount(); ++row)
        if (m_targetForm->itemAt(row, QFormLayout::FieldRole) &&
            m_targetForm->itemAt(row, QFormLayout::FieldRole)->widget() != m_units)
            m_targetForm->setRowVisible(row, graphTask);
}

void ControlsPanel::saveSettings() const
{
    QSettings s;
    s.beginGroup(QStringLiteral("config"));
    s.setValue(QStringLiteral("gpu"), m_gpu->currentData().toString());
    s.setValue(QStringLiteral("capacityGiB"), m_capacity->value());
    s.setValue(QStringLiteral("gpus"), m_gpus->value());
    s.setValue(QStringLiteral("strategy"), qs(headroom::toString(enumOf<headroom::Strategy>(m_strategy))));
    s.setValue(QStringLiteral("gpu0Batch"), m_gpu0Batch->value());
    s.setValue(QStringLiteral("offload"), m_offload->isChecked());
    s.setValue(QStringLiteral("allocator"), qs(headroom::toString(enumOf<headroom::AllocatorMode>(m_allocator))));
    s.setValue(QStringLiteral("marginMiB"), m_margin->value());
    s.setValue(QStringLiteral("units"), units() == headroom::Units::SI ? QStringLiteral("si") : QStringLiteral("iec"));
    s.setValue(QStringLiteral("modelKey"), m_modelKey);
    s.setValue(QStringLiteral("task"), qs(headroom::toString(m_task)));
    s.endGroup();
    if (m_hasModel)
        saveModelSettings(s);
}

// The machine's settings and the last task; a model's own come back when it is set (setModel).
void ControlsPanel::restoreSettings()
{
    m_restoring = true;
    QSettings s;
    s.beginGroup(QStringLiteral("config"));
    auto text = [&](const char* key) { return s.value(QLatin1String(key)).toString().toStdString(); };
    if (s.contains(QStringLiteral("gpu")))
        selectData(m_gpu, s.value(QStringLiteral("gpu")).toString());
    if (m_gpu->currentData().toString().isEmpty())
        m_capacity->setValue(s.value(QStringLiteral("capacityGiB"), 24.0).toDouble());
    m_gpus->setValue(s.value(QStringLiteral("gpus"), 1).toInt());
    if (auto v = headroom::parseStrategy(text("strategy")); v && *v != headroom::Strategy::Single)
        selectData(m_strategy, static_cast<int>(*v));
    m_gpu0Batch->setValue(s.value(QStringLiteral("gpu0Batch"), 0).toInt());
    m_offload->setChecked(s.value(QStringLiteral("offload"), false).toBool());
    if (auto v = headroom::parseAllocator(text("allocator")))
        selectData(m_allocator, static_cast<int>(*v));
    m_margin->setValue(s.value(QStringLiteral("marginMiB"), 0).toInt());
    if (auto v = headroom::parseTask(text("task")))
        m_task = *v;
    selectData(m_units, static_cast<int>(s.value(QStringLiteral("units")).toString() == QLatin1String("si")
                                             ? headroom::Units::SI
                                             : headroom::Units::IEC));
    s.endGroup();
    updateGpuWidgets();
    updateStrategyWidgets();
    m_restoring = false;
}

} // namespace gui
