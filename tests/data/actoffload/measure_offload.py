#!/usr/bin/python3
# What torchtune's activation offloading sends to the host, recorded on CPU (Debian's python3-torch 1.13, one
# thread): the pack side of torchtune/training/_activation_offloading.py OffloadActivations (torchtune commit
# bd2a0fc7, pack_tensor in __init__), run as a saved_tensors_hooks around the forward of a tiny Llama-style decoder
# with one activation checkpoint per decoder layer, as recipes/lora_finetune_single_device.py and
# full_finetune_single_device.py run it (`with self.activations_handling_ctx: outputs = self._model(**batch)`; the
# loss outside; enable_activation_offloading requires enable_activation_checkpointing).
#
# Copied from torchtune, with the device test made "any tensor" (everything is on the CPU here):
#   - every saved tensor gets an id (get_tensor_id), qualifying or not;
#   - it qualifies when num_bytes = element_size() * nelement() >= min_offload_size (1024) and it is not an
#     nn.Parameter (nor an nn.Buffer);
#   - with use_streams (the default) a qualifying tensor's GPU original stays in fwd_stash until a later qualifying
#     pack whose id is >= its id + max_fwd_stash_size (5): the loop `if id <= tensor_id - self.max_fwd_stash_size:
#     del self.fwd_stash[id]`, in insertion order, breaking at the first younger one;
#   - get_act_offloading_ctx_manager wraps model.output in NoOpManager (its saved tensors are not offloaded and
#     take no id: only the innermost saved_tensors_hooks runs).
# The checkpoint is PyTorch 2.x's non-reentrant one (torchtune's training/activations.py checkpoint_wrapper:
# CheckpointImpl.NO_REENTRANT), which 1.13 does not have in this form: torch/utils/checkpoint.py
# _checkpoint_without_reentrant_generator saves the positional inputs with `_NoopSaveInputs.apply(dummy, kwargs,
# *args)` (dummy = torch.empty((0,), requires_grad=True)) under the caller's hooks, then runs the layer under its own
# _checkpoint_hook, whose pack returns a holder. Written out here the same way (NoopSaveInputs, checkpoint2x);
# the recomputation in backward is 2.x's too, so the step's gradients are checked against a plain run.
#
# The decoder is torchtune's layout (torchtune/modules/transformer.py TransformerDecoder.forward): the token
# embedding outside the checkpoints, each TransformerSelfAttentionLayer called as layer(h) (RoPE from the
# attention's own cache, no mask tensor: causal), the final RMSNorm (torchtune/modules/rms_norm.py: in fp32, then
# * scale), the output projection under NoOpManager, the loss outside the context. Dims are those of
# ../losses/tiny_lm.config.json with 4 layers (tiny_llama4.config.json beside this script), fp32, full
# fine-tuning. Output: offload_truth.json beside this script.
import json
import math
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

torch.set_num_threads(1)
torch.manual_seed(0)
HERE = os.path.dirname(os.path.abspath(__file__))
CFG = json.load(open(os.path.join(HERE, "tiny_llama4.config.json")))
H, I, L = CFG["hidden_size"], CFG["intermediate_size"], CFG["num_hidden_layers"]
NH, NKV, V = CFG["num_attention_heads"], CFG["num_key_value_heads"], CFG["vocab_size"]
D = H // NH
MIN_OFFLOAD_SIZE, MAX_FWD_STASH_SIZE = 1024, 5


