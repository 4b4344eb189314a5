#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The tensor-parallel GPT of examples/pytorch/gpt_model.py computes what the plain model computes. On Genie
kernels do not run, so this is checked on the CPU: two processes (torchrun, gloo) shard a small model's weights
as the example does and compare the loss and every gradient with the unsharded model on the same data.

    python -m torch.distributed.run --nproc-per-node 2 gpt_tp_cpu_check.py     (prints "gpt_tp_cpu: N failed")
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples", "pytorch"))
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from gpt_model import GPT, GPTConfig, TensorParallel  # noqa: E402

TOL = 1e-4  # fp32 on the CPU: sharded and unsharded sums differ only by rounding order


def shard(name, full, cfg, world, rank):
    """This rank's part of an unsharded parameter (or gradient), as the example lays them out."""
    if name.startswith("wte"):
        return full.chunk(world, 0)[rank]  # vocab-parallel rows
    if "c_attn" in name:  # columns grouped per head: [head, (q, k, v) x head_dim]
        per_head = full.view(cfg.n_head, -1, *full.shape[1:])
        return per_head.chunk(world, 0)[rank].reshape(-1, *full.shape[1:])
    if "c_fc" in name:
        return full.chunk(world, 0)[rank]  # column-parallel
    if name.endswith("c_proj.weight"):
        return full.chunk(world, 1)[rank]  # row-parallel
    return full  # replicated


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    cfg = GPTConfig(n_layer=2, n_head=4, n_embd=64, vocab_size=128, block_size=16)
    torch.manual_seed(0)
    ref = GPT(cfg, TensorParallel(None))
    with torch.no_grad():  # init_weights uses GPT-2's init; here random values everywhere, biases included
        for p in ref.parameters():
            p.normal_(0.0, 0.1)
    model = GPT(cfg, TensorParallel(dist.group.WORLD))
    full = dict(ref.named_parameters())
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(shard(name, full[name], cfg, world, rank))
    data = torch.randint(cfg.vocab_size, (2, cfg.block_size + 1), generator=torch.Generator().manual_seed(1))
    x, y = data[:, :-1], data[:, 1:]
    ref_loss = ref(x, y)
    ref_loss.backward()
    loss = model(x, y)
    loss.backward()
    for p in model.sp_replicated_params():  # what the training loop's sequence-parallel all-reduce does
        dist.all_reduce(p.grad)
    failed = 0
    ok = abs(loss.item() - ref_loss.item()) <= TOL
    failed += not ok
    print(f"{'ok  ' if ok else 'FAIL'} rank {rank} loss: Expectation {ref_loss.item():.6f} / Actual {loss.item():.6f}")
    for name, p in model.named_parameters():
        err = (shard(name, full[name].grad, cfg, world, rank) - p.grad).abs().max().item()
        ok = err <= TOL
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} rank {rank} grad {name}: Expectation max error <= {TOL} / Actual {err:.2e}")
    print(f"gpt_tp_cpu rank {rank}: {failed} failed")
    dist.destroy_process_group()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
