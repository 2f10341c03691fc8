// The Serving mode's page (servingpage.h): controls in, ServingState's verdict, bar and legend out.
#include "servingpage.h"

#include "guiutil.h"
#include "logslider.h"
#include "servingbar.h"

#include "headroom/base/model_name.h"
#include "headroom/hardware/gpus.h"

#include <QComboBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

namespace gui {

using namespace headroom;

ServingPage::ServingPage(QWidget* parent) : QWidget(parent), m_state(new ServingState(this))
{
    setObjectName(QStringLiteral("servingPage"));
    createControls();
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_file);
    layout->addWidget(m_verdict);
    m_form = createForm();
    layout->addWidget(m_form);
    layout->addWidget(m_bar);
    layout->addWidget(m_legend);
    layout->addStretch(1);
    connectControls();
    showEngine();
    refresh();
}

void ServingPage::createControls()
{
    m_file = new QLabel(this);
    m_verdict = new QLabel(this);
    m_verdict->setObjectName(QStringLiteral("servingVerdict"));
    m_verdict->setWordWrap(true);
    QFont big = m_verdict->font();
    big.setPointSizeF(big.pointSizeF() * 1.25);
    big.setBold(true);
    m_verdict->setFont(big);
    m_engine = new QComboBox(this);
    m_engine->addItem(tr("vLLM %1").arg(qs(toString(kNewestVllm))), static_cast<int>(ServingEngine::Vllm));
    m_engine->addItem(tr("Hugging Face generate()"), static_cast<int>(ServingEngine::HfGenerate));
    m_gpu = new QComboBox(this);
    for (const GpuSpec& g : gpuPresets())
        m_gpu->addItem(qs(g.name));
    m_gpu->setCurrentText(qs(m_state->gpu().name));
    m_tp = new QComboBox(this);
    for (int tp : {1, 2, 4, 8})
        m_tp->addItem(QString::number(tp), tp);
    m_kvDtype = new QComboBox(this);
    m_kvDtype->addItem(tr("Model dtype (auto)"), static_cast<int>(KvCacheDtype::Auto));
    m_kvDtype->addItem(tr("fp8 (1 byte a value)"), static_cast<int>(KvCacheDtype::Fp8));
    m_cache = new QComboBox(this);
    m_cache->addItem(tr("Dynamic (grows each step)"), static_cast<int>(HfCacheKind::Dynamic));
    m_cache->addItem(tr("Static (preallocated)"), static_cast<int>(HfCacheKind::Static));
    m_context = new LogSlider(this);
    m_context->setObjectName(QStringLiteral("servingContext"));
    m_context->setRange(128, 1 << 21);
    m_longest = new QLabel(this);
    m_longest->setObjectName(QStringLiteral("servingLongest"));
    m_concurrency = new LogSlider(this);
    m_concurrency->setObjectName(QStringLiteral("servingConcurrency"));
    m_concurrency->setRange(1, 4096);
    m_concurrencyLabel = new QLabel(this);
    m_newTokens = new QSpinBox(this);
    m_newTokens->setRange(1, 1 << 20);
    m_newTokens->setValue(static_cast<int>(m_state->newTokens()));
    m_newTokens->setKeyboardTracking(false);
    m_bar = new ServingBar(this);
    m_legend = new QLabel(this);
    m_legend->setObjectName(QStringLiteral("servingLegend"));
    m_legend->setTextFormat(Qt::RichText);
    m_legend->setWordWrap(true);
}

QWidget* ServingPage::createForm()
{
    auto* form = new QWidget(this);
    auto* rows = new QFormLayout(form);
    // Labels above their fields: the form also stands in the window's narrow Configuration panel (the Generate
    // and Serve tasks), where "Concurrent requests (max_num_seqs)" beside a slider set the window's width.
    rows->setRowWrapPolicy(QFormLayout::WrapAllRows);
    for (QComboBox* box : {m_engine, m_gpu, m_tp, m_kvDtype, m_cache}) {
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        box->setMinimumContentsLength(10);
    }
    m_engineLabel = new QLabel(tr("Engine"), form);
    rows->addRow(m_engineLabel, m_engine);
    rows->addRow(tr("GPU"), m_gpu);
    auto* contextRow = new QWidget(form);
    auto* contextLayout = new QVBoxLayout(contextRow);
    contextLayout->setContentsMargins(0, 0, 0, 0);
    contextLayout->addWidget(m_context);
    m_longest->setWordWrap(true);
    contextLayout->addWidget(m_longest);
    rows->addRow(tr("Context length (tokens)"), contextRow);
    rows->addRow(m_concurrencyLabel, m_concurrency);
    auto* tpLabel = new QLabel(tr("Tensor parallel (GPUs)"), form);
    auto* kvLabel = new QLabel(tr("KV cache dtype"), form);
    auto* cacheLabel = new QLabel(tr("KV cache"), form);
    auto* newLabel = new QLabel(tr("New tokens"), form);
    rows->addRow(tpLabel, m_tp);
    rows->addRow(kvLabel, m_kvDtype);
    rows->addRow(cacheLabel, m_cache);
    rows->addRow(newLabel, m_newTokens);
    m_vllmOnly = {tpLabel, m_tp, kvLabel, m_kvDtype};
    m_hfOnly = {cacheLabel, m_cache, newLabel, m_newTokens};
    return form;
}

