// makeProbePlan: the engine's events at the configured batch and at each bisection batch, plus the model's
// distinct Conv and GEMM shapes for the workspace queries. Kept apart from the JSON so the probe executable
// does not link the engine.
#include "headroom/probe/probe_protocol.h"
#include "headroom/shapes/shapes.h"

#include <algorithm>
#include <unordered_map>

namespace headroom {

namespace {

constexpr size_t kMaxShapes = 64; // each costs the probe a few cuDNN/cuBLAS calls

std::string planDtype(DtypePolicy p)
{
    switch (p) {
    case DtypePolicy::FP16:
    case DtypePolicy::AmpFP16:
    case DtypePolicy::MixedFP16: return "fp16";
    case DtypePolicy::BF16:
    case DtypePolicy::AmpBF16:
    case DtypePolicy::MixedBF16: return "bf16";
    default: return "fp32";
    }
}

int64_t product(const std::vector<int64_t>& dims, size_t from, size_t to)
{
    int64_t p = 1;
    for (size_t i = from; i < to && i < dims.size(); ++i)
        p = checkedMul(p, dims[i]).value_or(INT64_MAX);
    return p;
}

void collectShapes(const Model& model, const Bindings& values, ProbePlan& plan)
{
    auto dimsOf = [&](const Node& node, size_t input) {
        return input < node.inputs.size() && node.inputs[input] >= 0 ? concreteDims(model, node.inputs[input], values)
                                                                     : std::vector<int64_t>{};
    };
    for (const Node& node : model.nodes) {
        if (!node.domain.empty())
            continue;
        if (node.op == "Conv" && plan.convs.size() < kMaxShapes) {
            const auto x = dimsOf(node, 0), w = dimsOf(node, 1);
            if (x.size() != 4 || w.size() != 4)
                continue; // cuDNN's 2-D query only
            ProbePlan::Conv c;
            c.n = x[0], c.c = x[1], c.h = x[2], c.w = x[3], c.k = w[0], c.r = w[2], c.s = w[3];
            const auto strides = node.attrInts("strides"), dil = node.attrInts("dilations"),
                       pads = node.attrInts("pads");
            if (strides.size() == 2)
                c.strideH = strides[0], c.strideW = strides[1];
            if (dil.size() == 2)
                c.dilationH = dil[0], c.dilationW = dil[1];
            if (node.attrString("auto_pad", "NOTSET").rfind("SAME", 0) == 0) {
                c.padH = (c.r - 1) * c.dilationH / 2;
                c.padW = (c.s - 1) * c.dilationW / 2;
            } else if (pads.size() == 4) {
                c.padH = pads[0], c.padW = pads[1]; // cuDNN pads symmetrically: the begin pads
            }
            c.groups = node.attrInt("group", 1);
            if (std::min({c.n, c.c, c.h, c.w, c.k, c.r, c.s, c.groups}) <= 0)
                continue;
            if (std::find(plan.convs.begin(), plan.convs.end(), c) == plan.convs.end())
                plan.convs.push_back(c);
        } else if ((node.op == "MatMul" || node.op == "Gemm") && plan.gemms.size() < kMaxShapes) {
            const auto a = dimsOf(node, 0), b = dimsOf(node, 1);
            if (a.size() < 2 || b.size() < 2)
                continue;
            ProbePlan::Gemm g;
            const bool transA = node.op == "Gemm" && node.attrInt("transA", 0) != 0;
            const bool transB = node.op == "Gemm" && node.attrInt("transB", 0) != 0;
            const size_t ra = a.size(), rb = b.size();
            g.m = transA ? a[ra - 1] : a[ra - 2];
            g.k = transA ? a[ra - 2] : a[ra - 1];
            g.n = transB ? b[rb - 2] : b[rb - 1];
            g.batch = std::max(product(a, 0, ra - 2), product(b, 0, rb - 2));
            if (std::min({g.m, g.n, g.k, g.batch}) <= 0)
                continue;
            if (std::find(plan.gemms.begin(), plan.gemms.end(), g) == plan.gemms.end())
                plan.gemms.push_back(g);
        }
    }
}

// The engine leaves what outlives the iteration (weights, optimizer state) allocated; the probe must hand
// everything back, so the plan frees it at the end, newest first.
std::vector<AllocEvent> balanced(std::vector<AllocEvent> events)
{
    std::vector<AllocEvent> live;
    std::vector<bool> freed;
    std::unordered_map<int64_t, size_t> index;
    for (const AllocEvent& e : events) {
        if (e.kind == AllocEvent::Kind::Alloc) {
            index[e.id] = live.size();
            live.push_back(e);
            freed.push_back(false);
        } else if (const auto it = index.find(e.id); it != index.end()) {
            freed[it->second] = true;
            index.erase(it);
        }
    }
    const int lastStep = events.empty() ? 0 : events.back().step;
    for (size_t i = live.size(); i-- > 0;) {
        if (freed[i])
            continue;
        AllocEvent f = live[i];
        f.kind = AllocEvent::Kind::Free;
        f.step = lastStep;
        events.push_back(f);
    }
    return events;
}

} // namespace

ProbePlan makeProbePlan(const Model& model, const Config& config, const std::vector<int64_t>& bisectionBatches)
{
    ProbePlan plan;
    plan.model = model.info.file;
    plan.mode = "both";
    plan.dtype = planDtype(config.dtype);
    plan.train = config.mode == Mode::Train;
    Config cfg = config;
    if (cfg.symbols.size() != model.symbols.size())
        cfg.symbols = model.defaultBindings();
    const int bs = model.batchSymbol;
    plan.batch = bs >= 0 && static_cast<size_t>(bs) < cfg.symbols.size() ? cfg.symbols[static_cast<size_t>(bs)] : 1;

    const Evaluation main = evaluate(model, cfg);
    plan.events = balanced(main.events);
    collectShapes(model, cfg.symbols, plan);

    if (bs >= 0 && static_cast<size_t>(bs) < cfg.symbols.size()) {
        std::vector<int64_t> batches = bisectionBatches;
        std::sort(batches.begin(), batches.end());
        batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
        for (const int64_t b : batches) {
            if (b <= 0)
                continue;
            Config at = cfg;
            at.symbols[static_cast<size_t>(bs)] = b;
            plan.batchPlans.emplace_back(b, b == plan.batch ? plan.events : balanced(evaluate(model, at).events));
        }
    }
    return plan;
}

} // namespace headroom
