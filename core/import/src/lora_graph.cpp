// The LoRA rewrite (peft/tuners/lora/layer.py): for a Linear x -> base(x),
//   lora_A = Linear(in, r, bias=False), lora_B = Linear(r, out, bias=False)  (LoraLayer.update_layer)
//   result = base(x) + lora_B(lora_A(lora_dropout(x))) * scaling, scaling = lora_alpha / r  (Linear.forward)
// The graph then carries the adapters as ordinary ops and parameters, and the engine's autograd rules do
// the rest: the frozen base MatMul saves nothing (derivatives.yaml mm: self is saved only when mat2
// requires grad), lora_A saves its input (or the dropout output, plus the 1-byte mask), lora_B saves
// lora_A's output, the scaling Mul by a Python float saves no tensor.
// DoRA (use_dora=True; peft/tuners/lora/dora.py DoraLinearLayer.forward, variants.py DoraLinearVariant, at
// f650b08 and 5d602fd alike): the adapter's term is replaced by
//   weight_norm = ||W + scaling * lora_B(lora_A(eye)).T||_row, detached; mag_norm_scale = magnitude / weight_norm
//   result = base(x) + (mag_norm_scale - 1) * base_result + mag_norm_scale * lora_B(lora_A(x)) * scaling
// base_result is base(x) itself without dropout, else F.linear(dropout(x), W) again. The two products each keep
// their activation for magnitude's gradient (mul saves other when self requires grad): the base output and
// lora_B's output, in their own dtypes (the adapters' one for lora_B's). The weight norm is input-independent
// and [out]-sized (a ReduceL2 of W here: static, nothing saved); its in x in and out x in transients are not
// counted.
#include "lora_graph.h"

#include "headroom/base/error.h"
#include "headroom/import/hfconfig.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <map>

namespace headroom::detail {

// "/model/layers.0/self_attn/q_proj/MatMul" -> "model.layers.0.self_attn.q_proj"; "" for unscoped names.
std::string moduleOf(const std::string& nodeName)
{
    const size_t last = nodeName.rfind('/');
    if (last == std::string::npos || last == 0)
        return {};
    std::string m = nodeName.substr(nodeName[0] == '/' ? 1 : 0, last - (nodeName[0] == '/' ? 1 : 0));
    std::replace(m.begin(), m.end(), '/', '.');
    return m;
}

// PEFT's check_target_module_exists for a list: the key equals the module name or is its last dotted part(s).
bool matches(const std::string& module, const std::vector<std::string>& targets)
{
    for (const std::string& t : targets)
        if (module == t || (module.size() > t.size() && module.ends_with("." + t)))
            return true;
    return false;
}

onnx::TensorProto* stored(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims)
{
    // fp32 adapters: PEFT's default since 0.12 (autocast_adapter_dtype=True)
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims)
        t->add_dims(d);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* loc = t->add_external_data();
    loc->set_key("location");
    loc->set_value("adapter.weights");
    return t;
}

std::string modelTypeOf(const onnx::ModelProto& model)
{
    for (const auto& p : model.metadata_props())
        if (p.key() == "model_type")
            return p.value();
    return {};
}

std::vector<Linear> findLinears(const onnx::GraphProto& g, const std::vector<std::string>& targets, bool ossRouter)
{
    const bool allLinear = targets.size() == 1 && targets[0] == "all-linear";
    std::map<std::string, const onnx::TensorProto*> inits;
    for (const auto& t : g.initializer())
        inits[t.name()] = &t;
    std::map<std::string, const onnx::NodeProto*> producer;
    for (const auto& n : g.node())
        for (const auto& o : n.output())
            producer[o] = &n;
    std::vector<std::string> graphOutputs;
    for (const auto& o : g.output())
        graphOutputs.push_back(o.name());

    std::vector<Linear> found;
    for (int i = 0; i < g.node_size(); ++i) {
        const onnx::NodeProto& n = g.node(i);
        if (n.op_type() != "MatMul" || n.input_size() != 2)
            continue;
        const std::string module = moduleOf(n.name());
        if (module.empty())
            continue;
        const onnx::TensorProto* w = nullptr;
        bool transposed = false;
        if (auto it = inits.find(n.input(1)); it != inits.end())
            w = it->second;
        else if (auto p = producer.find(n.input(1));
                 p != producer.end() && p->second->op_type() == "Transpose" && inits.count(p->second->input(0))) {
            w = inits[p->second->input(0)];
            transposed = true;
        }
        if (!w || w->dims_size() != 2)
            continue;
        // PEFT's all-linear leaves out the output layer (model.get_output_embeddings()): the Linear whose
        // output is the model's output, or is named lm_head
        const bool output = module == "lm_head" || module.ends_with(".lm_head") ||
                            std::find(graphOutputs.begin(), graphOutputs.end(), n.output(0)) != graphOutputs.end();
        const bool notLinear = ossRouter && module.ends_with(".mlp.router");
        if (allLinear ? output || notLinear : !matches(module, targets))
            continue;
        Linear l;
        l.in = i;
        l.inDim = transposed ? w->dims(1) : w->dims(0);
        l.outDim = transposed ? w->dims(0) : w->dims(1);
        l.module = module;
        l.dtype = w->data_type();
        found.push_back(l);
    }
    return found;
}

