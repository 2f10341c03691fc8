"""What autograd keeps for transformers' LlamaRMSNorm under a 16-bit model (rmsnorm_truth.json).

LlamaRMSNorm.forward as transformers >= 4.31 writes it (models/llama/modeling_llama.py), and GemmaRMSNorm
(models/gemma/modeling_gemma.py), run on CPU with Debian's python3-torch (1.13) in bfloat16 and float32.
Saved-for-backward bytes are the tensors the autograd graph's nodes hold (their _saved_* attributes; distinct storages, the
weight excluded: it is a parameter). In float32 x.to(torch.float32) is x itself, so the input is what pow and mul
keep; in bfloat16 they keep its fp32 copy and x is not kept. torch 1.13's mean.dim backward still kept its input (MeanBackward1.self, x^2 here); PyTorch >= 2
keeps only its sizes (derivatives.yaml mean_backward), so `pytorch2` leaves that tensor out, as
tests/data/lora/README.md does.

    /usr/bin/python3 tests/data/hf/rmsnorm_truth.py > tests/data/hf/rmsnorm_truth.json
"""
import json

import torch


class LlamaRMSNorm(torch.nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(hidden))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class GemmaRMSNorm(torch.nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.zeros(hidden))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float())
        output = output * (1.0 + self.weight.float())
        return output.type_as(x)


def measure(cls, dtype, batch, seq, hidden, train_weight):
    torch.manual_seed(0)
    norm = cls(hidden).to(dtype)
    norm.weight.requires_grad_(train_weight)
    x = torch.randn(batch, seq, hidden, dtype=dtype, requires_grad=True)
    skip = {norm.weight.data_ptr()}
    y = norm(x)
    # every tensor the graph's nodes hold (_saved_* attributes), by the node that holds it
    seen, by_op, stack, visited = {}, {}, [y.grad_fn], set()
    while stack:
        fn = stack.pop()
        if fn is None or fn in visited:
            continue
        visited.add(fn)
        for name in dir(fn):
            t = getattr(fn, name) if name.startswith("_saved_") else None
            if isinstance(t, torch.Tensor):
                ptr = t.storage().data_ptr()
                if ptr not in skip and ptr not in seen:
                    seen[ptr] = t.storage().nbytes()
                    by_op.setdefault(type(fn).__name__, []).append(seen[ptr])
        stack.extend(f for f, _ in fn.next_functions)
    mean_input = sum(by_op.get("MeanBackward1", []))
    y.float().sum().backward()
    return {
        "module": cls.__name__,
        "dtype": str(dtype).replace("torch.", ""),
        "batch": batch,
        "seq": seq,
        "hidden": hidden,
        "weight_trains": train_weight,
        "saved_activation_bytes": sum(seen.values()),
        "saved_by_op": by_op,
        "pytorch2": {"saved_activation_bytes": sum(seen.values()) - mean_input},
    }


points = []
# hidden sizes of tests/data/hf/llama_small.config.json and tests/data/external/google--gemma-3-1b-it.json
for cls, hidden in ((LlamaRMSNorm, 768), (GemmaRMSNorm, 1152)):
    for dtype in (torch.bfloat16, torch.float32):
        for train_weight in (True, False):
            points.append(measure(cls, dtype, 2, 16, hidden, train_weight))
print(json.dumps({"torch": torch.__version__, "device": "cpu", "points": points}, indent=1))
