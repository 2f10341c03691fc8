// The per-model plan: everything evaluate() needs that does not change with the symbol values, the
// dtype policy or the optimizer. Built once per model (and per set of freeze patterns).
#include "engine/engine_internal.h"
#include "rules/fused_units.h"
#include "rules/op_classes.h"

#include <algorithm>
#include <map>
#include <unordered_set>

namespace headroom {

namespace {

bool floatish(const Tensor& t) noexcept { return t.dtype == DType::Undefined || isFloating(t.dtype); }

// The freeze patterns split once per plan: most are plain layer paths (the advisor's "freeze the first k
// blocks" lists one per block), which a hash lookup decides, so a plan costs O(names), not O(names x
// patterns); only patterns with wildcards are matched one by one. A pattern without '*' or '?' matches
// exactly the equal name under globMatch, so the answers are the same.
struct FreezeMatcher
{
    std::unordered_set<std::string_view> keepExact, freezeExact;
    std::vector<std::string_view> keepGlob, freezeGlob;
    explicit FreezeMatcher(const std::vector<std::string>& freeze)
    {
        for (const std::string& pat : freeze) {
            // "!pattern" keeps a parameter trainable that another pattern freezes (LoRA: "*" but the adapters)
            const bool keep = pat.starts_with('!');
            const std::string_view body = keep ? std::string_view(pat).substr(1) : std::string_view(pat);
            const bool glob = body.find_first_of("*?") != std::string_view::npos;
            if (glob)
                (keep ? keepGlob : freezeGlob).push_back(body);
            else
                (keep ? keepExact : freezeExact).insert(body);
        }
    }
    bool empty() const { return keepExact.empty() && freezeExact.empty() && keepGlob.empty() && freezeGlob.empty(); }
    static bool any(const std::vector<std::string>& names, const std::unordered_set<std::string_view>& exact,
                    const std::vector<std::string_view>& globs)
    {
        for (const std::string& nm : names) {
            if (exact.count(nm))
                return true;
            for (std::string_view g : globs)
                if (globMatch(g, nm))
                    return true;
        }
        return false;
    }
};

bool frozenBy(const Model& m, int t, const FreezeMatcher& freeze)
{
    if (freeze.empty())
        return false;
    const Tensor& tensor = m.tensors[static_cast<size_t>(t)];
    std::vector<std::string> names{tensor.name};
    for (int c : tensor.consumers) {
        const Node& n = m.nodes[static_cast<size_t>(c)];
        if (n.layer > 0 && static_cast<size_t>(n.layer) < m.layers.size()) {
            // the layer path and every ancestor, so "layer1" freezes layer1's subtree
            for (int l = n.layer; l > 0; l = m.layers[static_cast<size_t>(l)].parent)
                names.push_back(m.layers[static_cast<size_t>(l)].path);
        }
        names.push_back(m.nodePath(c));
    }
    if (FreezeMatcher::any(names, freeze.keepExact, freeze.keepGlob))
        return false;
    return FreezeMatcher::any(names, freeze.freezeExact, freeze.freezeGlob);
}

} // namespace

PlanOptions planOptions(const Config& config)
{
    PlanOptions o;
    o.freeze = config.freeze;
    // PyTorch before 2.0 has no F.scaled_dot_product_attention, and transformers needs torch >= 2.1.1 for it
    // (utils/import_utils.py is_torch_sdpa_available): its default runs eager there (config.h).
    o.attention = !torchHasSdpa(config.torch) && config.attention == Attention::SDPA ? Attention::Eager
                                                                                     : config.attention;
    o.device = config.device;
    o.torch = config.torch;
    o.litgptModel = config.modelCode == ModelCode::Litgpt;
    // set only with lit-gpt's model code, so that a mode change keeps every other plan
    o.litgptInference = o.litgptModel && policyIsInference(config);
    o.bnbKeepsInput = config.bnbKeepsMatmulInput;
    o.autocast = config.dtype == DtypePolicy::AmpFP16 || config.dtype == DtypePolicy::AmpBF16;
    switch (config.dtype) {
    case DtypePolicy::FP16:
    case DtypePolicy::BF16:
    case DtypePolicy::AmpFP16:
    case DtypePolicy::AmpBF16:
    case DtypePolicy::MixedFP16:
    case DtypePolicy::MixedBF16: o.lowPrecision = true; break;
    default: break;
    }
    // finetune/precision.cpp: PEFT's casts and kbit-prep's fp32 parameters, without autocast only
    const FineTune& ft = config.finetune;
    const bool quantPolicy = config.dtype == DtypePolicy::INT8 || config.dtype == DtypePolicy::INT4;
    // prepare_model_for_kbit_training(use_gradient_checkpointing=True) calls enable_input_require_grads()
    o.inputRequiresGrad = kbitPrepApplies(config);
    // A 16-bit model without autocast runs the fp32 regions its code writes (LlamaRMSNorm's x.to(torch.float32),
    // hf_builder.h rmsNorm): precision.cpp sizes them, with PEFT's casts when there are adapters.
    if (o.lowPrecision && !o.autocast && !quantPolicy) {
        o.streamBytes = 2;
        o.adapterBytes = 2;
    }
    if ((ft.lora.active() || ft.quant != Quant::None) && !o.autocast && !quantPolicy) {
        o.streamBytes = o.lowPrecision ? 2 : 4;
        o.adapterBytes = loraAdapterBytes(ft.lora);
        o.quant = ft.quant;
        o.kbitFp32 = kbitPrepApplies(config);
        o.computeBytes = ft.computeBytes;
        // kbit preparation's fp32 stream gives attention fp32 operands: no flash kernel (fused_units.cpp
        // attentionKernel: memory-efficient, or math for grouped-query heads)
        if (o.kbitFp32)
            o.lowPrecision = false;
    }
    return o;
}

namespace {

// buildPlan's steps, in order; each reads what the ones before it filled in.

void initPlan(PlanData& p, const Model& m, const PlanOptions& options)
{
    p.model = &m;
    p.freeze = options.freeze;
    p.options = options;
    p.shapeClasses = classifyShapes(m);
    const size_t nT = m.tensors.size(), nN = m.nodes.size();
    p.dynamic.assign(nT, 0);
    p.reqGrad.assign(nT, 0);
    p.getsGrad.assign(nT, 0);
    p.frozen.assign(nT, 0);
    p.virtualOut.assign(nT, 0);
    p.amp16.assign(nT, 0);
    p.nonContig.assign(nT, 0);
    p.root.resize(nT);
    p.paramSources.assign(nT, {});
    p.consumerUnits.assign(nT, {});
    p.unitOfNode.assign(nN, -1);
    p.quantizable = quantizableWeights(m, options.litgptModel);
    p.mxfp4 = mxfp4Weights(m);
    for (size_t t = 0; t < nT; ++t)
        p.root[t] = static_cast<int>(t);
    for (int t : m.inputs)
        p.dynamic[static_cast<size_t>(t)] = 1;
}

void classifyParameters(PlanData& p, const Model& m)
{
    const std::vector<std::string>& freeze = p.freeze;
    const size_t nT = m.tensors.size();
    // Parameters and buffers (aliases resolved: a stored tensor referenced through Identity counts once).
    const FreezeMatcher freezeMatcher(freeze);
    for (size_t t = 0; t < nT; ++t) {
        const Tensor& tensor = m.tensors[t];
        if (tensor.aliasOf >= 0 || tensor.producer >= 0)
            continue;
        if (tensor.role == TensorRole::Parameter) {
            p.trainable.push_back(static_cast<int>(t));
            // bitsandbytes' quantized weights take no gradient (Params4bit / Int8Params, requires_grad=False), so they
            // are frozen whatever the patterns say: with adapters the patterns freeze them anyway, in inference this
            // keeps "trainable" to what still requires grad
            p.frozen[t] = frozenBy(m, static_cast<int>(t), freezeMatcher) ||
                                  (p.options.quant != Quant::None && p.quantizable[t])
                              ? 1
                              : 0;
            if (!p.frozen[t]) {
                p.reqGrad[t] = 1;
                p.paramSources[t] = {static_cast<int>(t)};
            }
        } else if (tensor.role == TensorRole::Buffer) {
            p.buffers.push_back(static_cast<int>(t));
        }
    }
    for (size_t t = 0; t < nT; ++t) {
        const int a = m.tensors[t].aliasOf;
        if (a >= 0 && static_cast<size_t>(a) < nT) {
            p.reqGrad[t] = p.reqGrad[static_cast<size_t>(a)];
            p.paramSources[t] = p.paramSources[static_cast<size_t>(a)];
        }
    }
}

// Optimizer state and quantized sizes read a parameter's dims, and the adapters' dtype its name, on every
// tick: kept here once (issue 16: the name test alone was ~7 % of a 100k-node tick).
void recordParameterDims(PlanData& p, const Model& m)
{
    p.trainableDims.reserve(p.trainable.size());
    p.trainableDimsNumel.reserve(p.trainable.size());
    p.trainableAdapter.reserve(p.trainable.size());
    for (int t : p.trainable) {
        std::vector<int64_t>& dims = p.trainableDims.emplace_back();
        dims.reserve(m.tensors[static_cast<size_t>(t)].shape.dims.size()); // one allocation each, side by side
        for (const DimExpr& d : m.tensors[static_cast<size_t>(t)].shape.dims)
            dims.push_back(d.constantValue().value_or(0));
        p.trainableDimsNumel.push_back(dimsNumel(dims));
        p.trainableAdapter.push_back(isAdapterTensor(m.tensors[static_cast<size_t>(t)]) ? 1 : 0);
    }
}

void propagateDynamic(PlanData& p, const Model& m)
{
    const size_t nN = m.nodes.size();
    // Dynamic-ness, requires-grad and the parameters behind weight-side (static) tensors, in topological order.
    for (size_t n = 0; n < nN; ++n) {
        const Node& nd = m.nodes[n];
        bool dyn = false, rg = false;
        std::vector<int> sources;
        for (int t : nd.inputs) {
            if (t < 0)
                continue;
            dyn = dyn || p.dynamic[static_cast<size_t>(t)];
            rg = rg || p.reqGrad[static_cast<size_t>(t)];
            for (int s : p.paramSources[static_cast<size_t>(t)])
                if (std::find(sources.begin(), sources.end(), s) == sources.end())
                    sources.push_back(s);
        }
        const bool diff = !stopsRequiresGrad(nd.op);
        rg = rg || (dyn && inputEmbeddingRequiresGrad(m, p.options, nd));
        for (int t : nd.outputs) {
            if (t < 0)
                continue;
            p.dynamic[static_cast<size_t>(t)] = dyn;
            const bool f = floatish(m.tensors[static_cast<size_t>(t)]);
            p.reqGrad[static_cast<size_t>(t)] = rg && diff && f;
            if (!dyn && rg && diff && f)
                p.paramSources[static_cast<size_t>(t)] = sources;
        }
        if (!dyn)
            p.unitOfNode[n] = -1;
    }
}

// The tensor a unit's view resolves from: the node's first input, or the matmul/conv result when the unit
// is the bias half of a linear or conv.
int linearBias(PlanData& p, const Model& m, Unit& u, const Node& nd)
{
    int x = nd.inputs.empty() ? -1 : nd.inputs[0];
    // MatMul/Gemm/Conv + Add(1-D bias): exporters split F.linear and conv bias this way, but PyTorch adds
    // the bias inside the same kernel (addmm, or matmul then add_ in at::linear): no second tensor
    if (u.kind == UnitKind::Op && nd.op == "Add" && nd.inputs.size() == 2 && nd.inputs[0] >= 0 && nd.inputs[1] >= 0) {
        const int a = nd.inputs[0], c = nd.inputs[1];
        const int dyn = p.dynamic[static_cast<size_t>(a)] ? a : c, bias = dyn == a ? c : a;
        const Tensor& bt = m.tensors[static_cast<size_t>(bias)];
        const int pr = m.tensors[static_cast<size_t>(dyn)].producer;
        const int pu = pr >= 0 ? p.unitOfNode[static_cast<size_t>(pr)] : -1;
        if (p.dynamic[static_cast<size_t>(dyn)] && !p.dynamic[static_cast<size_t>(bias)] && bt.shape.dims.size() == 1 &&
            floatish(bt) && pu >= 0 && p.units[static_cast<size_t>(pu)].kind == UnitKind::Op &&
            p.units[static_cast<size_t>(pu)].head == pr && addsBiasInKernel(m.nodes[static_cast<size_t>(pr)].op) &&
            m.tensors[static_cast<size_t>(dyn)].consumers.size() == 1 &&
            !m.tensors[static_cast<size_t>(dyn)].isGraphOutput) {
            u.isView = true;
            u.passGrad = true;
            u.saved.clear();
            x = dyn;
        }
    }
    return x;
}

// A view's outputs share the storage root of `x`; the kind of non-contiguity they carry decides whether a
// later reshape copies.
void resolveViewStorage(PlanData& p, Unit& u, const Node& nd, int x)
{
    if (!u.isView || x < 0 || !p.dynamic[static_cast<size_t>(x)])
        return;
    const uint8_t inKind = p.nonContig[static_cast<size_t>(x)];
    uint8_t kind = inKind;
    bool copies = false;
    switch (viewLayout(nd.op)) {
    case ViewLayout::Permuted: {
        const auto perm = nd.attrInts("perm");
        bool identity = !perm.empty();
        for (size_t i = 0; i < perm.size(); ++i)
            identity = identity && perm[i] == static_cast<int64_t>(i);
        if (!identity)
            kind = 2;
        break;
    }
    case ViewLayout::StridedOffAxis0:
        if (nd.attrInt("axis", 0) != 0)
            kind = std::max<uint8_t>(kind, 1);
        break;
    case ViewLayout::Strided: kind = std::max<uint8_t>(kind, 1); break;
    case ViewLayout::Reshaped: copies = inKind == 2; break; // torch.reshape of a permuted view copies
    case ViewLayout::Same: break;
    }
    if (copies) {
        u.isView = false;
        u.passGrad = true;
    } else {
        for (int t : u.outputs) {
            p.root[static_cast<size_t>(t)] = p.root[static_cast<size_t>(x)];
            p.nonContig[static_cast<size_t>(t)] = kind;
        }
    }
}

// Saved items point at storage roots, never at static tensors (saving a parameter is free), once each.
void cleanSavedItems(PlanData& p, Unit& u)
{
    for (SavedItem& s : u.saved)
        if (s.kind == SavedItem::Kind::Storage && s.tensor >= 0)
            s.tensor = p.root[static_cast<size_t>(s.tensor)];
    // Inputs that are views of static tensors are not activations.
    if (!u.isView && u.kind == UnitKind::Op) {
        // remove Storage items that point at static tensors (parameters): saving a parameter is free
        u.saved.erase(std::remove_if(u.saved.begin(), u.saved.end(),
                                     [&](const SavedItem& s) {
                                         return s.kind != SavedItem::Kind::Extra &&
                                                (s.tensor < 0 || !p.dynamic[static_cast<size_t>(s.tensor)]);
                                     }),
                      u.saved.end());
    }
    // duplicates inside one unit
    std::vector<SavedItem> uniq;
    for (const SavedItem& s : u.saved) {
        const bool dup = s.kind != SavedItem::Kind::Extra &&
                         std::any_of(uniq.begin(), uniq.end(),
                                     [&](const SavedItem& o) { return o.kind == s.kind && o.tensor == s.tensor; });
        if (!dup)
            uniq.push_back(s);
    }
    u.saved = std::move(uniq);
}

void applySavedRules(PlanData& p, const Model& m)
{
    // Storage roots and contiguity, in order (a unit's inputs are resolved before it).
    // nonContig: 1 strided (Split/Slice/Expand), 2 permuted (Transpose): reshaping a permuted view copies.
    std::map<std::string, int> unknownOps;
    std::map<std::string, std::string> unknownFirst;
    p.actElem = finetuneActivationElems(m, p);
    for (Unit& u : p.units) {
        const Node& nd = m.nodes[static_cast<size_t>(u.head)];
        if (u.kind == UnitKind::Op) {
            applyOpRule(m, p, u);
            adjustFinetuneUnit(m, p, u);
            if (u.conservative) {
                ++unknownOps[nd.op];
                if (!unknownFirst.count(nd.op))
                    unknownFirst[nd.op] = m.nodePath(u.head);
            }
        } else {
            // fused units: keep x only if something upstream requires grad
            bool anyRg = false;
            for (int t : u.inputs)
                anyRg = anyRg || p.reqGrad[static_cast<size_t>(t)];
            if (!anyRg)
                u.saved.clear();
            if (u.kind == UnitKind::Gelu || u.kind == UnitKind::Silu)
                u.inplaceable = false;
        }
        const int x = linearBias(p, m, u, nd);
        resolveViewStorage(p, u, nd, x);
        cleanSavedItems(p, u);
    }
    for (const auto& [op, count] : unknownOps)
        p.warnings.push_back("no saved-for-backward rule for " + op + " (" + std::to_string(count) + " node" +
                             (count > 1 ? "s" : "") + ", first " + unknownFirst[op] +
                             "): assumed it keeps its inputs and outputs");
}

void linkConsumers(PlanData& p)
{
    // Consumers by unit, for liveness.
    for (size_t u = 0; u < p.units.size(); ++u)
        for (int t : p.units[u].inputs)
            if (p.dynamic[static_cast<size_t>(t)])
                p.consumerUnits[static_cast<size_t>(t)].push_back(static_cast<int>(u));
}

void propagateGradients(PlanData& p, const Model& m)
{
    // Gradients flow from the loss (the first graph output) back through differentiable units.
    p.lossTensor = m.outputs.empty() ? -1 : m.outputs[0];
    if (p.lossTensor >= 0 && p.reqGrad[static_cast<size_t>(p.lossTensor)])
        p.getsGrad[static_cast<size_t>(p.lossTensor)] = 1;
    for (size_t ui = p.units.size(); ui-- > 0;) {
        const Unit& u = p.units[ui];
        bool outGrad = false;
        for (int t : u.outputs)
            outGrad = outGrad || p.getsGrad[static_cast<size_t>(t)];
        if (!outGrad || !u.differentiable)
            continue;
        for (int t : u.inputs)
            if (p.dynamic[static_cast<size_t>(t)] && p.reqGrad[static_cast<size_t>(t)])
                p.getsGrad[static_cast<size_t>(t)] = 1;
    }
}

// A lower_precision_fp op's parameters: autocast caches one 16-bit copy of each (autocast_mode.cpp
// cached_cast: leaf tensors that require grad).
void cacheParamCopies(PlanData& p, const Unit& u, std::vector<uint8_t>& cachedCopy)
{
    for (int t : u.inputs)
        if (!p.dynamic[static_cast<size_t>(t)])
            for (int s : p.paramSources[static_cast<size_t>(t)])
                if (!cachedCopy[static_cast<size_t>(s)]) {
                    cachedCopy[static_cast<size_t>(s)] = 1;
                    p.amp16Params.push_back(s);
                }
}

// A fall-through op is 16-bit when its floating activation inputs all are. `promotes`: a floating
// parameter operand with more than one element makes it fp32 (CastPolicy::TypePromotion).
bool inputsAllLow(const PlanData& p, const Model& m, const Unit& u, bool promotes)
{
    bool any = false, all = true;
    for (int t : u.inputs) {
        const Tensor& tt = m.tensors[static_cast<size_t>(t)];
        if (!floatish(tt))
            continue;
        if (!p.dynamic[static_cast<size_t>(t)]) {
            if (promotes && tt.role != TensorRole::Constant && tt.role != TensorRole::Activation &&
                !tt.shape.dims.empty()) {
                int64_t n = 1;
                for (const DimExpr& d : tt.shape.dims)
                    n *= d.constantValue().value_or(2);
                all = all && n <= 1;
            }
            continue;
        }
        any = true;
        all = all && p.amp16[static_cast<size_t>(t)];
    }
    return any && all;
}

// Autocast classes: which outputs autocast makes 16-bit, and the parameters it caches a 16-bit copy of.
void classifyAutocast(PlanData& p, const Model& m)
{
    std::vector<uint8_t> cachedCopy(m.tensors.size(), 0); // already in amp16Params
    for (const Unit& u : p.units) {
        const CastPolicy policy = autocastPolicy(m.nodes[static_cast<size_t>(u.head)].op);
        bool low = false;
        if (u.kind == UnitKind::LayerNorm || u.kind == UnitKind::GroupNorm) {
            low = false; // layer_norm and group_norm are on the fp32 list
        } else if (policy == CastPolicy::LowerPrecisionFp) {
            low = true;
            cacheParamCopies(p, u, cachedCopy);
        } else if (u.kind == UnitKind::Attention) {
            low = true; // scaled_dot_product_attention is on the lower_precision_fp list
        } else if (policy != CastPolicy::Fp32) {
            low = inputsAllLow(p, m, u, u.kind == UnitKind::Op && policy == CastPolicy::TypePromotion);
        }
        if (low)
            for (int t : u.outputs)
                p.amp16[static_cast<size_t>(t)] = 1;
    }
}

void autocastActivationCopies(PlanData& p, const Model& m)
{
    // Under autocast a lower-precision op casts each fp32 activation operand to 16 bits; autocast caches
    // only casts of leaf tensors that require grad (weights: autocast_mode.h cached_cast), so every consumer
    // makes its own copy of an activation, and backward keeps that copy, not the fp32 tensor.
    for (Unit& u : p.units) {
        const Node& nd = m.nodes[static_cast<size_t>(u.head)];
        if (!(u.kind == UnitKind::Attention ||
              (u.kind == UnitKind::Op && autocastPolicy(nd.op) == CastPolicy::LowerPrecisionFp)))
            continue;
        for (int t : u.inputs) {
            const size_t ti = static_cast<size_t>(t);
            if (!p.dynamic[ti] || p.amp16[ti] || !floatish(m.tensors[ti]))
                continue;
            bool had = false;
            for (auto it = u.saved.begin(); it != u.saved.end();) {
                const bool match = (it->kind == SavedItem::Kind::Storage && it->tensor == p.root[ti]) ||
                                   (it->kind == SavedItem::Kind::Copy && it->tensor == t);
                if (match) {
                    had = true;
                    it = u.saved.erase(it);
                } else {
                    ++it;
                }
            }
            if (had) {
                SavedItem copy{SavedItem::Kind::Copy, t};
                copy.den = 2; // the 16-bit copy of an fp32 activation
                u.saved.push_back(copy);
            }
            if (p.getsGrad[ti]) {
                SavedItem g{SavedItem::Kind::Copy, t};
                g.den = 2;
                u.castGrads.push_back(g);
            }
        }
    }
}

void flattenForTicks(PlanData& p, const Model& m)
{
    for (size_t n = 0; n < m.nodes.size(); ++n)
        for (int t : m.nodes[n].outputs)
            if (t >= 0) {
                p.nodeOutputs.emplace_back(static_cast<int>(n), t);
                if (m.tensors[static_cast<size_t>(t)].role == TensorRole::Activation)
                    p.classicOutputs.push_back(t);
            }
    for (size_t t = 0; t < m.tensors.size(); ++t) {
        const Tensor& tensor = m.tensors[t];
        if (tensor.role == TensorRole::Parameter && tensor.aliasOf < 0 && tensor.producer < 0)
            p.classicParams.push_back(static_cast<int>(t));
    }
    // parameters reached through aliases: the first consumer of the lowest-numbered alias that has one
    std::vector<int> aliasConsumer(m.tensors.size(), -1);
    for (size_t a = m.tensors.size(); a-- > 0;) {
        const Tensor& at = m.tensors[a];
        if (at.aliasOf >= 0 && !at.consumers.empty())
            aliasConsumer[static_cast<size_t>(at.aliasOf)] = at.consumers.front();
    }
    p.paramNode.reserve(p.trainable.size());
    for (int t : p.trainable) {
        const auto& cons = m.tensors[static_cast<size_t>(t)].consumers;
        p.paramNode.push_back(cons.empty() ? aliasConsumer[static_cast<size_t>(t)] : cons.front());
    }
    std::map<std::tuple<int, int, int>, int> spanIds;
    const auto spanOf = [&](int tensor, int begin, int end) {
        const int shape = p.shapeClasses.classOf[static_cast<size_t>(tensor)];
        if (shape < 0)
            return -1;
        const auto [pos, added] = spanIds.try_emplace({shape, begin, end}, static_cast<int>(p.spans.size()));
        if (added)
            p.spans.push_back({shape, begin, end});
        return pos->second;
    };
    for (Unit& u : p.units) {
        // unitMacs' dims: the RNN's T * B, or the reduction dim when the shape has it
        if (u.macDimTensor >= 0 && u.macDim == -2)
            u.macSpan = spanOf(u.macDimTensor, 0, 2);
        else if (u.macDimTensor >= 0 && u.macDim >= 0 &&
                 static_cast<size_t>(u.macDim) < m.tensors[static_cast<size_t>(u.macDimTensor)].shape.dims.size())
            u.macSpan = spanOf(u.macDimTensor, u.macDim, u.macDim + 1);
        for (SavedItem& it : u.saved) {
            if (it.kind != SavedItem::Kind::Extra || it.dimBegin < 0 || it.tensor < 0)
                continue;
            it.span = spanOf(it.tensor, it.dimBegin, it.dimEnd);
        }
    }
    p.savedBegin.reserve(p.units.size() + 1);
    for (const Unit& u : p.units) {
        p.savedBegin.push_back(static_cast<int>(p.savedFlat.size()));
        p.savedFlat.insert(p.savedFlat.end(), u.saved.begin(), u.saved.end());
    }
    p.savedBegin.push_back(static_cast<int>(p.savedFlat.size()));
}

} // namespace

PlanData buildPlan(const Model& m, const PlanOptions& options)
{
    PlanData p;
    initPlan(p, m, options);
    classifyParameters(p, m);
    recordParameterDims(p, m);
    propagateDynamic(p, m);
    formUnits(p, m, options);
    applySavedRules(p, m);
    linkConsumers(p);
    propagateGradients(p, m);
    classifyAutocast(p, m);
    if (options.autocast)
        autocastActivationCopies(p, m);
    if (options.bnbKeepsInput)
        keepLinear4bitInputs(p, m);
    if (options.litgptModel) {
        applyLitgptModel(p, m);
        // lit-gpt's GPT builds lm_head and wte as two modules (litgpt/model.py GPT.__init__; the fine-tune scripts
        // share them only with TrainArgs.tie_embeddings, off by default), so a tied config.json is two weights there.
        // generate/base.py builds the same GPT and loads both, so inference holds the copy as well. (A trained copy,
        // full fine-tuning, with its own gradient and optimizer state, is not modelled.)
        const int tied = tiedOutputEmbedding(m);
        const auto it = std::find(p.trainable.begin(), p.trainable.end(), tied);
        if (tied >= 0 && it != p.trainable.end() && (p.frozen[static_cast<size_t>(tied)] || options.litgptInference))
            p.untiedHead = static_cast<int>(it - p.trainable.begin());
    }
    // frozen parameters that are not consumed by anything that needs them are still weights
    flattenForTicks(p, m);
    p.anyInplaceable = std::any_of(p.units.begin(), p.units.end(), [](const Unit& u) { return u.inplaceable; });
    p.simCache = newSimCache();
    return p;
}

EnginePlan makePlan(const Model& model, const std::vector<std::string>& freeze)
{
    Config c;
    c.freeze = freeze;
    return makePlan(model, c);
}

EnginePlan makePlan(const Model& model, const Config& config)
{
    EnginePlan plan;
    plan.model = &model;
    plan.data = std::make_shared<const PlanData>(buildPlan(model, planOptions(config)));
    return plan;
}

bool planMatches(const EnginePlan& plan, const Config& config)
{
    return plan.data && plan.data->options == planOptions(config);
}

} // namespace headroom
