#!/usr/bin/env python3
"""PyTorch's side of the three-way comparison (docs/PROBE.md): real training steps on the GPU, with
torch.cuda.max_memory_allocated / max_memory_reserved, for the corpus models at the configurations the
probe and Headroom are run at.

Model definitions are copied from ../shared/corpus/make_corpus.py (BertLike) and torchvision (resnet50),
so this file runs on a GPU machine that has only PyTorch and torchvision (no ONNX, no Qt).

Usage:
  python3 pytorch_measure.py                          # the default points, JSON lines on stdout
  python3 pytorch_measure.py --model resnet50 --batch 32
  python3 pytorch_measure.py --model bert_like --batch 8 --seq 128 --optimizer adam --steps 3

Each line: {"model", "batch", "seq", "optimizer", "dtype", "device", "torch", "context_bytes",
"max_allocated", "max_reserved", "allocated_after_step", "weights_bytes", "oom"}. Bytes are integers.

What is measured, and how it lines up with Headroom's figures:
- The model, its gradients and the optimizer state live on the GPU; the input batch and targets are created
  before the measured step (like Headroom's "input" category, kept by the data loader).
- One warm-up step creates the optimizer state (Adam's exp_avg/exp_avg_sq appear on the first step()), then
  torch.cuda.reset_peak_memory_stats() and `--steps` measured steps. max_memory_allocated is then the
  steady-state iteration peak, comparable with Headroom's "peak" (which includes weights, gradients, optimizer
  state and activations); max_memory_reserved is comparable with "reserved_peak" (the caching allocator model).
- Dropout layers are set to p=0: the ONNX exports contain no Dropout nodes (they were exported in eval mode),
  so Headroom models the network without dropout masks. BatchNorm stays in training mode.
- zero_grad(set_to_none=True), as in docs/DESIGN.md "Timeline and peak".
- context_bytes: device memory in use (torch.cuda.mem_get_info) minus memory_reserved() right after CUDA
  initialisation and cuBLAS/cuDNN warm-up; the probe's context figure excludes the library handles, so
  compare with context_bytes + cublas/cudnn figures of the probe.
"""
import argparse
import json
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


# ---------------------------------------------------------------------------------------------------------
# Copied from ../shared/corpus/make_corpus.py (keep in sync): the corpus' BertLike.
class BertLike(nn.Module):
    def __init__(self, vocab=8000, d_model=256, n_head=4, n_layer=4, ff=1024, max_pos=512, n_classes=4):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab, d_model)
        self.pos_emb = nn.Embedding(max_pos, d_model)
        layer = nn.TransformerEncoderLayer(d_model, n_head, dim_feedforward=ff, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layer, enable_nested_tensor=False)
        self.cls = nn.Linear(d_model, n_classes)

    def forward(self, ids):
        T = ids.size(1)
        pos = torch.arange(T, device=ids.device).unsqueeze(0)
        x = self.tok_emb(ids) + self.pos_emb(pos)
        x = self.encoder(x)
        return self.cls(x.mean(dim=1))
# ---------------------------------------------------------------------------------------------------------


def build(name):
    if name == "resnet50":
        import torchvision
        return torchvision.models.resnet50(weights=None), "image", 1000
    if name == "bert_like":
        return BertLike(), "seq_cls", 4
    raise SystemExit(f"unknown model {name!r} (resnet50, bert_like)")


# The comparison points of docs/PROBE.md: resnet50 train fp32 Adam at three batches, bert_like at two
# (batch, seq) points.
DEFAULT_POINTS = [
    ("resnet50", 16, None),
    ("resnet50", 32, None),
    ("resnet50", 64, None),
    ("bert_like", 8, 128),
    ("bert_like", 32, 512),
]


def make_optimizer(name, params):
    if name == "adam":
        return torch.optim.Adam(params, lr=1e-4)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-4)
    if name == "sgd":
        return torch.optim.SGD(params, lr=1e-3)
    if name == "momentum":
        return torch.optim.SGD(params, lr=1e-3, momentum=0.9)
    raise SystemExit(f"unknown optimizer {name!r}")


def measure(model_name, batch, seq, optimizer, steps, device, dtype):
    torch.manual_seed(0)
    model, kind, classes = build(model_name)
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.p = 0.0
    model = model.to(device=device)
    model.train()
    weights_bytes = sum(p.numel() * p.element_size() for p in model.parameters()) + sum(
        b.numel() * b.element_size() for b in model.buffers())
    opt = make_optimizer(optimizer, model.parameters())
    if kind == "image":
        x = torch.randn(batch, 3, 224, 224, device=device)
    else:
        x = torch.randint(0, 8000, (batch, seq), device=device, dtype=torch.int64)
    target = torch.randint(0, classes, (batch,), device=device, dtype=torch.int64)
    autocast = dtype in ("amp-fp16", "amp-bf16")
    amp_dtype = torch.float16 if dtype == "amp-fp16" else torch.bfloat16

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=amp_dtype, enabled=autocast):
            out = model(x)
            loss = F.cross_entropy(out.float(), target)
        loss.backward()
        opt.step()

    result = dict(model=model_name, batch=batch, seq=seq, optimizer=optimizer, dtype=dtype,
                  device=torch.cuda.get_device_name(device), torch=torch.__version__,
                  weights_bytes=weights_bytes, oom=False)
    try:
        step()  # warm-up: optimizer state, cuBLAS/cuDNN handles and workspaces
        torch.cuda.synchronize(device)
        free, total = torch.cuda.mem_get_info(device)
        result["context_bytes"] = (total - free) - torch.cuda.memory_reserved(device)
        torch.cuda.reset_peak_memory_stats(device)
        for _ in range(steps):
            step()
        torch.cuda.synchronize(device)
        result["max_allocated"] = torch.cuda.max_memory_allocated(device)
        result["max_reserved"] = torch.cuda.max_memory_reserved(device)
        result["allocated_after_step"] = torch.cuda.memory_allocated(device)
    except torch.cuda.OutOfMemoryError:
        result["oom"] = True
    finally:
        del opt, model, x, target
        torch.cuda.empty_cache()
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", choices=["resnet50", "bert_like"])
    ap.add_argument("--batch", type=int)
    ap.add_argument("--seq", type=int)
    ap.add_argument("--optimizer", default="adam")
    ap.add_argument("--dtype", default="fp32", choices=["fp32", "amp-fp16", "amp-bf16"])
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--device", type=int, default=0)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device found", file=sys.stderr)
        return 3
    device = torch.device("cuda", args.device)
    torch.backends.cudnn.benchmark = False  # heuristic algorithms, as the probe's cuDNN query assumes
    if args.model:
        if args.batch is None or (args.model == "bert_like" and args.seq is None):
            ap.error("--model needs --batch (and --seq for bert_like)")
        points = [(args.model, args.batch, args.seq)]
    else:
        points = DEFAULT_POINTS
    for name, batch, seq in points:
        print(json.dumps(measure(name, batch, seq, args.optimizer, args.steps, device, args.dtype)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
