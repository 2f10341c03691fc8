// The plan that makes a configuration fit: changes tried in the order of what a user gives up, each measured
// by re-evaluating the changed configuration (never a rule of thumb), combined until the need fits, then
// thinned to the steps the fit needs.
#include "headroom/report/fitplan.h"

#include "headroom/hardware/gpus.h"
#include "headroom/hardware/multigpu.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <optional>

namespace headroom {
namespace {

using Kind = PlanStep::Kind;

bool multiGpu(const Config& c) { return c.gpus > 1 && c.strategy != Strategy::Single; }
bool adamFamily(Optimizer o) { return o == Optimizer::Adam || o == Optimizer::AdamW; }

int64_t symbolValue(const Config& c, int symbol)
{
    return symbol >= 0 && size_t(symbol) < c.symbols.size() ? c.symbols[size_t(symbol)] : 0;
}

// The sequence-length symbol: the first non-batch symbol named like one (Hugging Face configs: "seq";
// exports: "sequence_length", "seq_len", "num_tokens", "past_sequence_length" comes after it).
int sequenceSymbol(const Model& model)
{
    for (size_t i = 0; i < model.symbols.size(); ++i) {
        if (int(i) == model.batchSymbol || model.symbols[i].isBatch)
            continue;
        std::string n = model.symbols[i].name;
        std::transform(n.begin(), n.end(), n.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
        if (n.find("past") == std::string::npos &&
            (n.find("seq") != std::string::npos || n.find("token") != std::string::npos || n == "len"))
            return int(i);
    }
    return -1;
}

// Needs of changed configurations, one engine plan per precision class / freeze list / attention mode.
class Needs
{
public:
    Needs(const Model& model, const Config& base, const EnginePlan* known, const LoraVariantSource* lora)
        : m_model(model), m_fullFineTuning(base.finetune.lora.r <= 0), m_loraSource(lora)
    {
        if (known && known->model == &model)
            m_plans.push_back(*known);
    }
    // The model a configuration runs: the LoRA variant once the plan switched full fine-tuning to LoRA.
    const Model& modelFor(const Config& c) const
    {
        return m_fullFineTuning && c.finetune.lora.r > 0 && m_lora.model ? *m_lora.model : m_model;
    }
    // The variant, loaded the first time a step asks (null model: LoRA does not apply).
    const LoraVariant& lora()
    {
        if (m_fullFineTuning && m_loraSource && *m_loraSource && !m_loraAsked) {
            m_loraAsked = true;
            m_lora = (*m_loraSource)();
        }
        return m_lora;
    }
    EnginePlan planFor(const Config& c)
    {
        const Model& model = modelFor(c);
        for (const EnginePlan& p : m_plans)
            if (p.model == &model && planMatches(p, c))
                return p;
        m_plans.push_back(makePlan(model, c));
        return m_plans.back();
    }
    // What must fit on the most loaded GPU, as the fit counts it, and the verdict the report gives on it
    // (Fit::fitsSafely on one GPU, the cluster fit on several), so that a plan never calls "fits" what the
    // banner calls "does not fit".
    struct Judged
    {
        int64_t need = 0;
        bool fits = false;
        bool atCapacity = false; // it fits only because the allocator gives its cache back at the card's limit
    };
    Judged judge(const Config& c)
    {
        const EnginePlan plan = planFor(c);
        if (!multiGpu(c)) {
            const Fit f = computeFitLight(plan, c);
            return {f.needed, f.capacity > 0 && f.fitsSafely, f.atCapacity};
        }
        Judged j;
        for (const GpuShare& g : evaluateCluster(plan, c).gpus) {
            j.need = std::max(j.need, g.needed);
            j.atCapacity = j.atCapacity || g.reservedAtCapacity > 0;
        }
        j.fits = c.gpu.capacity > 0 && j.need <= usable(c);
        return j;
    }
    int64_t need(const Config& c) { return judge(c).need; }
    // A plan ends where the verdict is "fits" with room to spare: a step that fits only at capacity (the
    // allocator retrying at the card's limit, "0 B to spare") is not where a plan stops.
    bool fitsWithRoom(const Config& c)
    {
        const Judged j = judge(c);
        return j.fits && !j.atCapacity;
    }
    static int64_t usable(const Config& c) { return c.gpu.capacity - c.marginBytes; }

private:
    const Model& m_model;
    const bool m_fullFineTuning;
    const LoraVariantSource* m_loraSource;
    bool m_loraAsked = false;
    LoraVariant m_lora;
    std::vector<EnginePlan> m_plans;
};

// Each kind's change to a configuration: nullopt where it does not apply. Steps that choose a strength
// (accumulation, segments, sequence) choose it for the configuration they are given.
class Steps
{
public:
    Steps(const Model& model, Needs& needs) : m_model(model), m_needs(needs), m_seq(sequenceSymbol(model)) {}

    std::optional<PlanStep> apply(Kind k, Config& c)
    {
        const bool train = c.mode == Mode::Train;
        switch (k) {
        case Kind::PagedOptimizer:
            if (!train || !adamFamily(c.optimizer))
                return std::nullopt;
            c.optimizer = Optimizer::PagedAdamW;
            return step(k, "paged AdamW", 0, "paged-adamw");
        case Kind::Accumulate: return train ? accumulate(c) : std::nullopt;
        case Kind::LayerCheckpoint:
            if (!train || c.finetune.layerCheckpoint || c.checkpointSegments > 1)
                return std::nullopt;
            c.finetune.layerCheckpoint = true;
            return step(k, "per-layer checkpointing", 0, "");
        case Kind::Segments: return train ? segments(c) : std::nullopt;
        case Kind::Shard: return train ? shard(c) : std::nullopt;
        case Kind::Optimizer8bit: {
            if (!train || !(adamFamily(c.optimizer) || c.optimizer == Optimizer::PagedAdamW))
                return std::nullopt;
            const bool paged = c.optimizer == Optimizer::PagedAdamW;
            c.optimizer = paged ? Optimizer::PagedAdamW8bit : Optimizer::Adam8bit;
            return step(k, paged ? "8-bit paged AdamW" : "8-bit Adam", 0, std::string(toString(c.optimizer)));
        }
        case Kind::Bf16: return bf16(c);
        case Kind::Lora: return train ? lora(c) : std::nullopt;
        case Kind::QLora: {
            if (!train || c.finetune.lora.r <= 0 || c.finetune.quant != Quant::None)
                return std::nullopt;
            // The QLoRA paper's recipe (Dettmers et al. 2023): NF4 with double quantization, bf16 compute.
            c.finetune.quant = Quant::NF4;
            c.finetune.doubleQuant = true;
            c.finetune.computeDtype = "bf16";
            c.finetune.computeBytes = 2;
            c.finetune.kbitPrep = true;
            return step(k, "QLoRA (4-bit NF4 base weights)", 0, "nf4");
        }
        case Kind::Offload:
            if (!train || !multiGpu(c) || c.offload || !(c.strategy == Strategy::ZeRO3 || c.strategy == Strategy::FSDP))
                return std::nullopt;
            c.offload = true;
            return step(k, "CPU offload", 0, "");
        case Kind::ShorterSequence: return shorterSequence(c);
        case Kind::SmallerBatch: return train ? std::nullopt : smallerBatch(c);
        case Kind::MoreGpus: return moreGpus(c);
        case Kind::LargerGpu: return largerGpu(c);
        }
        return std::nullopt;
    }

private:
    static PlanStep step(Kind k, std::string summary, int64_t value, std::string name)
    {
        PlanStep s;
        s.kind = k;
        s.summary = std::move(summary);
        s.value = value;
        s.name = std::move(name);
        return s;
    }
    int64_t batch(const Config& c) const { return std::max<int64_t>(1, symbolValue(c, m_model.batchSymbol)); }

    // The fewest accumulation steps (doubling) that fit; else a micro-batch of one.
    std::optional<PlanStep> accumulate(Config& c)
    {
        const int64_t b = batch(c);
        const int from = std::max(c.accumulate, 1);
        if (m_model.batchSymbol < 0 || b / from < 2)
            return std::nullopt;
        int s = from * 2;
        for (; int64_t(s) * 2 <= b; s *= 2) {
            Config t = c;
            t.accumulate = s;
            if (m_needs.fitsWithRoom(t))
                break;
        }
        c.accumulate = s;
        PlanStep st = step(Kind::Accumulate, "", s, "");
        st.microBatch = b / s;
        return st;
    }
    std::optional<PlanStep> segments(Config& c)
    {
        if (c.finetune.layerCheckpoint || c.checkpointSegments > 1 || m_model.nodes.empty())
            return std::nullopt;
        Config single = c;
        single.gpus = 1; // the curve is per GPU: evaluate it at one GPU's batch
        single.strategy = Strategy::Single;
        const int maxK = int(std::min<size_t>(16, m_model.nodes.size()));
        const int k = bestCheckpointSegments(checkpointCurve(m_needs.planFor(single), single, maxK));
        if (k <= 1)
            return std::nullopt;
        c.checkpointSegments = k;
        return step(Kind::Segments, std::to_string(k) + " checkpoint segments", k, "");
    }
    static std::optional<PlanStep> shard(Config& c)
    {
        if (c.gpus <= 1 || c.strategy == Strategy::ZeRO3 || c.strategy == Strategy::FSDP)
            return std::nullopt;
        const bool zero = c.strategy == Strategy::ZeRO1 || c.strategy == Strategy::ZeRO2;
        c.strategy = zero ? Strategy::ZeRO3 : Strategy::FSDP;
        return step(Kind::Shard, zero ? "ZeRO-3" : "FSDP (full shard)", c.gpus, std::string(toString(c.strategy)));
    }
    // Full fine-tuning -> LoRA with PEFT's defaults: the base weights frozen (loraFreezePatterns, as --lora
    // does), gradients and optimizer states for the adapters only.
    std::optional<PlanStep> lora(Config& c)
    {
        if (c.finetune.lora.r > 0 || c.finetune.quant != Quant::None || !c.freeze.empty())
            return std::nullopt;
        const LoraVariant& v = m_needs.lora();
        if (!v.model)
            return std::nullopt;
        c.finetune.lora = v.spec;
        for (const std::string& p : loraFreezePatterns())
            c.freeze.push_back(p);
        // name: "lora" with PEFT's default targets, "lora-all-linear" where the model type has none
        // (peftDefaultLoraVariant's fallback); planStepText says which.
        const bool allLinear = v.spec.targets == std::vector<std::string>{"all-linear"};
        return step(Kind::Lora, "LoRA r " + std::to_string(v.spec.r) + " (PEFT defaults) instead of full fine-tuning",
                    v.spec.r, allLinear ? "lora-all-linear" : "lora");
    }
    static std::optional<PlanStep> bf16(Config& c)
    {
        // Training: pure bf16 from fp32 or autocast; inference: bf16 weights from fp32.
        const bool from = c.mode == Mode::Train ? c.dtype != DtypePolicy::BF16 && c.dtype != DtypePolicy::FP16 &&
                                                      c.dtype != DtypePolicy::INT8 && c.dtype != DtypePolicy::INT4
                                                : c.dtype == DtypePolicy::FP32;
        if (!from)
            return std::nullopt;
        c.dtype = DtypePolicy::BF16;
        return step(Kind::Bf16, "pure bf16", 0, "bf16");
    }
    // The largest value of `symbol` below the current one that fits, on a grid of `grid` (binary search:
    // the need grows with it); nullopt when not even one grid step fits.
    std::optional<int64_t> largestFitting(const Config& c, int symbol, int64_t grid)
    {
        int64_t lo = 0, hi = symbolValue(c, symbol) / grid;
        if (hi * grid == symbolValue(c, symbol))
            --hi;
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo + 1) / 2;
            Config t = c;
            t.symbols[size_t(symbol)] = mid * grid;
            if (m_needs.fitsWithRoom(t))
                lo = mid;
            else
                hi = mid - 1;
        }
        if (lo == 0)
            return std::nullopt;
        return lo * grid;
    }
    // Sequence lengths a multiple of 128 (tensor-core tiles, and how context lengths are quoted).
    std::optional<PlanStep> shorterSequence(Config& c)
    {
        if (m_seq < 0 || symbolValue(c, m_seq) <= 128)
            return std::nullopt;
        const std::optional<int64_t> v = largestFitting(c, m_seq, 128);
        if (!v)
            return std::nullopt;
        c.symbols[size_t(m_seq)] = *v;
        return step(Kind::ShorterSequence, m_model.symbols[size_t(m_seq)].name + " " + std::to_string(*v), *v,
                    m_model.symbols[size_t(m_seq)].name);
    }
    std::optional<PlanStep> smallerBatch(Config& c)
    {
        if (m_model.batchSymbol < 0 || batch(c) <= 1)
            return std::nullopt;
        const std::optional<int64_t> v = largestFitting(c, m_model.batchSymbol, 1);
        if (!v)
            return std::nullopt;
        c.symbols[size_t(m_model.batchSymbol)] = *v;
        return step(Kind::SmallerBatch, "batch " + std::to_string(*v), *v, "");
    }
    // The fewest GPUs of this kind (2, 4, 8) that fit, sharded (FSDP) when training.
    std::optional<PlanStep> moreGpus(Config& c)
    {
        if (c.gpu.capacity <= 0 || c.mode != Mode::Train)
            return std::nullopt;
        for (int n : {2, 4, 8}) {
            if (n <= c.gpus)
                continue;
            Config t = c;
            t.gpus = n;
            if (!(t.strategy == Strategy::ZeRO3 || t.strategy == Strategy::FSDP))
                t.strategy = Strategy::FSDP;
            if (m_needs.fitsWithRoom(t)) {
                c = t;
                return step(Kind::MoreGpus,
                            std::to_string(n) + " × " + c.gpu.name + " (" + std::string(toString(c.strategy)) + ")", n,
                            c.gpu.name);
            }
        }
        return std::nullopt;
    }
    // The smallest preset larger than this GPU that fits, at the same GPU count.
    std::optional<PlanStep> largerGpu(Config& c)
    {
        std::vector<GpuSpec> presets = gpuPresets();
        std::stable_sort(presets.begin(), presets.end(),
                         [](const GpuSpec& a, const GpuSpec& b) { return a.capacity < b.capacity; });
        for (const GpuSpec& g : presets) {
            if (g.capacity <= c.gpu.capacity)
                continue;
            Config t = c;
            t.gpu = g;
            if (m_needs.fitsWithRoom(t)) {
                c = t;
                return step(Kind::LargerGpu, g.name, c.gpus, g.name);
            }
        }
        return std::nullopt;
    }

