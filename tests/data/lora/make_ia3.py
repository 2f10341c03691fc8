#!/usr/bin/python3
"""IA3's saved-for-backward bytes on the tiny Llama of truth.json.

Run with Debian's python3-torch (1.13, CPU, float32): /usr/bin/python3 tests/data/lora/make_ia3.py
It writes ia3_truth.json beside it. The model is make_dora.py's tiny Llama (Hugging Face module names, the
same sizes); the adapters follow PEFT's peft/tuners/ia3/layer.py (IA3Layer.update_layer, Linear.forward at
5d602fd), one adapter:

    ia3_l = Parameter(ones(out, 1)), or ones(1, in) for the feedforward modules
    feedforward: interm = (x.to(ia3_l.dtype) * ia3_l.flatten()).to(x.dtype); result = base_layer(interm)
    otherwise:   result = base_layer(x); result = (result * ia3_l.flatten()).to(result.dtype)

Only the ia3_l vectors train (IA3Model._mark_only_adapters_as_trainable). Saved bytes are make_dora.py's
saved_activation_bytes: the distinct storages autograd still holds once one forward has returned, parameters
and the input ids left out. Every op from the first adapted Linear on is recorded, so the figure is the whole
model's saved activations under IA3, and the test compares it whole.
"""
import json
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_dora import TinyLlama, saved_activation_bytes, V  # noqa: E402

torch.set_num_threads(1)


class Ia3Linear(nn.Module):
    """PEFT's ia3.Linear with one adapter 'default'."""

    def __init__(self, base, feedforward):
        super().__init__()
        self.base_layer = base
        self.is_feedforward = feedforward
        shape = (1, base.in_features) if feedforward else (base.out_features, 1)
        self.ia3_l = nn.Parameter(torch.ones(shape))

    def forward(self, x):
        dtype = previous_dtype = x.dtype
        ia3_scaling = 1
        dtype = self.ia3_l.dtype
        ia3_scaling *= self.ia3_l.flatten()
        if self.is_feedforward:
            x = x.to(dtype)
            interm = (x * ia3_scaling).to(previous_dtype)
            return self.base_layer(interm)
        result = self.base_layer(x)
        result_dtype = result.dtype
        return (result * ia3_scaling).to(result_dtype)


def adapted(targets, feedforward):
    torch.manual_seed(0)
    m = TinyLlama()
    for name, mod in list(m.named_modules()):
        for child_name, child in list(mod.named_children()):
            if child_name in targets and isinstance(child, nn.Linear):
                setattr(mod, child_name, Ia3Linear(child, child_name in feedforward))
    for n, p in m.named_parameters():
        p.requires_grad = "ia3_" in n
    m.train()
    return m


def main():
    configs = {
        # PEFT's defaults for llama (TRANSFORMERS_MODELS_TO_IA3_*_MAPPING)
        "default": dict(targets=("k_proj", "v_proj", "down_proj"), feedforward=("down_proj",)),
        # the method comparison's all-attn-5k experiment: every Linear, the MLP's as feedforward
        "all": dict(targets=("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"),
                    feedforward=("gate_proj", "up_proj", "down_proj")),
        # no feedforward module: output scaling only
        "attn": dict(targets=("q_proj", "v_proj"), feedforward=()),
    }
    out = {"method": __doc__.strip().splitlines()[0] + " torch " + torch.__version__ + ", CPU, float32.",
           "configs": {}}
    for name, c in configs.items():
        pts = []
        for b, t in ((2, 128), (8, 256)):
            ids = torch.randint(0, V, (b, t), generator=torch.Generator().manual_seed(b * 1000 + t))
            m = adapted(**c)
            saved = saved_activation_bytes(m, ids)
            vec = sum(p.numel() for n, p in m.named_parameters() if "ia3_l" in n)
            pts.append({"batch": b, "seq": t, "saved_activation_bytes": saved, "ia3_params": vec})
        out["configs"][name] = {"spec": {k: list(v) for k, v in c.items()}, "points": pts}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ia3_truth.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
