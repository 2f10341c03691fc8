#!/usr/bin/python3
"""What lit-gpt's own LoRA model keeps for backward, measured with PyTorch's autograd (CPU, float32).

The model is lit-gpt's code at commit 8641822 (github.com/Lightning-AI/lit-gpt), the few functions a Llama
block runs, copied below with their file and function: lit_gpt/lora.py LoRAQKVLinear (forward, zero_pad,
conv1d), lit_gpt/model.py CausalSelfAttention.forward, Block.forward, LLaMAMLP.forward, apply_rope,
build_rope_cache, lit_gpt/rmsnorm.py RMSNorm. Two substitutions, both for what a CUDA run does that the CPU
build of torch 1.13 cannot:
  - nn.Dropout -> torch.native_dropout: on CUDA F.dropout dispatches to native_dropout
    (aten/src/ATen/native/Dropout.cpp dropout: is_fused_kernel_acceptable), which saves a bool mask; the CPU
    path saves a float noise tensor instead;
  - scaled_dot_product_attention (torch >= 2.0) -> FlashLikeAttention, an autograd Function that computes
    the same output and saves what SDPA's flash / memory-efficient kernels save (query, key, value, output,
    fp32 logsumexp: derivatives.yaml _scaled_dot_product_flash_attention).
Measured: the distinct storages autograd saves during block 1's forward (block 0 first, so block 1's input
requires grad), through torch.autograd.graph.saved_tensors_hooks, parameters and buffers excluded (as
/work/shared/corpus/make_corpus.py measure_forward). Torch 1.13's MeanBackward1 also keeps mean's input
(RMSNorm's x * x); the engine's TorchVersion::V1_13 models that.

Run: /usr/bin/python3 make_litgpt_truth.py > litgpt_truth.json
"""
import json
import math

import torch
import torch.nn as nn
from torch.nn import functional as F

torch.manual_seed(0)
torch.set_num_threads(1)

N_EMBD, N_HEAD, N_QUERY_GROUPS, HEAD_SIZE, INTERMEDIATE, N_LAYER, VOCAB = 256, 8, 8, 32, 688, 2, 512
R, ALPHA, DROPOUT = 8, 16, 0.05
ENABLE_LORA = (True, False, True)  # finetune/lora.py: lora_query, not lora_key, lora_value


class NativeDropout(nn.Module):  # what nn.Dropout runs on CUDA (see the docstring)
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        return torch.native_dropout(x, self.p, self.training)[0]


class FlashLikeAttention(torch.autograd.Function):  # saves what SDPA's fused kernels save
    @staticmethod
    def forward(ctx, q, k, v, scale):
        att = (q @ k.transpose(-2, -1)) * scale
        T = q.size(-2)
        att = att.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        lse = torch.logsumexp(att, dim=-1)
        out = torch.softmax(att, dim=-1) @ v
        ctx.save_for_backward(q, k, v, out, lse)
        return out

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError


