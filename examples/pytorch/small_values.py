#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Small CUDA tensors carry real values on Genie (genie_small_values, docs/pytorch.md "Small values"): after an
NCCL all-reduce, reductions, scans, comparisons, masks and nonzero of small tensors read on the host give the
numbers a GPU would; a small value computed from a collective's output and sent by another collective arrives
right; a reduction issued before a collective overwrote its input keeps the old input; a long in-place chain; a
backward pass (autograd's device thread); a large tensor is not shadowed; a top-k over values no kernel computed
routes evenly. Run as several ranks
(`genie run -n N`); on a real GPU the same checks pass. With GENIE_TORCH_SMALL_VALUES=0 most of them fail.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from check import expect_eq, expect_true, finish  # noqa: E402

try:
    import genie_small_values as gsv  # present on Genie (genie run puts it on PYTHONPATH)
except ImportError:
    gsv = None


def filled(values, dev, dtype=torch.float32):
    """A device tensor written by a host-to-device copy (real bytes on Genie)."""
    return torch.tensor(values, dtype=dtype).to(dev)


def run(r, w, dev):
    tri = w * (w + 1) // 2  # sum over ranks of (r + 1)
    x = filled([r + 1.0, 2.0 * r, 3.0, -1.0], dev)
    dist.all_reduce(x)
    expected = [float(tri), float(w * (w - 1)), 3.0 * w, -1.0 * w]
    expect_eq("the all-reduced bytes", expected, x.tolist())
    expect_eq("sum().item()", float(sum(expected)), x.sum().item())
    expect_eq("max().item()", max(expected), x.max().item())
    expect_eq("argmin().item()", 3, x.argmin().item())
    expect_eq("cumsum(0).tolist()", [sum(expected[:i + 1]) for i in range(4)], x.cumsum(0).tolist())
    expect_eq("(x * 2 + 1).cpu()", [2 * v + 1 for v in expected], (x * 2 + 1).cpu().tolist())
    expect_eq("bool((x > 0).all())", False, bool((x > 0).all()))
    expect_eq("int((x > 0).sum())", 2 + (w > 1), int((x > 0).sum()))
    expect_eq("x[x > 2.5] (boolean mask)", [v for v in expected if v > 2.5], x[x > 2.5].tolist())
    expect_eq("nonzero(x < 0)", [[3]], torch.nonzero(x < 0).tolist())
    expect_eq("torch.equal", True, torch.equal(x * 1, x))
    expect_eq("arange(5).sum()", 10, torch.arange(5, device=dev).sum().item())
    expect_eq("python max() over one-element tensors", max(expected),
              max([x[i].unsqueeze(0) for i in range(4)]).item())

    # A value computed from a collective's output, then sent by a collective: it must be in device memory when
    # the second collective reads it (a host function evaluates it at that point of the stream).
    s = (x * 2).sum().reshape(1)
    dist.all_reduce(s)
    expect_eq("all_reduce of a computed sum", float(w * 2 * sum(expected)), s.item())
    sizes = torch.cat([filled([r + 10], dev, torch.long), filled([7], dev, torch.long)])
    dist.broadcast(sizes, src=0)
    expect_eq("broadcast of a torch.cat result", [10, 7], sizes.tolist())

    # Issued before a collective overwrites its input: the reduction sees the bytes before the collective.
    y = filled([float(r)] * 8, dev)
    before = y.sum()
    dist.all_reduce(y)
    expect_eq("a reduction issued before all_reduce overwrote its input", 8.0 * r, before.item())
    expect_eq("... and after", 8.0 * (w * (w - 1) // 2), y.sum().item())

    # A long in-place chain (flushed every 64 versions by a host function on the stream).
    c = torch.zeros(1, device=dev)
    for _ in range(200):
        c += 1
    expect_eq("200 in-place adds", 200.0, c.item())

    # Backward runs on autograd's device thread, which inherits the mode.
    p = filled([1.0, 2.0, 3.0], dev).requires_grad_()
    (p * p).sum().backward()
    expect_eq("gradient of sum(p*p)", [2.0, 4.0, 6.0], p.grad.tolist())

    # A large tensor is left alone: no thunk, its op's output keeps whatever the kernel-less launch left.
    if gsv is not None and gsv.installed():
        big = torch.ones(1 << 20).to(dev)
        n = gsv.stats()["shadowed"]
        big.sum()
        (big * 2)[:4]
        expect_eq("ops on a tensor of 2^20 elements are not shadowed", n, gsv.stats()["shadowed"])
        # What kernels that do not run would compute into control values reads as zero (finite): the checks
        # training loops make pass as on a GPU with healthy gradients.
        # The next small allocation reuses a freed 512-byte block: leave NaNs in it, as a real GPU's memory might hold.
        def poison():
            torch.full((128,), float("nan")).to(dev)

        poison()
        norm = big.norm()
        expect_eq("a norm of a large tensor is finite (isnan)", False, bool(torch.isnan(norm)))
        expect_eq("... (isfinite)", True, bool(torch.isfinite(norm).all()))
        grads = [torch.ones(1 << 17).to(dev) * 3, torch.ones(1 << 17).to(dev)]
        found_inf = torch.full((1,), 0.0, device=dev)
        poison()
        zeroed = gsv.stats()["zeroed"]
        torch._amp_foreach_non_finite_check_and_unscale_(grads, found_inf, torch.full((1,), 0.5, device=dev))
        expect_eq("found_inf after an unscale of large gradients", 0.0, found_inf.item())
        expect_eq("... which wrote found_inf as a control value", zeroed + 1, gsv.stats()["zeroed"])
        poison()
        total = torch.nn.utils.clip_grad_norm_(grads, 1.0)
        expect_eq("clip_grad_norm_ of large gradients is finite", True, bool(torch.isfinite(total)))
        dist.all_reduce(norm)
        expect_eq("an all-reduced unknown norm is finite on every rank", True, bool(torch.isfinite(norm)))
        # A value computed from a collective's output, copied to the host without waiting (non_blocking, as
        # Megatron's MoE dispatcher copies its all-to-all split sizes) and read after a synchronize.
        gathered = torch.empty(w * 2, dtype=torch.long, device=dev)
        dist.all_gather_into_tensor(gathered, torch.tensor([r, 1], device=dev))
        splits = gathered.view(w, 2).sum(dim=0)
        host = splits.to("cpu", non_blocking=True)
        torch.cuda.current_stream().synchronize()
        expect_eq("a non-blocking host copy of a value computed from an all-gather", [w * (w - 1) // 2, w],
                  host.tolist())
        # A selection over values no kernel computed (MoE's router: top-k of logits from a GEMM) takes evenly
        # spread indices, so the tokens counted per expert are an even routing, the same on every rank.
        logits = big[: 512 * 8].view(512, 8) * 2  # a kernel's result: no value
        _, idx = torch.topk(logits, 2, dim=-1)
        per_expert = torch.zeros_like(logits).scatter(1, idx, 1).bool().sum(dim=0).long()
        expect_eq("tokens per expert of a top-2 routing of 512 tokens over 8 experts", [128] * 8, per_expert.tolist())
        expect_eq("argmax over values no kernel computed spreads evenly", [0, 1, 2, 3],
                  torch.argmax(logits, dim=1)[:4].tolist())
        # Megatron's permute selects the router's probabilities (a kernel's: no value) with the routing map (known):
        # the result has as many elements as the map has true ones, although its values are unknown.
        routing = torch.zeros_like(logits).scatter(1, idx, 1).bool().T.contiguous()
        probs = torch.softmax(logits, dim=-1).T.contiguous()
        expect_eq("unknown values selected by a known mask: its count", 1024, probs.masked_select(routing).numel())
        expect_eq("... and by boolean indexing", 1024, probs[routing].numel())
        expect_true("the mechanism evaluated thunks", gsv.stats()["evaluated"] > 0)
        print(f"small_values stats rank {r}: {gsv.stats()}", flush=True)


def main():
    r = int(os.environ.get("RANK", "0"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=dev)
    if gsv is not None:  # on Genie: installed unless switched off
        expect_eq("genie_small_values installed", os.environ.get("GENIE_TORCH_SMALL_VALUES", "1") != "0",
                  gsv.installed())
    try:
        run(r, dist.get_world_size(), dev)
    finally:
        dist.destroy_process_group()
    finish(f"small_values rank {r}")


if __name__ == "__main__":
    main()
