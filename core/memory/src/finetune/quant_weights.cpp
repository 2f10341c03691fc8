// Which parameters bitsandbytes quantizes, and what they cost: transformers' replace_with_bnb_linear
// (integrations/bitsandbytes.py) swaps every nn.Linear for Linear4bit / Linear8bitLt except the modules in
// llm_int8_skip_modules, which get_keys_to_not_convert fills with the output embedding (lm_head, or the
// tied embedding); embeddings and norms are not Linear and keep their dtype. Routed experts (GroupedMatMul's
// [E, K, N] weights) are quantized too: transformers 4.x holds them as per-expert nn.Linear, each a Linear4bit
// (unsloth PR #6936 on gpt-oss bnb-4bit: "per-expert Linear4bit lists"); the 64-value blocks cost the same
// whether the experts are stored one by one or as one tensor.
// lit-gpt's runs (ModelCode::Litgpt) are quantized by Lightning's BitsandbytesPrecision instead
// (lightning/fabric/plugins/precision/bitsandbytes.py at 71aed751, lit-gpt 8641822's pin; b19c3a9, litgpt's pin in
// March 2024, and 2.3/2.4 do the same through quantize_ / quantize):
// init_context patches torch.nn.Linear with _NF4Linear & co. while GPT(config) is built
// (_ClassReplacementContextManager, no ignore_modules in finetune/lora.py), so lm_head becomes a Linear4bit too; its
// _quantize_weight quantizes `weight.contiguous().to(device="cuda", dtype=torch.half)`, so the quant_state's dtype is
// fp16 and MatMul4Bit's F.dequantize_4bit(B, state).to(A.dtype) makes an fp16 weight and then a bf16 copy.
#include "engine/engine_internal.h"

#include <algorithm>