    const Model& m_model;
    Needs& m_needs;
    const int m_seq;
};

constexpr Kind kOrder[] = {Kind::PagedOptimizer,
                           Kind::Accumulate,
                           Kind::LayerCheckpoint,
                           Kind::Segments,
                           Kind::Shard,
                           Kind::Optimizer8bit,
                           Kind::Bf16,
                           Kind::Lora,
                           Kind::QLora,
                           Kind::Offload,
                           Kind::ShorterSequence,
                           Kind::SmallerBatch,
                           Kind::MoreGpus,
                           Kind::LargerGpu};

// Kinds taken only to make it fit, never for a saving alone (they change the task or the hardware).
bool lastResort(Kind k)
{
    return k == Kind::ShorterSequence || k == Kind::SmallerBatch || k == Kind::MoreGpus || k == Kind::LargerGpu;
}

struct Chain
{
    std::vector<PlanStep> steps;
    Config config;
    int64_t need = 0;
    bool fits = false; // Needs::fitsWithRoom of `config`
};

// The given kinds applied in order to `base`, each with the need after it.
Chain runChain(const std::vector<Kind>& kinds, const Config& base, int64_t needBefore, Steps& steps, Needs& needs)
{
    Chain ch{{}, base, needBefore};
    for (Kind k : kinds) {
        Config t = ch.config;
        std::optional<PlanStep> s = steps.apply(k, t);
        if (!s)
            continue;
        const Needs::Judged j = needs.judge(t);
        ch.fits = j.fits && !j.atCapacity;
        s->needAfter = j.need;
        s->saving = ch.need - s->needAfter;
        ch.need = s->needAfter;
        ch.config = std::move(t);
        ch.steps.push_back(std::move(*s));
    }
    return ch;
}

// Whether `after` gives up no more of the task or the hardware than `before`: the same last-resort steps, a
// sequence or batch no shorter, no more or larger GPUs. Dropping a cheap step must not buy a shorter sequence.
bool noWorse(const Chain& after, const Chain& before)
{
    for (const PlanStep& b : before.steps) {
        if (!lastResort(b.kind))
            continue;
        const auto a = std::find_if(after.steps.begin(), after.steps.end(),
                                    [&](const PlanStep& s) { return s.kind == b.kind; });
        if (a == after.steps.end())
            continue; // not needed any more: better
        const bool more = b.kind == Kind::ShorterSequence || b.kind == Kind::SmallerBatch;
        if (more ? a->value < b.value : b.kind == Kind::MoreGpus ? a->value > b.value : a->name != b.name)
            return false;
    }
    for (const PlanStep& a : after.steps)
        if (lastResort(a.kind) &&
            std::none_of(before.steps.begin(), before.steps.end(), [&](const PlanStep& s) { return s.kind == a.kind; }))
            return false;
    return true;
}

std::vector<Kind> kindsOf(const std::vector<PlanStep>& steps)
{
    std::vector<Kind> kinds;
    for (const PlanStep& s : steps)
        kinds.push_back(s.kind);
    return kinds;
}

} // namespace

