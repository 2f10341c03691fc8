// One configuration at one binding, before the walk: the bindings a step runs at (gradient accumulation's
// micro-batch), every tensor's and parameter's bytes under the dtype policy, fine-tuning and quantization
// (Sizes), and the simulation options (checkpoint segments, offloading). evaluate() (engine.cpp), the fit's
// per-step highs and the allocator replay all start from these, so they simulate the same step.
#include "engine/engine_internal.h"

#include <algorithm>
#include <optional>

namespace headroom {

Bindings bindingsFor(const Model& m, const Config& config)
{
    Bindings b = config.symbols.size() == m.symbols.size() ? config.symbols : m.defaultBindings();
    if (config.accumulate > 1 && m.batchSymbol >= 0) {
        int64_t& batch = b[static_cast<size_t>(m.batchSymbol)];
        batch = (batch + config.accumulate - 1) / config.accumulate;
    }
    return b;
}

Sizes computeSizes(const PlanData& p, const Config& config, const ShapeTable& shapes, bool train)
{
    const Model& m = *p.model;
    Sizes s;
    const size_t nT = m.tensors.size();
    s.numel.assign(shapes.numel.begin(), shapes.numel.begin() + std::min(nT, shapes.numel.size()));
    s.numel.resize(nT, -1);
    s.act.assign(nT, 0);
    s.gradBytes.assign(nT, 0);
    s.weightBytes.assign(nT, 0);
    for (size_t t = 0; t < nT; ++t) {
        const int64_t n = s.numel[t];
        if (p.dynamic[t] && !p.virtualOut[t] && n > 0)
            s.act[t] = activationBytes(config, p, static_cast<int>(t), n);
    }
    s.spanElems.resize(p.spans.size());
    for (size_t k = 0; k < p.spans.size(); ++k)
        s.spanElems[k] = spanElements(*p.shapeClasses.shapes[static_cast<size_t>(p.spans[k].shape)], p.spans[k].begin,
                                      p.spans[k].end, shapes.values);
    const int gradElem = gradElemBytes(config);
    const FineTune& ft = config.finetune;
    // The adapters' own dtype as a config, made only when a model has adapters: no copy on an ordinary tick
    std::optional<Config> adapterConfig[2]; // [0] fp32, [1] 16-bit
    auto adapterConfigFor = [&](int elem) -> const Config& {
        std::optional<Config>& c = adapterConfig[elem == 2 ? 1 : 0];
        if (!c) {
            c = config;
            c->dtype = elem == 2 ? DtypePolicy::BF16 : DtypePolicy::FP32;
        }
        return *c;
    };
    const int dequantElem = dequantElemBytes(config); // once per tick, not per parameter
    const bool kbitPrep = kbitPrepApplies(config);
    for (size_t pi = 0; pi < p.trainable.size(); ++pi) {
        const int t = p.trainable[pi];
        const std::vector<int64_t>& dims = p.trainableDims[pi];
        const int64_t n = std::max<int64_t>(s.numel[static_cast<size_t>(t)], 0);
        if (ft.quant != Quant::None && p.quantizable[static_cast<size_t>(t)]) {
            // bitsandbytes Params4bit / Int8Params (never trained); each forward, backward and recompute
            // matmul dequantizes the whole weight into a compute-dtype transient (bnb.matmul_4bit,
            // MatMul4Bit.forward/backward: F.dequantize_4bit(B, quant_state).to(A.dtype)); the largest one
            // is counted at the peak (an upper bound when the peak falls outside any 4-bit matmul).
            const QuantCost q = quantizedCost(ft, n, dims, dequantElem);
            s.quantized += q.bytes;
            s.persistentWeights += q.bytes;
            s.weightBytes[static_cast<size_t>(t)] = q.bytes;
            s.dequantTransient = std::max(s.dequantTransient, q.transient);
            continue;
        }
        if (!train && p.mxfp4[static_cast<size_t>(t)]) {
            // gpt-oss's MXFP4 experts stay packed for inference (transformers' Mxfp4HfQuantizer with the triton
            // kernels); training dequantizes them (Mxfp4Config(dequantize=True), the OpenAI fine-tuning cookbook)
            const int64_t q = mxfp4Bytes(n);
            s.persistentWeights += q;
            s.weightBytes[static_cast<size_t>(t)] = q;
            continue;
        }
        // LoRA adapters keep their own dtype whatever the policy (PEFT >= 0.12: fp32, autocast_adapter_dtype=True
        // in LoraLayer.update_layer -> _cast_adapter_dtype; --lora dtype=bf16|fp16: 16-bit): weights, gradients
        // and optimizer state in it (torch optimizers' state is zeros_like the parameter)
        const int adapterElem = p.trainableAdapter[pi] ? loraAdapterBytes(config.finetune.lora) : 0;
        // prepare_model_for_kbit_training (peft/utils/other.py): every non-quantized fp16/bf16 parameter is
        // cast to fp32
        const int64_t w = adapterElem ? checkedMul(n, adapterElem).value_or(0)
                          : kbitPrep && isFloating(m.tensors[static_cast<size_t>(t)].dtype)
                              ? checkedMul(n, 4).value_or(0)
                              : paramBytes(config, m.tensors[static_cast<size_t>(t)].dtype, n);
        s.weightBytes[static_cast<size_t>(t)] = w;
        s.persistentWeights += w;
        if (train && !p.frozen[static_cast<size_t>(t)]) {
            s.gradBytes[static_cast<size_t>(t)] = checkedMul(n, adapterElem ? adapterElem : gradElem).value_or(0);
            const Config& oc = adapterElem ? adapterConfigFor(adapterElem) : config;
            const int64_t paged = pagedOptimizerBytes(oc, p.trainableDimsNumel[pi]);
            s.persistentOptimizer += optimizerStateBytes(oc, dims, p.trainableDimsNumel[pi]) - paged;
            s.pagedOptimizer += paged;
            // fp32 adapters need no fp32 master copy
            if ((config.dtype == DtypePolicy::MixedFP16 || config.dtype == DtypePolicy::MixedBF16) && adapterElem != 4)
                s.master += checkedMul(n, 4).value_or(0);
        }
    }
    if (p.untiedHead >= 0) {
        // lit-gpt's own lm_head beside the tied embedding (engine_plan.cpp): frozen under finetune/lora.py, a
        // Linear4bit like every other Linear under Lightning's bitsandbytes precision (outputLayerToo), whose
        // dequantized weight is then the largest transient
        const size_t pi = static_cast<size_t>(p.untiedHead);
        const int t = p.trainable[pi];
        const int64_t n = std::max<int64_t>(s.numel[static_cast<size_t>(t)], 0);
        if (ft.quant != Quant::None) {
            const QuantCost q = quantizedCost(ft, n, p.trainableDims[pi], dequantElem);
            s.untiedHead = q.bytes;
            s.quantized += q.bytes;
            s.dequantTransient = std::max(s.dequantTransient, q.transient);
        } else {
            s.untiedHead = paramBytes(config, m.tensors[static_cast<size_t>(t)].dtype, n);
        }
        s.persistentWeights += s.untiedHead;
    }
    for (int t : p.buffers)
        s.persistentWeights += bufferBytes(config, m.tensors[static_cast<size_t>(t)].dtype,
                                           std::max<int64_t>(s.numel[static_cast<size_t>(t)], 0));
    if (config.dtype == DtypePolicy::AmpFP16 || config.dtype == DtypePolicy::AmpBF16)
        for (int t : p.amp16Params)
            s.autocast += checkedMul(std::max<int64_t>(s.numel[static_cast<size_t>(t)], 0), 2).value_or(0);
    s.persistentWeights += s.autocast;
    if (ft.quant != Quant::None && !p.trainable.empty()) {
        s.dequantHeld = s.dequantTransient;
        s.persistentWeights += s.dequantHeld;
    }
    for (int t : m.inputs)
        s.inputBytes += s.act[static_cast<size_t>(t)];
    return s;
}

// The one place that turns a configuration into simulation options: evaluate, the fit's per-step highs and
// the allocator replay must simulate the same step (checkpoint segments, HF per-layer checkpointing).
SimOptions simOptionsFor(const PlanData& p, const Config& config, const ShapeTable& shapes, const Sizes& sizes,
                         bool train, bool events)
{
    SimOptions opt;
    opt.events = events;
    opt.inplace = config.inplace;
    if (train && config.finetune.layerCheckpoint && config.checkpointSegments <= 1) {
        opt.segmentOfUnit = layerCheckpointSegments(p);
        opt.segments = opt.segmentOfUnit.empty() ? 0 : opt.segmentOfUnit.back() + 1;
    } else if (train && config.checkpointSegments > 1) {
        opt.segmentOfUnit = checkpointSegments(p, config, shapes, sizes, config.checkpointSegments);
        opt.segments = opt.segmentOfUnit.empty() ? 0 : opt.segmentOfUnit.back() + 1;
    }
    opt.offload = config.offloadActivations && opt.segments > 1;
    return opt;
}

} // namespace headroom
