#!/usr/bin/python3
"""Ground truth for mixture-of-experts fine-tuning memory: a tiny Mixtral-style decoder, measured on CPU.

Run with Debian's Python (python3-torch, torch 1.13, CPU):

    /usr/bin/python3 make_moe_truth.py        # writes truth.json and tiny_moe.config.json here

Two layouts of the same network (README.md says what each emulates):
  loop     transformers 4.x MixtralSparseMoeBlock: one nn.Module per expert, a Python loop over the experts hit,
           hidden_states[top_x] gathered per expert, index_add_ back (MOE.md 2.1, written out below)
  grouped  transformers 5.x 3D expert parameters (gate_up_proj [E, 2I, H], down_proj [E, H, I]) with the
           grouped_mm path: token copies gathered, sorted by expert, two grouped matmuls, routing weights,
           un-permuted, summed over k (MOE.md 2.2). torch 1.13 has no grouped_mm: it is emulated by
           transformers' own fallback (`grouped_mm_fallback`): a custom autograd Function whose forward loops
           torch.mm over the expert offsets and saves (input, weight), whose backward makes
           grad_weight = zeros_like(weight) (a full [E, ...] gradient) and fills it per expert.

Measurements as /work/shared/lora/README.md (make_corpus.py's methods): saved-for-backward bytes from
saved_tensors_hooks around one forward (distinct storages), the forward + loss + backward peak from the
profiler's memory events, one thread, float32, CPU. RMSNorm's mean(x^2) is written sum(x^2) / H so that torch
1.13 saves what PyTorch >= 2 saves (nothing for the mean: derivatives.yaml mean_backward keeps only sizes), i.e.
the figures are already the `pytorch2` ones.
"""
import gc
import json
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import profile, ProfilerActivity

torch.set_num_threads(1)
HERE = os.path.dirname(os.path.abspath(__file__))

CFG = dict(vocab=512, hidden=128, layers=2, heads=4, kv_heads=2, head_dim=32, experts=8, top_k=2, inter=96,
           eps=1e-6, theta=10000.0, aux_coef=0.02)
POINTS = [(2, 64), (4, 128)]
LORA = dict(r=8, alpha=16, targets=["q_proj", "v_proj"])


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim) + 1e-3 * torch.randn(dim))
        self.eps = eps

    def forward(self, x):
        var = x.pow(2).sum(-1, keepdim=True) / x.shape[-1]  # = mean; saves like PyTorch 2's mean
        return self.weight * (x * torch.rsqrt(var + self.eps))


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class Attention(nn.Module):
    """MixtralAttention, eager: GQA, rotary, causal mask added, softmax in fp32 (no-op here)."""

    def __init__(self, c):
        super().__init__()
        self.c = c
        H, d = c["hidden"], c["head_dim"]
        self.q_proj = nn.Linear(H, c["heads"] * d, bias=False)
        self.k_proj = nn.Linear(H, c["kv_heads"] * d, bias=False)
        self.v_proj = nn.Linear(H, c["kv_heads"] * d, bias=False)
        self.o_proj = nn.Linear(c["heads"] * d, H, bias=False)

    def forward(self, x, cos, sin, mask):
        B, T, _ = x.shape
        c, d = self.c, self.c["head_dim"]
        q = self.q_proj(x).view(B, T, -1, d).transpose(1, 2)
        k = self.k_proj(x).view(B, T, -1, d).transpose(1, 2)
        v = self.v_proj(x).view(B, T, -1, d).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = c["heads"] // c["kv_heads"]
        k = k[:, :, None].expand(B, c["kv_heads"], rep, T, d).reshape(B, c["heads"], T, d)
        v = v[:, :, None].expand(B, c["kv_heads"], rep, T, d).reshape(B, c["heads"], T, d)
        w = torch.matmul(q, k.transpose(2, 3)) * (1.0 / math.sqrt(d))
        w = F.softmax(w + mask, dim=-1, dtype=torch.float32).to(q.dtype)
        o = torch.matmul(w, v).transpose(1, 2).reshape(B, T, -1)
        return self.o_proj(o)


