#!/usr/bin/python3
# The logits' memory under three losses, measured with PyTorch's autograd on CPU (Debian's python3-torch 1.13,
# one thread), as tests/data/lora was: saved-for-backward bytes by torch.autograd.graph.saved_tensors_hooks
# (distinct storages) and the peak above the level before the step from the profiler's memory events.
#   hf:          Hugging Face's ForCausalLMLoss (transformers/loss/loss_utils.py): logits = lm_head(h);
#                cross_entropy(logits.float(), labels)
#   chunked:     torchtune's TransformerDecoder with num_output_chunks=8 and CEWithChunkedOutputLoss
#                (torchtune/modules/loss/ce_chunked_output_loss.py): [lm_head(c) for c in h.chunk(8, dim=1)],
#                each chunk's cross_entropy(chunk.float(), reduction="sum") added up; the recipes `del logits`
#                before backward
#   hf445:       transformers <= 4.45 LlamaForCausalLM.forward with labels: logits = lm_head(h).float() (the
#                model's returned logits), shift_logits = logits[..., :-1, :].contiguous(), cross_entropy on it
#                against labels[..., 1:]; the loop drops the output before backward (HF Trainer's compute_loss)
#   *_custom:    the same loss, the training loop holding the model's output through backward
#                (`output = model(...); loss = output.loss; loss.backward()`: Answer.AI's train.py, PEFT's run.py)
# Liger's fused linear cross-entropy needs Triton on a GPU and is not measured here.
# The region measured is lm_head + loss + backward: h (the final norm's output, a leaf that requires grad) and
# the frozen lm_head weight exist before it. Output: measured.json beside this script.
import json
import sys

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

torch.set_num_threads(1)
torch.manual_seed(0)
B, T, H, V, CHUNKS = 2, 128, 256, 8000, 8


def peak_above_baseline(fn):
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    evs = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    evs.sort(key=lambda e: e.start_us())
    cur = peak = 0
    for e in evs:
        cur += e.nbytes()
        peak = max(peak, cur)
    return int(peak)


def saved_bytes(fn):
    seen = {}

    def pack(t):
        if t.layout == torch.strided and t.numel() > 1:
            s = t.storage()
            seen[s.data_ptr()] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return out, int(sum(seen.values()))


def hf_loss(h, w, labels):
    logits = h @ w.t()
    return F.cross_entropy(logits.float().reshape(-1, V), labels.reshape(-1))


def hf_output(h, w, labels):
    # today's: the 16-bit logits are the output, the upcast is the loss function's local
    logits = h @ w.t()
    return F.cross_entropy(logits.float().reshape(-1, V), labels.reshape(-1)), logits


def hf445_output(h, w, labels):
    logits = (h @ w.t()).float()
    shift_logits = logits[..., :-1, :].contiguous()
    shift_labels = labels[..., 1:].contiguous()
    return F.cross_entropy(shift_logits.view(-1, V), shift_labels.view(-1)), logits


def hf445_loss(h, w, labels):
    return hf445_output(h, w, labels)[0]


def chunked_loss(h, w, labels):
    logits = [c @ w.t() for c in h.chunk(CHUNKS, dim=1)]
    total = 0.0
    for lc, yc in zip(logits, labels.chunk(CHUNKS, dim=1)):
        total = total + F.cross_entropy(lc.float().reshape(-1, V), yc.reshape(-1), reduction="sum")
    del logits
    return total / labels.numel()


def measure(loss_fn, dtype, holds_output=False):
    h = torch.randn(B, T, H, dtype=dtype, requires_grad=True)
    w = torch.randn(V, H, dtype=dtype) * 0.02
    labels = torch.randint(0, V, (B, T))
    output_fn = loss_fn  # holds_output: it gives (loss, logits), and the loop keeps both through backward
    if holds_output:
        loss_fn = lambda h, w, labels: output_fn(h, w, labels)[0]  # noqa: E731
    loss_fn(h, w, labels).backward()  # warm-up
    h.grad = None

    def step():
        if holds_output:
            output = output_fn(h, w, labels)
            output[0].backward()
            return output  # alive until backward has returned
        loss = loss_fn(h, w, labels)
        loss.backward()

    peak = peak_above_baseline(step)
    h.grad = None
    _, saved = saved_bytes(lambda: loss_fn(h, w, labels))
    return {"peak_bytes_above_baseline": peak, "saved_for_backward_bytes": saved}


def main():
    out = {"torch": torch.__version__, "batch": B, "seq": T, "hidden": H, "vocab": V, "chunks": CHUNKS,
           "logits_elements": B * T * V, "points": {}}
    for dtype in (torch.float32, torch.bfloat16):
        name = str(dtype).replace("torch.", "")
        for label, fn in (("hf", hf_loss), ("chunked", chunked_loss), ("hf445", hf445_loss)):
            out["points"][f"{label}_{name}"] = measure(fn, dtype)
        for label, fn in (("hf_custom", hf_output), ("hf445_custom", hf445_output)):
            out["points"][f"{label}_{name}"] = measure(fn, dtype, holds_output=True)
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
