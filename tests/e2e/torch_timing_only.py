#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A rank of a model larger than this host's memory, on one emulated H100 (docs/timing-only.md). Run under
`genie run -n N --device h100-sxm [--data none] -- python torch_timing_only.py ...`.

The model is a stack of `--layers` bf16 nn.Linear(dim, dim, bias=False) layers built on the GPU, trained with fused
Adam (no temporaries: parameters, gradients and the two moments are 4 x the parameter bytes); each step copies a
batch of `--tokens` rows to the GPU and reads the loss. With `--checkpoint` the parameters are then copied to host
memory, as a checkpoint does. With WORLD_SIZE > 1 the model is wrapped in DistributedDataParallel.

Checks (one "Expectation ... / Actual ..." line each, "torch_timing_only: N failed" at the end):
* memory_allocated after building = the parameters' bytes, exactly; after the steps = parameters + moments + one
  512-byte step counter per parameter (fused Adam's), exactly (one rank: DDP's buckets add their own); both counted
  from what a first GEMM left allocated (cuBLAS's workspaces);
* max_memory_allocated = 4 x the parameter bytes plus at most the activations and the DDP buckets;
* torch.cuda.mem_get_info: the total is the H100's 85,520,809,984 bytes and what it counts as used is exactly what
  the caching allocator reserved;
* the peak resident set of the process (VmHWM) is at most --max-rss-mib (0: not checked);
* with --expect-oom: the training raises torch.OutOfMemoryError with PyTorch's usual message naming the GPU's
  79.65 GiB capacity.
It prints each step's modelled time ("step N time_ms T": CUDA events on Genie's virtual clock).
"""
import argparse
import os
import re
import sys

import torch
import torch.distributed as dist
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "pytorch"))
from check import expect_eq, expect_match, expect_true, finish  # noqa: E402

H100_BYTES = 85520809984  # fakecuda/presets/h100-sxm.json
ALLOC_ROUND = 512  # PyTorch's caching allocator rounds every block to 512 bytes


def peak_rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return -1.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, required=True)
    ap.add_argument("--dim", type=int, default=16384)
    ap.add_argument("--tokens", type=int, default=256)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--checkpoint", action="store_true")
    ap.add_argument("--expect-oom", action="store_true")
    ap.add_argument("--max-rss-mib", type=float, default=0)
    a = ap.parse_args()

    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    if world > 1:
        dist.init_process_group("nccl")
    dev = torch.device("cuda")
    print(f"GENIE_DATA={os.environ.get('GENIE_DATA', '(unset)')} world {world} layers {a.layers} dim {a.dim}",
          flush=True)

    # A first GEMM forward and backward makes cuBLAS's workspaces (PyTorch allocates them once, through its caching
    # allocator, and keeps them): from here on every byte allocated is the model's, its optimizer's or a batch's.
    w = torch.ones(8, 8, device=dev, dtype=torch.bfloat16, requires_grad=True)
    (w @ w).sum().backward()
    del w
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    print(f"allocated before the model (cuBLAS workspaces): {base} bytes", flush=True)
    model = nn.Sequential(*[nn.Linear(a.dim, a.dim, bias=False, device=dev, dtype=torch.bfloat16)
                            for _ in range(a.layers)])
    params = list(model.parameters())
    p_bytes = sum(p.numel() * p.element_size() for p in params)
    print(f"parameters: {p_bytes / 2**30:.2f} GiB; with gradients and Adam's moments {4 * p_bytes / 2**30:.2f} GiB",
          flush=True)
    expect_eq("memory_allocated after building = the parameters' bytes", p_bytes, torch.cuda.memory_allocated() - base)
    if world > 1:
        model = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.Adam(params, lr=1e-4, fused=True)
    batch = torch.randn(a.tokens, a.dim, dtype=torch.bfloat16).pin_memory()
    act_bytes = a.tokens * a.dim * 2

    def step(i):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        x = batch.to(dev, non_blocking=True)
        loss = model(x).float().pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        end.record()
        value = loss.item()  # synchronises
        print(f"step {i} time_ms {start.elapsed_time(end):.3f} loss {value}", flush=True)

    if a.expect_oom:
        try:
            for i in range(a.steps):
                step(i)
        except torch.OutOfMemoryError as e:
            msg = str(e)
            print(f"OutOfMemoryError: {msg}", flush=True)
            expect_match("torch.OutOfMemoryError's message", r"CUDA out of memory\. Tried to allocate [0-9.]+ [GM]iB\. "
                         r"GPU 0 has a total capacity of 79\.65 GiB of which", msg)
            free, total = torch.cuda.mem_get_info()
            expect_eq("at the OOM, mem_get_info used = memory_reserved", torch.cuda.memory_reserved(), total - free)
            m = re.search(r"Tried to allocate ([0-9.]+) ([GM])iB", msg)
            asked = float(m[1]) * (2**30 if m[2] == "G" else 2**20) if m else 0
            expect_true(f"the allocation asked for more than the {free} bytes left", free < asked, "true")
        else:
            expect_true("torch.OutOfMemoryError raised", False, "raised")
        if world > 1:
            dist.destroy_process_group()
        finish("torch_timing_only")

    for i in range(a.steps):
        step(i)
    torch.cuda.synchronize()
    steps_bytes = len(params) * ALLOC_ROUND  # fused Adam's per-parameter step counters (float32 scalars on the GPU)
    if world == 1:
        expect_eq("memory_allocated after the steps = parameters + Adam's moments + step counters",
                  3 * p_bytes + steps_bytes, torch.cuda.memory_allocated() - base)
    peak = torch.cuda.max_memory_allocated() - base
    slack = (a.layers + 4) * act_bytes + (2 * p_bytes if world > 1 else 0)  # activations, DDP's buckets
    expect_true(f"max_memory_allocated {peak} within [4 x parameters, + {slack}] bytes",
                4 * p_bytes <= peak <= 4 * p_bytes + steps_bytes + slack, "in range")
    free, total = torch.cuda.mem_get_info()
    expect_eq("mem_get_info total = the H100's capacity", H100_BYTES, total)
    expect_eq("mem_get_info used = memory_reserved", torch.cuda.memory_reserved(), total - free)

    if a.checkpoint:
        ckpt = [p.detach().to("cpu") for p in params]
        expect_eq("checkpoint bytes on the host", p_bytes, sum(t.numel() * t.element_size() for t in ckpt))
        del ckpt
    rss = peak_rss_mib()
    print(f"rank {rank} peak rss MiB {rss:.0f}", flush=True)
    if a.max_rss_mib > 0:
        expect_true(f"peak RSS {rss:.0f} MiB at most {a.max_rss_mib:.0f} MiB", 0 < rss <= a.max_rss_mib, "true")
    if world > 1:
        dist.destroy_process_group()
    finish("torch_timing_only")


if __name__ == "__main__":
    main()
