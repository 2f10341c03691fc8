#pragma once
// The graph writer the config.json importer's families share (hfconfig.cpp, hf_decoders.cpp, hf_encoders.cpp):
// Linear, norms, heads, rotary, eager attention, written the way torch.onnx.export writes a transformers model
// in training mode, with module-path node names (named_modules()).
#include "headroom/import/hfconfig.h"

#include "onnx_builder.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace headroom::detail {

struct Builder
{
    const HfArch& a;
    OnnxBuilder& g;
    double eps;
    double ropeTheta;
    double dropout;                             // gpt2's resid/embd/attn dropout (training mode)
    std::string cos, sin, mask;                 // shared by every layer
    std::vector<std::string> routerLogits = {}; // MoE layers' router logits, for the auxiliary loss

    std::string dropoutOf(const std::string& x, const std::string& scope)
    {
        if (dropout <= 0)
            return x;
        // training-mode nn.Dropout: keeps a 1-byte mask for backward (derivatives.yaml native_dropout)
        return g.node("Dropout", scope, {x, g.scalar(dropout), g.boolean(true)});
    }

    // hidden_act as transformers' ACT2FN runs it (activations.py): "gelu" GELUActivation (F.gelu, erf) and
    // "gelu_pytorch_tanh" (F.gelu, tanh) are one op that keeps its input; "gelu_new" / "gelu_fast"
    // NewGELUActivation is written out in Python, each op keeping its own tensors; "silu" F.silu; "relu".
    std::string activation(const std::string& x, const std::string& scope, const std::string& kind)
    {
        if (kind == "gelu" || kind == "gelu_pytorch_tanh") {
            const std::string y = g.node("Gelu", scope, {x});
            if (kind == "gelu_pytorch_tanh")
                g.attrString("approximate", "tanh");
            return y;
        }
        if (kind == "gelu_new" || kind == "gelu_fast") {
            // 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
            std::string inner = g.node("Mul", scope, {g.node("Pow", scope, {x, g.scalar(3.0)}), g.scalar(0.044715)});
            inner = g.node("Mul", scope, {g.node("Add", scope, {x, inner}), g.scalar(std::sqrt(2.0 / M_PI))});
            return g.node("Mul", scope,
                          {g.node("Mul", scope, {x, g.scalar(0.5)}),
                           g.node("Add", scope, {g.node("Tanh", scope, {inner}), g.scalar(1.0)})});
        }
        if (kind == "relu")
            return g.node("Relu", scope, {x});
        return g.node("Mul", scope, {x, g.node("Sigmoid", scope, {x})}); // silu / swish
    }

    // Linear as torch.onnx writes it: MatMul with the transposed weight (+ Add of the bias).
    std::string linear(const std::string& x, const std::string& module, int64_t in, int64_t out, bool bias)
    {
        const std::string scope = "/" + dotsToPath(module);
        std::string y = g.node("MatMul", scope, {x, g.weight(module + ".weight", {in, out})});
        if (bias)
            y = g.node("Add", scope, {g.weight(module + ".bias", {out}), y});
        return y;
    }

