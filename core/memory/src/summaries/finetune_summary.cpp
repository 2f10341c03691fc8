// The fine-tuning block of the report: how the parameters split into frozen base, adapters and quantized
// weights, and what each costs at this configuration.
#include "engine/engine_internal.h"

#include "headroom/memory/finetune_summary.h"
#include <algorithm>

namespace headroom {

namespace {
std::vector<int64_t> dimsOf(const Tensor& t)
{
    std::vector<int64_t> dims;
    for (const DimExpr& d : t.shape.dims)
        dims.push_back(d.constantValue().value_or(0));
    return dims;
}
} // namespace

FineTuneSummary summarizeFineTune(const Model& m, const Config& config, const Evaluation& e)
{
    const PlanData p = buildPlan(m, planOptions(config));
    const FineTune& ft = config.finetune;
    FineTuneSummary s;
    for (int t : p.trainable) {
        const size_t i = static_cast<size_t>(t);
        const int64_t n = i < e.shapes.numel.size() ? std::max<int64_t>(e.shapes.numel[i], 0) : 0;
        const Tensor& tensor = m.tensors[i];
        const bool adapter = isAdapterTensor(tensor); // lora_A/B, DoRA's magnitudes, IA3's vectors
        if (!p.frozen[i]) {
            s.trainableParams += n;
            if (adapter) {
                const int elem = adapterElemBytes(config, tensor);
                Config ac = config;
                ac.dtype = elem == 2 ? DtypePolicy::BF16 : DtypePolicy::FP32;
                s.adapterParams += n;
                s.adapterBytes += checkedMul(n, elem).value_or(0);
                s.adapterGradientBytes += checkedMul(n, elem).value_or(0);
                s.adapterOptimizerBytes += optimizerStateBytes(ac, dimsOf(tensor));
            }
            continue;
        }
        s.frozenParams += n;
        if (ft.quant != Quant::None && p.quantizable[i]) {
            const QuantCost q = quantizedCost(ft, n, dimsOf(tensor), dequantElemBytes(config));
            s.quantizedBytes += q.bytes;
            s.quantizedParams += n;
            s.frozenBytes += q.bytes;
            s.dequantTransientBytes = std::max(s.dequantTransientBytes, q.transient);
        } else if (kbitPrepApplies(config) && isFloating(tensor.dtype)) {
            s.frozenBytes += checkedMul(n, 4).value_or(0);
        } else {
            s.frozenBytes += paramBytes(config, tensor.dtype, n);
        }
    }
    if (p.untiedHead >= 0) { // lit-gpt's own lm_head beside the tied embedding (engine_plan.cpp), a frozen Linear
        const size_t i = static_cast<size_t>(p.trainable[static_cast<size_t>(p.untiedHead)]);
        const int64_t n = i < e.shapes.numel.size() ? std::max<int64_t>(e.shapes.numel[i], 0) : 0;
        s.frozenParams += n;
        if (ft.quant != Quant::None) {
            const QuantCost q = quantizedCost(ft, n, dimsOf(m.tensors[i]), dequantElemBytes(config));
            s.quantizedBytes += q.bytes;
            s.quantizedParams += n;
            s.frozenBytes += q.bytes;
            s.dequantTransientBytes = std::max(s.dequantTransientBytes, q.transient);
        } else {
            s.frozenBytes += paramBytes(config, m.tensors[i].dtype, n);
        }
    }
    s.method = policyIsInference(config)           ? "inference"
               : ft.quant != Quant::None           ? "qlora"
               : ft.lora.method == PeftMethod::IA3 ? "ia3"
               : ft.lora.r > 0                     ? "lora"
                                                   : "full";
    s.kbitPrep = kbitPrepApplies(config);
    return s;
}

ParamCounts countParams(const Model& m, const Config& config)
{
    const PlanData p = buildPlan(m, planOptions(config));
    ParamCounts c;
    for (int t : p.trainable) {
        int64_t n = 1;
        for (const int64_t d : dimsOf(m.tensors[static_cast<size_t>(t)]))
            n = checkedMul(n, std::max<int64_t>(d, 0)).value_or(0);
        const bool frozen = p.frozen[static_cast<size_t>(t)];
        (frozen ? c.frozen : c.trainable) += n;
        (frozen ? c.frozenBytes
                : c.trainableBytes) += checkedMul(n, bytesOf(m.tensors[static_cast<size_t>(t)].dtype)).value_or(0);
        if (p.untiedHead >= 0 && p.trainable[static_cast<size_t>(p.untiedHead)] == t) { // and lit-gpt's lm_head copy
            c.frozen += n;
            c.frozenBytes += checkedMul(n, bytesOf(m.tensors[static_cast<size_t>(t)].dtype)).value_or(0);
        }
    }
    return c;
}

std::vector<uint8_t> fourBitWeights(const Model& model, const Config& config)
{
    if (config.finetune.quant != Quant::NF4 && config.finetune.quant != Quant::FP4)
        return {};
    return quantizableWeights(model, config.modelCode == ModelCode::Litgpt);
}

} // namespace headroom
