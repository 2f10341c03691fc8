#pragma once
// The Serving mode's state (docs/USER_GUIDE.md "Serving"): a config.json, the engine and its settings, and the
// core's plan for them (core/serving: vLLM's startup or Hugging Face generate()). The page, the PDF's serving
// section and the JSON export read the same snapshot; every figure comes from planVllm / planHfGenerate.
#include "headroom/base/format.h"
#include "headroom/serving/hf_generate.h"
#include "headroom/serving/vllm.h"

#include <nlohmann/json_fwd.hpp>

#include <QList>
#include <QObject>
#include <QSettings>
#include <QString>

#include <optional>

namespace gui {

enum class ServingEngine { Vllm, HfGenerate };

// One bar segment of where the GPU's memory goes under the plan.
struct ServingSegment
{
    enum Kind { Weights, Activation, Graphs, KvCache, Other, Unused };
    Kind kind = Weights;
    int64_t bytes = 0;
};

// The plan of the current settings, as exports need it.
struct ServingSnapshot
{
    ServingEngine engine = ServingEngine::Vllm;
    std::optional<headroom::VllmPlan> vllm;
    std::optional<headroom::HfGeneratePlan> hf;
};

class ServingState : public QObject
{
    Q_OBJECT
public:
    enum class Verdict { None, Serves, Fewer, Refused, Unknown };

    explicit ServingState(QObject* parent = nullptr);

    // Reads a config.json (or a folder holding one); false with *error one line naming the file.
    bool loadConfig(const QString& path, QString* error);
    void setModel(const headroom::ServeModel& model);
    void clearModel();
    bool hasModel() const { return m_model.has_value(); }
    const std::optional<headroom::ServeModel>& model() const { return m_model; }

    void setEngine(ServingEngine engine);
    void setGpu(const headroom::GpuSpec& gpu);
    // vLLM's max_model_len and max_num_seqs, generate()'s prompt and batch: each engine's own, and until the user
    // sets one, the engine's default (the CLI's: max_position_embeddings, get_batch_defaults for the GPU;
    // HfGenerateSettings), so that the window and headroom-cli --serve answer the same question.
    void setContextLength(int64_t tokens);
    void setConcurrency(int64_t requests);
    void setTensorParallel(int tp);
    void setKvCacheDtype(headroom::KvCacheDtype dtype);
    void setHfCache(headroom::HfCacheKind cache);
    void setNewTokens(int64_t tokens);

    ServingEngine engine() const { return m_snapshot.engine; }
    const headroom::GpuSpec& gpu() const { return m_gpu; }
    // The values the plan ran with (the defaults filled in).
    int64_t contextLength() const;
    int64_t concurrency() const;
    // Whether the user chose the concurrency (else it is the engine's default).
    bool concurrencyChosen() const;
    int tensorParallel() const { return m_vllm.tp; }
    headroom::KvCacheDtype kvCacheDtype() const { return m_vllm.kvCacheDtype; }
    headroom::HfCacheKind hfCache() const { return m_hf.cache; }
    int64_t newTokens() const { return m_hf.newTokens; }
    const ServingSnapshot& snapshot() const { return m_snapshot; }

    Verdict verdict() const;
    // "Serves 23 concurrent 16k-token requests on H100 80 GB (TP 1)", or why not.
    QString verdictText(headroom::Units units = headroom::Units::IEC) const;
    // "Longest context that starts: 131,072" (vLLM) / "Longest prompt that fits: 33,979" (generate()).
    QString longestText() const;
    std::optional<int64_t> longest() const;
    // Weights, activation, CUDA graphs, KV cache, other (non-torch, context), unused: they add up to the device.
    QList<ServingSegment> segments() const;
    int64_t capacity() const { return m_gpu.capacity; }
    static QString segmentName(ServingSegment::Kind kind);
    // What the user chose for this model (the engines' defaults left out: they follow the model), kept per model:
    // the window saves it under the model's settings group and gives it back when the model is opened again.
    void saveChoices(QSettings& settings) const;
    void restoreChoices(QSettings& settings);
    // The `serving` object the CLI prints for this plan (headroom-cli --serve ... --json).
    nlohmann::json toJson() const;

signals:
    void changed();

private:
    void recompute();

    std::optional<headroom::ServeModel> m_model;
    headroom::GpuSpec m_gpu;
    headroom::VllmSettings m_vllm; // maxModelLen, maxNumSeqs unset: vLLM's defaults
    headroom::HfGenerateSettings m_hf;
    ServingSnapshot m_snapshot;
};

// 16384 -> "16k", 131072 -> "128k", 33979 -> "33,979".
QString tokensText(int64_t tokens);

} // namespace gui
