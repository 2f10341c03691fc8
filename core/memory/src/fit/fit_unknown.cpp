// "Cannot tell" instead of a verdict while sizes are unknown (docs/DESIGN.md "Fit and max batch": an unknown
// activation is not 0 bytes), and the largest value of any symbol that fits (--max SYMBOL: "what context
// length fits?").
#include "engine/engine_internal.h"
#include "headroom/memory/allocator.h"

#include <algorithm>
#include <unordered_map>

namespace headroom {

std::pair<int64_t, int> unknownActivations(const Model& model, const ShapeTable& shapes)
{
    int64_t count = 0;
    int firstProducer = -1, firstNode = -1;
    for (size_t t = 0; t < model.tensors.size() && t < shapes.numel.size(); ++t) {
        const Tensor& ten = model.tensors[t];
        if (ten.role != TensorRole::Activation || ten.aliasOf >= 0 || (shapes.numel[t] >= 0 && shapes.bytes[t] >= 0))
            continue;
        ++count;
        const int at = ten.producer;
        if (firstNode < 0 || (at >= 0 && (firstProducer < 0 || at < firstProducer))) {
            firstProducer = at;
            firstNode = ten.shape.unknownNode >= 0 ? ten.shape.unknownNode : at;
        }
    }
    return {count, firstNode};
}

bool markUnknownFit(const Model& model, const Evaluation& evaluation, Fit& fit)
{
    const auto [count, node] = unknownActivations(model, evaluation.shapes);
    if (count == 0)
        return false;
    fit.sizesUnknown = true;
    fit.unknownTensors = count;
    fit.unknownNode = node;
    fit.fits = fit.fitsSafely = false;
    fit.maxBatch = fit.expectedMaxBatch = kUnknownMax;
    if (fit.maxSymbol >= 0)
        fit.maxSymbolValue = kUnknownMax;
    return true;
}

std::string unknownFitText(const Model& model, const Fit& fit)
{
    std::string s = "cannot tell: " + std::to_string(fit.unknownTensors) +
                    (fit.unknownTensors == 1 ? " tensor" : " tensors") + " of unknown size";
    if (fit.unknownNode >= 0 && size_t(fit.unknownNode) < model.nodes.size())
        s += ", first at node " + model.nodePath(fit.unknownNode);
    return s;
}

int64_t maxSymbolValue(const EnginePlan& plan, const Config& varying, int symbol, int64_t limit)
{
    const Model& m = *plan.model;
    // The longest step is what must fit, whether a symbol varies or not (engine.cpp applyVarying).
    Config config = varying;
    config.varySymbol = -1;
    if (symbol < 0 || size_t(symbol) >= m.symbols.size() || config.gpu.capacity <= 0 || limit < 1)
        return kUnknownMax;
    const int64_t budget = config.gpu.capacity - config.marginBytes;
    bool unknown = false;
    const auto need = [&](int64_t v, AllocatorMode mode) {
        Config c = config;
        c.allocator = mode;
        if (c.symbols.size() != m.symbols.size())
            c.symbols = m.defaultBindings();
        c.symbols[size_t(symbol)] = v;
        const Evaluation e = evaluateLight(plan, c);
        unknown = unknown || e.shapes.unknown > 0;
        return neededBytes(c, e);
    };
    const int64_t n1 = need(1, AllocatorMode::Exact);
    if (unknown)
        return kUnknownMax;
    if (n1 > budget)
        return 0;
    // The allocated need grows with the symbol (every tensor that depends on it grows): bracket by doubling,
    // then bisect. A need that never crosses the budget below the limit gives no honest number.
    int64_t lo = 1, hi = 2;
    for (;; hi *= 2) {
        if (hi > limit)
            return kUnknownMax;
        const int64_t n = need(hi, AllocatorMode::Exact);
        if (unknown)
            return kUnknownMax;
        if (n > budget)
            break;
        lo = hi;
    }
    while (hi - lo > 1) {
        const int64_t mid = lo + (hi - lo) / 2;
        (need(mid, AllocatorMode::Exact) <= budget ? lo : hi) = mid;
        if (unknown)
            return kUnknownMax;
    }
    if (config.allocator == AllocatorMode::Exact)
        return lo;
    // need(v) <= budget where the need is max(allocated peak, reserved peak) + context: the reserved
    // bytes only grow along the replay, so the first allocation that takes them past budget - context
    // proves the need is over budget and the rest of the replay is skipped (most values the scan below
    // tries are over: the reserved need runs above the allocated one by the cache's fragmentation). A
    // replay that stays under is confirmed with the full evaluation, so every answer is need()'s own.
    const bool samePlan = planMatches(plan, config);
    const auto reservedFits = [&](int64_t v) {
        Config c = config;
        if (c.symbols.size() != m.symbols.size())
            c.symbols = m.defaultBindings();
        c.symbols[size_t(symbol)] = v;
        if (samePlan) {
            // as evaluate() replays the step (engine.cpp, allocator.cpp replay())
            AllocatorOptions options;
            options.preallocated = config.gpu.workspace;
            CachingAllocatorModel model(config.allocator, options);
            if (options.preallocated > 0)
                model.allocate(options.preallocated);
            const int64_t held = budget - config.gpu.context; // what the allocator may hold
            std::unordered_map<int64_t, int64_t> handleOf;
            for (const AllocEvent& e : stepEvents(*plan.data, c)) {
                if (e.kind == AllocEvent::Kind::Alloc) {
                    handleOf[e.id] = model.allocate(e.bytes);
                    if (model.maxReserved() > held)
                        return false;
                } else if (auto it = handleOf.find(e.id); it != handleOf.end()) {
                    model.free(it->second);
                    handleOf.erase(it);
                }
            }
        }
        return need(v, config.allocator) <= budget;
    };
    // Reserved >= allocated but not monotone (segment rounding): the first value that fits scanning down.
    for (int64_t v = lo, tries = 0; v >= 1 && tries < 512; --v, ++tries)
        if (reservedFits(v))
            return v;
    int64_t a = 0, b = std::max<int64_t>(1, lo - 512);
    while (b - a > 1) {
        const int64_t mid = a + (b - a) / 2;
        (need(mid, config.allocator) <= budget ? a : b) = mid;
    }
    return a;
}

} // namespace headroom
