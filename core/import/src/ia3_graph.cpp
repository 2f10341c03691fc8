// The IA3 rewrite (peft/tuners/ia3/layer.py Linear.forward at 5d602fd): for a Linear x -> base(x) and one adapter,
//   ia3_l = Parameter((out, 1)), or (1, in) for the feedforward modules (IA3Layer.update_layer), ones at init
//   feedforward: interm = (x.to(ia3_l.dtype) * ia3_l.flatten()).to(x.dtype); result = base(interm)
//   otherwise:   result = (base(x) * ia3_l.flatten()).to(base(x).dtype)
// With fp32 vectors (autocast_adapter_dtype=True casts them to fp32) on a bf16 model the feedforward input gets an
// fp32 copy, which the Mul keeps for the vector's gradient (mul saves self when other requires grad), and the
// other Linears' products are fp32 transients cast back, the Mul keeping the base output. The frozen base MatMul
// saves nothing (derivatives.yaml mm: self only for mat2's gradient). The casts are written as PyTorch runs
// them: the input cast is named ia3_cast_in (precision.cpp: to the vectors' dtype), the way back is a CastLike to
// the tensor whose dtype it restores.
#include "lora_graph.h"

#include "headroom/base/error.h"
#include "headroom/import/hfconfig.h"

#include <onnx/onnx_pb.h>

namespace headroom::detail {

namespace {

std::string joined(const std::vector<std::string>& names)
{
    std::string list;
    for (const std::string& t : names)
        list += (list.empty() ? "" : ",") + t;
    return list;
}

} // namespace

void applyIa3(onnx::ModelProto& model, const LoraSpec& spec, const std::string& file)
{
    onnx::GraphProto* g = model.mutable_graph();
    // IA3Model._prepare_adapter_config: each list unset takes the model_type's mapping
    const std::string modelType = modelTypeOf(model);
    const Ia3Defaults defaults = peftIa3Defaults(modelType);
    const std::vector<std::string> targets = spec.targets.empty() ? defaults.targets : spec.targets;
    const std::vector<std::string> feedforward = spec.feedforward.value_or(defaults.feedforward);
    if (targets.empty())
        throw Error(file + ": IA3: no targets= given and PEFT has no default IA3 targets for " +
                    (modelType.empty() ? std::string("this file (no model_type)") : "model_type " + modelType));
    const std::vector<Linear> found = findLinears(*g, targets, modelType == "gpt_oss");
    if (found.empty())
        throw Error(file + ": IA3: no Linear matches targets=" + joined(targets) +
                    " (targets are module names such as k_proj, matched against node name scopes)");

    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    nodes.Swap(g->mutable_node());
    auto add = [&](const std::string& op, const std::string& name, std::vector<std::string> in) {
        onnx::NodeProto* n = g->add_node();
        n->set_op_type(op);
        n->set_name(name);
        for (auto& s : in)
            n->add_input(s);
        n->add_output(name + "_output_0");
        return n;
    };
    size_t next = 0;
    for (int i = 0; i < nodes.size(); ++i) {
        const bool wrapped = next < found.size() && found[next].in == i;
        if (!wrapped) {
            *g->add_node() = nodes.Get(i);
            continue;
        }
        const Linear& l = found[next++];
        const onnx::NodeProto& n = nodes.Get(i);
        const std::string scope = n.name().substr(0, n.name().rfind('/'));
        // IA3Model._create_and_replace: is_feedforward = any(key.endswith(target_key) for the feedforward list)
        const bool ff = matches(l.module, feedforward);
        const std::string vec = stored(g, l.module + ".ia3_l.default", {ff ? l.inDim : l.outDim})->name();
        if (ff) {
            onnx::NodeProto* up = add("Cast", scope + "/ia3_cast_in/Cast", {n.input(0)});
            auto* to = up->add_attribute();
            to->set_name("to");
            to->set_type(onnx::AttributeProto::INT);
            to->set_i(l.dtype); // a no-op in the file; precision.cpp gives it the vectors' dtype
            const std::string scaled = add("Mul", scope + "/ia3_l/Mul", {up->output(0), vec})->output(0);
            const std::string back =
                add("CastLike", scope + "/ia3_cast_back/CastLike", {scaled, n.input(0)})->output(0);
            onnx::NodeProto* base = g->add_node();
            *base = n;
            base->set_input(0, back);
        } else {
            onnx::NodeProto* base = g->add_node();
            *base = n;
            const std::string y = n.output(0);
            base->set_output(0, y + "_ia3_base");
            const std::string scaled = add("Mul", scope + "/ia3_l/Mul", {y + "_ia3_base", vec})->output(0);
            add("CastLike", scope + "/ia3_cast_back/CastLike", {scaled, y + "_ia3_base"})->set_output(0, y);
        }
    }
}

} // namespace headroom::detail