FitPlan planToFit(const Model& model, const Config& config, const EnginePlan* known, const LoraVariantSource* lora)
{
    Needs needs(model, config, known, lora);
    Steps steps(model, needs);
    FitPlan plan;
    plan.config = config;
    plan.capacity = Needs::usable(config);
    const Needs::Judged before = needs.judge(config);
    plan.needBefore = plan.needAfter = before.need;
    plan.fitsBefore = plan.fits = before.fits; // the report's verdict (Fit::fitsSafely / the cluster fit)
    if (plan.fitsBefore || config.gpu.capacity <= 0)
        return plan;
    // Greedy: take each change that saves memory, cheapest loss first, until it fits.
    Chain greedy{{}, config, plan.needBefore, false};
    for (Kind k : kOrder) {
        Config t = greedy.config;
        std::optional<PlanStep> s = steps.apply(k, t);
        if (!s)
            continue;
        const Needs::Judged j = needs.judge(t);
        const int64_t n = j.need;
        // A step that saves under 1% of the need is noise to a user unless it is what makes it fit.
        const bool fitsNow = j.fits && !j.atCapacity;
        // A larger GPU saves nothing (its need is the same or a little more): it is taken for its capacity.
        const bool savesNothing = k == Kind::LargerGpu;
        if ((!savesNothing && n >= greedy.need) || (lastResort(k) && !fitsNow) ||
            (!fitsNow && greedy.need - n < greedy.need / 100))
            continue;
        s->needAfter = n;
        s->saving = greedy.need - n;
        greedy = {greedy.steps, std::move(t), n, fitsNow};
        greedy.steps.push_back(std::move(*s));
        if (fitsNow)
            break;
    }
    // Thin: a step the fit does not need goes (the cheaper ones first, as the later ones cost the user more).
    std::vector<Kind> kinds = kindsOf(greedy.steps);
    Chain best = greedy;
    if (greedy.fits) {
        for (size_t i = 0; i < kinds.size();) {
            std::vector<Kind> without = kinds;
            without.erase(without.begin() + std::ptrdiff_t(i));
            Chain c = runChain(without, config, plan.needBefore, steps, needs);
            if (c.fits && noWorse(c, best)) {
                kinds = std::move(without);
                best = std::move(c);
            } else {
                ++i;
            }
        }
    }
    plan.steps = std::move(best.steps);
    plan.config = std::move(best.config);
    plan.needAfter = best.need;
    plan.fits = best.fits;
    plan.capacity = Needs::usable(plan.config);
    for (PlanStep& s : plan.steps) // the words every output prints (plan_text.cpp)
        s.summary = planStepText(s, plan.config.strategy);
    plan.sameGpu = plan.steps.empty() ||
                   (plan.steps.back().kind != Kind::MoreGpus && plan.steps.back().kind != Kind::LargerGpu);
    return plan;
}