namespace {

// LoraConfig.target_parameters on 3D expert weights (GroupedMatMul's [E, K, N]), as PEFT's lora.ParamWrapper
// runs it (peft/tuners/lora/layer.py @ 5d602fd): lora_A = Linear(in, r * E), lora_B = Linear(r * E, out), so
// r * E * (in + out) trainable; every forward get_delta_weight builds the whole delta
// einsum("o r e, e r i -> e i o", B, A) * scaling, casts it to the weight's dtype, and the parametrization
// hands the experts W + delta (_LoraParameterProxy.forward). That sum is an activation which the experts'
// matmul keeps for backward (its input needs it), a second copy of the targeted expert weights per layer.
// The delta is input-independent; a view of it hangs off the tokens' shape (an empty Slice) so that the engine
// runs the scaling, the cast and the sum each forward as PyTorch does instead of folding them with the weights
// (the fp32 einsum result itself, freed as soon as it is scaled, is not counted).
void wrapParameters(onnx::ModelProto& model, const LoraSpec& spec, const std::string& file)
{
    onnx::GraphProto* g = model.mutable_graph();
    std::map<std::string, const onnx::TensorProto*> inits;
    for (const auto& t : g->initializer())
        inits[t.name()] = &t;
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    nodes.Swap(g->mutable_node());
    int consts = 0, wrapped = 0;
    auto ints = [&](const std::vector<int64_t>& v) {
        onnx::TensorProto* t = g->add_initializer();
        t->set_name("lora_param_const_" + std::to_string(consts++));
        t->set_data_type(onnx::TensorProto::INT64);
        t->add_dims(static_cast<int64_t>(v.size()));
        for (int64_t x : v)
            t->add_int64_data(x);
        return t->name();
    };
    auto add = [&](const std::string& op, const std::string& name, std::vector<std::string> in) {
        onnx::NodeProto* n = g->add_node();
        n->set_op_type(op);
        n->set_name(name);
        for (auto& i : in)
            n->add_input(i);
        n->add_output(name + "_output_0");
        return n;
    };
    for (int i = 0; i < nodes.size(); ++i) {
        const onnx::NodeProto& n = nodes.Get(i);
        const auto w = n.op_type() == "GroupedMatMul" && n.input_size() >= 2 ? inits.find(n.input(1)) : inits.end();
        if (w == inits.end() || w->second->dims_size() != 3 || !matches(w->first, spec.parameters)) {
            *g->add_node() = n;
            continue;
        }
        const std::string& name = w->first;
        const int64_t E = w->second->dims(0), K = w->second->dims(1), N = w->second->dims(2), r = spec.r;
        const int dtype = w->second->data_type();
        const std::string scope = n.name().substr(0, n.name().rfind('/')) + "/" + name.substr(name.rfind('.') + 1);
        const std::string shape = add("Shape", scope + "/lora_anchor/Shape", {n.input(0)})->output(0);
        const std::string none =
            add("Slice", scope + "/lora_anchor/Slice", {shape, ints({0}), ints({0})})->output(0); // []
        onnx::NodeProto* cat = add("Concat", scope + "/lora_anchor/Concat", {none, ints({E, K, N})});
        auto* axis = cat->add_attribute();
        axis->set_name("axis");
        axis->set_type(onnx::AttributeProto::INT);
        axis->set_i(0);
        // einsum("o r e, e r i -> e i o", B, A) as one batched matmul of the stored factors [E, K, r] x [E, r, N]
        const std::string product = add("MatMul", scope + "/lora_delta/MatMul",
                                        {stored(g, name + ".lora_A.default.weight", {E, K, r})->name(),
                                         stored(g, name + ".lora_B.default.weight", {E, r, N})->name()})
                                        ->output(0);
        const std::string delta = add("Reshape", scope + "/lora_anchor/Reshape", {product, cat->output(0)})->output(0);
        onnx::TensorProto* s = g->add_initializer();
        s->set_name("lora_param_const_" + std::to_string(consts++));
        s->set_data_type(onnx::TensorProto::FLOAT);
        s->add_float_data(static_cast<float>(spec.alpha / spec.r));
        const std::string scaled = add("Mul", scope + "/lora_scaling/Mul", {delta, s->name()})->output(0);
        onnx::NodeProto* cast = add("Cast", scope + "/lora_cast_weight/Cast", {scaled});
        auto* to = cast->add_attribute();
        to->set_name("to");
        to->set_type(onnx::AttributeProto::INT);
        to->set_i(dtype);
        const std::string sum = add("Add", scope + "/lora_parametrize/Add", {name, cast->output(0)})->output(0);
        onnx::NodeProto* experts = g->add_node();
        *experts = n;
        experts->set_input(1, sum);
        ++wrapped;
    }
    if (wrapped == 0) {
        std::string list;
        for (const std::string& t : spec.parameters)
            list += (list.empty() ? "" : ",") + t;
        throw Error(file + ": LoRA: no 3D expert parameter matches target_parameters=" + list +
                    " (names such as mlp.experts.gate_up_proj, mlp.experts.down_proj)");
    }
}

// The target module names: the spec's, or PEFT's default for the model_type
// (TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING) when none are given.
std::vector<std::string> resolveTargets(const onnx::ModelProto& model, const LoraSpec& spec, const std::string& file)
{
    if (!spec.targets.empty())
        return spec.targets;
    const std::string modelType = modelTypeOf(model);
    std::vector<std::string> targets = peftDefaultTargets(modelType);
    if (targets.empty())
        throw Error(file + ": LoRA: no targets= given and PEFT has no default targets for " +
                    (modelType.empty() ? std::string("this file (no model_type)") : "model_type " + modelType));
    return targets;
}

// DoRA's term for one adapted Linear (see the top of the file): returns (m / ||W + dW|| - 1) * base_result +
// (m / ||W + dW||) * lora_result * scaling. `add` and `scalar` are applyLora's node and constant makers.
struct DoraSite
{
    std::string module; // "model.layers.0.self_attn.q_proj"
    int64_t outDim = 0;
    std::string scope;  // the base MatMul's scope
    std::string weight; // the base MatMul's second input (W as [in, out])
};
template <class Add, class Scalar>
std::string doraTerm(onnx::GraphProto& g, Add& add, Scalar& scalar, int& consts, int64_t opset, const LoraSpec& spec,
                     const DoraSite& site, const std::string& x, const std::string& baseOut, const std::string& lora)
{
    const std::string mag = site.module + ".lora_magnitude_vector.default.weight";
    stored(&g, mag, {site.outDim});
    const std::string dora = site.scope + "/lora_magnitude_vector/default";
    // the nodes that read W stay in the base Linear's scope: a consumer's path is one of the names the freeze
    // patterns match (engine_plan.cpp frozenBy), and "!*lora_magnitude_vector*" must not free W
    onnx::NodeProto* norm = add("ReduceL2", site.scope + "/weight_norm/ReduceL2", {site.weight});
    auto* keep = norm->add_attribute();
    keep->set_name("keepdims");
    keep->set_type(onnx::AttributeProto::INT);
    keep->set_i(0);
    if (opset >= 18) {
        onnx::TensorProto* axes = g.add_initializer();
        axes->set_name("lora_const_" + std::to_string(consts++));
        axes->set_data_type(onnx::TensorProto::INT64);
        axes->add_dims(1);
        axes->add_int64_data(0);
        norm->add_input(axes->name());
    } else {
        auto* axes = norm->add_attribute();
        axes->set_name("axes");
        axes->set_type(onnx::AttributeProto::INTS);
        axes->add_ints(0);
    }
    const std::string scale = add("Div", dora + "/Div", {mag, norm->output(0)})->output(0);
    std::string baseResult = baseOut;
    if (spec.dropout > 0) // base_result = None: F.linear(dropout(x), W) again
        baseResult = add("MatMul", site.scope + "/dora_base/MatMul", {x, site.weight})->output(0);
    const std::string less = add("Sub", dora + "/Sub", {scale, scalar(1.0)})->output(0);
    const std::string d1 = add("Mul", dora + "/Mul", {less, baseResult})->output(0);
    const std::string d2 = add("Mul", dora + "/Mul_1", {scale, lora})->output(0);
    const std::string d3 = add("Mul", site.scope + "/lora_scaling/Mul", {d2, scalar(spec.alpha / spec.r)})->output(0);
    return add("Add", dora + "/Add", {d1, d3})->output(0);
}

} // namespace

