// Fine-tuning precision without autocast: which activations PEFT's casts and prepare_model_for_kbit_training
// make differ from the dtype policy, and what that costs per op.
//
// Sources:
// - PEFT tuners/lora/layer.py Linear.forward: result = base_layer(x); x = _cast_input_dtype(x,
//   lora_A.weight.dtype) (tuners_utils.py: x.to(dtype) unless x already has it); result = result +
//   lora_B(lora_A(dropout(x))) * scaling; result = result.to(torch_result_dtype). With fp32 adapters on a
//   bf16 model, x gets an fp32 copy per wrapped Linear (lora_A saves it: derivatives.yaml mm saves self for
//   mat2's gradient; _to_copy saves nothing), the adapter path runs in fp32, the add promotes to fp32 and
//   the result is cast back.
// - PEFT tuners/lora/bnb.py Linear4bit/Linear8bitLt.forward: result = base_layer(x).clone(); without
//   autocast x is cast the same way, but output = lora_B(lora_A(dropout(x))) * scaling is cast to
//   result.dtype *before* result + output.
// - PEFT utils/other.py prepare_model_for_kbit_training: every fp16/bf16 parameter that is not Params4bit
//   (embeddings, norms, lm_head; the int8 ones are not floating) becomes fp32, so by type promotion the
//   embedding output, every norm output and the residual stream are fp32.
// - bitsandbytes nn/modules.py Linear4bit.forward: x = x.to(compute_dtype); bnb.matmul_4bit(x, ...)
//   .to(inp_dtype): the 4-bit layer's output has its input's dtype, through a compute-dtype copy of the
//   input and a compute-dtype output (autograd/_functions.py MatMul4Bit saves no activation; its backward
//   computes grad_A in the compute dtype, which ToCopyBackward casts back). Linear8bitLt's MatMul8bitLt also
//   returns A's dtype (int8_scaled_mm(..., dtype=A.dtype)); its int8 transients are not modelled.
// Under autocast none of this applies here: autocast decides the dtypes (bnb.py skips the casts when
// torch.is_autocast_enabled(); the engine's autocast classes cover lora's matmuls).
#include "engine/engine_internal.h"

#include <algorithm>

