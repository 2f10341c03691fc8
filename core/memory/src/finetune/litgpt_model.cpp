// lit-gpt's own model code (Config::modelCode == ModelCode::Litgpt, the --framework litgpt preset) on the graph
// the config.json importer writes for transformers with PEFT's adapters. Per decoder layer, what lit-gpt keeps
// for backward that transformers + PEFT does not, or differently (lit-gpt 8641822; litgpt 2024 the same):
//
// 1. One fused qkv Linear with one adapter. lit_gpt/lora.py CausalSelfAttention builds `attn` as
//    LoRAQKVLinear(n_embd, (n_head + 2 * n_query_groups) * head_size, enable_lora=(to_query, to_key, to_value));
//    its forward is pretrained = linear(x); after_A = F.linear(lora_dropout(x), lora_A) (lora_A stacks the
//    enabled parts' r rows); after_B = conv1d(after_A.T, lora_B, groups): one dropout of x for q, k and v
//    together, where PEFT wraps each targeted Linear with its own lora_dropout (peft/tuners/lora/layer.py
//    Linear.forward), so the dropout mask and output that lora_A saves exist once, not once per target.
//    LoRAQKVLinear.zero_pad, used when not all of q, k, v are adapted (finetune/lora.py: query and value),
//    scatters after_B into new_zeros of the full qkv width with result.index_copy(1, lora_ind,
//    x.reshape(-1, sum(qkv_shapes))): derivatives.yaml index_copy's source formula
//    (grad.index_select(dim, index).expand_as(source), source.dim()) keeps `source`, the reshaped copy of the
//    adapters' output (B x T x the adapted parts' width, in the adapter dtype), until backward.
// 2. q, k and v are views of the fused output. lit_gpt/model.py CausalSelfAttention.forward: qkv.view(B, T,
//    n_query_groups, q_per_kv + 2, head_size).permute(0, 2, 3, 1, 4).split((q_per_kv, 1, 1), dim=2); with
//    n_query_groups == n_head (Llama 2 7B/13B, phi-1.5, StableLM) k.expand is a no-op and the reshapes stay
//    views; apply_rope + torch.cat make new q and k, but v goes to scaled_dot_product_attention as a view, and
//    SDPA saves value (flash: derivatives.yaml _scaled_dot_product_flash_attention), so the whole qkv storage
//    lives until the attention's backward: besides transformers' separate v, a q-sized and a k-sized part.
//    With grouped queries (n_query_groups < n_head) expand(...).reshape copies k and v, so nothing is pinned.
//    apply_rope's fp16 cos/sin (build_rope_cache: `.half()` for a bf16 model) promote x * cos to fp32, but mul
//    saves only the operand that does not require grad (cos): fp32 transients, nothing kept.
// 3. finetune/lora.py fit(): `logits = model(input_ids, lm_head_chunk_size=128)` is a local that lives through
//    fabric.backward(loss), so the lm_head chunks are not freed when chunked_cross_entropy has read them
//    (timeline/loss.cpp keeps them to the end of backward; they live on until the next iteration's forward
//    returns, which a steady step's peak at the start of backward does not see, unless rule 5 holds them).
// 4. With bitsandbytes 4-bit weights (--quantize bnb.nf4 / nf4-dq / fp4 / fp4-dq), every Linear4bit's input.
//    bitsandbytes 0.41.x and 0.42.0 (lit-gpt 8641822 ran 0.41.1; litgpt's pyproject.toml pinned 0.41.0 when
//    the config_hub figures were published in March 2024, then ==0.42.0 until December 2024)
//    autograd/_functions.py MatMul4Bit.forward:
//    `if any(ctx.needs_input_grad[:2]): ctx.tensors = (A, B)`, while backward uses only B (grad_A =
//    grad_output @ dequantize_4bit(B).t(); grad_B is not supported): A, the Linear's input, lives until the
//    Linear's backward, where a frozen torch Linear (F.linear, derivatives.yaml: input only for the weight's
//    gradient) keeps nothing. Per Llama layer that is the q/k/v input, the attention output, the gate/up
//    input and silu(gate) * up, plus lm_head's input (Lightning quantizes lm_head too: quant_weights.cpp).
//    A that does not require grad (layer 0's q/k/v input, below every adapter) is not kept:
//    ctx.tensors = (None, None). bitsandbytes 0.43.2 dropped it (PR #1270 "fix QLoRA mem bug: delete useless
//    buffered activation": ctx.tensors = (None, B)); the litgpt preset models the pinned versions. It is the
//    bitsandbytes version's, not lit-gpt's: Config::bnbKeepsMatmulInput (--bnb-version) applies it under any
//    model code (engine_plan.cpp buildPlan); without it Headroom models today's bitsandbytes, keeping nothing.
// 5. What the previous iteration's graph holds through the next forward. fit()'s `logits` local (rule 3) keeps
//    the previous step's autograd graph alive until `logits = model(input_ids, lm_head_chunk_size=128)` returns
//    in the next iteration (litgpt/finetune/lora.py fit(); `loss` is rebound to a float at log_interval 1).
//    Backward frees what save_for_backward saved (PyNode::release_variables), not a Function's ctx attributes:
//    "If a tensor is stored directly on ctx it will unnecessarily remain alive for the lifetime of the autograd
//    graph -- typically until the end of the iteration" (pytorch/pytorch PR #153005, docs/source/notes/
//    extending.rst). So with rule 4 every kept Linear4bit input of the previous step, and the previous logits,
//    exist while the next step's forward runs (timeline/forward.cpp: allocated at the iteration's start, freed
//    when the forward returns). A steady step of the same shape then peaks at the end of its forward when
//    those inputs outweigh what backward adds (the loss's log-probabilities and the first gradients). Inputs
//    inside checkpointed layers are not held (a reentrant checkpoint's forward builds no graph).
// 6. lm_head is its own Linear. litgpt/model.py GPT.__init__ builds self.lm_head = nn.Linear(n_embd,
//    padded_vocab_size) beside transformer.wte = nn.Embedding(...); the fine-tune scripts tie them only with
//    TrainArgs.tie_embeddings (default None). A config.json with tie_word_embeddings (Falcon, Gemma) therefore
//    loads as two weights under lit-gpt's code: engine_plan.cpp finds the shared one (PlanData::untiedHead) and
//    sizes.cpp computeSizes adds the frozen copy, a Linear4bit under Lightning's bitsandbytes precision.
// The rest matches what the importer writes: lit_gpt/rmsnorm.py RMSNorm (x * x, mean, rsqrt, no fp32 upcast:
// x kept), LLaMAMLP (silu(fc_1(x)) * fc_2(x)), GptNeoxMLP (one gelu), frozen Linears keeping nothing. Not
// modelled: zero_pad's forward transients (new_zeros and the result, qkv wide) and LoRA on lit-gpt's fused
// qkv read as PEFT's one query_key_value adapter (all parts: no zero_pad). Rules 1 and 2 find the attention
// by its fused SDPA unit, which is how lit-gpt always runs it (F.scaled_dot_product_attention, or flash_attn_func
// when installed): with --attention eager, not a lit-gpt configuration, only rule 3 applies.
#include "engine/engine_internal.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace headroom {
namespace {

// "/model/layers.1/self_attn/q_proj/MatMul" -> "/model/layers.1/self_attn/q_proj"
std::string scopeOf(const std::string& name)
{
    const size_t s = name.rfind('/');
    return s == std::string::npos ? std::string() : name.substr(0, s);
}

bool endsWith(const std::string& s, const std::string& suffix)
{
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// One PEFT adapter as lora_graph.cpp writes it: <module>/lora_cast_in, lora_dropout, lora_A, lora_B.
struct Adapter
{
    int loraA = -1, loraB = -1; // units
    int dropout = -1;           // unit of the lora_dropout node (-1: dropout 0)
    int dropped = -1;           // its output tensor
    int input = -1;             // the wrapped Linear's input (the adapter's, before its casts)
};

int unitNamed(const PlanData& p, const std::map<std::string, int>& byName, const std::string& name)
{
    const auto it = byName.find(name);
    return it == byName.end() ? -1 : p.unitOfNode[static_cast<size_t>(it->second)];
}

// Rule 1: the adapters of one attention's projections that read the same input are one LoRAQKVLinear.
void fuseQkvAdapters(PlanData& p, const Model& m, const std::vector<std::string>& attentionScopes)
{
    std::map<std::string, int> byName;
    for (size_t n = 0; n < m.nodes.size(); ++n)
        byName.emplace(m.nodes[n].name, static_cast<int>(n));
    std::map<std::pair<std::string, int>, std::vector<Adapter>> groups; // (attention scope, input) -> adapters
    const std::string aTail = "/lora_A/default/MatMul";
    for (size_t u = 0; u < p.units.size(); ++u) {
        const Node& nd = m.nodes[static_cast<size_t>(p.units[u].head)];
        if (p.units[u].kind != UnitKind::Op || !endsWith(nd.name, aTail) || nd.inputs.empty())
            continue;
        const std::string module = nd.name.substr(0, nd.name.size() - aTail.size());
        const std::string scope = scopeOf(module);
        if (std::find(attentionScopes.begin(), attentionScopes.end(), scope) == attentionScopes.end())
            continue;
        Adapter a;
        a.loraA = static_cast<int>(u);
        a.loraB = unitNamed(p, byName, module + "/lora_B/default/MatMul");
        int t = nd.inputs[0];
        // back through the adapter's own cast and dropout to the Linear's input
        for (int guard = 0; guard < 4 && t >= 0; ++guard) {
            const int pr = m.tensors[static_cast<size_t>(t)].producer;
            if (pr < 0 || m.nodes[static_cast<size_t>(pr)].name.rfind(module + "/lora_", 0) != 0 ||
                m.nodes[static_cast<size_t>(pr)].inputs.empty())
                break;
            if (m.nodes[static_cast<size_t>(pr)].op == "Dropout") {
                a.dropout = p.unitOfNode[static_cast<size_t>(pr)];
                a.dropped = t;
            }
            t = m.nodes[static_cast<size_t>(pr)].inputs[0];
        }
        a.input = t;
        if (a.loraB >= 0 && a.input >= 0)
            groups[{scope, a.input}].push_back(a);
    }
    for (auto& [key, adapters] : groups) {
        // the attention's Linears on that input (q_proj, k_proj, v_proj: <scope>/<module>/MatMul on a weight)
        int linears = 0;
        for (int n : m.tensors[static_cast<size_t>(key.second)].consumers) {
            const Node& c = m.nodes[static_cast<size_t>(n)];
            linears += c.op == "MatMul" && c.inputs.size() == 2 && c.inputs[1] >= 0 &&
                       !p.dynamic[static_cast<size_t>(c.inputs[1])] && scopeOf(scopeOf(c.name)) == key.first;
        }
        for (size_t i = 1; i < adapters.size(); ++i) { // one lora_dropout(x) for all of them
            const Adapter& a = adapters[i];
            if (a.dropout < 0)
                continue;
            p.units[static_cast<size_t>(a.dropout)].saved.clear();
            auto& s = p.units[static_cast<size_t>(a.loraA)].saved;
            const int root = p.root[static_cast<size_t>(a.dropped)];
            s.erase(std::remove_if(
                        s.begin(), s.end(),
                        [&](const SavedItem& it) { return it.kind == SavedItem::Kind::Storage && it.tensor == root; }),
                    s.end());
        }
        if (static_cast<int>(adapters.size()) >= linears)
            continue;                       // every part adapted: zero_pad returns after_B as is
        for (const Adapter& a : adapters) { // zero_pad's index_copy source: this adapter's part of it
            Unit& b = p.units[static_cast<size_t>(a.loraB)];
            if (!b.outputs.empty())
                b.saved.push_back({SavedItem::Kind::Extra, b.outputs[0]});
        }
    }
}

std::optional<int64_t> dimAt(const Model& m, int t, size_t i)
{
    const auto& d = m.tensors[static_cast<size_t>(t)].shape.dims;
    return i < d.size() ? d[i].constantValue() : std::nullopt;
}

// Rule 2: an attention whose v is a view of its own projection's output (no repeat_kv copy, not already a
// fused qkv) keeps lit-gpt's whole qkv: q- and k-sized parts besides v. Returns the attention's scope.
std::string pinFusedQkv(PlanData& p, const Model& m, Unit& u)
{
    int mm1 = -1, mm2 = -1;
    for (int n : u.nodes) {
        const Node& nd = m.nodes[static_cast<size_t>(n)];
        if (nd.op != "MatMul" || nd.inputs.size() != 2 || nd.outputs.empty())
            continue;
        if (std::find(u.outputs.begin(), u.outputs.end(), nd.outputs[0]) != u.outputs.end())
            mm2 = n;
        else
            mm1 = n;
    }
    if (mm1 < 0 || mm2 < 0)
        return {};
    const Node& n1 = m.nodes[static_cast<size_t>(mm1)];
    const int q = n1.inputs[0], kT = n1.inputs[1], v = m.nodes[static_cast<size_t>(mm2)].inputs[1];
    const std::string scope = scopeOf(m.nodes[static_cast<size_t>(mm2)].name);
    const int root = p.root[static_cast<size_t>(v)];
    const int pr = m.tensors[static_cast<size_t>(root)].producer;
    const std::string op = pr >= 0 ? m.nodes[static_cast<size_t>(pr)].op : std::string();
    const auto& vd = m.tensors[static_cast<size_t>(v)].shape.dims;
    const auto& rd = m.tensors[static_cast<size_t>(root)].shape.dims;
    if ((op != "MatMul" && op != "Gemm" && op != "Add") || vd.size() != 4 || rd.empty())
        return scope;
    const auto heads = dimAt(m, v, 1), headDim = dimAt(m, v, 3), width = rd.back().constantValue();
    const auto qHeads = dimAt(m, q, 1);
    if (!heads || !headDim || !width || !qHeads || *width != *heads * *headDim || *qHeads != *heads)
        return scope;
    u.saved.push_back({SavedItem::Kind::Extra, q});
    u.saved.push_back({SavedItem::Kind::Extra, kT});
    return scope;
}

} // namespace

// Rule 4: MatMul4Bit (bitsandbytes < 0.43.2) keeps its input A whenever A requires grad, under any model code
// (Config::bnbKeepsMatmulInput: the litgpt preset sets it, --bnb-version sets it for any run).
void keepLinear4bitInputs(PlanData& p, const Model& m)
{
    if (p.options.quant != Quant::NF4 && p.options.quant != Quant::FP4)
        return;
    for (Unit& u : p.units) {
        if (u.kind != UnitKind::Op || u.head < 0)
            continue;
        const Node& n = m.nodes[static_cast<size_t>(u.head)];
        if (n.op != "MatMul" || n.inputs.size() != 2 || n.inputs[0] < 0)
            continue;
        const int w = storedWeight(m, n.inputs[1]);
        if (w < 0 || static_cast<size_t>(w) >= p.quantizable.size() || !p.quantizable[static_cast<size_t>(w)])
            continue;
        const int a = n.inputs[0];
        if (!p.reqGrad[static_cast<size_t>(a)])
            continue;
        // shared storages count once: q, k and v (gate and up) read one input and keep it once
        const int root = p.root[static_cast<size_t>(a)];
        u.saved.push_back({SavedItem::Kind::Storage, root});
        const int unit = static_cast<int>(&u - p.units.data());
        // rule 5 is lit-gpt's fit() (its logits local), not bitsandbytes'
        if (p.options.litgptModel &&
            std::none_of(p.graphHeld.begin(), p.graphHeld.end(), [&](const auto& h) { return h.first == root; }))
            p.graphHeld.emplace_back(root, unit);
    }
}

void applyLitgptModel(PlanData& p, const Model& m)
{
    // rule 5: the previous logits too, but only beside held inputs (without them the step's own backward start,
    // where the loss's log-probabilities exist, stays the peak: rule 3)
    if (!p.graphHeld.empty() && p.lossTensor >= 0 && p.dynamic[static_cast<size_t>(p.lossTensor)]) {
        const int pr = m.tensors[static_cast<size_t>(p.lossTensor)].producer;
        p.graphHeld.emplace_back(p.root[static_cast<size_t>(p.lossTensor)],
                                 pr >= 0 ? p.unitOfNode[static_cast<size_t>(pr)] : -1);
    }
    std::vector<std::string> scopes;
    for (Unit& u : p.units)
        if (u.kind == UnitKind::Attention) {
            std::string s = pinFusedQkv(p, m, u);
            if (!s.empty())
                scopes.push_back(std::move(s));
        }
    fuseQkvAdapters(p, m, scopes);
}

} // namespace headroom