// Long on purpose: one pass in PEFT's own order (inject_adapter_in_model: resolve the targets, find the
// matching Linears, then wrap each one), so each step can be checked against peft/tuners/lora beside it.
void applyLora(onnx::ModelProto& model, const LoraSpec& spec, const std::string& file)
{
    if (spec.r <= 0)
        return;
    // ReduceL2 takes its axes as an input from opset 18, as an attribute before (DoRA's weight norm)
    int64_t opset = 0;
    for (const auto& o : model.opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx")
            opset = o.version();
    if (!spec.parameters.empty()) {
        wrapParameters(model, spec, file);
        if (spec.targets.empty()) // target_parameters alone: PEFT's default target_modules are not added
            return;
    }
    onnx::GraphProto* g = model.mutable_graph();
    const std::vector<std::string> targets = resolveTargets(model, spec, file);
    const bool ossRouter = modelTypeOf(model) == "gpt_oss"; // GptOssTopKRouter: an nn.Parameter, not a Linear

    const std::vector<Linear> found = findLinears(*g, targets, ossRouter);
    if (found.empty()) {
        std::string list;
        for (const std::string& t : targets)
            list += (list.empty() ? "" : ",") + t;
        throw Error(file + ": LoRA: no Linear matches targets=" + list +
                    " (targets are module names such as q_proj, matched against node name scopes)");
    }

    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    nodes.Swap(g->mutable_node());
    size_t next = 0;
    int consts = 0;
    auto scalar = [&](double v) {
        onnx::TensorProto* t = g->add_initializer();
        t->set_name("lora_const_" + std::to_string(consts++));
        t->set_data_type(onnx::TensorProto::FLOAT);
        t->add_float_data(static_cast<float>(v));
        return t->name();
    };
    auto weight = [&](const std::string& name, int64_t a, int64_t b) { return stored(g, name, {a, b})->name(); };
    auto add = [&](const std::string& op, const std::string& name, std::vector<std::string> in) {
        onnx::NodeProto* n = g->add_node();
        n->set_op_type(op);
        n->set_name(name);
        for (auto& s : in)
            n->add_input(s);
        n->add_output(name + "_output_0");
        return n;
    };
    for (int i = 0; i < nodes.size(); ++i) {
        onnx::NodeProto* base = g->add_node();
        *base = nodes.Get(i);
        if (next >= found.size() || found[next].in != i)
            continue;
        const Linear& l = found[next++];
        const std::string scope = base->name().substr(0, base->name().rfind('/'));
        const std::string y = base->output(0);
        base->set_output(0, y + "_lora_base");
        // PEFT's dtype casts around the adapter (_cast_input_dtype, and the casts back to the base result's
        // dtype): same-dtype casts, which PyTorch skips; finetune/precision.cpp decides per configuration
        // whether each one copies
        auto cast = [&](const std::string& what, const std::string& in) {
            onnx::NodeProto* c = add("Cast", scope + "/" + what + "/Cast", {in});
            auto* to = c->add_attribute();
            to->set_name("to");
            to->set_type(onnx::AttributeProto::INT);
            to->set_i(l.dtype); // the graph's own dtype: every cast here is a no-op in the file
            return c->output(0);
        };
        std::string x = cast("lora_cast_in", base->input(0));
        if (spec.dropout > 0) {
            onnx::NodeProto* d = add("Dropout", scope + "/lora_dropout/default/Dropout", {x, scalar(spec.dropout)});
            onnx::TensorProto* t = g->add_initializer();
            t->set_name("lora_const_" + std::to_string(consts++));
            t->set_data_type(onnx::TensorProto::BOOL);
            t->add_int32_data(1);
            d->add_input(t->name());
            x = d->output(0);
        }
        const std::string a = add("MatMul", scope + "/lora_A/default/MatMul",
                                  {x, weight(l.module + ".lora_A.default.weight", l.inDim, spec.r)})
                                  ->output(0);
        const std::string b = add("MatMul", scope + "/lora_B/default/MatMul",
                                  {a, weight(l.module + ".lora_B.default.weight", spec.r, l.outDim)})
                                  ->output(0);
        std::string s;
        if (!spec.dora) {
            s = add("Mul", scope + "/lora_scaling/Mul", {b, scalar(spec.alpha / spec.r)})->output(0);
        } else {
            s = doraTerm(*g, add, scalar, consts, opset, spec, {l.module, l.outDim, scope, base->input(1)}, x,
                         y + "_lora_base", b);
        }
        const std::string sum =
            add("Add", scope + "/lora_add/Add", {y + "_lora_base", cast("lora_cast_out", s)})->output(0);
        cast("lora_cast_result", sum);
        g->mutable_node(g->node_size() - 1)->set_output(0, y);
    }
}

} // namespace headroom::detail