void ServingPage::connectControls()
{
    connect(m_state, &ServingState::changed, this, &ServingPage::refresh);
    connect(m_engine, &QComboBox::currentIndexChanged, this, [this] {
        m_state->setEngine(static_cast<ServingEngine>(m_engine->currentData().toInt()));
        showEngine();
    });
    connect(m_gpu, &QComboBox::currentTextChanged, this, [this](const QString& name) {
        if (const auto g = findGpu(name.toStdString()))
            m_state->setGpu(*g);
    });
    connect(m_tp, &QComboBox::currentIndexChanged, this,
            [this] { m_state->setTensorParallel(m_tp->currentData().toInt()); });
    connect(m_kvDtype, &QComboBox::currentIndexChanged, this,
            [this] { m_state->setKvCacheDtype(static_cast<KvCacheDtype>(m_kvDtype->currentData().toInt())); });
    connect(m_cache, &QComboBox::currentIndexChanged, this,
            [this] { m_state->setHfCache(static_cast<HfCacheKind>(m_cache->currentData().toInt())); });
    connect(m_context, &LogSlider::valueChanged, this, [this](int v) { m_state->setContextLength(v); });
    connect(m_concurrency, &LogSlider::valueChanged, this, [this](int v) { m_state->setConcurrency(v); });
    connect(m_newTokens, &QSpinBox::valueChanged, this, [this](int v) { m_state->setNewTokens(v); });
}

bool ServingPage::openConfig(const QString& path, QString* error)
{
    // The state starts the model at the engines' defaults (max_model_len from the config, as vLLM derives it);
    // refresh() moves the controls there.
    return m_state->loadConfig(path, error);
}

void ServingPage::setTaskEngine(ServingEngine engine)
{
    m_engine->setCurrentIndex(m_engine->findData(static_cast<int>(engine)));
    m_engine->hide();
    m_engineLabel->hide();
    m_verdict->hide();
}

void ServingPage::setUnits(Units units)
{
    m_units = units;
    refresh();
}

void ServingPage::showEngine()
{
    const bool vllm = m_state->engine() == ServingEngine::Vllm;
    for (QWidget* w : std::as_const(m_vllmOnly))
        w->setVisible(vllm);
    for (QWidget* w : std::as_const(m_hfOnly))
        w->setVisible(!vllm);
    m_concurrencyLabel->setText(vllm ? tr("Concurrent requests (max_num_seqs)") : tr("Batch (sequences at once)"));
}

// The controls show the values the plan ran with (an engine's defaults until the user moves them), without
// echoing them back as choices.
void ServingPage::syncControls()
{
    const QSignalBlocker context(m_context), concurrency(m_concurrency), tp(m_tp), kv(m_kvDtype), cache(m_cache),
        newTokens(m_newTokens);
    m_kvDtype->setCurrentIndex(m_kvDtype->findData(static_cast<int>(m_state->kvCacheDtype())));
    m_cache->setCurrentIndex(m_cache->findData(static_cast<int>(m_state->hfCache())));
    m_newTokens->setValue(static_cast<int>(std::min<int64_t>(m_state->newTokens(), 1 << 20)));
    if (const int64_t n = m_state->contextLength(); n > 0)
        m_context->setValue(static_cast<int>(std::min<int64_t>(n, 1 << 21)));
    if (const int64_t n = m_state->concurrency(); n > 0)
        m_concurrency->setValue(static_cast<int>(std::min<int64_t>(n, 4096)));
    m_tp->setCurrentIndex(m_tp->findData(m_state->tensorParallel()));
}

void ServingPage::refresh()
{
    syncControls();
    m_file->setText(m_state->hasModel() ? qs(headroom::modelDisplayName(m_state->model()->file)) : QString());
    m_verdict->setText(m_state->verdictText(m_units));
    QString colour;
    switch (m_state->verdict()) {
    case ServingState::Verdict::Serves: colour = QStringLiteral("#1b7f3b"); break;
    case ServingState::Verdict::Fewer:
    case ServingState::Verdict::Unknown: colour = QStringLiteral("#b06d00"); break;
    case ServingState::Verdict::Refused: colour = QStringLiteral("#b3261e"); break;
    case ServingState::Verdict::None: break;
    }
    m_verdict->setStyleSheet(colour.isEmpty() ? QString() : QStringLiteral("color: %1").arg(colour));
    m_longest->setText(m_state->longestText());
    const QList<ServingSegment> segments = m_state->segments();
    m_bar->setSegments(segments, m_units);
    QStringList items;
    for (const ServingSegment& s : segments)
        items << QStringLiteral("<span style=\"color:%1\">■</span> %2 %3")
                     .arg(ServingBar::colour(s.kind).name(), ServingState::segmentName(s.kind).toHtmlEscaped(),
                          bytesText(s.bytes, m_units));
    m_legend->setText(items.join(QStringLiteral(" &nbsp; ")));
}

} // namespace gui
