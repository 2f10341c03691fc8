#include "headroom/report/report.h"

#include "headroom/import/hfconfig.h"
#include "headroom/memory/finetune_summary.h"
#include "headroom/memory/kvcache.h"
#include "headroom/report/layer_tree.h"
#include "headroom/shapes/shapes.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace headroom {
namespace {

int64_t batchOf(const Model& model, const Config& config)
{
    if (model.batchSymbol < 0 || static_cast<size_t>(model.batchSymbol) >= config.symbols.size())
        return 1;
    return config.symbols[static_cast<size_t>(model.batchSymbol)];
}

Config withBatch(const Model& model, Config config, int64_t batch)
{
    if (model.batchSymbol >= 0 && static_cast<size_t>(model.batchSymbol) < config.symbols.size())
        config.symbols[static_cast<size_t>(model.batchSymbol)] = batch;
    return config;
}

// Batch points for the sweep chart: powers of two up to past the max batch (or the current batch),
// plus the current batch and the max batch themselves, so the chart shows where the line crosses.
std::vector<int64_t> sweepBatches(int64_t current, int64_t maxBatch)
{
    const int64_t top = std::max<int64_t>({current * 2, maxBatch * 2, 8});
    std::vector<int64_t> out;
    for (int64_t b = 1; b <= top && b <= (int64_t{1} << 20); b *= 2)
        out.push_back(b);
    out.push_back(current);
    if (maxBatch > 0)
        out.push_back(maxBatch);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

nlohmann::json shapeJson(const Model& model, int tensor, const Bindings& values)
{
    if (tensor < 0)
        return nullptr;
    const std::vector<int64_t> dims = concreteDims(model, tensor, values);
    if (dims.empty() && model.tensors[static_cast<size_t>(tensor)].shape.state == TensorShape::State::Unknown)
        return nullptr;
    return dims;
}

// A MoE config.json's active parameters and the routing balance assumed (Config::hotExpertShare), for the
// micro-batch's tokens; nothing for other models
void moeJson(const Model& model, const Config& c, const Evaluation& e, nlohmann::json& j)
{
    const HfMoeSummary moe = model.hfCausalLm ? hfMoeSummary(model.info.file, model.params.trainable) : HfMoeSummary{};
    if (moe.text.empty())
        return;
    j["params"]["moe"] = moe.text;
    j["params"]["active"] = moe.active.withEmbedding;
    j["params"]["active_without_embedding"] = moe.active.withoutEmbedding;
    int64_t tokens = 1;
    for (size_t i = 0; i < model.symbols.size(); ++i)
        if (static_cast<int>(i) == model.batchSymbol || model.symbols[i].name == "seq")
            tokens *= e.shapes.values.at(i);
    const HfHotExpert hot = hfHotExpert(moe, c.hotExpertShare, tokens / std::max(1, c.accumulate));
    j["config"]["hot_expert_share"] = c.hotExpertShare;
    j["params"]["hot_expert"] = {
        {"share", hot.share},
        {"balanced", hot.balanced},
        {"tokens", hot.tokens},
        {"saved_bytes", c.mode == Mode::Train ? hot.savedElements * (c.dtype == DtypePolicy::FP32 ? 4 : 2) : 0}};
}

} // namespace

Report buildReport(const EnginePlan& plan, const Config& config, const ReportOptions& options)
{
    const Model& model = *plan.model;
    Report r;
    r.config = config;
    const auto stop = [&] {
        r.cancelled = r.cancelled || (options.cancel && options.cancel->load(std::memory_order_relaxed));
        return r.cancelled;
    };
    r.evaluation = evaluate(plan, config);
    if (config.gpus > 1 || config.strategy != Strategy::Single) {
        r.cluster = evaluateCluster(plan, config);
        r.fit = computeClusterFit(plan, config, r.evaluation, r.cluster);
    } else {
        r.fit = computeFit(plan, config, r.evaluation);
    }
    if (stop())
        return r;
    if (options.maxSymbol >= 0 && size_t(options.maxSymbol) < model.symbols.size()) {
        r.fit.maxSymbol = options.maxSymbol;
        // The search evaluates one GPU; a sharded or replicated configuration gets no number rather than
        // a single-GPU one.
        const bool cluster = config.gpus > 1 || config.strategy != Strategy::Single;
        r.fit.maxSymbolValue = r.fit.sizesUnknown || cluster ? kUnknownMax
                                                             : maxSymbolValue(plan, config, options.maxSymbol);
    }
    const bool oneGpu = config.gpus <= 1 && config.strategy == Strategy::Single;
    if (options.symbolMaxima && !r.fit.sizesUnknown && oneGpu && config.gpu.capacity > 0) {
        for (size_t i = 0; i < model.symbols.size() && !stop(); ++i)
            r.symbolMax.push_back(static_cast<int>(i) == model.batchSymbol
                                      ? r.fit.maxBatch
                                      : maxSymbolValue(plan, config, static_cast<int>(i)));
    }
    // No curves or advice built on sizes that are not known.
    if (!options.sweep || r.fit.sizesUnknown || stop())
        return r;
    if (config.mode == Mode::Train) {
        r.checkpointCurve = checkpointCurve(plan, config, 16);
        r.bestCheckpoint = bestCheckpointSegments(r.checkpointCurve);
    }
    if (model.batchSymbol >= 0) {
        const int64_t current = batchOf(model, config);
        for (int64_t b : sweepBatches(current, r.fit.maxBatch)) {
            if (stop())
                return r;
            const Config c = withBatch(model, config, b);
            if (r.cluster.gpus.empty()) {
                // The configured batch was evaluated above: the same need, not a second replay.
                r.batchSweep.emplace_back(b, neededBytes(c, b == current ? r.evaluation : evaluateLight(plan, c)));
            } else {
                int64_t need = 0;
                for (const GpuShare& g : evaluateCluster(plan, c).gpus)
                    need = std::max(need, g.needed);
                r.batchSweep.emplace_back(b, need);
            }
        }
    }
    if (stop())
        return r;
    AdviceInputs known;
    known.plan = &plan;
    if (config.mode == Mode::Train)
        known.checkpointCurve = &r.checkpointCurve;
    if (r.cluster.gpus.empty())
        known.need = r.fit.needed;
    r.advice = advise(model, config, known);
    return r;
}

Report buildReport(const Model& model, const Config& config, const ReportOptions& options)
{
    return buildReport(makePlan(model, config), config, options);
}

// Long on purpose: it reads top to bottom as the headroom.report/1 schema, one key per line in the order the
// JSON has them (the README describes the schema); split up, the schema would be scattered.
nlohmann::json toJson(const Model& model, const Report& report, const ReportOptions& options)
{
    using nlohmann::json;
    const Config& c = report.config;
    const Evaluation& e = report.evaluation;
    json j;
    j["schema"] = "headroom.report/1";

    json opsets = json::object();
    for (const auto& [domain, version] : model.info.opsets)
        opsets[domain.empty() ? "ai.onnx" : domain] = version;
    j["model"] = {
        {"file", model.info.file},
        {"sha256", model.info.sha256},
        {"producer", model.info.producer},
        {"ir_version", model.info.irVersion},
        {"opsets", opsets},
        {"nodes", model.nodes.size()},
        {"unknown_shapes", e.shapes.unknown},
        {"external_data_missing", model.info.externalDataMissing},
        {"warnings", model.warnings},
    };
    for (const std::string& w : e.warnings)
        j["model"]["warnings"].push_back(w);

    json symbols = json::object();
    for (size_t i = 0; i < model.symbols.size(); ++i)
        symbols[model.symbols[i].name] = i < c.symbols.size() ? c.symbols[i] : model.symbols[i].value;
    j["symbols"] = symbols;

    j["config"] = {
        {"batch", batchOf(model, c)},
        {"set", symbols},
        {"mode", toString(c.mode)},
        {"dtype", toString(c.dtype)},
        {"optimizer", toString(c.optimizer)},
        {"loss", toString(c.loss)},
        {"checkpoint", c.checkpointSegments},
        {"grad_checkpoint", c.finetune.layerCheckpoint ? "layers" : "off"},
        {"accumulate", c.accumulate},
        {"inplace", c.inplace},
        {"freeze", c.freeze},
        {"gpu", c.gpu.name},
        {"capacity", c.gpu.capacity},
        {"context", c.gpu.context},
        {"workspace", c.gpu.workspace},
        {"margin", c.marginBytes},
        {"gpus", c.gpus},
        {"strategy", toString(c.strategy)},
        {"gpu0_batch", c.gpu0Batch},
        {"offload", c.offload},
        {"allocator", toString(c.allocator)},
        {"attention", toString(c.attention)},
        {"device", toString(c.device)},
        {"pytorch", toString(c.torch)},
    };
    if (c.optimizer == Optimizer::Custom)
        j["config"]["optimizer_bytes"] = c.customOptimizerBytes;

    j["params"] = {
        {"trainable", model.params.trainable},
        {"buffers", model.params.buffers},
        {"trainable_bytes", model.params.trainableBytes},
        {"buffer_bytes", model.params.bufferBytes},
    };
    moeJson(model, c, e, j);

    const Breakdown& m = e.memory;
    j["memory"] = {
        {"weights", m.weights},
        {"buffers", m.buffers},
        {"gradients", m.gradients},
        {"optimizer", m.optimizer},
        {"paged_optimizer", m.pagedOptimizer},
        {"master_weights", m.masterWeights},
        {"activations_saved", m.activationsSaved},
        {"activations_peak", m.activationsPeak},
        {"workspace", m.workspace},
        {"context", m.context},
        {"peak", m.peak},
        {"reserved_peak", m.reservedPeak},
        {"classic_estimate", m.classicEstimate},
        {"inplace_transient_saving", e.inplaceTransientSaving},
        {"forward_macs", e.forwardMacs},
        {"recompute_macs", e.recomputeMacs},
    };

    if (c.finetune.lora.r > 0 || c.finetune.quant != Quant::None) {
        const FineTuneSummary f = summarizeFineTune(model, c, report.evaluation);
        std::vector<std::string> targets = c.finetune.lora.targets;
        j["finetune"] = {{"method", f.method},
                         {"rank", c.finetune.lora.r},
                         {"alpha", c.finetune.lora.alpha},
                         {"dropout", c.finetune.lora.dropout},
                         {"targets", targets},
                         {"adapter_dtype", c.finetune.lora.dtype},
                         {"quantization", std::string(toString(c.finetune.quant))},
                         {"double_quant", c.finetune.doubleQuant},
                         {"compute_dtype", c.finetune.computeDtype},
                         {"kbit_prep", c.finetune.kbitPrep},
                         {"grad_checkpoint", c.finetune.layerCheckpoint ? "layers" : "off"},
                         {"trainable_params", f.trainableParams},
                         {"adapter_params", f.adapterParams},
                         {"frozen_params", f.frozenParams},
                         {"frozen_bytes", f.frozenBytes},
                         {"adapter_bytes", f.adapterBytes},
                         {"adapter_gradient_bytes", f.adapterGradientBytes},
                         {"adapter_optimizer_bytes", f.adapterOptimizerBytes},
                         {"quantized_params", f.quantizedParams},
                         {"quantized_bytes", f.quantizedBytes},
                         {"transient_dequant_bytes", f.dequantTransientBytes}};
    }
    j["fit"] = {
        {"gpu", report.fit.gpu},   {"capacity", report.fit.capacity}, {"needed", report.fit.needed},
        {"fits", report.fit.fits}, {"headroom", report.fit.headroom}, {"max_batch", report.fit.maxBatch},
    };
    if (report.fit.maxBatch == kUnknownMax)
        j["fit"]["max_batch"] = nullptr;
    if (report.fit.sizesUnknown) {
        j["fit"]["fits"] = nullptr;
        j["fit"]["headroom"] = nullptr;
        j["fit"]["unknown"] = {
            {"tensors", report.fit.unknownTensors},
            {"first_node", report.fit.unknownNode >= 0 ? json(model.nodePath(report.fit.unknownNode)) : json(nullptr)},
            {"text", unknownFitText(model, report.fit)},
        };
    }
    if (report.fit.maxSymbol >= 0) {
        j["fit"]["max"] = {
            {"symbol", model.symbols[size_t(report.fit.maxSymbol)].name},
            {"value", report.fit.maxSymbolValue == kUnknownMax ? json(nullptr) : json(report.fit.maxSymbolValue)},
        };
    }

    if (const auto kv = kvCache(model)) {
        j["kv_cache"] = {
            {"layers", kv->layers},
            {"symbol", model.symbols[size_t(kv->pastSymbol)].name},
            {"bytes_per_token_per_layer", kv->bytesPerTokenPerLayer},
            {"bytes_per_token", kv->bytesPerToken},
        };
    }

    json layers = json::array();
    for (size_t n = 0; n < model.nodes.size(); ++n) {
        const Node& node = model.nodes[n];
        json shapes = json::array();
        for (int t : node.outputs)
            shapes.push_back(shapeJson(model, t, e.shapes.values));
        const NodeCost cost = n < e.nodes.size() ? e.nodes[n] : NodeCost{};
        layers.push_back({
            {"path", model.nodePath(static_cast<int>(n))},
            {"op", node.op},
            {"output_shapes", shapes},
            {"params", cost.params},
            {"activation_bytes", cost.outputBytes},
            {"saved_bytes", cost.savedBytes},
            {"shape_computation", node.shapeComputation}, // folded into one row of its layer in the tables
        });
    }
    j["layers"] = std::move(layers);

    json peakLive = json::array();
    for (size_t i = 0; i < e.peakLive.size() && i < 10; ++i) {
        const int t = e.peakLive[i];
        const Tensor& tensor = model.tensors[static_cast<size_t>(t)];
        peakLive.push_back({
            {"tensor", tensor.name},
            {"layer", tensor.producer >= 0 ? model.nodePath(tensor.producer) : std::string("(input)")},
            {"bytes", e.shapes.bytes[static_cast<size_t>(t)]},
            {"live_bytes", i < e.peakLiveBytes.size() ? e.peakLiveBytes[i] : int64_t(0)},
        });
    }
    j["peak_culprits"] = std::move(peakLive);

    if (!report.cluster.gpus.empty()) {
        json gpus = json::array();
        for (const GpuShare& g : report.cluster.gpus)
            gpus.push_back({{"index", g.index},
                            {"batch", g.batch},
                            {"peak", g.peak},
                            {"reserved_peak", g.reservedPeak},
                            {"weights", g.weights},
                            {"gradients", g.gradients},
                            {"optimizer", g.optimizer},
                            {"activations", g.activations},
                            {"communication", g.communication},
                            {"cpu_bytes", g.cpuBytes},
                            {"needed", g.needed}});
        j["gpus"] = std::move(gpus);
        j["gpu_notes"] = report.cluster.notes;
    }

    if (!report.checkpointCurve.empty()) {
        json curve = json::array();
        for (const CheckpointPoint& p : report.checkpointCurve)
            curve.push_back({{"segments", p.k}, {"peak", p.peak}, {"recompute_macs", p.recomputeMacs}});
        j["checkpoint"] = {{"curve", curve}, {"best_segments", report.bestCheckpoint}};
    }
    if (!report.batchSweep.empty()) {
        json sweep = json::array();
        for (const auto& [b, need] : report.batchSweep)
            sweep.push_back({{"batch", b}, {"needed", need}});
        j["batch_sweep"] = std::move(sweep);
    }
    json advice = json::array();
    for (const Advice& a : report.advice)
        advice.push_back({{"summary", a.summary},
                          {"saving", a.saving()},
                          {"needed_after", a.needAfter},
                          {"fits_after", a.fitsAfter}});
    j["advice"] = std::move(advice);

    if (options.timeline) {
        json tl = json::array();
        for (const TimelinePoint& p : e.timeline)
            tl.push_back({{"step", p.step},
                          {"node", p.node >= 0 ? model.nodePath(p.node) : std::string()},
                          {"phase", toString(p.phase)},
                          {"allocated", p.allocated},
                          {"high", p.high}});
        j["timeline"] = std::move(tl);
        j["peak_step"] = e.peakStep;
    }
    if (report.probe)
        j["probe"] = *report.probe;
    return j;
}

std::string toCsv(const Model& model, const Report& report)
{
    const Evaluation& e = report.evaluation;
    auto quote = [](const std::string& s) {
        if (s.find_first_of(",\"\n") == std::string::npos)
            return s;
        std::string q = "\"";
        for (char ch : s) {
            if (ch == '"')
                q += '"';
            q += ch;
        }
        return q + "\"";
    };
    std::ostringstream out;
    out << "path,op,output_shapes,params,activation_bytes,saved_bytes\n";
    // a mixture-of-experts block gets one row before its first node, as in the layer tree: "8 experts, 2 active
    // per token" and the block's parameters
    std::vector<std::pair<int, int>> blocks; // first node, layer
    for (size_t l = 0; l < model.layers.size(); ++l)
        if (!layerNote(model, static_cast<int>(l)).empty())
            blocks.emplace_back(model.layers[l].firstNode, static_cast<int>(l));
    std::sort(blocks.begin(), blocks.end());
    auto block = blocks.begin();
    for (size_t n = 0; n < model.nodes.size(); ++n) {
        for (; block != blocks.end() && block->first == static_cast<int>(n); ++block) {
            const LayerNode& l = model.layers[static_cast<size_t>(block->second)];
            out << quote(l.path) << ',' << quote(layerNote(model, block->second)) << ",," << l.params << ",,\n";
        }
        std::string shapes;
        for (int t : model.nodes[n].outputs) {
            if (t < 0)
                continue;
            if (!shapes.empty())
                shapes += " ";
            shapes += shapeString(model, t, &e.shapes.values);
        }
        const NodeCost cost = n < e.nodes.size() ? e.nodes[n] : NodeCost{};
        out << quote(model.nodePath(static_cast<int>(n))) << ',' << quote(model.nodes[n].op) << ',' << quote(shapes)
            << ',' << cost.params << ',' << cost.outputBytes << ',' << cost.savedBytes << '\n';
    }
    return out.str();
}

nlohmann::json toNetronAttachment(const Model& model, const Report& report)
{
    // Netron's sidecar format (source/metadata.js, metadata.Attachment): rows {kind, target, name, value,
    // type} in "metadata" and "metrics" containers; node rows match the node's name in the file.
    using nlohmann::json;
    const Evaluation& e = report.evaluation;
    json metrics = json::array();
    json metadata = json::array();
    auto row = [](const char* kind, const std::string& target, const char* name, json value, const char* type) {
        return json{{"kind", kind}, {"target", target}, {"name", name}, {"value", std::move(value)}, {"type", type}};
    };
    metrics.push_back(row("model", "", "peak_bytes", e.memory.peak, "bytes"));
    metrics.push_back(row("model", "", "activations_saved_bytes", e.memory.activationsSaved, "bytes"));
    metadata.push_back(row("model", "", "headroom.config",
                           std::string(toString(report.config.mode)) + ", " +
                               std::string(toString(report.config.dtype)) + ", " +
                               std::string(toString(report.config.optimizer)),
                           "string"));
    for (size_t n = 0; n < model.nodes.size(); ++n) {
        const NodeCost cost = n < e.nodes.size() ? e.nodes[n] : NodeCost{};
        const Node& node = model.nodes[n];
        const std::string target = node.name.empty() ? model.nodePath(static_cast<int>(n)) : node.name;
        metrics.push_back(row("node", target, "activation_bytes", cost.outputBytes, "bytes"));
        metrics.push_back(row("node", target, "saved_bytes", cost.savedBytes, "bytes"));
        metrics.push_back(row("node", target, "parameters", cost.params, "attribute"));
        metadata.push_back(row("node", target, "headroom.layer", model.nodePath(static_cast<int>(n)), "string"));
    }
    return {{"signature", "netron:attachment"}, {"metadata", std::move(metadata)}, {"metrics", std::move(metrics)}};
}

} // namespace headroom
