#!/usr/bin/python3
"""Held-out models + PyTorch-measured truth for tests/core/tst_accuracy_heldout.cpp.

These models are never used to tune the engine: they check that its per-op rules generalise beyond the
8 models of the shared corpus. Everything (export settings, weight perturbation, saved-for-backward and
peak measurements, truth.json format) is make_corpus.py's, imported from the shared corpus:

    /usr/bin/python3 tests/data/heldout/make_heldout.py             # all models
    /usr/bin/python3 tests/data/heldout/make_heldout.py --only gru_tagger

Needs Debian's python3-torch (1.13), python3-torchvision (0.14) and python3-onnx (1.12); no network, no
pretrained weights (random init, fixed seeds). The shared corpus is found at $HEADROOM_SHARED_CORPUS or
<repo>/../shared/corpus.
"""
import argparse
import gc
import json
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
CORPUS = os.environ.get("HEADROOM_SHARED_CORPUS", os.path.join(REPO, "..", "shared", "corpus"))
sys.path.insert(0, CORPUS)

import make_corpus as mc  # noqa: E402  (the corpus generator: export + measurement functions)
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torchvision  # noqa: E402
import onnx  # noqa: E402

mc.ROOT = HERE  # process() writes <name>.onnx into mc.ROOT


# ---------------------------------------------------------------------------
# Hand-written held-out models
# ---------------------------------------------------------------------------
class GRUTagger(nn.Module):
    """Embedding -> 1-layer bidirectional GRU -> Linear per token."""

    def __init__(self, vocab=5000, emb=64, hidden=96, tags=12):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.gru = nn.GRU(emb, hidden, num_layers=1, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, tags)

    def forward(self, ids):
        h, _ = self.gru(self.emb(ids))
        return self.out(h)


class ViTBlock(nn.Module):
    def __init__(self, d, heads, mlp):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, mlp)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(mlp, d)

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.fc2(self.act(self.fc1(self.ln2(x))))


