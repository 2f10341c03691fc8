// The report's writers: the JSON of docs/DESIGN.md "Machine-readable output" (schema headroom.report/1), the
// layer table as CSV and Netron's attachment. The JSON is built one top-level key per function, named for
// the key, and toJson lists them in the schema's order (nlohmann::json keeps an object's keys sorted, so
// the order of the calls does not change the bytes).
#include "headroom/import/batch.h"
#include "headroom/import/hfconfig.h"
#include "headroom/memory/finetune_summary.h"
#include "headroom/memory/kvcache.h"
#include "headroom/report/layer_tree.h"
#include "headroom/report/report.h"
#include "headroom/shapes/shapes.h"

#include <algorithm>
#include <sstream>

namespace headroom {
namespace {

using nlohmann::json;

json shapeJson(const Model& model, int tensor, const Bindings& values)
{
    if (tensor < 0)
        return nullptr;
    const std::vector<int64_t> dims = concreteDims(model, tensor, values);
    if (dims.empty() && model.tensors[static_cast<size_t>(tensor)].shape.state == TensorShape::State::Unknown)
        return nullptr;
    return dims;
}

json modelJson(const Model& model, const Evaluation& e)
{
    json opsets = json::object();
    for (const auto& [domain, version] : model.info.opsets)
        opsets[domain.empty() ? "ai.onnx" : domain] = version;
    json j = {
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
        j["warnings"].push_back(w);
    return j;
}

// Every symbol's value as configured (the model's default where the config does not bind it).
json symbolsJson(const Model& model, const Config& c)
{
    json symbols = json::object();
    for (size_t i = 0; i < model.symbols.size(); ++i)
        symbols[model.symbols[i].name] = i < c.symbols.size() ? c.symbols[i] : model.symbols[i].value;
    return symbols;
}

json configJson(const Model& model, const Config& c)
{
    json j = {
        {"batch", batchOf(model, c)},
        {"set", symbolsJson(model, c)},
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
        j["optimizer_bytes"] = c.customOptimizerBytes;
    if (c.framework != Framework::HF) // only where a preset was applied: every other output stays as it was
        j["framework"] = toString(c.framework);
    if (c.offloadActivations) // only when on, like framework
        j["offload_activations"] = true;
    if (c.bnbKeepsMatmulInput != presetBnbKeepsMatmulInput(c.framework)) // only a --bnb-version the preset lacks
        j["bnb_keeps_matmul_input"] = c.bnbKeepsMatmulInput;
    if (c.strategy == Strategy::FSDP && (c.fsdpOrigParams || c.fsdpNoSync)) { // only where they act
        j["fsdp_orig_params"] = c.fsdpOrigParams;
        j["fsdp_no_sync"] = c.fsdpNoSync;
    }
    if (c.hfFp32Logits) // --transformers-version before 4.46 only
        j["transformers_fp32_logits"] = true;
    if (c.loopKeepsOutput) // --loop custom only
        j["loop"] = "custom";
    if (c.varySymbol >= 0 && static_cast<size_t>(c.varySymbol) < model.symbols.size()) // --vary only
        j["vary"] = model.symbols[static_cast<size_t>(c.varySymbol)].name;
    return j;
}

// One meaning of "trainable" (countParams): what requires grad under the configuration's freeze patterns and
// LoRA adapters; frozen the rest; total every parameter in the file.
json paramsJson(const Model& model, const Config& config)
{
    const ParamCounts counts = countParams(model, config);
    json j = {
        {"trainable", counts.trainable},
        {"frozen", counts.frozen},
        {"total", counts.total()},
        {"buffers", model.params.buffers},
        {"trainable_bytes", counts.trainableBytes},
        {"frozen_bytes", counts.frozenBytes},
        {"buffer_bytes", model.params.bufferBytes},
    };
    // Mixture-of-experts configs: what a token runs through beside the total (docs/MOE.md).
    if (const HfMoeSummary moe = model.hfCausalLm ? hfMoeSummary(model.info.file, model.params.trainable)
                                                  : HfMoeSummary{};
        !moe.text.empty()) {
        j["moe"] = moe.text;
        j["active"] = moe.active.withEmbedding;
        j["active_without_embedding"] = moe.active.withoutEmbedding;
    }
    return j;
}

// The routing balance assumed for a MoE config (Config::hotExpertShare, docs/MOE.md section 7), for the
// micro-batch's tokens; null for other models.
json hotExpertJson(const Model& model, const Config& c, const Evaluation& e)
{
    const HfMoeSummary moe = model.hfCausalLm ? hfMoeSummary(model.info.file, model.params.trainable) : HfMoeSummary{};
    if (moe.text.empty())
        return nullptr;
    int64_t tokens = 1;
    for (size_t i = 0; i < model.symbols.size(); ++i)
        if (static_cast<int>(i) == model.batchSymbol || model.symbols[i].name == "seq")
            tokens *= e.shapes.values.at(i);
    const HfHotExpert hot = hfHotExpert(moe, c.hotExpertShare, tokens / std::max(1, c.accumulate));
    const int64_t saved = c.mode == Mode::Train ? hot.savedElements * (c.dtype == DtypePolicy::FP32 ? 4 : 2) : 0;
    return {{"share", hot.share}, {"balanced", hot.balanced}, {"tokens", hot.tokens}, {"saved_bytes", saved}};
}

json memoryJson(const Evaluation& e)
{
    const Breakdown& m = e.memory;
    json j = {
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
    if (m.dequantTransient > 0) // with 4/8-bit weights only: "weights" is their stored size
        j["dequant_transient"] = m.dequantTransient;
    if (const int64_t step = peakParts(e).back().bytes; step > 0) // an optimizer-step peak's own temporaries
        j["optimizer_step_temporaries"] = step;
    if (m.offloadedActivations > 0) // activation offloading only: pinned host bytes, not in the peak
        j["offloaded_activations"] = m.offloadedActivations;
    if (m.reservedPeakAt > 0) // --vary: the varying symbol's value whose step makes reserved_peak
        j["reserved_peak_at"] = m.reservedPeakAt;
    return j;
}

// LoRA and quantization settings with what they change (only with adapters or quantized weights).
json finetuneJson(const Model& model, const Report& report)
{
    const Config& c = report.config;
    const FineTuneSummary f = summarizeFineTune(model, c, report.evaluation);
    std::vector<std::string> targets = c.finetune.lora.targets;
    json j = {{"method", f.method},
              {"rank", c.finetune.lora.r},
              {"alpha", c.finetune.lora.alpha},
              {"dropout", c.finetune.lora.dropout},
              {"targets", targets},
              {"adapter_dtype", c.finetune.lora.dtype},
              {"quantization", std::string(toString(c.finetune.quant))},
              {"double_quant", c.finetune.doubleQuant},
              {"compute_dtype", c.finetune.computeDtype},
              // what the step applies: a training preparation, never in inference (kbitPrepApplies)
              {"kbit_prep", c.finetune.kbitPrep && (c.finetune.quant == Quant::None || f.kbitPrep)},
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
    if (c.finetune.lora.dora) // only there, so that the other outputs stay as they were
        j["dora"] = true;
    if (c.finetune.lora.init != "true") // only there, as dora
        j["init_lora_weights"] = c.finetune.lora.init;
    if (c.finetune.lora.method == PeftMethod::IA3 && c.finetune.lora.feedforward)
        j["feedforward"] = *c.finetune.lora.feedforward; // unset: PEFT's list for the model_type
    return j;
}

// The verdict; `null` where no number is honest (docs/DESIGN.md "Fit and max batch").
json fitJson(const Model& model, const Fit& fit)
{
    json j = {
        {"gpu", fit.gpu},         {"capacity", fit.capacity}, {"needed", fit.needed},
        {"fits", fit.fitsSafely}, {"headroom", fit.headroom}, {"max_batch", fit.maxBatch},
    };
    if (fit.maxBatch == kUnknownMax)
        j["max_batch"] = nullptr;
    if (fit.atCapacity) // only there, so that the other outputs stay as they were
        j["at_capacity"] = true;
    if (fit.sizesUnknown) {
        j["fits"] = nullptr;
        j["headroom"] = nullptr;
        j["unknown"] = {
            {"tensors", fit.unknownTensors},
            {"first_node", fit.unknownNode >= 0 ? json(model.nodePath(fit.unknownNode)) : json(nullptr)},
            {"text", unknownFitText(model, fit)},
        };
    }
    if (fit.maxSymbol >= 0) {
        j["max"] = {
            {"symbol", model.symbols[size_t(fit.maxSymbol)].name},
            {"value", fit.maxSymbolValue == kUnknownMax ? json(nullptr) : json(fit.maxSymbolValue)},
        };
    }
    return j;
}

json kvCacheJson(const Model& model, const KvCache& kv)
{
    return {
        {"layers", kv.layers},
        {"symbol", model.symbols[size_t(kv.pastSymbol)].name},
        {"bytes_per_token_per_layer", kv.bytesPerTokenPerLayer},
        {"bytes_per_token", kv.bytesPerToken},
    };
}

json layersJson(const Model& model, const Evaluation& e)
{
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
    return layers;
}

// The ten biggest tensors live at the peak.
json peakCulpritsJson(const Model& model, const Evaluation& e)
{
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
    return peakLive;
}

json gpusJson(const ClusterEvaluation& cluster)
{
    json gpus = json::array();
    for (const GpuShare& g : cluster.gpus) {
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
        if (g.reservedAtCapacity > 0) // only where the need was above the capacity
        {
            gpus.back()["reserved_at_capacity"] = g.reservedAtCapacity;
            gpus.back()["reserved_at_capacity_low"] = g.reservedAtCapacityLow;
        }
    }
    return gpus;
}

json checkpointJson(const Report& report)
{
    json curve = json::array();
    for (const CheckpointPoint& p : report.checkpointCurve)
        curve.push_back({{"segments", p.k}, {"peak", p.peak}, {"recompute_macs", p.recomputeMacs}});
    return {{"curve", curve}, {"best_segments", report.bestCheckpoint}};
}

json batchSweepJson(const Report& report)
{
    json sweep = json::array();
    for (const auto& [b, need] : report.batchSweep)
        sweep.push_back({{"batch", b}, {"needed", need}});
    return sweep;
}

json adviceJson(const Report& report)
{
    json advice = json::array();
    for (const Advice& a : report.advice)
        advice.push_back({{"summary", a.summary},
                          {"saving", a.saving()},
                          {"needed_after", a.needAfter},
                          {"fits_after", a.fitsAfter}});
    return advice;
}

json timelineJson(const Model& model, const Evaluation& e)
{
    json tl = json::array();
    for (const TimelinePoint& p : e.timeline)
        tl.push_back({{"step", p.step},
                      {"node", p.node >= 0 ? model.nodePath(p.node) : std::string()},
                      {"phase", toString(p.phase)},
                      {"allocated", p.allocated},
                      {"high", p.high}});
    return tl;
}

} // namespace

nlohmann::json toJson(const Model& model, const Report& report, const ReportOptions& options)
{
    const Config& c = report.config;
    const Evaluation& e = report.evaluation;
    json j;
    j["schema"] = "headroom.report/1";
    j["model"] = modelJson(model, e);
    j["symbols"] = symbolsJson(model, c);
    j["config"] = configJson(model, c);
    j["params"] = paramsJson(model, c);
    if (json hot = hotExpertJson(model, c, e); !hot.is_null()) {
        j["config"]["hot_expert_share"] = c.hotExpertShare;
        j["params"]["hot_expert"] = std::move(hot);
    }
    j["memory"] = memoryJson(e);
    if (c.finetune.lora.active() || c.finetune.quant != Quant::None)
        j["finetune"] = finetuneJson(model, report);
    j["fit"] = fitJson(model, report.fit);
    if (const auto kv = kvCache(model))
        j["kv_cache"] = kvCacheJson(model, *kv);
    j["layers"] = layersJson(model, e);
    j["peak_culprits"] = peakCulpritsJson(model, e);
    if (!report.cluster.gpus.empty()) {
        j["gpus"] = gpusJson(report.cluster);
        j["gpu_notes"] = report.cluster.notes;
    }
    if (!report.checkpointCurve.empty())
        j["checkpoint"] = checkpointJson(report);
    if (!report.batchSweep.empty())
        j["batch_sweep"] = batchSweepJson(report);
    j["advice"] = adviceJson(report);
    if (report.fitPlan.capacity > 0)
        j["plan"] = toJson(report.fitPlan);
    if (options.timeline) {
        j["timeline"] = timelineJson(model, e);
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
