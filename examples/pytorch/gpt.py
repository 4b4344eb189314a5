#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Train a GPT (nanoGPT-like, GPT-2 sizes) for a few steps and print each step's time.

    python gpt.py --model gpt2-124m --batch 8 --seq 1024 --steps 5                # one GPU
    torchrun --nproc-per-node 4 gpt.py --ddp | --fsdp | --tp 4 | --pp 4 | --tp 2 --ddp ...

Plain PyTorch: it runs the same on real GPUs and, unmodified, on Genie's emulated ones
(`genie run -n 4 --device h200 -- python gpt.py ...`). One line per step:

    step N time_ms X loss L grad_norm G

X is the step time measured with CUDA events (torch.cuda.Event(enable_timing=True)) recorded on the current
stream at the start of the step and after the optimizer step, read after the end event completed. On Genie
the events carry virtual times, so X is the step time the emulated GPUs predict; on a real GPU it is the
measured one. Under Genie kernels do not run: L and G are read back from device memory that no kernel
computed, so they are placeholders, not training results (the script says so when it runs on Genie).

Modes (the world size comes from torchrun's environment: WORLD_SIZE, RANK, LOCAL_RANK):
  --ddp       DistributedDataParallel (gradient buckets all-reduced during the backward)
  --fsdp      FSDP2 (fully_shard per block and on the root; bf16 parameters, fp32 gradient reduction)
  --tp N      Megatron-style tensor parallel with sequence parallel, over groups of N ranks
  --pp N      pipeline of N stages (GPipe schedule, --microbatches micro-batches, batch_isend_irecv)
  with --tp/--pp, the remaining factor world/(tp*pp) is data parallel and needs --ddp.
  --compile M torch.compile the model (Inductor) with mode M: default, reduce-overhead (CUDA graphs),
              max-autotune, max-autotune-no-cudagraphs
"""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt_model import GPT, MODELS, GPTConfig, TensorParallel, count_params  # noqa: E402
from gpt_parallel import Layout, clip_grad_norm_model_parallel, gpipe_step, make_layout, split_layers  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default="gpt2-124m", choices=sorted(MODELS))
    p.add_argument("--batch", type=int, default=8, help="sequences per data-parallel rank and step")
    p.add_argument("--seq", type=int, default=1024, help="sequence length (tokens)")
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--amp", default="bf16", choices=["bf16", "fp16", "none"],
                   help="autocast dtype; fp16 also scales the loss (torch.amp.GradScaler)")
    p.add_argument("--lr", type=float, default=6e-4)
    p.add_argument("--clip", type=float, default=1.0, help="gradient clipping norm (0: off)")
    p.add_argument("--compile", default="off",
                   choices=["off", "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"],
                   help="torch.compile the model with this mode (nanoGPT's way: compile, then wrap in DDP)")
    par = p.add_argument_group("parallelism")
    par.add_argument("--ddp", action="store_true")
    par.add_argument("--fsdp", action="store_true")
    par.add_argument("--tp", type=int, default=1)
    par.add_argument("--pp", type=int, default=1)
    par.add_argument("--microbatches", type=int, default=0, help="pipeline micro-batches (default: 2 x --pp)")
    par.add_argument("--no-device-id", action="store_true",
                     help="init_process_group without device_id: communicators are created lazily at first use "
                          "and new_group does not split (Megatron's way)")
    return p.parse_args(argv)


def on_genie() -> bool:
    """True when this process runs on Genie's CUDA runtime (its libraries are mapped)."""
    try:
        with open("/proc/self/maps") as f:
            return "libgenie_runtime" in f.read()
    except OSError:
        return False


def main(argv=None):
    args = parse_args(argv)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if args.ddp and args.fsdp:
        raise SystemExit("gpt.py: choose one of --ddp and --fsdp")
    if args.fsdp and (args.tp > 1 or args.pp > 1):
        raise SystemExit("gpt.py: --fsdp is data parallel only here; use --ddp with --tp/--pp")
    distributed = world > 1 or args.ddp or args.fsdp or args.tp > 1 or args.pp > 1
    if not torch.cuda.is_available():
        raise SystemExit("gpt.py: no CUDA device (on a machine without a GPU, run it under genie run)")
    torch.cuda.set_device(local_rank)
    dev = torch.device("cuda", local_rank)
    if distributed:
        kw = {} if args.no_device_id else {"device_id": dev}
        dist.init_process_group("nccl", timeout=timedelta(seconds=600), **kw)
    lay = make_layout(world, rank, args.tp, args.pp) if distributed else Layout()
    if lay.dp > 1 and not (args.ddp or args.fsdp):
        raise SystemExit(f"gpt.py: {world} ranks over --tp {args.tp} x --pp {args.pp} leave {lay.dp} data-parallel "
                         "replicas: add --ddp (or --fsdp without --tp/--pp)")
    genie = on_genie()
    say = print if rank == 0 else (lambda *a, **k: None)

    cfg = GPTConfig(**MODELS[args.model], block_size=args.seq)
    tp = TensorParallel(lay.tp_group)
    first, last = split_layers(cfg.n_layer, lay.pp, lay.pp_rank)
    amp_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "none": None}[args.amp]
    # Built on the meta device and materialised on the GPU: no host copy of the weights, as large-model
    # training does (on Genie the untouched device memory costs no host memory either).
    with torch.device("meta"):
        model = GPT(cfg, tp, first, last, has_embedding=lay.first_stage, has_head=lay.last_stage)
    inner = model
    if args.fsdp:
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
        mesh = init_device_mesh("cuda", (world,))
        mp = MixedPrecisionPolicy(param_dtype=amp_dtype, reduce_dtype=torch.float32) if amp_dtype else \
            MixedPrecisionPolicy()
        for block in model.h:
            fully_shard(block, mesh=mesh, mp_policy=mp)
        fully_shard(model, mesh=mesh, mp_policy=mp)
    model.to_empty(device=dev)
    model.init_weights()
    replicated = model.sp_replicated_params()
    holds_embedding = lay.pp > 1 and (lay.first_stage or lay.last_stage)
    if holds_embedding:  # the two copies of the tied embedding start equal (Megatron's embedding group)
        dist.broadcast(model.output_weight().data, src=lay.pp_ranks[0], group=lay.emb_group)
    if args.compile != "off":
        if lay.pp > 1:
            raise SystemExit("gpt.py: --compile is for --ddp, --fsdp and --tp runs (the pipeline schedule calls "
                             "stages piecewise)")
        model = torch.compile(model, mode=args.compile)
    if args.ddp and lay.dp > 1:
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = DDP(model, device_ids=[local_rank], process_group=lay.dp_group, gradient_as_bucket_view=True)
    elif args.ddp and world == 1:
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = DDP(model, device_ids=[local_rank])

    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.1},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.95), fused=True)
    scaler = torch.amp.GradScaler("cuda") if args.amp == "fp16" else None

    n_params = count_params(cfg)
    mode = "fsdp" if args.fsdp else ("ddp" if args.ddp else "single")
    say(f"gpt.py: {args.model} params {n_params} ({n_params / 1e6:.1f}M) layers {cfg.n_layer} heads {cfg.n_head} "
        f"embd {cfg.n_embd} vocab {cfg.vocab_size} batch {args.batch} seq {args.seq} amp {args.amp} "
        f"world {world} dp {lay.dp} tp {lay.tp} pp {lay.pp} mode {mode} compile {args.compile} "
        f"device {torch.cuda.get_device_name(dev)}")
    if genie:
        say("gpt.py: on Genie kernels do not run: step times are the emulated GPUs' (virtual clock); loss and "
            "grad_norm are read back from device memory no kernel computed, so they are placeholders, not "
            "training results")

    # Synthetic token ids (no downloads): the same for every tensor-parallel rank and pipeline stage of a
    # replica, different per data-parallel rank; copied to the GPU each step from pinned memory.
    M = (args.microbatches or 2 * lay.pp) if lay.pp > 1 else 1
    if args.batch % M:
        raise SystemExit(f"gpt.py: --batch {args.batch} is not a multiple of the {M} micro-batches")
    if lay.pp > 1:
        say(f"gpt.py: pipeline micro-batches {M} schedule gpipe")
    g = torch.Generator().manual_seed(1234 + lay.dp_rank)
    data = torch.randint(cfg.vocab_size, (args.batch, args.seq + 1), generator=g).pin_memory()
    autocast = torch.autocast("cuda", dtype=amp_dtype) if amp_dtype else torch.autocast("cuda", enabled=False)
    no_sync = model.no_sync if hasattr(model, "no_sync") else None
    act_shape = (args.seq // lay.tp, args.batch // M, cfg.n_embd)

    def backward(loss):
        (scaler.scale(loss) if scaler else loss).backward()

    times = []
    for step in range(1, args.steps + 1):
        # An NVTX range per step: under genie run the report breaks each one down into compute, exposed
        # communication and idle time per rank (docs/report.md "Ranges"); elsewhere it is what Nsight shows.
        torch.cuda.nvtx.range_push("step")
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        batch = data.to(dev, non_blocking=True)
        x, y = batch[:, :-1], batch[:, 1:]
        with autocast:
            if lay.pp > 1:
                losses = gpipe_step(lay, model, x.chunk(M), y.chunk(M), act_shape, torch.float32, backward,
                                    no_sync or contextlib.nullcontext)
                loss = torch.stack([l.detach() for l in losses]).mean() if losses else None
            else:
                loss = model(x, y)
        if lay.pp == 1:
            backward(loss)
        if lay.tp > 1 and replicated:  # sequence-parallel partial gradients: one coalesced all-reduce
            grads = [p.grad for p in replicated]
            flat = torch._utils._flatten_dense_tensors(grads)
            dist.all_reduce(flat, group=lay.tp_group)
            for g_, s in zip(grads, torch._utils._unflatten_dense_tensors(flat, grads)):
                g_.copy_(s)
        if holds_embedding:  # tied embedding: first and last stage add their gradients
            w = inner.output_weight()
            dist.all_reduce(w.grad, group=lay.emb_group)
        if scaler:
            scaler.unscale_(opt)
        norm = None
        if args.clip > 0:
            if lay.tp > 1 or lay.pp > 1:
                skip = [inner.head_weight] if lay.pp > 1 and lay.last_stage else []
                norm = clip_grad_norm_model_parallel(params, replicated, args.clip, lay, skip)
            else:
                norm = torch.nn.utils.clip_grad_norm_(params, args.clip)
        if scaler:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
        opt.zero_grad(set_to_none=True)
        end.record()
        end.synchronize()
        torch.cuda.nvtx.range_pop()
        ms = start.elapsed_time(end)
        times.append(ms)
        loss_v = _value(loss)
        norm_v = _value(norm)
        if loss_v is not None and not math.isfinite(loss_v):
            print(f"gpt.py: step {step}: the loss read back is not finite ({loss_v})", file=sys.stderr)
        fields = f"step {step} time_ms {ms:.3f}"
        fields += f" loss {loss_v:.4f}" if loss_v is not None else " loss -"
        fields += f" grad_norm {norm_v:.4f}" if norm_v is not None else ""
        print(fields, flush=True)

    steady = times[1:] or times
    mean = sum(steady) / len(steady)
    tokens = args.batch * args.seq * lay.dp
    say(f"gpt.py: mean step time_ms {mean:.3f} over steps {2 if len(times) > 1 else 1}-{len(times)}, "
        f"{tokens / (mean / 1e3):.0f} tokens/s")
    if distributed:
        dist.destroy_process_group()


def _value(t):
    """A device scalar read back to the host (a blocking copy), or None."""
    if t is None:
        return None
    if hasattr(t, "full_tensor"):  # DTensor (FSDP2 gradient norm)
        t = t.full_tensor()
    return float(t.item())


if __name__ == "__main__":
    main()
