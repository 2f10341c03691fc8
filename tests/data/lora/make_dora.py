#!/usr/bin/python3
"""DoRA's saved-for-backward bytes on the tiny Llama of truth.json, against plain LoRA on the same adapters.

Run with Debian's python3-torch (1.13, CPU, float32): /usr/bin/python3 tests/data/lora/make_dora.py
It writes dora_truth.json beside it. The model is README.md's tiny_llama (Hugging Face module names, the same
sizes); the adapters follow PEFT's code: lora.Linear.forward for LoRA, and for DoRA (use_dora=True)
peft/tuners/lora/dora.py DoraLinearLayer.forward with variants.py DoraLinearVariant.forward (f650b08 and
5d602fd alike):

    base_result = result                                   (no dropout; else F.linear(dropout(x), W))
    lora_weight = lora_B(lora_A(eye(in))).T
    weight_norm = ||W + scaling * lora_weight.detach()||_row, detached
    mag_norm_scale = (magnitude / weight_norm).view(1, -1)
    result = result + (mag_norm_scale - 1) * base_result + mag_norm_scale * lora_B(lora_A(x)) * scaling

Saved bytes: saved_tensors_hooks around one forward, the distinct storages still held once it has returned,
parameters and the input ids left out (make_corpus.measure_forward's split). The figure a test uses is the difference DoRA - LoRA: it comes from
the adapters alone, whatever the rest of the model keeps in torch 1.13.
"""
import json
import math
import os
import weakref

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
torch.set_num_threads(1)

V, H, L, NH, NKV, HD, FF = 8000, 256, 4, 8, 2, 32, 688


class RMSNorm(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


def rotate_half(x):
    a, b = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-b, a), dim=-1)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(H, NH * HD, bias=False)
        self.k_proj = nn.Linear(H, NKV * HD, bias=False)
        self.v_proj = nn.Linear(H, NKV * HD, bias=False)
        self.o_proj = nn.Linear(NH * HD, H, bias=False)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, NH, HD).transpose(1, 2)
        k = self.k_proj(x).view(b, t, NKV, HD).transpose(1, 2)
        v = self.v_proj(x).view(b, t, NKV, HD).transpose(1, 2)
        inv = 1.0 / (10000 ** (torch.arange(0, HD, 2).float() / HD))
        f = torch.outer(torch.arange(t).float(), inv)
        emb = torch.cat((f, f), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k[:, :, None].expand(b, NKV, NH // NKV, t, HD).reshape(b, NH, t, HD)
        v = v[:, :, None].expand(b, NKV, NH // NKV, t, HD).reshape(b, NH, t, HD)
        s = q @ k.transpose(-1, -2) / math.sqrt(HD)
        s = s.masked_fill(torch.triu(torch.ones(t, t, dtype=torch.bool), 1), float("-inf"))
        o = (s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, NH * HD)
        return self.o_proj(o)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(H, FF, bias=False)
        self.up_proj = nn.Linear(H, FF, bias=False)
        self.down_proj = nn.Linear(FF, H, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_layernorm = RMSNorm(H)
        self.self_attn = Attention()
        self.post_attention_layernorm = RMSNorm(H)
        self.mlp = MLP()

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class TinyLlama(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(V, H)
        self.layers = nn.ModuleList(Layer() for _ in range(L))
        self.norm = RMSNorm(H)
        self.lm_head = nn.Linear(H, V, bias=False)

    def forward(self, ids):
        x = self.embed_tokens(ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))


class LoraLinear(nn.Module):
    """PEFT's lora.Linear (one adapter 'default'), with DoRA when dora=True."""

    def __init__(self, base, r, alpha, dropout, dora):
        super().__init__()
        self.base_layer = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        nn.init.normal_(self.lora_B.weight, std=0.01)
        self.lora_dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.scaling = alpha / r
        self.dora = dora
        if dora:  # DoraLinearLayer.update_layer: the weight norm of W + scaling * B A
            with torch.no_grad():
                w = base.weight + self.scaling * (self.lora_B.weight @ self.lora_A.weight)
            self.lora_magnitude_vector = nn.Parameter(torch.linalg.norm(w, dim=1))

    def forward(self, x):
        result = self.base_layer(x)
        if not self.dora:
            return result + self.lora_B(self.lora_A(self.lora_dropout(x))) * self.scaling
        if isinstance(self.lora_dropout, nn.Identity):
            base_result = result
        else:
            x = self.lora_dropout(x)
            base_result = None
        x_eye = torch.eye(self.lora_A.weight.shape[1], dtype=x.dtype)
        lora_weight = self.lora_B(self.lora_A(x_eye)).T
        weight = self.base_layer.weight
        weight_norm = torch.linalg.norm(weight + self.scaling * lora_weight.detach(), dim=1).to(weight.dtype).detach()
        mag_norm_scale = (self.lora_magnitude_vector / weight_norm).view(1, -1)
        lora_result = self.lora_B(self.lora_A(x))
        if base_result is None:
            base_result = F.linear(x, weight)
        return result + (mag_norm_scale - 1) * base_result + mag_norm_scale * lora_result * self.scaling


def adapted(targets, r, alpha, dropout, dora):
    torch.manual_seed(0)
    m = TinyLlama()
    for name, mod in list(m.named_modules()):
        for child_name, child in list(mod.named_children()):
            if child_name in targets and isinstance(child, nn.Linear):
                setattr(mod, child_name, LoraLinear(child, r, alpha, dropout, dora))
    for n, p in m.named_parameters():
        p.requires_grad = "lora_" in n  # mark_only_lora_as_trainable
    m.train()
    return m


def saved_activation_bytes(m, ids):
    """Distinct storages that autograd still holds once the forward has returned: a tensor saved by a graph
    that died inside the forward (DoRA's lora_B(lora_A(eye)), whose result is used detached) is not kept."""
    params = {p.data_ptr() for p in m.parameters()}
    refs = []

    def pack(t):
        refs.append(weakref.ref(t))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = m(ids)
    alive = {}
    for r in refs:
        t = r()
        if t is None:
            continue
        st = t.storage()
        ptr = st.data_ptr()
        if ptr not in params and ptr != ids.data_ptr():
            alive[ptr] = st.nbytes()
    del out
    return sum(alive.values())


def main():
    configs = {
        "r8_attn": dict(targets=("q_proj", "v_proj"), r=8, alpha=16, dropout=0.0),
        "r16_all": dict(targets=("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"),
                        r=16, alpha=32, dropout=0.0),
        "r8_attn_p0.05": dict(targets=("q_proj", "v_proj"), r=8, alpha=16, dropout=0.05),
    }
    out = {"method": __doc__.strip().splitlines()[0] + " torch " + torch.__version__ + ", CPU, float32.",
           "configs": {}}
    for name, c in configs.items():
        pts = []
        for b, t in ((2, 128), (8, 256)):
            ids = torch.randint(0, V, (b, t), generator=torch.Generator().manual_seed(b * 1000 + t))
            lora = saved_activation_bytes(adapted(dora=False, **c), ids)
            dora_model = adapted(dora=True, **c)
            dora = saved_activation_bytes(dora_model, ids)
            mags = sum(p.numel() for n, p in dora_model.named_parameters() if "lora_magnitude_vector" in n)
            pts.append({"batch": b, "seq": t, "lora_saved_activation_bytes": lora,
                        "dora_saved_activation_bytes": dora, "dora_minus_lora": dora - lora,
                        "magnitude_params": mags})
        out["configs"][name] = {"spec": {k: (list(v) if isinstance(v, tuple) else v) for k, v in c.items()},
                                "points": pts}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dora_truth.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