namespace headroom {

std::vector<uint8_t> quantizableWeights(const Model& m, bool outputLayerToo)
{
    std::vector<uint8_t> flag(m.tensors.size(), 0);
    auto isOutput = [&](int t) { return std::find(m.outputs.begin(), m.outputs.end(), t) != m.outputs.end(); };
    for (size_t n = 0; n < m.nodes.size(); ++n) {
        const Node& nd = m.nodes[n];
        if (nd.op == "GroupedMatMul" && nd.inputs.size() >= 2 && nd.inputs[1] >= 0) {
            const Tensor& wt = m.tensors[static_cast<size_t>(nd.inputs[1])];
            if (wt.role == TensorRole::Parameter && wt.producer < 0 && wt.aliasOf < 0 && wt.shape.dims.size() == 3)
                flag[static_cast<size_t>(nd.inputs[1])] = 1;
            continue;
        }
        if (nd.op != "MatMul" || nd.inputs.size() != 2 || nd.inputs[1] < 0)
            continue;
        int w = nd.inputs[1];
        const Tensor* wt = &m.tensors[static_cast<size_t>(w)];
        if (wt->producer >= 0) { // a stored weight through the exporter's Transpose (tied heads, exports)
            const Node& p = m.nodes[static_cast<size_t>(wt->producer)];
            if (p.op != "Transpose" || p.inputs.empty() || p.inputs[0] < 0)
                continue;
            w = p.inputs[0];
            wt = &m.tensors[static_cast<size_t>(w)];
        }
        if (wt->aliasOf >= 0) {
            w = wt->aliasOf;
            wt = &m.tensors[static_cast<size_t>(w)];
        }
        if (wt->role != TensorRole::Parameter || wt->producer >= 0 || wt->shape.dims.size() != 2)
            continue;
        // the output embedding stays unquantized; a tied one is also the input embedding (Gather)
        const bool outputLayer = nd.outputs.size() == 1 && nd.outputs[0] >= 0 && isOutput(nd.outputs[0]);
        const bool embedding = std::any_of(wt->consumers.begin(), wt->consumers.end(),
                                           [&](int c) { return m.nodes[static_cast<size_t>(c)].op == "Gather"; });
        if (embedding ||
            (!outputLayerToo && (outputLayer || m.nodePath(static_cast<int>(n)).find("lm_head") != std::string::npos)))
            continue;
        if (m.nodePath(static_cast<int>(n)).find("lora_") != std::string::npos) // PEFT's adapters stay float
            continue;
        flag[static_cast<size_t>(w)] = 1;
    }
    return flag;
}

int tiedOutputEmbedding(const Model& m)
{
    // the head's MatMul, whether its output is the logits or is summed with a LoRA adapter's first
    for (const Node& nd : m.nodes) {
        if (nd.op != "MatMul" || nd.inputs.size() != 2 || nd.inputs[1] < 0)
            continue;
        int w = nd.inputs[1];
        const Tensor* wt = &m.tensors[static_cast<size_t>(w)];
        if (wt->producer >= 0) { // the embedding read through a Transpose, as the builder writes a tied head
            const Node& tr = m.nodes[static_cast<size_t>(wt->producer)];
            if (tr.op != "Transpose" || tr.inputs.empty() || tr.inputs[0] < 0)
                continue;
            w = tr.inputs[0];
            wt = &m.tensors[static_cast<size_t>(w)];
        }
        if (wt->aliasOf >= 0) {
            w = wt->aliasOf;
            wt = &m.tensors[static_cast<size_t>(w)];
        }
        if (wt->role != TensorRole::Parameter || wt->producer >= 0)
            continue;
        const bool embedding = std::any_of(wt->consumers.begin(), wt->consumers.end(),
                                           [&](int c) { return m.nodes[static_cast<size_t>(c)].op == "Gather"; });
        if (embedding)
            return w;
    }
    return -1;
}

std::vector<uint8_t> mxfp4Weights(const Model& m)
{
    // quantization_config.quant_method "mxfp4" (gpt-oss): the experts' gate_up and down weights, not their biases
    // (import/src/hf_moe.h marks the GroupedMatMul)
    std::vector<uint8_t> flag(m.tensors.size(), 0);
    for (const Node& nd : m.nodes)
        if (nd.op == "GroupedMatMul" && nd.inputs.size() >= 2 && nd.inputs[1] >= 0 && nd.attrInt("mxfp4", 0) != 0 &&
            m.tensors[static_cast<size_t>(nd.inputs[1])].role == TensorRole::Parameter)
            flag[static_cast<size_t>(nd.inputs[1])] = 1;
    return flag;
}

int64_t quantizedBytes(const FineTune& f, int64_t numel, int64_t rows)
{
    if (f.quant == Quant::Int8)
        return quant8bitBytes(numel, rows);
    return quant4bitBytes(numel, f.doubleQuant);
}

QuantCost quantizedCost(const FineTune& f, int64_t numel, const std::vector<int64_t>& dims, int dequantElem)
{
    const bool experts = dims.size() == 3 && dims[0] > 0;
    const int64_t rows = dims.size() == 2 ? dims[1] : experts ? dims[0] * dims[2] : 1;
    return {quantizedBytes(f, numel, rows), checkedMul(experts ? numel / dims[0] : numel, dequantElem).value_or(0)};
}

int dequantElemBytes(const Config& c)
{
    const int compute = c.finetune.computeBytes;
    const bool fourBit = c.finetune.quant == Quant::NF4 || c.finetune.quant == Quant::FP4;
    if (c.modelCode != ModelCode::Litgpt || !fourBit) {
        // transformers quantizes the weight as loaded (torch_dtype), which Params4bit keeps as quant_state.dtype:
        // F.dequantize_4bit returns that dtype and MatMul4Bit's .to(A.dtype) copies it to the compute dtype, so both
        // exist at once unless they are the same type (bitsandbytes 0.41-0.45 nn/_functions.py MatMul4Bit.forward;
        // load_in_4bit's defaults: fp16 weights, fp32 compute)
        if (!fourBit)
            return compute;
        const std::string& cd = c.finetune.computeDtype;
        const bool bf16 = c.dtype == DtypePolicy::BF16 || c.dtype == DtypePolicy::MixedBF16;
        const bool fp16 = c.dtype == DtypePolicy::FP16 || c.dtype == DtypePolicy::MixedFP16;
        const int state = bf16 || fp16 ? 2 : 4; // fp32 and AMP policies load fp32 weights
        const bool same = (bf16 && cd == "bf16") || (fp16 && cd == "fp16") || (state == 4 && cd == "fp32");
        return same ? compute : state + compute;
    }
    // Lightning's fp16 quant_state (above): the fp16 dequantized weight and its compute-dtype copy exist
    // together inside .to(A.dtype); one fp16 weight when the run computes in fp16 (16-true: .to is a no-op)
    return c.dtype == DtypePolicy::FP16 && compute == 2 ? 2 : 2 + compute;
}

} // namespace headroom
