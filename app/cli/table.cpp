// headroom-cli's human-readable report: header, layer table, memory, peak, verdict and warnings, one step each.
#include "table.h"

#include "headroom/memory/finetune_summary.h"
#include "headroom/memory/kvcache.h"

#include "headroom/base/format.h"
#include "headroom/import/hfconfig.h"
#include "headroom/memory/layercost.h"
#include "headroom/report/layer_tree.h"
#include "headroom/shapes/shapes.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace headroom::cli {
namespace {

std::string pad(std::string s, size_t width, bool right = false)
{
    // Column widths count UTF-8 code points, not bytes (tree glyphs are multi-byte).
    size_t cps = 0;
    for (unsigned char c : s)
        cps += (c & 0xC0) != 0x80;
    if (cps >= width)
        return s;
    std::string fill(width - cps, ' ');
    return right ? fill + s : s + fill;
}

std::string truncate(const std::string& s, size_t width)
{
    if (s.size() <= width)
        return s;
    return "…" + s.substr(s.size() - (width - 1));
}

struct Row
{
    std::string name, op, shape, params, activations, saved;
    std::string note; // a MoE block's "8 experts, 2 active per token", over the empty Op column
};

void collect(const Model& model, const Report& report, const std::vector<LayerCost>& costs, int layer, int depth,
             const std::string& indent, bool allNodes, std::vector<Row>& rows)
{
    const LayerNode& l = model.layers[static_cast<size_t>(layer)];
    if (l.depth >= depth)
        return;
    const std::vector<NodeCost>& nodeCosts = report.evaluation.nodes;
    auto shapeOf = [&](int node) {
        const Node& n = model.nodes[static_cast<size_t>(node)];
        return !n.outputs.empty() && n.outputs[0] >= 0
                   ? shapeString(model, n.outputs[0], &report.evaluation.shapes.values)
                   : std::string();
    };
    for (const TreeEntry& entry : treeEntries(model, layer, allNodes)) {
        Row r;
        r.name = indent;
        if (entry.layer >= 0) {
            const LayerNode& child = model.layers[static_cast<size_t>(entry.layer)];
            const LayerCost& c = costs[static_cast<size_t>(entry.layer)];
            r.name += child.name;
            r.note = layerNote(model, entry.layer);
            if (c.nodes == 1 && c.lastNode >= 0)
                r.op = model.nodes[static_cast<size_t>(c.lastNode)].op;
            if (c.lastNode >= 0)
                r.shape = shapeOf(c.lastNode);
            r.params = c.params ? formatCount(c.params) : "--";
            r.activations = c.unknownShape ? "unknown" : formatBytes(c.outputBytes);
            r.saved = formatBytes(c.savedBytes);
            rows.push_back(std::move(r));
            collect(model, report, costs, entry.layer, depth, indent + "  ", allNodes, rows);
            continue;
        }
        // Graph nodes are rows only when asked for; the folded row sums its nodes.
        const std::vector<int> nodes = entry.node >= 0            ? std::vector<int>{entry.node}
                                       : !entry.maskNodes.empty() ? entry.maskNodes
                                                                  : entry.shapeNodes;
        if (entry.node >= 0 && !allNodes)
            continue;
        int64_t params = 0, out = 0, saved = 0;
        bool unknown = false;
        for (int n : nodes) {
            const NodeCost c = static_cast<size_t>(n) < nodeCosts.size() ? nodeCosts[static_cast<size_t>(n)]
                                                                         : NodeCost{};
            params += c.params;
            out += c.outputBytes;
            saved += c.savedBytes;
            unknown = unknown || c.unknownShape;
        }
        if (entry.node >= 0) {
            const Node& n = model.nodes[static_cast<size_t>(entry.node)];
            const auto slash = n.name.find_last_of('/');
            r.name += n.name.empty() ? n.op : slash == std::string::npos ? n.name : n.name.substr(slash + 1);
            r.op = n.op;
            r.shape = shapeOf(entry.node);
        } else {
            r.name += std::string(entry.maskNodes.empty() ? "shape computations (" : "attention mask (") +
                      std::to_string(nodes.size()) + (nodes.size() == 1 ? " node)" : " nodes)");
        }
        r.params = params ? formatCount(params) : "--";
        r.activations = unknown ? "unknown" : formatBytes(out);
        r.saved = formatBytes(saved);
        rows.push_back(std::move(r));
    }
}

std::string line(size_t width, const char* glyph)
{
    std::string s;
    for (size_t i = 0; i < width; ++i)
        s += glyph;
    return s;
}

// A MoE config.json's experts and active parameters (weights, gradients and optimizer state follow the total,
// docs/MOE.md 3), and the routing balance assumed (docs/MOE.md 7).
void moeLines(std::ostream& out, const Model& model, const Evaluation& e, const Config& cfg)
{
    const HfMoeSummary moe = model.hfCausalLm ? hfMoeSummary(model.info.file, model.params.trainable) : HfMoeSummary{};
    if (moe.text.empty())
        return;
    out << "Experts  " << moe.text << ": " << formatCount(moe.active.withEmbedding) << " active params ("
        << formatCount(moe.active.withoutEmbedding) << " without the input embedding) of "
        << formatCount(model.params.trainable) << "\n";
    int64_t tokens = 1;
    for (size_t i = 0; i < model.symbols.size(); ++i)
        if (static_cast<int>(i) == model.batchSymbol || model.symbols[i].name == "seq")
            tokens *= e.shapes.values.at(i);
    const HfHotExpert hot = hfHotExpert(moe, cfg.hotExpertShare, tokens / std::max(1, cfg.accumulate));
    char share[32];
    std::snprintf(share, sizeof share, "%.1f %%", 100.0 * hot.share);
    out << "Routing  " << (hot.balanced ? "balanced" : "skewed (--hot-expert-share)") << ": the hottest expert gets "
        << share << " of the tokens (" << hot.tokens << ")";
    if (cfg.mode == Mode::Train)
        out << ", keeping " << formatBytes(hot.savedElements * (cfg.dtype == DtypePolicy::FP32 ? 4 : 2))
            << " for backward over the MoE layers";
    out << "\n";
}

// Model, symbols and configuration: what the figures below are for.
void writeHeader(std::ostream& out, const Model& model, const Report& report)
{
    const Evaluation& e = report.evaluation;
    const Config& cfg = report.config;
    const ParamCounts params = countParams(model, cfg);
    std::string opset;
    for (const auto& [domain, version] : model.info.opsets)
        if (domain.empty() || domain == "ai.onnx")
            opset = std::to_string(version);
    out << "Model    " << model.info.file << "\n";
    out << "         " << (model.info.producer.empty() ? "unknown producer" : model.info.producer) << ", IR "
        << model.info.irVersion << ", opset " << (opset.empty() ? "?" : opset) << ", " << model.nodes.size()
        << " nodes, " << formatCount(params.total()) << " params: " << formatCount(params.trainable) << " trainable, "
        << formatCount(params.frozen) << " frozen"
        << (model.info.externalDataMissing ? " (external weights absent: not needed)" : "") << "\n";
    moeLines(out, model, e, cfg);
    out << "Symbols  ";
    for (size_t i = 0; i < model.symbols.size(); ++i)
        out << (i ? ", " : "") << model.symbols[i].name << "=" << e.shapes.values.at(i);
    if (model.symbols.empty())
        out << "(none: static shapes)";
    out << "\nConfig   ";
    if (cfg.framework != Framework::HF) // the preset's name, where one was applied (hf: as before)
        out << toString(cfg.framework) << " preset, ";
    out << toString(cfg.mode) << ", " << toString(cfg.dtype);
    if (cfg.torch != TorchVersion::V2) // an older release's formulas (--torch): named; 2.x prints as before
        out << ", PyTorch " << toString(cfg.torch);
    if (cfg.hfFp32Logits) // --transformers-version before 4.46
        out << ", transformers < 4.46";
    if (cfg.loopKeepsOutput) // --loop custom
        out << ", custom loop";
    if (cfg.mode == Mode::Train)
        out << ", " << toString(cfg.optimizer) << ", loss " << toString(cfg.loss);
    if (cfg.checkpointSegments > 1)
        out << ", " << cfg.checkpointSegments << " checkpoint segments";
    if (cfg.accumulate > 1)
        out << ", accumulate " << cfg.accumulate;
    if (cfg.inplace)
        out << ", inplace";
    if (cfg.offloadActivations)
        out << ", activation offloading";
    out << ", attention " << toString(cfg.attention);
    out << ", allocator " << toString(cfg.allocator) << "\n\n";
}

// The layer tree to `depth`, with its totals.
void writeLayerTable(std::ostream& out, const Model& model, const Report& report, int depth, bool allNodes)
{
    const Evaluation& e = report.evaluation;
    const std::vector<LayerCost> costs = aggregateLayers(model, e);
    std::vector<Row> rows;
    if (!model.layers.empty())
        collect(model, report, costs, 0, depth, "", allNodes, rows);
    const size_t wName = 44, wOp = 20, wShape = 22, wNum = 12;
    const size_t width = wName + wOp + wShape + 3 * wNum + 5;
    out << line(width, "─") << "\n";
    out << pad("Layer", wName) << " " << pad("Op", wOp) << " " << pad("Output shape", wShape) << " "
        << pad("Params", wNum, true) << " " << pad("Activations", wNum, true) << " " << pad("Saved", wNum, true)
        << "\n";
    out << line(width, "─") << "\n";
    for (const Row& r : rows) {
        if (!r.note.empty() && r.op.empty())
            out << pad(truncate(r.name + "  " + r.note, wName + 1 + wOp), wName + 1 + wOp) << " ";
        else
            out << pad(truncate(r.name, wName), wName) << " " << pad(truncate(r.op, wOp), wOp) << " ";
        out << pad(truncate(r.shape, wShape), wShape) << " " << pad(r.params, wNum, true) << " "
            << pad(r.activations, wNum, true) << " " << pad(r.saved, wNum, true) << "\n";
    }
    out << line(width, "─") << "\n";
    int64_t outputs = 0;
    for (const NodeCost& c : e.nodes)
        outputs += c.outputBytes;
    const ParamCounts params = countParams(model, report.config);
    // the bytes this run holds (the dtype policy's, the 4-bit format's), as the memory table's weights: the
    // file's own dtypes (an fp32-built config.json) would contradict it
    const Breakdown& held = e.memory;
    out << "Total params: " << params.total() << " (" << formatBytes(held.weights - held.buffers)
        << " held): " << params.trainable << " trainable, " << params.frozen << " frozen; " << model.params.buffers
        << " buffer elements (" << formatBytes(held.buffers) << ")\n";
    out << "Sum of node outputs: " << formatBytes(outputs) << "\n\n";
}

// Each memory category, in readable units and in bytes.
void writeMemory(std::ostream& out, const Model& model, const Report& report)
{
    const Evaluation& e = report.evaluation;
    const Breakdown& m = report.evaluation.memory;
    const Config& cfg = report.config;
    auto item = [&](const char* name, int64_t bytes) {
        out << "  " << pad(name, 26) << pad(formatBytes(bytes), 12, true) << pad(std::to_string(bytes), 16, true)
            << "\n";
    };
    out << "Memory (bytes)\n";
    item("weights", m.weights);
    if (m.dequantTransient > 0)
        item("dequantized weight", m.dequantTransient);
    if (cfg.mode == Mode::Train) {
        item("gradients", m.gradients);
        item("optimizer states", m.optimizer);
        if (m.masterWeights)
            item("master weights", m.masterWeights);
        item("activations saved", m.activationsSaved);
    }
    item("activations live at peak", m.activationsPeak);
    if (const int64_t step = peakParts(report.evaluation).back().bytes; step > 0)
        item("optimizer-step temporaries", step); // the rest of an optimizer-step peak (peakParts)
    item("peak (allocated)", m.peak);
    item("peak (reserved)", m.reservedPeak);
    if (m.reservedPeakAt > 0) { // --vary: which step of the varying symbol reserves the most
        const std::string& name = model.symbols[static_cast<size_t>(cfg.varySymbol)].name;
        out << "  (reserved: the highest of the steps with " << name << " up to "
            << cfg.symbols[static_cast<size_t>(cfg.varySymbol)] << ", reached at " << name << " " << m.reservedPeakAt
            << ")\n";
    }
    item("workspace", m.workspace);
    item("CUDA context", m.context);
    item("classic estimate", m.classicEstimate);
    if (m.classicEstimate > 0 && m.peak > 0) {
        // Say which way the rule of thumb errs: that is what a user acting on it would get wrong.
        const double ratio = static_cast<double>(m.classicEstimate) / static_cast<double>(m.peak);
        char text[128];
        std::snprintf(text, sizeof text, "%.2fx %s", ratio >= 1 ? ratio : 1 / ratio,
                      ratio >= 1 ? "more than the exact peak" : "less than the exact peak");
        out << "  (the seed rule params x n + batch x outputs x 2 says " << text << ")\n";
    }
    if (e.inplaceTransientSaving != 0)
        out << "  inplace activations change the transient peak by " << formatBytes(-e.inplaceTransientSaving) << "\n";
}

// The largest tensors live at the peak, and the share of each GPU of a cluster.
void writePeakAndGpus(std::ostream& out, const Model& model, const Report& report)
{
    const Evaluation& e = report.evaluation;
    const Config& cfg = report.config;
    if (!e.peakLive.empty()) {
        out << "\nLive at the peak (largest first)\n";
        for (size_t i = 0; i < e.peakLive.size() && i < 5; ++i) {
            const int t = e.peakLive[i];
            const Tensor& tensor = model.tensors[static_cast<size_t>(t)];
            out << "  " << pad(formatBytes(i < e.peakLiveBytes.size() ? e.peakLiveBytes[i] : int64_t(0)), 12, true)
                << "  " << (tensor.producer >= 0 ? model.nodePath(tensor.producer) : tensor.name) << "\n";
        }
    }
    if (!report.cluster.gpus.empty() && report.cluster.gpus.size() > 1) {
        out << "\nPer GPU (" << toString(cfg.strategy) << ")\n";
        for (const GpuShare& g : report.cluster.gpus) {
            out << "  GPU " << g.index << ": batch " << g.batch << ", peak " << formatBytes(g.peak) << " (weights "
                << formatBytes(g.weights) << ", grads " << formatBytes(g.gradients) << ", optimizer "
                << formatBytes(g.optimizer) << ", activations " << formatBytes(g.activations) << ")\n";
            if (g.reservedAtCapacity > 0) // the need was above the capacity (GpuShare::reservedAtCapacity)
                out << "         at capacity: the allocator gives its cache back and retries, holding "
                    << formatBytes(g.reservedAtCapacityLow) << " to " << formatBytes(g.reservedAtCapacity)
                    << " reserved as its first failed cudaMalloc comes (" << formatBytes(g.reservedPeak)
                    << " without the limit)\n";
        }
        for (const std::string& n : report.cluster.notes)
            out << "  " << n << "\n";
    }
}

// The plan that makes it fit (FitPlan): core's sentence, the one the GUI's banner and the PDF say.
void writePlan(std::ostream& out, const FitPlan& p)
{
    if (const std::string text = planText(p); !text.empty())
        out << text << "\n";
}

// The verdict, the largest batch or symbol value that fits, and what would help.
void writeFit(std::ostream& out, const Model& model, const Report& report)
{
    const Fit& f = report.fit;
    out << "\n";
    if (f.capacity > 0 && f.sizesUnknown) {
        out << "Fit on " << f.gpu << " (" << formatBytes(f.capacity) << "): " << unknownFitText(model, f) << "\n";
    } else if (f.capacity > 0) {
        if (f.fitsSafely && f.atCapacity)
            out << "Fits on " << f.gpu << " (" << formatBytes(f.capacity)
                << ") at capacity - its cache fills the card, given back and retried when an allocation fails";
        else if (f.fitsSafely)
            out << "Fits on " << f.gpu << " (" << formatBytes(f.capacity) << ") - " << formatBytes(f.headroom)
                << " headroom";
        else if (f.fits)
            out << "May not fit on " << f.gpu << " (" << formatBytes(f.capacity) << ") - " << formatBytes(f.headroom)
                << " headroom expected, less than the safety margin";
        else
            out << "Does not fit on " << f.gpu << " (" << formatBytes(f.capacity) << ") - needs "
                << formatBytes(f.needed);
        if (f.maxBatch == kUnknownMax)
            out << ", max batch: cannot tell (the need stays under capacity up to batch " << (int64_t{1} << 20)
                << ")\n";
        else if (f.expectedMaxBatch != f.maxBatch)
            out << ", max batch " << f.maxBatch << " - " << f.expectedMaxBatch << " expected\n";
        else
            out << ", max batch " << f.maxBatch << "\n";
    }
    if (f.maxSymbol >= 0 && f.capacity > 0) {
        const std::string& name = model.symbols[size_t(f.maxSymbol)].name;
        if (f.maxSymbolValue == kUnknownMax)
            out << "Max " << name << ": cannot tell" << (f.sizesUnknown ? "" : " (the need does not grow with it)")
                << "\n";
        else
            out << "Max " << name << " that fits: " << f.maxSymbolValue << "\n";
    }
    writePlan(out, report.fitPlan);
    if (!report.advice.empty() && !f.sizesUnknown && (!f.fits || f.capacity == 0)) {
        // One change at a time, each saying whether it alone would fit (the plan above combines them).
        out << "Try:";
        for (size_t i = 0; i < report.advice.size() && i < 4; ++i)
            out << (i ? "," : "") << " " << adviceText(report.advice[i]);
        out << "\n";
    }
    if (const auto kv = kvCache(model))
        out << "KV cache (" << model.symbols[size_t(kv->pastSymbol)].name
            << "): " << formatBytes(kv->bytesPerTokenPerLayer) << " per token per layer x " << kv->layers
            << " layers = " << formatBytes(kv->bytesPerToken) << " per token per sequence\n";
    if (report.bestCheckpoint > 1)
        out << "Best checkpoint segments: " << report.bestCheckpoint << "\n";
}

void writeWarnings(std::ostream& out, const Model& model, const Report& report)
{
    const Evaluation& e = report.evaluation;
    std::vector<std::string> warnings = model.warnings;
    warnings.insert(warnings.end(), e.warnings.begin(), e.warnings.end());
    if (!warnings.empty()) {
        out << "\nWarnings (" << warnings.size() << ")\n";
        for (size_t i = 0; i < warnings.size() && i < 20; ++i)
            out << "  " << warnings[i] << "\n";
        if (warnings.size() > 20)
            out << "  ... " << warnings.size() - 20 << " more (see --json)\n";
    }
}

} // namespace

std::string humanReport(const Model& model, const Report& report, int depth, bool allNodes)
{
    std::ostringstream out;
    writeHeader(out, model, report);
    writeLayerTable(out, model, report, depth, allNodes);
    writeMemory(out, model, report);
    writePeakAndGpus(out, model, report);
    writeFit(out, model, report);
    writeWarnings(out, model, report);
    return out.str();
}

} // namespace headroom::cli