class ExpertMLP(nn.Module):
    """MixtralBlockSparseTop2MLP (4.x): w2(act(w1(x)) * w3(x)); named gate/up/down like Qwen/OLMoE."""

    def __init__(self, H, I):
        super().__init__()
        self.gate_proj = nn.Linear(H, I, bias=False)
        self.up_proj = nn.Linear(H, I, bias=False)
        self.down_proj = nn.Linear(I, H, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


def route(gate, x, k):
    """Router as in both layouts: logits -> softmax (fp32) -> top-k -> renormalise (norm_topk_prob)."""
    logits = gate(x)
    probs = F.softmax(logits, dim=1, dtype=torch.float)
    weights, selected = torch.topk(probs, k, dim=-1)
    weights = weights / weights.sum(dim=-1, keepdim=True)
    return logits, weights.to(x.dtype), selected


class LoopMoE(nn.Module):
    """transformers 4.x MixtralSparseMoeBlock.forward (MOE.md 2.1)."""

    def __init__(self, c):
        super().__init__()
        self.E, self.k = c["experts"], c["top_k"]
        self.gate = nn.Linear(c["hidden"], self.E, bias=False)
        self.experts = nn.ModuleList([ExpertMLP(c["hidden"], c["inter"]) for _ in range(self.E)])

    def forward(self, h):
        B, T, H = h.shape
        x = h.view(-1, H)
        logits, weights, selected = route(self.gate, x, self.k)
        final = torch.zeros((B * T, H), dtype=x.dtype)
        mask = F.one_hot(selected, num_classes=self.E).permute(2, 1, 0)
        for e in range(self.E):
            idx, top_x = torch.where(mask[e])
            if top_x.numel() == 0:
                continue
            cur = x[None, top_x].reshape(-1, H)
            out = self.experts[e](cur) * weights[top_x, idx, None]
            final.index_add_(0, top_x, out.to(x.dtype))
        return final.reshape(B, T, H), logits


class GroupedMmFallback(torch.autograd.Function):
    """transformers' grouped_mm fallback: per-expert torch.mm over row offsets; backward fills a zeros_like
    weight gradient (MOE.md 2.2). x [S, K] sorted by expert, w [E, K, N], offs [E] int32 cumulative rows."""

    @staticmethod
    def forward(ctx, x, w, offs):
        out = x.new_zeros((x.shape[0], w.shape[2]))
        start = 0
        for e, end in enumerate(offs.tolist()):
            if end > start:
                out[start:end] = torch.mm(x[start:end], w[e])
            start = end
        ctx.save_for_backward(x, w, offs)
        return out

    @staticmethod
    def backward(ctx, g):
        x, w, offs = ctx.saved_tensors
        gx = torch.zeros_like(x) if ctx.needs_input_grad[0] else None
        gw = torch.zeros_like(w) if ctx.needs_input_grad[1] else None
        start = 0
        for e, end in enumerate(offs.tolist()):
            if end > start:
                if gx is not None:
                    gx[start:end] = torch.mm(g[start:end], w[e].t())
                if gw is not None:
                    gw[e] = torch.mm(x[start:end].t(), g[start:end])
            start = end
        return gx, gw, None


class GroupedMoE(nn.Module):
    """transformers 5.x: experts as 3D parameters, grouped_mm path (MOE.md 2.2)."""

    def __init__(self, c):
        super().__init__()
        self.E, self.k, H, I = c["experts"], c["top_k"], c["hidden"], c["inter"]
        self.I = I
        self.gate = nn.Linear(H, self.E, bias=False)
        self.experts = nn.Module()
        # stored [E, out, in] like transformers; the grouped mm reads them transposed ([E, in, out], a view)
        self.experts.gate_up_proj = nn.Parameter(torch.randn(self.E, 2 * I, H) / math.sqrt(H))
        self.experts.down_proj = nn.Parameter(torch.randn(self.E, H, I) / math.sqrt(I))

    def forward(self, h):
        B, T, H = h.shape
        x = h.view(-1, H)
        logits, weights, selected = route(self.gate, x, self.k)
        N = x.shape[0]
        token_idx = torch.arange(N).unsqueeze(1).expand(-1, self.k).reshape(-1)
        sample_w = weights.reshape(-1)
        expert_ids = selected.reshape(-1)
        picked = x[token_idx]
        perm = torch.argsort(expert_ids)
        inv_perm = torch.argsort(perm)
        sorted_ids = expert_ids[perm]
        sample_w = sample_w[perm]
        picked = picked[perm]
        counts = torch.histc(sorted_ids.float(), bins=self.E, min=0, max=self.E - 1)
        offs = torch.cumsum(counts, dim=0, dtype=torch.int32)
        gu = GroupedMmFallback.apply(picked, self.experts.gate_up_proj.transpose(1, 2), offs)
        g, u = gu.chunk(2, dim=-1)
        act = F.silu(g) * u
        out = GroupedMmFallback.apply(act, self.experts.down_proj.transpose(1, 2), offs)
        out = out * sample_w.unsqueeze(-1)
        out = out[inv_perm]
        return out.view(N, self.k, H).sum(dim=1).reshape(B, T, H), logits


class Layer(nn.Module):
    def __init__(self, c, layout):
        super().__init__()
        self.input_layernorm = RMSNorm(c["hidden"], c["eps"])
        self.self_attn = Attention(c)
        self.post_attention_layernorm = RMSNorm(c["hidden"], c["eps"])
        self.mlp = (LoopMoE if layout == "loop" else GroupedMoE)(c)

    def forward(self, x, cos, sin, mask):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, mask)
        y, logits = self.mlp(self.post_attention_layernorm(x))
        return x + y, logits


