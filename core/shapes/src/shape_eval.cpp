// One concrete pass over the graph: output dims of every node and the values of small integer tensors
// (Shape -> Gather -> Concat -> Reshape chains that exporters build at run time). Each node's op is looked up
// in the shape-rule registry (shape_rules.h); ops without a rule go to ONNX's own inference for that single
// node, and the file's value_info fills what neither could size.
#include "shape_rules.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <cstdlib>

namespace headroom::detail {
namespace {

class Evaluator : public ShapeContext
{
public:
    Evaluator(const ShapeGraph& g, const Bindings& b) : ShapeContext(g, b) {}

    EvalResult run()
    {
        const size_t nt = m_g.dtype.size();
        m_r.dims.assign(nt, {});
        m_r.known.assign(nt, 0);
        m_r.cause.assign(nt, -1);
        m_r.reason.assign(m_g.nodes.size(), {});
        m_r.dtype = m_g.dtype;
        m_has.assign(nt, 0);
        m_val.assign(nt, std::nullopt);
        m_seq.assign(nt, std::nullopt);
        seedStoredAndInputs();
        for (size_t k = 0; k < m_g.nodes.size(); ++k) {
            const Node& n = m_g.nodes[k];
            if (n.op == "Constant" && n.domain.empty())
                continue;
            std::string why;
            const int blocked = firstUnknownInput(n);
            const bool done = blocked < 0 && inferNode(k, why);
            settleOutputs(k, blocked, done, why);
        }
        return std::move(m_r);
    }

private:
    // Initializers and Constant outputs as stored; graph inputs at the bindings.
    void seedStoredAndInputs()
    {
        for (size_t t = 0; t < m_g.dtype.size(); ++t) {
            if (m_g.isStored[t]) {
                set(static_cast<int>(t), m_g.storedDims[t], m_g.storedValue[t]);
            } else if (m_g.isInput[t] && m_g.inputHasShape[t]) {
                Dims d;
                for (const InputDim& id : m_g.inputDims[t])
                    d.push_back(id.symbol >= 0 && size_t(id.symbol) < m_b.size() ? m_b[size_t(id.symbol)] : id.value);
                set(static_cast<int>(t), std::move(d), std::nullopt);
            }
        }
    }

    // The op's rule, then ONNX's inference unless the rule found the graph invalid; `why` says what failed.
    bool inferNode(size_t k, std::string& why)
    {
        const Node& n = m_g.nodes[k];
        bool done = false, invalid = false;
        try {
            if (!n.hasSubgraphs)
                done = rule(n);
        } catch (const Fail& f) {
            why = f.reason;
            invalid = !f.needsData;
        }
        if (!done && !invalid && m_g.fallback[k])
            done = onnxInfer(n, *m_g.fallback[k], why);
        return done;
    }

    // Checks inferred outputs against the file's declarations, sizes the rest from them, and records why
    // anything stays unknown (the node that made it so, for the fit's "first unknown at node X").
    void settleOutputs(size_t k, int blocked, bool done, const std::string& why)
    {
        const Node& n = m_g.nodes[k];
        for (int out : n.outputs) {
            if (out < 0)
                continue;
            const std::optional<Dims> decl = declared(out);
            if (decl && done && m_has[size_t(out)] && !m_seq[size_t(out)])
                checkDeclared(out, *decl);
            if (m_r.known[size_t(out)])
                continue;
            if (decl) {
                set(out, *decl, std::nullopt);
                m_r.declaredUsed.push_back(out);
                continue;
            }
            if (blocked >= 0) {
                m_r.cause[size_t(out)] = m_r.cause[size_t(blocked)] >= 0 ? m_r.cause[size_t(blocked)]
                                                                         : static_cast<int>(k);
                if (m_r.cause[size_t(blocked)] < 0 && m_r.reason[k].empty())
                    m_r.reason[k] = "input '" + std::to_string(blocked) + "' has no known shape";
            } else {
                m_r.cause[size_t(out)] = static_cast<int>(k);
                if (m_r.reason[k].empty())
                    m_r.reason[k] = why.empty()
                                        ? (n.domain.empty()
                                               ? "no shape rule for " + n.op + " and ONNX's inference left it unknown"
                                               : "custom op " + n.domain + "::" + n.op + " has no shape rule")
                                        : why;
            }
        }
        for (int out : n.outputs)
            if (out >= 0 && m_r.dtype[size_t(out)] == DType::Undefined)
                m_r.dtype[size_t(out)] = outputType(*this, n, 0 < n.outputs.size() && n.outputs[0] == out ? 0 : 1);
    }

    // The file's value_info dims at these bindings (static, or expressions of the symbols).
    std::optional<Dims> declared(int t) const
    {
        if (m_g.declaredDims[size_t(t)])
            return *m_g.declaredDims[size_t(t)];
        if (size_t(t) >= m_g.declaredFormula.size() || !m_g.declaredFormula[size_t(t)])
            return std::nullopt;
        Dims d;
        for (const DimFormula& f : *m_g.declaredFormula[size_t(t)]) {
            const auto v = f.eval(m_b);
            if (!v || *v < 0)
                return std::nullopt;
            d.push_back(*v);
        }
        return d;
    }