class RMSNorm(nn.Module):  # torchtune/modules/rms_norm.py RMSNorm.forward
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.scale = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        x_fp32 = x.float()
        # PyTorch 2.x's mean keeps only its input's sizes (derivatives.yaml mean_backward); 1.13's kept x**2 itself.
        # sum / n saves nothing either, so the packs are 2.x's.
        ms = x_fp32.pow(2).sum(-1, keepdim=True) / x.shape[-1]
        x_normed = (x_fp32 * torch.rsqrt(ms + self.eps)).type_as(x)
        return x_normed * self.scale


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(H, NH * D, bias=False)
        self.k_proj = nn.Linear(H, NKV * D, bias=False)
        self.v_proj = nn.Linear(H, NKV * D, bias=False)
        self.o_proj = nn.Linear(NH * D, H, bias=False)
        inv = 1.0 / (CFG["rope_theta"] ** (torch.arange(0, D, 2).float() / D))
        freqs = torch.outer(torch.arange(CFG["max_position_embeddings"]).float(), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cache", emb.cos(), persistent=False)  # torchtune's RotaryPositionalEmbeddings cache
        self.register_buffer("sin_cache", emb.sin(), persistent=False)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, NH, D).transpose(1, 2)
        k = self.k_proj(x).view(b, t, NKV, D).transpose(1, 2)
        v = self.v_proj(x).view(b, t, NKV, D).transpose(1, 2)
        cos, sin = self.cos_cache[:t], self.sin_cache[:t]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(NH // NKV, dim=1)
        v = v.repeat_interleave(NH // NKV, dim=1)
        s = (q @ k.transpose(-1, -2)) / math.sqrt(D)
        s = s.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
        o = (s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, H)
        return self.o_proj(o)


class Layer(nn.Module):  # torchtune/modules/transformer.py TransformerSelfAttentionLayer
    def __init__(self):
        super().__init__()
        self.sa_norm, self.attn, self.mlp_norm = RMSNorm(H), Attention(), RMSNorm(H)
        self.w1, self.w3, self.w2 = nn.Linear(H, I, bias=False), nn.Linear(H, I, bias=False), nn.Linear(I, H, bias=False)

    def forward(self, x):
        h = x + self.attn(self.sa_norm(x))
        m = self.mlp_norm(h)
        return h + self.w2(F.silu(self.w1(m)) * self.w3(m))


class NoopSaveInputs(torch.autograd.Function):  # torch/utils/checkpoint.py _NoopSaveInputs (2.x)
    @staticmethod
    def forward(ctx, *args):
        ctx.save_for_backward(*args)
        return torch.empty((0,))

    @staticmethod
    def backward(ctx, *grads):
        raise AssertionError("Did not expect to backward on this graph")


def checkpoint2x(fn, *args):
    """torch.utils.checkpoint(fn, *args, use_reentrant=False) as PyTorch 2.x runs it: the inputs saved by a
    no-op node under the caller's hooks, the forward under a hook that keeps holders, recomputed at the first
    unpack in backward under a hook that stores the recomputed tensors in pack order."""
    dummy = torch.empty((0,), requires_grad=True)
    saver = NoopSaveInputs.apply(dummy, *args)
    holders, recomputed = [], {}

    def pack(t):
        holders.append(len(holders))
        return holders[-1]

    def unpack(i):
        if not recomputed:
            inputs = saver.grad_fn.saved_tensors[1:]  # the caller's unpack hooks run here
            order = []
            with torch.autograd.graph.saved_tensors_hooks(lambda t: order.append(t) or len(order) - 1, lambda j: order[j]):
                with torch.enable_grad():
                    fn(*[x.detach().requires_grad_(x.requires_grad) for x in inputs])
            recomputed.update(enumerate(order))
        return recomputed[i]

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = fn(*args)
    out._keep_saver = saver  # the frame keeps input_saver alive (new_frame.input_saver)
    return out


class Decoder(nn.Module):  # torchtune/modules/transformer.py TransformerDecoder.forward
    def __init__(self):
        super().__init__()
        self.tok_embeddings = nn.Embedding(V, H)
        self.layers = nn.ModuleList(Layer() for _ in range(L))
        self.norm = RMSNorm(H)
        self.output = nn.Linear(H, V, bias=False)

    def forward(self, tokens, tape, ckpt):
        h = self.tok_embeddings(tokens)
        for i, layer in enumerate(self.layers):
            tape.where = "checkpoint input of layer %d" % i
            h = checkpoint2x(layer, h) if ckpt else layer(h)
        tape.where = "final norm"
        h = self.norm(h)
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):  # NoOpManager around model.output
            return self.output(h).float()


class Tape:
    """OffloadActivations.pack_tensor's bookkeeping, recorded instead of copied."""

    def __init__(self):
        self.packs, self.fwd_stash, self.tensor_id, self.where = [], [], 0, "embedding"

    def pack(self, t):
        self.tensor_id += 1
        num_bytes = t.element_size() * t.nelement()
        qualifies = num_bytes >= MIN_OFFLOAD_SIZE and not isinstance(t, nn.Parameter)
        entry = {"id": self.tensor_id, "where": self.where, "bytes": num_bytes, "shape": list(t.shape),
                 "dtype": str(t.dtype).replace("torch.", ""), "offloaded": qualifies, "gpu_released_at_id": None}
        if qualifies:
            for old in list(self.fwd_stash):
                if old["id"] <= self.tensor_id - MAX_FWD_STASH_SIZE:
                    old["gpu_released_at_id"] = self.tensor_id
                    self.fwd_stash.remove(old)
                else:
                    break
            self.fwd_stash.append(entry)
        self.packs.append(entry)
        return t


def step(model, tokens, labels, ckpt, tape):
    with torch.autograd.graph.saved_tensors_hooks(tape.pack, lambda t: t):
        logits = model(tokens, tape, ckpt)
    loss = F.cross_entropy(logits.reshape(-1, V), labels.reshape(-1))
    model.zero_grad(set_to_none=True)
    loss.backward()
    return [p.grad.clone() for p in model.parameters()]


def main():
    model = Decoder()
    points = []
    for batch, seq in ((2, 128), (1, 64), (8, 1024)):
        tokens = torch.randint(0, V, (batch, seq))
        labels = torch.randint(0, V, (batch, seq))
        tape = Tape()
        grads = step(model, tokens, labels, True, tape)
        plain = step(model, tokens, labels, False, Tape())
        assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(grads, plain)), "checkpoint2x changed the gradients"
        ck = [p for p in tape.packs if p["where"].startswith("checkpoint input") and p["bytes"] > 0]
        points.append({
            "batch": batch, "seq": seq,
            "packs": tape.packs,
            "checkpoint_inputs": {
                "packs": len(ck),
                "offloaded_bytes": sum(p["bytes"] for p in ck if p["offloaded"]),
                "layer_input_bytes": [p["bytes"] for p in ck],
                # the GPU original let go during forward (pack_tensor's fwd_stash sweep), per layer
                "released_in_forward": [p["gpu_released_at_id"] is not None for p in ck],
            },
            "offloaded_bytes_all": sum(p["bytes"] for p in tape.packs if p["offloaded"]),
            "gradients_match_plain_run": True,
        })
    json.dump({"source": "measure_offload.py", "torch": torch.__version__, "config": "tiny_llama4.config.json",
               "dtype": "float32", "min_offload_size": MIN_OFFLOAD_SIZE, "max_fwd_stash_size": MAX_FWD_STASH_SIZE,
               "points": points}, open(os.path.join(HERE, "offload_truth.json"), "w"), indent=1)
    print(json.dumps([p["checkpoint_inputs"] for p in points], indent=1))


if __name__ == "__main__":
    sys.exit(main())
