// The Serving mode's state: settings in, the core's plan out (servingstate.h).
#include "servingstate.h"

#include "guiutil.h"

#include "headroom/base/error.h"
#include "headroom/hardware/gpus.h"
#include "headroom/serving/serving_json.h"

#include <QLocale>

#include <cmath>

namespace gui {

using namespace headroom;

QString tokensText(int64_t tokens)
{
    if (tokens > 0 && tokens % 1024 == 0)
        return QStringLiteral("%1k").arg(tokens / 1024);
    return QLocale().toString(static_cast<qlonglong>(tokens));
}

ServingState::ServingState(QObject* parent) : QObject(parent), m_gpu(*findGpu("H100")) {}

bool ServingState::loadConfig(const QString& path, QString* error)
{
    try {
        setModel(loadServeModel(path.toStdString()));
        return true;
    } catch (const Error& e) {
        if (error)
            *error = qs(e.what());
        return false;
    }
}

void ServingState::setModel(const ServeModel& model)
{
    m_model = model;
    // A new model starts from the engines' defaults, as headroom-cli --serve does: a length, a concurrency or a
    // TP chosen for the last one is not this one's.
    m_vllm.maxModelLen.reset();
    m_vllm.maxNumSeqs.reset();
    m_vllm.tp = 1;
    m_hf = HfGenerateSettings{};
    recompute();
}

void ServingState::saveChoices(QSettings& s) const
{
    s.remove(QString()); // the group's old keys: an unset length is the default again
    if (m_vllm.maxModelLen)
        s.setValue(QStringLiteral("maxModelLen"), static_cast<qlonglong>(*m_vllm.maxModelLen));
    if (m_vllm.maxNumSeqs)
        s.setValue(QStringLiteral("maxNumSeqs"), static_cast<qlonglong>(*m_vllm.maxNumSeqs));
    s.setValue(QStringLiteral("tp"), m_vllm.tp);
    s.setValue(QStringLiteral("kvFp8"), m_vllm.kvCacheDtype == KvCacheDtype::Fp8);
    s.setValue(QStringLiteral("promptLen"), static_cast<qlonglong>(m_hf.promptLen));
    s.setValue(QStringLiteral("batch"), static_cast<qlonglong>(m_hf.batch));
    s.setValue(QStringLiteral("newTokens"), static_cast<qlonglong>(m_hf.newTokens));
    s.setValue(QStringLiteral("staticCache"), m_hf.cache == HfCacheKind::Static);
}

void ServingState::restoreChoices(QSettings& s)
{
    const HfGenerateSettings d;
    auto positive = [&](const char* key, int64_t fallback) {
        const qlonglong v = s.value(QLatin1String(key), static_cast<qlonglong>(fallback)).toLongLong();
        return v > 0 ? static_cast<int64_t>(v) : fallback;
    };
    m_vllm.maxModelLen.reset();
    m_vllm.maxNumSeqs.reset();
    if (const int64_t v = positive("maxModelLen", 0); v > 0)
        m_vllm.maxModelLen = v;
    if (const int64_t v = positive("maxNumSeqs", 0); v > 0)
        m_vllm.maxNumSeqs = v;
    m_vllm.tp = static_cast<int>(positive("tp", 1));
    m_vllm.kvCacheDtype = s.value(QStringLiteral("kvFp8"), false).toBool() ? KvCacheDtype::Fp8 : KvCacheDtype::Auto;
    m_hf.promptLen = positive("promptLen", d.promptLen);
    m_hf.batch = positive("batch", d.batch);
    m_hf.newTokens = positive("newTokens", d.newTokens);
    m_hf.cache = s.value(QStringLiteral("staticCache"), false).toBool() ? HfCacheKind::Static : HfCacheKind::Dynamic;
    recompute();
}

void ServingState::clearModel()
{
    m_model.reset();
    recompute();
}

void ServingState::setEngine(ServingEngine engine)
{
    m_snapshot.engine = engine;
    recompute();
}

void ServingState::setGpu(const GpuSpec& gpu)
{
    m_gpu = gpu;
    recompute();
}

void ServingState::setContextLength(int64_t tokens)
{
    if (tokens == contextLength())
        return; // the page echoing the default back is not a choice
    if (m_snapshot.engine == ServingEngine::Vllm)
        m_vllm.maxModelLen = tokens;
    else
        m_hf.promptLen = tokens;
    recompute();
}

void ServingState::setConcurrency(int64_t requests)
{
    if (requests == concurrency())
        return;
    if (m_snapshot.engine == ServingEngine::Vllm)
        m_vllm.maxNumSeqs = requests;
    else
        m_hf.batch = requests;
    recompute();
}

int64_t ServingState::contextLength() const
{
    if (m_snapshot.engine == ServingEngine::HfGenerate)
        return m_hf.promptLen;
    if (m_snapshot.vllm && m_snapshot.vllm->settings.maxModelLen)
        return *m_snapshot.vllm->settings.maxModelLen;
    return m_vllm.maxModelLen.value_or(m_model && m_model->maxPositions > 0 ? m_model->maxPositions : 0);
}

int64_t ServingState::concurrency() const
{
    if (m_snapshot.engine == ServingEngine::HfGenerate)
        return m_hf.batch;
    if (m_snapshot.vllm && m_snapshot.vllm->settings.maxNumSeqs)
        return *m_snapshot.vllm->settings.maxNumSeqs;
    return m_vllm.maxNumSeqs.value_or(0);
}

bool ServingState::concurrencyChosen() const
{
    return m_snapshot.engine == ServingEngine::HfGenerate || m_vllm.maxNumSeqs.has_value();
}

void ServingState::setTensorParallel(int tp)
{
    m_vllm.tp = tp;
    recompute();
}

void ServingState::setKvCacheDtype(KvCacheDtype dtype)
{
    m_vllm.kvCacheDtype = dtype;
    recompute();
}

void ServingState::setHfCache(HfCacheKind cache)
{
    m_hf.cache = cache;
    recompute();
}

void ServingState::setNewTokens(int64_t tokens)
{
    m_hf.newTokens = tokens;
    recompute();
}

void ServingState::recompute()
{
    m_snapshot.vllm.reset();
    m_snapshot.hf.reset();
    if (m_model) {
        if (m_snapshot.engine == ServingEngine::Vllm)
            m_snapshot.vllm = planVllm(*m_model, m_vllm, m_gpu);
        else
            m_snapshot.hf = planHfGenerate(*m_model, m_hf, m_gpu);
    }
    emit changed();
}

ServingState::Verdict ServingState::verdict() const
{
    if (const auto& p = m_snapshot.vllm) {
        if (!p->starts)
            return Verdict::Unknown;
        if (!*p->starts)
            return Verdict::Refused;
        // Fewer than asked only when the user asked: vLLM's default max_num_seqs is a ceiling, not a request.
        return !m_vllm.maxNumSeqs || static_cast<int64_t>(std::floor(p->maxConcurrency)) >= *m_vllm.maxNumSeqs
                   ? Verdict::Serves
                   : Verdict::Fewer;
    }
    if (const auto& p = m_snapshot.hf) {
        if (!p->fits)
            return Verdict::Unknown;
        return *p->fits ? Verdict::Serves : Verdict::Refused;
    }
    return Verdict::None;
}

QString ServingState::verdictText(Units units) const
{
    const Verdict v = verdict();
    if (v == Verdict::None)
        return tr("Open a Hugging Face config.json to plan serving");
    if (v == Verdict::Unknown) {
        QStringList fields;
        for (const std::string& f : m_snapshot.vllm ? m_snapshot.vllm->cannotTell : m_snapshot.hf->cannotTell)
            fields << qs(f);
        return tr("Cannot tell: %1 lacks %2").arg(qs(m_model->file), fields.join(QStringLiteral(", ")));
    }
    const QString gpu = qs(m_gpu.name);
    if (const auto& p = m_snapshot.vllm) {
        if (v == Verdict::Refused)
            return tr("Does not start on %1 (TP %2): %3").arg(gpu).arg(m_vllm.tp).arg(qs(p->reason));
        const auto n = static_cast<qlonglong>(std::floor(p->maxConcurrency));
        const QString serves = tr("Serves %1 concurrent %2-token requests on %3 (TP %4)")
                                   .arg(QLocale().toString(n), tokensText(contextLength()), gpu)
                                   .arg(m_vllm.tp);
        if (v == Verdict::Fewer)
            return tr("%1, fewer than the %2 asked for: the others wait in vLLM's queue")
                .arg(serves, QLocale().toString(static_cast<qlonglong>(concurrency())));
        return serves;
    }
    const HfGeneratePlan& p = *m_snapshot.hf;
    const QString shape = tr("batch %1 of %2 + %3 tokens").arg(m_hf.batch).arg(m_hf.promptLen).arg(m_hf.newTokens);
    if (v == Verdict::Serves)
        return tr("generate() fits %1 on %2: peak %3 (max batch %4)")
            .arg(shape, gpu, bytesText(p.peak, units))
            .arg(p.maxBatch);
    // The peak is the CLI's (PyTorch's allocated peak); the CUDA context and cuBLAS workspaces come on top of it.
    //: %1 batch and lengths, %2 GPU, %3 the peak, %4 it plus the CUDA context, %5 the device, %6 largest batch
    return tr("generate() does not fit %1 on %2: peak %3, %4 with the CUDA context, of %5 (max batch %6)")
        .arg(shape, gpu, bytesText(p.peak, units), bytesText(p.peak + p.outside, units), bytesText(p.capacity, units))
        .arg(p.maxBatch);
}

std::optional<int64_t> ServingState::longest() const
{
    if (m_snapshot.vllm)
        return m_snapshot.vllm->maxModelLenThatStarts;
    if (m_snapshot.hf && m_snapshot.hf->cannotTell.empty())
        return m_snapshot.hf->longestPrompt;
    return std::nullopt;
}

QString ServingState::longestText() const
{
    if (!m_snapshot.vllm && !m_snapshot.hf)
        return {};
    const std::optional<int64_t> n = longest();
    const QString value = n && *n > 0 ? QLocale().toString(static_cast<qlonglong>(*n)) : tr("none");
    return m_snapshot.vllm ? tr("Longest context that starts: %1").arg(value)
                           : tr("Longest prompt that fits: %1").arg(value);
}

QList<ServingSegment> ServingState::segments() const
{
    using K = ServingSegment::Kind;
    QList<ServingSegment> out;
    if (const auto& p = m_snapshot.vllm; p && p->starts) {
        // requested = W + A + NT (+ CG from 0.21) + KV; the CUDA context sits outside it, in the (1 - util) rest
        const int64_t kv = std::max<int64_t>(p->kvCache, 0);
        out = {{K::Weights, p->weights},
               {K::Activation, p->activationPeak},
               {K::Graphs, p->cudaGraphs},
               {K::KvCache, kv},
               {K::Other, p->nonTorch + p->context}};
        const int64_t used = p->weights + p->activationPeak + p->cudaGraphs + kv + p->nonTorch + p->context;
        out.append({K::Unused, std::max<int64_t>(p->total - used, 0)});
    } else if (const auto& h = m_snapshot.hf; h && h->fits) {
        const bool atDecode = h->decodePeak > h->prefillPeak;
        const int64_t kv = atDecode ? h->kvEnd : h->kvPrefill;
        const int64_t act = atDecode ? h->decodeTransient : h->prefill.activation;
        out = {{K::Weights, h->weights}, {K::Activation, act}, {K::KvCache, kv}, {K::Other, h->outside}};
        out.append({K::Unused, std::max<int64_t>(h->capacity - h->peak - h->outside, 0)});
    }
    return out;
}

QString ServingState::segmentName(ServingSegment::Kind kind)
{
    switch (kind) {
    case ServingSegment::Weights: return tr("Weights");
    case ServingSegment::Activation: return tr("Activation");
    case ServingSegment::Graphs: return tr("CUDA graphs");
    case ServingSegment::KvCache: return tr("KV cache");
    case ServingSegment::Other: return tr("Other (context, NCCL, workspaces)");
    case ServingSegment::Unused: return tr("Unused");
    }
    return {};
}

nlohmann::json ServingState::toJson() const
{
    if (m_snapshot.vllm)
        return headroom::toJson(*m_snapshot.vllm);
    if (m_snapshot.hf)
        return headroom::toJson(*m_snapshot.hf);
    return nullptr;
}

} // namespace gui
