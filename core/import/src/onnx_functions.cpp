// Model-local functions (ModelProto.functions, IR 8) inlined where they are called: each call becomes the
// function's nodes under the caller's name, its formal inputs and outputs renamed to the actual ones.
#include "onnx_graph_builder.h"
#include "onnx_parse.h"

namespace headroom::detail {

void GraphBuilder::expand(const onnx::NodeProto& node, int level)
{
    auto it = ctx.functions.find({normDomain(node.domain()), node.op_type()});
    if (it == ctx.functions.end()) {
        flat.push_back(&node);
        return;
    }
    if (level >= kMaxDepth)
        fail("model-local function '" + node.op_type() + "' nests deeper than " + std::to_string(kMaxDepth) +
             " levels (recursive?)");
    const onnx::FunctionProto& f = *it->second;
    const std::string prefix = node.name().empty() ? node.op_type() + "_" + std::to_string(inlineCounter++)
                                                   : node.name();
    std::unordered_map<std::string, std::string> rename;
    for (int i = 0; i < f.input_size(); ++i)
        rename[f.input(i)] = i < node.input_size() ? node.input(i) : std::string();
    for (int i = 0; i < f.output_size(); ++i)
        rename[f.output(i)] = i < node.output_size() ? node.output(i) : std::string();
    auto mapName = [&](const std::string& n) -> std::string {
        if (n.empty())
            return n;
        auto r = rename.find(n);
        return r != rename.end() ? r->second : prefix + "/" + n;
    };
    for (const onnx::NodeProto& bn : f.node()) {
        onnx::NodeProto& copy = owned.emplace_back(bn);
        copy.set_name(prefix + "/" + (bn.name().empty() ? bn.op_type() : bn.name()));
        for (int i = 0; i < copy.input_size(); ++i)
            copy.set_input(i, mapName(bn.input(i)));
        for (int i = 0; i < copy.output_size(); ++i)
            copy.set_output(i, mapName(bn.output(i)));
        if (copy.domain().empty() && !f.domain().empty() && ctx.functions.count({f.domain(), copy.op_type()}))
            copy.set_domain(f.domain());
        // Attribute references (ref_attr_name) take the caller's value, else the function's default.
        google::protobuf::RepeatedPtrField<onnx::AttributeProto> attrs;
        for (const onnx::AttributeProto& a : copy.attribute()) {
            if (a.ref_attr_name().empty()) {
                *attrs.Add() = a;
                continue;
            }
            const onnx::AttributeProto* src = nullptr;
            for (const auto& ca : node.attribute())
                if (ca.name() == a.ref_attr_name())
                    src = &ca;
            if (src) {
                onnx::AttributeProto* na = attrs.Add();
                *na = *src;
                na->set_name(a.name());
            }
        }
        *copy.mutable_attribute() = std::move(attrs);
        expand(copy, level + 1);
    }
}

} // namespace headroom::detail