class RMSNorm(nn.Module):  # lit_gpt/rmsnorm.py RMSNorm
    def __init__(self, size, dim=-1, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps
        self.dim = dim

    def forward(self, x):
        norm_x = torch.mean(x * x, dim=self.dim, keepdim=True)
        x_normed = x * torch.rsqrt(norm_x + self.eps)
        return self.weight * x_normed


class LoRAQKVLinear(nn.Module):  # lit_gpt/lora.py LoRAQKVLinear (__init__ shapes, forward, zero_pad, conv1d)
    def __init__(self, in_features, out_features, n_head, n_query_groups, r, lora_alpha, lora_dropout, enable_lora):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=False)
        self.n_head, self.n_query_groups, self.enable_lora, self.r = n_head, n_query_groups, enable_lora, r
        self.lora_dropout = NativeDropout(lora_dropout) if lora_dropout > 0 else (lambda x: x)
        self.lora_A = nn.Parameter(torch.randn((r * sum(enable_lora), in_features)) * 0.02)
        enable_q, enable_k, enable_v = enable_lora
        self.kv_embd_size = self.linear.in_features // (n_head // n_query_groups)
        qkv_shapes = (self.linear.in_features * enable_q, self.kv_embd_size * enable_k, self.kv_embd_size * enable_v)
        self.qkv_shapes = [s for s in qkv_shapes if s]
        self.lora_B = nn.Parameter(torch.randn(sum(self.qkv_shapes), r) * 0.02)
        self.scaling = lora_alpha / r
        self.lora_ind = []
        if enable_q:
            self.lora_ind.extend(range(0, self.linear.in_features))
        if enable_k:
            self.lora_ind.extend(range(self.linear.in_features, self.linear.in_features + self.kv_embd_size))
        if enable_v:
            self.lora_ind.extend(range(self.linear.in_features + self.kv_embd_size, self.linear.out_features))

    def zero_pad(self, x):
        if all(self.enable_lora):
            return x
        x = x.transpose(0, 1)
        result = x.new_zeros((*x.shape[:-1], self.linear.out_features))
        result = result.view(-1, self.linear.out_features)
        result = result.index_copy(
            1, torch.tensor(self.lora_ind, device=result.device), x.reshape(-1, sum(self.qkv_shapes))
        )
        return result.view((*x.shape[:-1], self.linear.out_features)).transpose(0, 1)

    def conv1d(self, input, weight):
        if self.n_head == self.n_query_groups:
            return F.conv1d(input, weight, groups=sum(self.enable_lora))
        input_splitted = input.chunk(sum(self.enable_lora), dim=1)
        weight_splitted = weight.split(self.qkv_shapes)
        return torch.cat([F.conv1d(a, b) for a, b in zip(input_splitted, weight_splitted)], dim=1)

    def forward(self, x):
        pretrained = self.linear(x)
        after_A = F.linear(self.lora_dropout(x), self.lora_A)
        after_B = self.conv1d(after_A.transpose(-2, -1), self.lora_B.unsqueeze(-1)).transpose(-2, -1)
        lora = self.zero_pad(after_B) * self.scaling
        return pretrained + lora


def build_rope_cache(seq_len, n_elem, dtype, base=10000, condense_ratio=1):  # lit_gpt/model.py
    theta = 1.0 / (base ** (torch.arange(0, n_elem, 2) / n_elem))
    seq_idx = torch.arange(seq_len) / condense_ratio
    idx_theta = torch.outer(seq_idx, theta).repeat(1, 2)
    cos, sin = torch.cos(idx_theta), torch.sin(idx_theta)
    if dtype in (torch.float16, torch.bfloat16, torch.int8):
        return cos.half(), sin.half()
    return cos, sin