namespace headroom {

namespace {

bool isAdapterName(const std::string& name)
{
    return name.find(".lora_A.") != std::string::npos || name.find(".lora_B.") != std::string::npos ||
           name.find(".lora_magnitude_vector.") != std::string::npos || // DoRA's, in the adapters' dtype
           name.find(".ia3_l.") != std::string::npos;                   // IA3's vectors
}

bool floatOrUnknown(const Tensor& t) { return isFloating(t.dtype) || t.dtype == DType::Undefined; }

bool scalarLike(const Tensor& t)
{
    if (t.shape.state != TensorShape::State::Exact)
        return false;
    int64_t n = 1;
    for (const DimExpr& d : t.shape.dims)
        n *= d.constantValue().value_or(2);
    return n <= 1;
}

// Which adapter cast (lora_graph.cpp, ia3_graph.cpp name them): 0 none, 1 the input cast (LoRA's and IA3's
// feedforward x.to(ia3_l.dtype)), 2 the adapter output's cast, 3 the result's cast.
int loraCast(const Node& n)
{
    if (n.op != "Cast")
        return 0;
    if (n.name.find("/lora_cast_in/") != std::string::npos || n.name.find("/ia3_cast_in/") != std::string::npos)
        return 1;
    if (n.name.find("/lora_cast_out/") != std::string::npos)
        return 2;
    if (n.name.find("/lora_cast_result/") != std::string::npos)
        return 3;
    return 0;
}

// A region computed in fp32 and cast back, as LlamaRMSNorm writes it (hf_builder.h rmsNorm): input_dtype =
// x.dtype; x.to(torch.float32) ... .to(input_dtype). The importer writes the way back as CastLike(., x), so the
// upcast is the Cast to float32 of an x that a CastLike takes as its target. An fp32 export writes both casts
// as Cast(to=FLOAT) and neither is matched: whose dtype the second one restores is not in the graph.
bool isRegionUpcast(const Model& m, const Node& n)
{
    if (n.op != "Cast" || n.inputs.empty() || n.inputs[0] < 0 || n.attrInt("to", 0) != 1 /* FLOAT */)
        return false;
    const int x = n.inputs[0];
    for (int c : m.tensors[static_cast<size_t>(x)].consumers) {
        const Node& k = m.nodes[static_cast<size_t>(c)];
        if (k.op == "CastLike" && k.inputs.size() == 2 && k.inputs[1] == x)
            return true;
    }
    return false;
}

bool isCastBack(const Node& n) { return n.op == "CastLike" && n.inputs.size() == 2 && n.inputs[1] >= 0; }

} // namespace

// The stored weight behind a MatMul's second input (through the exporter's Transpose and aliases).
int storedWeight(const Model& m, int w)
{
    if (w < 0)
        return -1;
    const Tensor* t = &m.tensors[static_cast<size_t>(w)];
    if (t->producer >= 0) {
        const Node& p = m.nodes[static_cast<size_t>(t->producer)];
        if (p.op != "Transpose" || p.inputs.empty() || p.inputs[0] < 0)
            return -1;
        w = p.inputs[0];
        t = &m.tensors[static_cast<size_t>(w)];
    }
    return t->aliasOf >= 0 ? t->aliasOf : w;
}

namespace {

// The base Linear's output a LoRA add starts from: the Add named lora_add takes it as its first input.
int baseOutputOf(const Model& m, const Node& cast, int kind)
{
    int add = -1;
    if (kind == 2 && !cast.outputs.empty() && cast.outputs[0] >= 0) {
        for (int c : m.tensors[static_cast<size_t>(cast.outputs[0])].consumers)
            if (m.nodes[static_cast<size_t>(c)].op == "Add")
                add = c;
    } else if (kind == 3 && !cast.inputs.empty() && cast.inputs[0] >= 0) {
        add = m.tensors[static_cast<size_t>(cast.inputs[0])].producer;
    }
    if (add < 0 || m.nodes[static_cast<size_t>(add)].inputs.empty())
        return -1;
    return m.nodes[static_cast<size_t>(add)].inputs[0];
}

int elemOf(const PlanData& p, int t)
{
    const uint8_t e = t >= 0 && static_cast<size_t>(t) < p.actElem.size() ? p.actElem[static_cast<size_t>(t)] : 0;
    return e ? e : p.options.streamBytes;
}

} // namespace

bool isAdapterTensor(const Tensor& t) { return isAdapterName(t.name); }

int adapterElemBytes(const Config& config, const Tensor& t)
{
    return isAdapterName(t.name) ? loraAdapterBytes(config.finetune.lora) : 0;
}

bool inputEmbeddingRequiresGrad(const Model& m, const PlanOptions& o, const Node& n)
{
    // transformers modeling_utils.py enable_input_require_grads: a forward hook on get_input_embeddings()
    // calls output.requires_grad_(True), so autograd records from the embedding's output on (reentrant
    // checkpointing needs it); the lookup of a stored floating table by indices is that embedding
    if (!o.inputRequiresGrad || n.op != "Gather" || n.inputs.size() < 2 || n.inputs[0] < 0)
        return false;
    const Tensor* w = &m.tensors[static_cast<size_t>(n.inputs[0])];
    if (w->aliasOf >= 0)
        w = &m.tensors[static_cast<size_t>(w->aliasOf)];
    return w->role == TensorRole::Parameter && w->producer < 0 && isFloating(w->dtype) && w->shape.dims.size() == 2;
}

std::vector<uint8_t> finetuneActivationElems(const Model& m, const PlanData& p)
{
    const PlanOptions& o = p.options;
    if (o.streamBytes == 0)
        return {};
    const int stream = o.streamBytes;
    // embeddings, norms, lm_head: fp32 after kbit preparation, else the policy's
    const int other = o.kbitFp32 ? 4 : stream;
    const size_t nT = m.tensors.size();
    // 0: takes no part in type promotion (not floating, a scalar, a quantized weight)
    std::vector<uint8_t> e(nT, 0);
    for (size_t t = 0; t < nT; ++t) {
        const Tensor& tt = m.tensors[t];
        if (tt.producer >= 0 || tt.aliasOf >= 0 || !floatOrUnknown(tt))
            continue;
        if (tt.role == TensorRole::Parameter) {
            if (static_cast<size_t>(t) < p.quantizable.size() && p.quantizable[t] && o.quant != Quant::None)
                continue;
            e[t] = static_cast<uint8_t>(isAdapterName(tt.name) ? o.adapterBytes : scalarLike(tt) ? 0 : other);
        } else if (tt.role == TensorRole::Buffer) {
            e[t] = static_cast<uint8_t>(scalarLike(tt) ? 0 : stream);
        } else if (tt.role == TensorRole::Input) {
            e[t] = static_cast<uint8_t>(stream);
        }
    }
    for (size_t t = 0; t < nT; ++t)
        if (m.tensors[t].aliasOf >= 0)
            e[t] = e[static_cast<size_t>(m.tensors[t].aliasOf)];
    // forward in topological order: type promotion of the floating operands
    for (const Node& n : m.nodes) {
        uint8_t v = 0;
        for (int t : n.inputs)
            if (t >= 0)
                v = std::max(v, e[static_cast<size_t>(t)]);
        const int kind = loraCast(n);
        if (kind == 1) {
            v = static_cast<uint8_t>(o.adapterBytes); // x.to(lora_A.weight.dtype), x.to(ia3_l.dtype)
        } else if (!o.litgptModel && isRegionUpcast(m, n)) {
            v = 4; // x.to(torch.float32): a copy unless x is fp32 already
        } else if (!o.litgptModel && isCastBack(n)) {
            v = e[static_cast<size_t>(n.inputs[1])]; // .to(input_dtype)
        } else if (kind == 2 || kind == 3) {
            // bnb.py casts the adapter output to result.dtype before the add; layer.py casts the sum
            const int base = baseOutputOf(m, n, kind);
            const int in = n.inputs.empty() ? -1 : n.inputs[0];
            const bool toBase = kind == 3 || o.quant != Quant::None;
            const int src = toBase ? base : in;
            v = src >= 0 ? e[static_cast<size_t>(src)] : v;
        } else if (n.op == "Cast" && !n.inputs.empty() && n.inputs[0] >= 0 &&
                   !floatOrUnknown(m.tensors[static_cast<size_t>(n.inputs[0])])) {
            // an integer made floating (positions.float(), a boolean mask): Hugging Face computes these
            // and casts them to the hidden states' dtype
            v = static_cast<uint8_t>(other);
        } else if (n.op == "MatMul" && n.inputs.size() == 2 && o.quant != Quant::None) {
            const int w = storedWeight(m, n.inputs[1]);
            if (w >= 0 && static_cast<size_t>(w) < p.quantizable.size() && p.quantizable[static_cast<size_t>(w)])
                v = n.inputs[0] >= 0 ? e[static_cast<size_t>(n.inputs[0])] : v; // .to(inp_dtype)
        }
        for (int t : n.outputs) {
            if (t < 0 || !floatOrUnknown(m.tensors[static_cast<size_t>(t)]))
                continue;
            e[static_cast<size_t>(t)] = v ? v : static_cast<uint8_t>(stream);
        }
    }
    // keep only what differs from the policy, on activations
    bool any = false;
    for (size_t t = 0; t < nT; ++t) {
        if (!p.dynamic[t] || e[t] == stream || !floatOrUnknown(m.tensors[t]))
            e[t] = 0;
        any = any || e[t] != 0;
    }
    if (!any && o.quant == Quant::None && o.adapterBytes == stream)
        return {};
    return e;
}

void adjustFinetuneUnit(const Model& m, const PlanData& p, Unit& u)
{
    if (p.options.streamBytes == 0 || u.kind != UnitKind::Op || u.head < 0)
        return;
    const Node& n = m.nodes[static_cast<size_t>(u.head)];
    const int x = n.inputs.empty() ? -1 : n.inputs[0];
    const int y = n.outputs.empty() ? -1 : n.outputs[0];
    if (x < 0 || y < 0)
        return;
    if (loraCast(n) != 0 || (!p.options.litgptModel && (isRegionUpcast(m, n) || isCastBack(n)))) {
        // the same dtype: x.to(dtype) returns x itself; else a copy that saves nothing (_to_copy), whose
        // backward casts the gradient into a new tensor of the input's dtype
        if (elemOf(p, x) != elemOf(p, y)) {
            u.isView = false;
            u.passGrad = false;
            u.saved.clear();
        }
        return;
    }
    // Linear4bit (NF4/FP4); Linear8bitLt's int8 matmul is not modelled beyond its weight
    if (n.op != "MatMul" || n.inputs.size() != 2 || (p.options.quant != Quant::NF4 && p.options.quant != Quant::FP4))
        return;
    const int w = storedWeight(m, n.inputs[1]);
    if (w < 0 || static_cast<size_t>(w) >= p.quantizable.size() || !p.quantizable[static_cast<size_t>(w)])
        return;
    const int cb = p.options.computeBytes;
    auto item = [](int t, int bytes) {
        SavedItem s{SavedItem::Kind::Extra, t};
        s.elemBytes = bytes;
        return s;
    };
    // Linear4bit.forward: x.to(compute_dtype) and matmul_4bit's compute-dtype output live together until
    // .to(inp_dtype) has made the output (one item: N x (in + out) compute-dtype elements, sized on y)
    const Tensor& wt = m.tensors[static_cast<size_t>(w)];
    const bool transposed = m.tensors[static_cast<size_t>(n.inputs[1])].producer >= 0;
    const int64_t in = wt.shape.dims.size() == 2 ? wt.shape.dims[transposed ? 1 : 0].constantValue().value_or(0) : 0;
    const int64_t out = wt.shape.dims.size() == 2 ? wt.shape.dims[transposed ? 0 : 1].constantValue().value_or(0) : 0;
    if (in > 0 && out > 0 && (elemOf(p, x) != cb || elemOf(p, y) != cb)) {
        SavedItem copies = item(y, cb);
        copies.num = (elemOf(p, x) != cb ? in : 0) + (elemOf(p, y) != cb ? out : 0);
        copies.den = out;
        u.forwardScratch.push_back(copies);
    }
    // bnb.py's LoRA forward: result = result.clone() (the original dies once the clone exists)
    for (int c : m.tensors[static_cast<size_t>(y)].consumers)
        if (m.nodes[static_cast<size_t>(c)].name.find("/lora_add/") != std::string::npos) {
            u.forwardScratch.push_back(item(y, elemOf(p, y)));
            break;
        }
    // MatMul4Bit.backward: grad_output arrives cast to the compute dtype; grad_A is computed in it and lives
    // until ToCopyBackward has made the input's gradient
    if (elemOf(p, y) != cb)
        u.backwardScratch.push_back(item(y, cb));
    if (elemOf(p, x) != cb && p.reqGrad[static_cast<size_t>(x)])
        u.castGrads.push_back(item(x, cb));
}

} // namespace headroom
