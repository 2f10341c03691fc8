#!/usr/bin/python3
"""What autograd keeps for one held-out model: walk out.grad_fn through next_functions and read every node's
_saved_* tensors (distinct storages, parameters/buffers and the model input apart). Investigation tool for
failing points of tst_accuracy_heldout; its activation total reproduces truth.json's activation_bytes.

    /usr/bin/python3 tests/data/heldout/saved_walk.py MODEL BATCH [SEQ] [--nodes]
"""
import sys

import make_heldout as mh  # noqa: E402 (sets up make_corpus on sys.path)
import torch

mc = mh.mc


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    name, batch = args[0], int(args[1])
    seq = int(args[2]) if len(args) > 2 else None
    cfg = mh.MODELS[name]
    idx = mh.INDEX_BASE + list(mh.MODELS).index(name)
    mc.seed_all(1000 + idx)
    model = cfg["build"]()
    mc.perturb_(model, 2000 + idx)
    mc.train_mode(model)
    x = mc.make_input(cfg, batch, seq, seed=1)
    pstore = {mc.storage_ptr_nbytes(t)[0] for t in list(model.parameters()) + list(model.buffers())}
    in_ptr = mc.storage_ptr_nbytes(x)[0]
    out = model(x)

    # post-order DFS from the output: each node after the nodes it consumes = forward topological order
    nodes, seen, stack = [], set(), [(out.grad_fn, False)]
    while stack:
        fn, done = stack.pop()
        if done:
            nodes.append(fn)
            continue
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        stack.append((fn, True))
        stack.extend((f, False) for f, _ in fn.next_functions if f is not None and f not in seen)

    owner = {}  # storage ptr -> (bytes, first node, attr)
    per_node = []
    for fn in nodes:
        mine = []
        for attr in dir(fn):
            if not attr.startswith("_saved_"):
                continue
            try:
                v = getattr(fn, attr)
            except Exception:  # noqa: freed or not a tensor
                continue
            for t in (v if isinstance(v, (tuple, list)) else [v]):
                if not isinstance(t, torch.Tensor):
                    continue
                ptr, nb = mc.storage_ptr_nbytes(t)
                if nb == 0:
                    continue
                cat = "param" if ptr in pstore else ("input" if ptr == in_ptr else "act")
                new = ptr not in owner
                if new:
                    owner[ptr] = (nb, fn.name(), attr, cat)
                mine.append((attr, tuple(t.shape), str(t.dtype).replace("torch.", ""), nb, cat, new))
        per_node.append((fn.name(), mine))

    by_op = {}
    for nb, op, attr, cat in owner.values():
        if cat == "act":
            k = f"{op}.{attr}"
            by_op[k] = (by_op.get(k, (0, 0))[0] + nb, by_op.get(k, (0, 0))[1] + 1)
    act = sum(v[0] for v in owner.values() if v[3] == "act")
    inp = sum(v[0] for v in owner.values() if v[3] == "input")
    print(f"{name} batch {batch} seq {seq}: activation_bytes {act} input_bytes {inp} (sum {act + inp})")
    print("first saver . attribute -> distinct activation bytes (count)")
    for k, (nb, n) in sorted(by_op.items(), key=lambda kv: -kv[1][0]):
        print(f"  {k:50s} {nb:12d} ({n})")
    if "--nodes" in sys.argv:
        for op, mine in per_node:
            desc = ", ".join(f"{a}{list(s)}{d}{'' if new else '(shared)'}{'' if c == 'act' else '[' + c + ']'}"
                             for a, s, d, nb, c, new in mine)
            print(f"  {op}: {desc}")


if __name__ == "__main__":
    main()