def apply_rope(x, cos, sin):  # lit_gpt/model.py
    head_size = x.size(-1)
    x1 = x[..., : head_size // 2]
    x2 = x[..., head_size // 2 :]
    rotated = torch.cat((-x2, x1), dim=-1)
    roped = (x * cos) + (rotated * sin)
    return roped.type_as(x)


class CausalSelfAttention(nn.Module):  # lit_gpt/lora.py CausalSelfAttention (forward: lit_gpt/model.py)
    def __init__(self):
        super().__init__()
        shape = (N_HEAD + 2 * N_QUERY_GROUPS) * HEAD_SIZE
        self.attn = LoRAQKVLinear(N_EMBD, shape, N_HEAD, N_QUERY_GROUPS, R, ALPHA, DROPOUT, ENABLE_LORA)
        self.proj = nn.Linear(N_EMBD, N_EMBD, bias=False)  # LoRALinear with r=0 (lora_projection False)

    def forward(self, x, cos, sin):
        B, T, C = x.size()
        qkv = self.attn(x)
        q_per_kv = N_HEAD // N_QUERY_GROUPS
        total_qkv = q_per_kv + 2
        qkv = qkv.view(B, T, N_QUERY_GROUPS, total_qkv, HEAD_SIZE)
        qkv = qkv.permute(0, 2, 3, 1, 4)
        q, k, v = qkv.split((q_per_kv, 1, 1), dim=2)
        if N_QUERY_GROUPS != 1:
            k = k.expand(B, N_QUERY_GROUPS, q_per_kv, T, HEAD_SIZE)
            v = v.expand(B, N_QUERY_GROUPS, q_per_kv, T, HEAD_SIZE)
        q = q.reshape(B, -1, T, HEAD_SIZE)
        k = k.reshape(B, -1, T, HEAD_SIZE)
        v = v.reshape(B, -1, T, HEAD_SIZE)
        rope_n_elem = HEAD_SIZE
        q_roped = apply_rope(q[..., :rope_n_elem], cos, sin)
        k_roped = apply_rope(k[..., :rope_n_elem], cos, sin)
        q = torch.cat((q_roped, q[..., rope_n_elem:]), dim=-1)
        k = torch.cat((k_roped, k[..., rope_n_elem:]), dim=-1)
        y = FlashLikeAttention.apply(q, k, v, 1.0 / math.sqrt(HEAD_SIZE)).transpose(1, 2)
        y = y.reshape(B, T, C)
        return self.proj(y)


class LLaMAMLP(nn.Module):  # lit_gpt/model.py LLaMAMLP (lora_mlp False: plain Linears)
    def __init__(self):
        super().__init__()
        self.fc_1 = nn.Linear(N_EMBD, INTERMEDIATE, bias=False)
        self.fc_2 = nn.Linear(N_EMBD, INTERMEDIATE, bias=False)
        self.proj = nn.Linear(INTERMEDIATE, N_EMBD, bias=False)

    def forward(self, x):
        return self.proj(F.silu(self.fc_1(x)) * self.fc_2(x))


class Block(nn.Module):  # lit_gpt/model.py Block.forward (parallel_residual False for Llama)
    def __init__(self):
        super().__init__()
        self.norm_1 = RMSNorm(N_EMBD)
        self.attn = CausalSelfAttention()
        self.norm_2 = RMSNorm(N_EMBD)
        self.mlp = LLaMAMLP()

    def forward(self, x, cos, sin):
        x = x + self.attn(self.norm_1(x), cos, sin)
        return x + self.mlp(self.norm_2(x))


def measure(B, T):
    wte = nn.Embedding(VOCAB, N_EMBD)
    blocks = nn.ModuleList(Block() for _ in range(N_LAYER))
    for n, p in list(wte.named_parameters()) + list(blocks.named_parameters()):  # mark_only_lora_as_trainable
        p.requires_grad = "lora_" in n
    cos, sin = build_rope_cache(T, HEAD_SIZE, torch.float32)
    frozen = {t.storage().data_ptr() for t in list(wte.parameters()) + list(blocks.parameters()) + [cos, sin]}
    saved, keep, active = {}, [], [False]

    def pack(t):
        if active[0] and t.storage().data_ptr() not in frozen:
            saved.setdefault(t.storage().data_ptr(), t.storage().nbytes())
            keep.append(t)
        return t

    idx = torch.randint(0, VOCAB, (B, T))
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        x = wte(idx)
        x = blocks[0](x, cos, sin)
        active[0] = True
        x = blocks[1](x, cos, sin)
        active[0] = False
    return {"batch": B, "seq": T, "block1_saved_bytes": sum(saved.values()), "distinct_storages": len(saved)}


if __name__ == "__main__":
    print(json.dumps({
        "source": "lit-gpt 8641822 lit_gpt/lora.py + lit_gpt/model.py + lit_gpt/rmsnorm.py (see make_litgpt_truth.py)",
        "torch": torch.__version__,
        "model": {"n_embd": N_EMBD, "n_head": N_HEAD, "n_query_groups": N_QUERY_GROUPS, "head_size": HEAD_SIZE,
                  "intermediate_size": INTERMEDIATE, "n_layer": N_LAYER, "vocab": VOCAB},
        "lora": {"r": R, "alpha": ALPHA, "dropout": DROPOUT, "enable_lora": ENABLE_LORA},
        "points": [measure(2, 64), measure(3, 128)],
    }, indent=1))