class Model(nn.Module):
    def __init__(self, c, layout):
        super().__init__()
        self.c = c
        self.embed_tokens = nn.Embedding(c["vocab"], c["hidden"])
        self.layers = nn.ModuleList([Layer(c, layout) for _ in range(c["layers"])])
        self.norm = RMSNorm(c["hidden"], c["eps"])
        self.lm_head = nn.Linear(c["hidden"], c["vocab"], bias=False)
        d = c["head_dim"]
        self.register_buffer("inv_freq", 1.0 / (c["theta"] ** (torch.arange(0, d, 2).float() / d)), persistent=False)

    def forward(self, ids):
        B, T = ids.shape
        x = self.embed_tokens(ids)
        pos = torch.arange(T)[None].expand(B, T).float()
        freqs = (self.inv_freq[None, :, None].expand(B, -1, 1) @ pos[:, None, :]).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[:, None], emb.sin()[:, None]
        allowed = torch.arange(T)[None, :] <= torch.arange(T)[:, None]
        mask = torch.where(allowed, 0.0, torch.finfo(torch.float32).min)[None, None].expand(B, 1, T, T)
        router_logits = []
        for layer in self.layers:
            x, lg = layer(x, cos, sin, mask)
            router_logits.append(lg)
        return self.lm_head(self.norm(x)), router_logits


def load_balancing_loss(gate_logits, E, k):
    """MixtralForCausalLM load_balancing_loss_func without attention_mask (MOE.md 2.5); means as sum / n."""
    cat = torch.cat(list(gate_logits), dim=0)
    w = F.softmax(cat, dim=-1)
    _, sel = torch.topk(w, k, dim=-1)
    mask = F.one_hot(sel, E)
    n = cat.shape[0]
    tokens_per_expert = mask.float().sum(dim=0) / n
    prob_per_expert = w.sum(dim=0) / n
    return torch.sum(tokens_per_expert * prob_per_expert.unsqueeze(0)) * E


class LoraLinear(nn.Module):
    """PEFT lora.Linear forward (p = 0): base(x) + lora_B(lora_A(x)) * scaling."""

    def __init__(self, base, r, alpha):
        super().__init__()
        self.base_layer = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        nn.init.normal_(self.lora_B.weight, std=0.01)
        self.scaling = alpha / r

    def forward(self, x):
        return self.base_layer(x) + self.lora_B(self.lora_A(x)) * self.scaling


def build(layout, mode, seed=0):
    torch.manual_seed(seed)
    m = Model(CFG, layout)
    if mode == "lora":
        for p in m.parameters():
            p.requires_grad_(False)
        for layer in m.layers:
            for t in LORA["targets"]:
                setattr(layer.self_attn, t, LoraLinear(getattr(layer.self_attn, t), LORA["r"], LORA["alpha"]))
    m.train()
    return m


def storage(t):
    s = t.storage()
    return s.data_ptr(), s.nbytes()