std::string_view toString(PlanStep::Kind kind) noexcept
{
    switch (kind) {
    case Kind::PagedOptimizer: return "paged_optimizer";
    case Kind::Accumulate: return "accumulate";
    case Kind::LayerCheckpoint: return "layer_checkpoint";
    case Kind::Segments: return "checkpoint_segments";
    case Kind::Shard: return "shard";
    case Kind::Optimizer8bit: return "optimizer_8bit";
    case Kind::Bf16: return "bf16";
    case Kind::Lora: return "lora";
    case Kind::QLora: return "qlora";
    case Kind::Offload: return "offload";
    case Kind::ShorterSequence: return "shorter_sequence";
    case Kind::SmallerBatch: return "smaller_batch";
    case Kind::MoreGpus: return "more_gpus";
    case Kind::LargerGpu: return "larger_gpu";
    }
    return "unknown";
}

nlohmann::json toJson(const FitPlan& plan)
{
    nlohmann::json steps = nlohmann::json::array();
    for (const PlanStep& s : plan.steps)
        steps.push_back({{"kind", toString(s.kind)},
                         {"summary", s.summary},
                         {"value", s.value},
                         {"name", s.name},
                         {"saving", s.saving},
                         {"needed_after", s.needAfter}});
    return {{"fits_before", plan.fitsBefore}, {"fits_after", plan.fits},   {"needed_before", plan.needBefore},
            {"needed_after", plan.needAfter}, {"capacity", plan.capacity}, {"same_gpu", plan.sameGpu},
            {"steps", std::move(steps)},      {"text", planText(plan)}};
}

} // namespace headroom
