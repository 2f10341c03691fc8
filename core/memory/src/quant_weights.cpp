// Which parameters bitsandbytes quantizes, and what they cost: transformers' replace_with_bnb_linear
// (integrations/bitsandbytes.py) swaps every nn.Linear for Linear4bit / Linear8bitLt except the modules in
// llm_int8_skip_modules, which get_keys_to_not_convert fills with the output embedding (lm_head, or the
// tied embedding); embeddings and norms are not Linear and keep their dtype.
#include "engine_internal.h"

#include <algorithm>

namespace headroom {

std::vector<uint8_t> quantizableWeights(const Model& m)
{
    std::vector<uint8_t> flag(m.tensors.size(), 0);
    auto isOutput = [&](int t) { return std::find(m.outputs.begin(), m.outputs.end(), t) != m.outputs.end(); };
    for (size_t n = 0; n < m.nodes.size(); ++n) {
        const Node& nd = m.nodes[n];
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
        if (outputLayer || embedding || m.nodePath(static_cast<int>(n)).find("lm_head") != std::string::npos)
            continue;
        if (m.nodePath(static_cast<int>(n)).find("lora_") != std::string::npos) // PEFT's adapters stay float
            continue;
        flag[static_cast<size_t>(w)] = 1;
    }
    return flag;
}

int64_t quantizedBytes(const FineTune& f, int64_t numel, int64_t rows)
{
    if (f.quant == Quant::Int8)
        return quant8bitBytes(numel, rows);
    return quant4bitBytes(numel, f.doubleQuant);
}

} // namespace headroom