class TinyViT(nn.Module):
    """32x32 images, 4x4 patch Conv -> 64 tokens + class token, learned positions, 4 pre-LN blocks with
    nn.MultiheadAttention (4 heads, d 128), GELU MLP 128->256->128, final LayerNorm, head on the class token."""

    def __init__(self, hw=32, patch=4, d=128, heads=4, depth=4, mlp=256, classes=10):
        super().__init__()
        n = (hw // patch) ** 2
        self.patch = nn.Conv2d(3, d, patch, stride=patch)
        self.cls = nn.Parameter(torch.zeros(1, 1, d))
        self.pos = nn.Parameter(torch.randn(1, n + 1, d) * 0.02)
        self.blocks = nn.ModuleList([ViTBlock(d, heads, mlp) for _ in range(depth)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)  # [B, n, d]
        x = torch.cat([self.cls.expand(x.size(0), -1, -1), x], dim=1) + self.pos
        for b in self.blocks:
            x = b(x)
        return self.head(self.ln(x)[:, 0])


class SEGate(nn.Module):
    def __init__(self, c, r=4):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(c, c // r, 1)
        self.act = nn.ReLU()
        self.fc2 = nn.Conv2d(c // r, c, 1)
        self.gate = nn.Sigmoid()

    def forward(self, x):
        return x * self.gate(self.fc2(self.act(self.fc1(self.pool(x)))))


class ActCNN(nn.Module):
    """64x64 images; out-of-place activations of every saved-tensor flavour: Conv-BN-SiLU, Conv-BN-Hardswish,
    AvgPool2d, Conv-ReLU6 (Clip), SE gate (global AvgPool, ReLU, Sigmoid, Mul), Conv-Tanh, AvgPool2d,
    Conv-Hardsigmoid, strided Conv-ReLU, flatten, Linear. No dropout."""

    def __init__(self, classes=10):
        super().__init__()
        self.c1 = nn.Conv2d(3, 32, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(32)
        self.a1 = nn.SiLU()
        self.c2 = nn.Conv2d(32, 32, 3, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(32)
        self.a2 = nn.Hardswish()
        self.p1 = nn.AvgPool2d(2)  # 32x32
        self.c3 = nn.Conv2d(32, 64, 3, padding=1)
        self.a3 = nn.ReLU6()
        self.se = SEGate(64)
        self.c4 = nn.Conv2d(64, 64, 3, padding=1)
        self.a4 = nn.Tanh()
        self.p2 = nn.AvgPool2d(2)  # 16x16
        self.c5 = nn.Conv2d(64, 96, 3, padding=1)
        self.a5 = nn.Hardsigmoid()
        self.c6 = nn.Conv2d(96, 96, 3, stride=2, padding=1)  # 8x8
        self.a6 = nn.ReLU()
        self.fc = nn.Linear(96 * 8 * 8, classes)

    def forward(self, x):
        x = self.p1(self.a2(self.b2(self.c2(self.a1(self.b1(self.c1(x)))))))
        x = self.se(self.a3(self.c3(x)))
        x = self.p2(self.a4(self.c4(x)))
        x = self.a6(self.c6(self.a5(self.c5(x))))
        return self.fc(torch.flatten(x, 1))


class SplitMLP(nn.Module):
    """32x32 images flattened -> Linear 3072->512 LeakyReLU -> split into two 256 halves -> (Linear+ELU,
    Linear+LeakyReLU(0.2)) -> Concat -> Linear 512->256 ELU -> Linear 256->10."""

    def __init__(self, classes=10):
        super().__init__()
        self.fc1 = nn.Linear(3 * 32 * 32, 512)
        self.a1 = nn.LeakyReLU()
        self.fa = nn.Linear(256, 256)
        self.aa = nn.ELU()
        self.fb = nn.Linear(256, 256)
        self.ab = nn.LeakyReLU(0.2)
        self.fc2 = nn.Linear(512, 256)
        self.a2 = nn.ELU(alpha=0.5)
        self.fc3 = nn.Linear(256, classes)

    def forward(self, x):
        h = self.a1(self.fc1(torch.flatten(x, 1)))
        a, b = torch.split(h, 256, dim=1)
        h = torch.cat([self.aa(self.fa(a)), self.ab(self.fb(b))], dim=1)
        return self.fc3(self.a2(self.fc2(h)))


class NormCNN(nn.Module):
    """64x64 images: Conv-InstanceNorm2d(affine)-ReLU, Conv-GroupNorm(8)-GELU, MaxPool, Conv-GroupNorm(4)-SiLU,
    Conv-InstanceNorm2d(no affine)-LeakyReLU, global AdaptiveAvgPool, Linear."""

    def __init__(self, classes=10):
        super().__init__()
        self.c1 = nn.Conv2d(3, 32, 3, padding=1)
        self.n1 = nn.InstanceNorm2d(32, affine=True)
        self.a1 = nn.ReLU()
        self.c2 = nn.Conv2d(32, 64, 3, stride=2, padding=1)  # 32x32
        self.n2 = nn.GroupNorm(8, 64)
        self.a2 = nn.GELU()
        self.p = nn.MaxPool2d(2)  # 16x16
        self.c3 = nn.Conv2d(64, 64, 3, padding=1)
        self.n3 = nn.GroupNorm(4, 64)
        self.a3 = nn.SiLU()
        self.c4 = nn.Conv2d(64, 128, 3, padding=1)
        self.n4 = nn.InstanceNorm2d(128)
        self.a4 = nn.LeakyReLU(0.1)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(128, classes)

    def forward(self, x):
        x = self.a1(self.n1(self.c1(x)))
        x = self.p(self.a2(self.n2(self.c2(x))))
        x = self.a3(self.n3(self.c3(x)))
        x = self.a4(self.n4(self.c4(x)))
        return self.fc(torch.flatten(self.gap(x), 1))


def tv(name, **kw):
    return lambda: getattr(torchvision.models, name)(weights=None, **kw)


# Same registry format as make_corpus.MODELS (kind 'image' / 'seq_tok' / 'seq_cls').
MODELS = {
    "gru_tagger": dict(set="heldout", build=GRUTagger, kind="seq_tok", vocab=5000, classes=12),
    "tiny_vit": dict(set="heldout", build=TinyViT, kind="image", hw=32, classes=10),
    "act_cnn": dict(set="heldout", build=ActCNN, kind="image", hw=64, classes=10),
    "shufflenet_v2_x0_5": dict(set="heldout", build=tv("shufflenet_v2_x0_5"), kind="image", hw=224, classes=1000),
    "efficientnet_b0": dict(set="heldout", build=tv("efficientnet_b0"), kind="image", hw=224, classes=1000),
    "split_mlp": dict(set="heldout", build=SplitMLP, kind="image", hw=32, classes=10),
    "norm_cnn": dict(set="heldout", build=NormCNN, kind="image", hw=64, classes=10),
}

mc.ARCH_NOTES.update({
    "gru_tagger": GRUTagger.__doc__.strip() + " Embedding(5000,64), GRU hidden 96, 12 tags.",
    "tiny_vit": TinyViT.__doc__.strip().replace("\n    ", " "),
    "act_cnn": ActCNN.__doc__.strip().replace("\n    ", " "),
    "shufflenet_v2_x0_5": "torchvision shufflenet_v2_x0_5 (weights=None): channel shuffle (view/transpose/"
                          "contiguous), chunk, concat, inplace ReLU, MaxPool.",
    "efficientnet_b0": "torchvision efficientnet_b0 (weights=None): inplace SiLU, SE blocks with Sigmoid gates, "
                       "StochasticDepth and classifier Dropout disabled (identity) as in the corpus method.",
    "split_mlp": SplitMLP.__doc__.strip().replace("\n    ", " "),
    "norm_cnn": NormCNN.__doc__.strip().replace("\n    ", " "),
})

INDEX_BASE = 100  # seeds 1000+idx etc. in make_corpus.process: keep them apart from the corpus models


def write_readme(truth):
    lines = ["# Held-out models\n",
             "Generated by `make_heldout.py` (torch %s, torchvision %s, onnx %s, opset %d) with the shared corpus's "
             "`make_corpus.py` export and measurement functions. Never used to tune the engine; checked by "
             "`tests/core/tst_accuracy_heldout.cpp`. Architecture-only files: initializers are EXTERNAL and the "
             "`.weights` files are absent, as in the corpus. `truth.json` has the corpus format.\n"
             % (torch.__version__, torchvision.__version__, onnx.__version__, mc.OPSET),
             "| model | file bytes | input | params | buffers | ops | architecture |", "|---|---|---|---|---|---|---|"]
    for name, e in truth.items():
        if name == "method":
            continue
        if "input" not in e:
            lines.append(f"| {name} | - | - | - | - | - | FAILED: {e.get('error', '')[:120]} |")
            continue
        size = os.path.getsize(os.path.join(HERE, name + ".onnx"))
        ops = ", ".join(f"{k} {v}" for k, v in e["onnx_op_counts"].items())
        lines.append(f"| {name} | {size} | {e['input']['dtype']} {e['input']['shape']} | {e['params']} | "
                     f"{e['buffers']} | {ops} | {e.get('architecture', '')} |")
    with open(os.path.join(HERE, "README.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    only = [s for s in args.only.split(",") if s]
    torch.manual_seed(0)
    print("verifying peak method ...", flush=True)
    verification = mc.verify_peak_method()
    method = dict(mc.METHOD)
    method["peak_verification"] = verification
    method["environment"] = {"torch": torch.__version__, "torchvision": torchvision.__version__,
                             "onnx": onnx.__version__, "threads": torch.get_num_threads(),
                             "python": sys.version.split()[0]}
    method["generator"] = "tests/data/heldout/make_heldout.py (imports make_corpus.py of the shared corpus)"

    path = os.path.join(HERE, "truth.json")
    models = {}
    if only and os.path.exists(path):
        with open(path) as fh:
            models = {k: v for k, v in json.load(fh).items() if k != "method"}
    failures = {}
    for idx, (name, cfg) in enumerate(MODELS.items()):
        if only and name not in only:
            continue
        print(f"== {name}", flush=True)
        t0 = time.time()
        try:
            models[name] = mc.process(name, cfg, INDEX_BASE + idx)
        except Exception as e:  # noqa
            print(traceback.format_exc(), flush=True)
            failures[name] = str(e).splitlines()[0][:500] if str(e) else repr(e)
            models[name] = {"error": failures[name]}
        print(f"   done in {time.time() - t0:.1f}s", flush=True)
        gc.collect()
    truth = {"method": method}
    truth.update({k: models[k] for k in MODELS if k in models})
    with open(path, "w") as fh:
        json.dump(truth, fh, indent=1, sort_keys=False)
    sanity = {f: mc.sanity_check(os.path.join(HERE, f)) for f in sorted(os.listdir(HERE)) if f.endswith(".onnx")}
    bad = {f: r for f, r in sanity.items()
           if not r.get("all_initializers_external_without_bytes") or r["bytes"] >= 200 * 1024
           or r.get("checker_initializers_as_inputs") != "ok"}
    write_readme(truth)
    print("sanity problems:", json.dumps(bad, indent=1) if bad else "none")
    print("failures:", failures)
    return 1 if failures or bad else 0


if __name__ == "__main__":
    sys.exit(main())