    static std::string dotsToPath(const std::string& module)
    {
        // "model.layers.3.self_attn" -> "model/layers.3/self_attn": a ModuleList index stays with its name,
        // as torch.onnx scopes do.
        std::string r;
        std::istringstream in(module);
        std::string part;
        while (std::getline(in, part, '.')) {
            const bool index = !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit);
            r += index ? "." + part : (r.empty() ? "" : "/") + part;
        }
        return r;
    }

    // LlamaRMSNorm (modeling_llama.py): input_dtype = x.dtype; x = x.to(torch.float32); x = x * rsqrt(mean(x^2) +
    // eps); return weight * x.to(input_dtype). The statistics run in fp32 whatever the model's dtype, so a bf16
    // model makes an fp32 copy of x (pow and mul keep it for backward) and casts the normalised x back before
    // the weight. GemmaRMSNorm (modeling_gemma.py) multiplies by (1 + weight.float()) in fp32 and casts after;
    // Olmo2RMSNorm (modeling_olmo2.py) returns (weight * x).to(input_dtype). Written Cast(to=FLOAT) and
    // CastLike(., x): in the fp32 graph both are no-ops, and the memory stage sizes them under the model's dtype
    // (precision.cpp).
    std::string rmsNorm(const std::string& x, const std::string& module, int64_t dim)
    {
        const std::string s = "/" + dotsToPath(module);
        const std::string xf = g.node("Cast", s, {x});
        g.attrInt("to", onnx::TensorProto::FLOAT);
        const std::string p = g.node("Pow", s, {xf, g.scalar(2.0)});
        const std::string m = g.node("ReduceMean", s, {p, g.ints({-1})});
        const std::string r = g.node("Reciprocal", s, {g.node("Sqrt", s, {g.node("Add", s, {m, g.scalar(eps)})})});
        const std::string n = g.node("Mul", s, {xf, r});
        const std::string w = g.weight(module + ".weight", {dim});
        // Gemma: n * (1 + w), written n * w + n so the weight stays a Mul operand (a parameter) for the importer
        if (a.gemma)
            return g.node("CastLike", s, {g.node("Add", s, {g.node("Mul", s, {n, w}), n}), x});
        if (a.postNorms)
            return g.node("CastLike", s, {g.node("Mul", s, {w, n}), x});
        return g.node("Mul", s, {w, g.node("CastLike", s, {n, x})});
    }

    std::string layerNorm(const std::string& x, const std::string& module, int64_t dim)
    {
        const std::string s = "/" + dotsToPath(module);
        const std::string y = g.node("LayerNormalization", s,
                                     {x, g.weight(module + ".weight", {dim}), g.weight(module + ".bias", {dim})});
        g.attrInt("axis", -1);
        g.attrFloat("epsilon", eps);
        return y;
    }

    // [B, T, n*d] -> [B, n, T, d]
    std::string heads(const std::string& x, const std::string& scope, int64_t n, const std::string& normModule = {})
    {
        std::string v = g.node("Reshape", scope, {x, g.ints({0, 0, n, a.headDim})});
        if (!normModule.empty())
            v = rmsNorm(v, normModule, a.headDim); // Qwen3: q_norm/k_norm over head_dim, before the transpose
        v = g.node("Transpose", scope, {v});
        g.attrInts("perm", {0, 2, 1, 3});
        return v;
    }

    // apply_rotary_pos_emb: x * cos + rotate_half(x) * sin
    // (over the first `width` of head_dim when given: the partial rotary of hf_decoders.cpp)
    std::string rotary(const std::string& x, const std::string& scope, int64_t width = 0)
    {
        const int64_t d = width > 0 ? width : a.headDim;
        const int64_t h = d / 2;
        const std::string x1 = g.node("Slice", scope, {x, g.ints({0}), g.ints({h}), g.ints({3})});
        const std::string x2 = g.node("Slice", scope, {x, g.ints({h}), g.ints({d}), g.ints({3})});
        const std::string rot = g.node("Concat", scope, {g.node("Neg", scope, {x2}), x1});
        g.attrInt("axis", -1);
        return g.node("Add", scope, {g.node("Mul", scope, {x, cos}), g.node("Mul", scope, {rot, sin})});
    }

    // repeat_kv: [B, kv, T, d] -> [B, kv*rep, T, d] by expand + reshape (a no-op when rep == 1).
    std::string repeatKv(const std::string& x, const std::string& scope, const std::string& batch,
                         const std::string& seq)
    {
        const int64_t rep = a.heads / a.kvHeads;
        if (rep == 1)
            return x;
        const std::string u = g.node("Unsqueeze", scope, {x, g.ints({2})});
        const std::string shape = g.node("Concat", scope, {batch, g.ints({a.kvHeads, rep}), seq, g.ints({a.headDim})});
        g.attrInt("axis", 0);
        const std::string e = g.node("Expand", scope, {u, shape});
        return g.node("Reshape", scope, {e, g.ints({0, a.heads, -1, a.headDim})});
    }

    std::string softcap(const std::string& x, const std::string& scope, double cap)
    {
        // Gemma 2: tanh(x / cap) * cap; tanh keeps its result for backward
        const std::string t = g.node("Tanh", scope, {g.node("Div", scope, {x, g.scalar(cap)})});
        return g.node("Mul", scope, {t, g.scalar(cap)});
    }

    std::string attention(const std::string& q, const std::string& k, const std::string& v, const std::string& scope,
                          double scaling, const std::string& sinks = {})
    {
        const std::string kt = g.node("Transpose", scope, {k});
        g.attrInts("perm", {0, 1, 3, 2});
        std::string w = g.node("Mul", scope, {g.node("MatMul", scope, {q, kt}), g.scalar(scaling)});
        if (a.attnSoftcap > 0)
            w = softcap(w, scope, a.attnSoftcap);
        w = g.node("Add", scope, {w, mask});
        if (!sinks.empty()) {
            // gpt-oss eager_attention_forward: one learned logit per head joins each row's softmax and is
            // dropped after it: cat([scores, sinks.expand(B, h, T, 1)], -1) -> softmax -> [..., :-1]
            const std::string s = g.node("Reshape", scope, {g.weight(sinks, {a.heads}), g.ints({1, a.heads, 1, 1})});
            const std::string rows = g.node("Slice", scope, {g.node("Shape", scope, {w}), g.ints({0}), g.ints({3})});
            const std::string shape = g.node("Concat", scope, {rows, g.ints({1})});
            g.attrInt("axis", 0);
            w = g.node("Concat", scope, {w, g.node("Expand", scope, {s, shape})});
            g.attrInt("axis", -1);
        }
        w = g.node("Softmax", scope, {w});
        g.attrInt("axis", -1);
        if (!sinks.empty())
            w = g.node("Slice", scope, {w, g.ints({0}), g.ints({-1}), g.ints({-1})});
        w = dropoutOf(w, scope + "/attn_dropout");
        std::string o = g.node("Transpose", scope, {g.node("MatMul", scope, {w, v})});
        g.attrInts("perm", {0, 2, 1, 3});
        return g.node("Reshape", scope, {o, g.ints({0, 0, -1})});
    }
};

// input_ids' batch and seq as 1-D shape pieces, seq as a scalar, and the positions 0..seq-1.
struct SeqShape
{
    std::string batch, seq, seqScalar, positions;
};
SeqShape seqShape(OnnxBuilder& g);
// The causal mask as the eager attention path adds it: [B, 1, T, T], 0 or the dtype's minimum.
std::string causalMask(OnnxBuilder& g, const SeqShape& ss);
// LlamaRotaryEmbedding's cos/sin tables over `b.a.headDim` (the rotary width), shared by every layer.
void rotaryTables(Builder& b, const SeqShape& ss, const std::string& root);

} // namespace headroom::detail