def measure_saved(model, ids):
    params = {storage(p)[0] for p in list(model.parameters()) + list(model.buffers())}
    in_ptr = storage(ids)[0]
    saved, keep = {}, []

    def pack(t):
        ptr, nb = storage(t)
        if nb and ptr not in saved:
            saved[ptr] = (nb, "param" if ptr in params else "input" if ptr == in_ptr else "activation", str(t.dtype))
            keep.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(ids)
    r = {"activation_bytes": 0, "input_bytes": 0, "param_buffer_bytes": 0, "activation_bytes_by_dtype": {}}
    for nb, cat, dt in saved.values():
        r[{"param": "param_buffer_bytes", "input": "input_bytes", "activation": "activation_bytes"}[cat]] += nb
        if cat == "activation":
            r["activation_bytes_by_dtype"][dt] = r["activation_bytes_by_dtype"].get(dt, 0) + nb
    del out, keep
    return r


def timeline_peak(fn):
    """make_corpus.memory_timeline_peak: the profiler's [memory] events, peak of the running sum."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    evs = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    order = sorted(range(len(evs)), key=lambda i: (evs[i].start_us(), i))
    cur = peak = 0
    for i in order:
        cur += evs[i].nbytes()
        peak = max(peak, cur)
    return int(peak), int(cur)


def measure_point(model, batch, seq, aux):
    g = torch.Generator().manual_seed(batch * 1000 + seq)
    ids = torch.randint(0, CFG["vocab"], (batch, seq), generator=g)
    target = torch.randint(0, CFG["vocab"], (batch, seq), generator=g)
    saved = measure_saved(model, ids)
    model.zero_grad(set_to_none=True)
    gc.collect()

    def step():
        logits, router_logits = model(ids)
        loss = F.cross_entropy(logits.reshape(-1, CFG["vocab"]), target.reshape(-1))
        if aux:
            loss = loss + CFG["aux_coef"] * load_balancing_loss(router_logits, CFG["experts"], CFG["top_k"])
        del logits, router_logits
        loss.backward()
        del loss

    peak, net = timeline_peak(step)
    grads = sum(p.grad.numel() * p.grad.element_size() for p in model.parameters() if p.grad is not None)
    hit = None
    with torch.no_grad():
        # how many token copies each expert of layer 0 received (routing balance of this random model)
        x = model.layers[0].post_attention_layernorm(model.embed_tokens(ids))
        _, _, sel = route(model.layers[0].mlp.gate, x.view(-1, CFG["hidden"]), CFG["top_k"])
        hit = torch.bincount(sel.reshape(-1), minlength=CFG["experts"]).tolist()
    model.zero_grad(set_to_none=True)
    return {"batch": batch, "seq": seq, "saved_for_backward": saved, "peak_fwd_bwd": peak,
            "net_bytes_after_step": net, "grad_bytes_after_step": int(grads),
            "layer0_tokens_per_expert_approx": hit}


def config_json():
    c = CFG
    return {"architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "vocab_size": c["vocab"],
            "hidden_size": c["hidden"], "intermediate_size": c["inter"], "num_hidden_layers": c["layers"],
            "num_attention_heads": c["heads"], "num_key_value_heads": c["kv_heads"], "head_dim": c["head_dim"],
            "num_local_experts": c["experts"], "num_experts_per_tok": c["top_k"], "rms_norm_eps": c["eps"],
            "rope_theta": c["theta"], "tie_word_embeddings": False, "router_aux_loss_coef": c["aux_coef"],
            "output_router_logits": False, "torch_dtype": "float32"}


def main():
    truth = {"method": __doc__.strip(), "torch": torch.__version__, "config": CFG, "lora": LORA, "layouts": {}}
    for layout in ("loop", "grouped"):
        lt = truth["layouts"][layout] = {}
        for mode in ("full", "lora"):
            m = build(layout, mode)
            params = sum(p.numel() for p in m.parameters())
            trainable = sum(p.numel() for p in m.parameters() if p.requires_grad)
            pts = []
            for aux in (False, True):
                for b, s in POINTS:
                    p = measure_point(m, b, s, aux)
                    p["aux_loss"] = aux
                    pts.append(p)
                    print(layout, mode, aux, b, s, p["saved_for_backward"]["activation_bytes"], p["peak_fwd_bwd"],
                          flush=True)
            lt[mode] = {"params": params, "trainable_params": trainable, "points": pts}
    with open(os.path.join(HERE, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
    with open(os.path.join(HERE, "tiny_moe.config.json"), "w") as f:
        json.dump(config_json(), f, indent=2)


if __name__ == "__main__":
    main()
