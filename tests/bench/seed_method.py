#!/usr/bin/python3
"""The seeds' method, timed: build the PyTorch model, run one forward at the batch, sum the output bytes of
every leaf module (forward hooks), and apply "params x n + batch x sum(outputs) x 2". Compare with
bench_engine's BM_Resnet50_Recompute / headroom-cli at the same batch (docs/BENCHMARKS.md, "Engine").

    /usr/bin/python3 tests/bench/seed_method.py [--batch 32] [--repeat 5]

ResNet-50 is written out here (torchvision's architecture: Bottleneck [3, 4, 6, 3], 25,557,032 params)
so the script needs torch only. tiny_gpt comes from the shared corpus script when it is importable.
"""
import argparse
import importlib.util
import os
import sys
import time
import types

import torch
import torch.nn as nn


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        idt = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            idt = self.downsample(x)
        return self.relu(out + idt)


class ResNet50(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._make(64, 3)
        self.layer2 = self._make(128, 4, 2)
        self.layer3 = self._make(256, 6, 2)
        self.layer4 = self._make(512, 3, 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(2048, classes)

    def _make(self, planes, blocks, stride=1):
        down = None
        if stride != 1 or self.inplanes != planes * 4:
            down = nn.Sequential(nn.Conv2d(self.inplanes, planes * 4, 1, stride, bias=False), nn.BatchNorm2d(planes * 4))
        layers = [Bottleneck(self.inplanes, planes, stride, down)]
        self.inplanes = planes * 4
        layers += [Bottleneck(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def tiny_gpt():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "corpus", "make_corpus.py")
    if not os.path.exists(path):
        return None
    sys.modules.setdefault("torchvision", types.ModuleType("torchvision"))  # only the hand-written models are used
    spec = importlib.util.spec_from_file_location("make_corpus", path)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception:
        return None
    return mod.TinyGPT


def seed_estimate(build, make_input, n=4):
    """The seeds' method end to end: build, forward with leaf hooks, formula. Returns (bytes, seconds)."""
    t0 = time.perf_counter()
    model = build()
    total = {"bytes": 0}

    def hook(_m, _i, out):
        outs = out if isinstance(out, (tuple, list)) else [out]
        for t in outs:
            if isinstance(t, torch.Tensor):
                total["bytes"] += t.numel() * t.element_size()

    for m in model.modules():
        if len(list(m.children())) == 0:
            m.register_forward_hook(hook)
    with torch.no_grad():
        model(make_input())
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    estimate = params * n + total["bytes"] * 2
    return estimate, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    cases = [("resnet50", ResNet50, lambda: torch.randn(args.batch, 3, 224, 224))]
    gpt = tiny_gpt()
    if gpt is not None:
        cases.append(("tiny_gpt", gpt, lambda: torch.randint(0, 8000, (args.batch, args.seq))))
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, batch {args.batch}")
    for name, build, make in cases:
        best = None
        for _ in range(args.repeat):
            est, sec = seed_estimate(build, make)
            best = sec if best is None else min(best, sec)
        print(f"{name}: seed estimate (adam) {est} bytes, best of {args.repeat}: {best * 1000:.1f} ms")


if __name__ == "__main__":
    main()