    // Inference wins where both know a dim; the declaration fills the dims inference left open.
    void checkDeclared(int t, const Dims& decl)
    {
        Dims& d = m_r.dims[size_t(t)];
        if (d.size() != decl.size()) {
            m_r.disagree.push_back(t);
            return;
        }
        bool filled = false, differs = false;
        for (size_t i = 0; i < d.size(); ++i) {
            if (d[i] < 0) {
                d[i] = decl[i];
                filled = true;
            } else if (d[i] != decl[i]) {
                differs = true;
            }
        }
        if (differs)
            m_r.disagree.push_back(t);
        if (filled && !differs) {
            bool full = true;
            for (int64_t x : d)
                full = full && x >= 0;
            m_r.known[size_t(t)] = full;
            if (full)
                m_r.declaredUsed.push_back(t);
        }
    }

    int firstUnknownInput(const Node& n) const
    {
        const size_t explicitCount = n.inputs.size() - size_t(std::max(0, n.implicitInputs));
        for (size_t i = 0; i < explicitCount; ++i) {
            const int t = n.inputs[i];
            if (t >= 0 && !m_r.known[size_t(t)])
                return t;
        }
        return -1;
    }

    // The op's registered rule; false (no rule, or the rule left it) sends the node to ONNX's inference.
    bool rule(const Node& n)
    {
        const ShapeRuleFn fn = findShapeRule(n.op, n.domain);
        return fn && fn(*this, n);
    }
    bool onnxInfer(const Node& n, const onnx::NodeProto& proto, std::string& why);
};

bool Evaluator::onnxInfer(const Node& n, const onnx::NodeProto& proto, std::string& why)
{
    try {
        onnx::ModelProto mp;
        mp.set_ir_version(8);
        for (const auto& [d, v] : m_g.opsets) {
            auto* os = mp.add_opset_import();
            os->set_domain(d);
            os->set_version(v);
        }
        onnx::GraphProto* gp = mp.mutable_graph();
        onnx::NodeProto* np = gp->add_node();
        *np = proto;
        const size_t explicitCount = n.inputs.size() - size_t(std::max(0, n.implicitInputs));
        for (int i = 0; i < np->input_size() && size_t(i) < explicitCount; ++i) {
            const int t = n.inputs[size_t(i)];
            if (t < 0)
                continue;
            const std::string name = "i" + std::to_string(i);
            np->set_input(i, name);
            auto* vi = gp->add_input();
            vi->set_name(name);
            auto* tt = vi->mutable_type()->mutable_tensor_type();
            tt->set_elem_type(
                static_cast<int32_t>(m_r.dtype[size_t(t)] == DType::Undefined ? DType::Float32 : m_r.dtype[size_t(t)]));
            auto* sh = tt->mutable_shape();
            for (int64_t d : m_r.dims[size_t(t)])
                sh->add_dim()->set_dim_value(d);
            if (m_val[size_t(t)] && isInteger(m_r.dtype[size_t(t)])) {
                auto* init = gp->add_initializer();
                init->set_name(name);
                init->set_data_type(onnx::TensorProto::INT64);
                for (int64_t d : m_r.dims[size_t(t)])
                    init->add_dims(d);
                for (int64_t e : *m_val[size_t(t)])
                    init->add_int64_data(e);
                tt->set_elem_type(onnx::TensorProto::INT64);
            }
        }
        for (int i = 0; i < np->output_size(); ++i)
            if (!np->output(i).empty())
                np->set_output(i, "o" + std::to_string(i));
        onnx::ShapeInferenceOptions opts(false, 0, true);
        onnx::shape_inference::InferShapes(mp, onnx::OpSchemaRegistry::Instance(), opts);
        bool any = false;
        for (const auto& vi : mp.graph().value_info()) {
            const std::string& nm = vi.name();
            if (nm.size() < 2 || nm[0] != 'o')
                continue;
            const size_t o = static_cast<size_t>(std::atoi(nm.c_str() + 1));
            if (o >= n.outputs.size() || n.outputs[o] < 0 || !vi.type().has_tensor_type())
                continue;
            const auto& tt = vi.type().tensor_type();
            if (m_r.dtype[size_t(n.outputs[o])] == DType::Undefined)
                m_r.dtype[size_t(n.outputs[o])] = dtypeFromOnnx(tt.elem_type());
            if (!tt.has_shape())
                continue;
            Dims d;
            for (const auto& dim : tt.shape().dim())
                d.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
            out(n, o, std::move(d));
            any = true;
        }
        if (!any && why.empty())
            why = (n.domain.empty() ? n.op : n.domain + "::" + n.op) + ": ONNX's shape inference gives no output shape";
        return any;
    } catch (const std::exception& e) {
        std::string msg = e.what();
        if (const size_t nl = msg.find('\n'); nl != std::string::npos)
            msg.resize(nl);
        why = n.op + ": ONNX's shape inference failed: " + msg.substr(0, 200);
        return false;
    }
}

} // namespace

EvalResult evaluateGraph(const ShapeGraph& g, const Bindings& values) { return Evaluator(g, values).run(); }

} // namespace headroom::detail
