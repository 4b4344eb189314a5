#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Train a torchvision ResNet for a few steps on synthetic images and print each step's time.

    python resnet.py --model resnet50 --batch 64 --steps 5                      # one GPU
    torchrun --nproc-per-node 2 resnet.py --ddp                                  # data parallel

Plain PyTorch and torchvision: it runs the same on real GPUs and, unmodified, on Genie's emulated ones
(`genie run -n 2 --device h200 -- python resnet.py --ddp`). One line per step:

    step N time_ms X loss L

X is the step time measured with CUDA events around the forward, backward and optimizer step, as gpt.py does: on
Genie the emulated GPUs' (virtual clock) time, on a GPU the measured one. Under Genie kernels do not run: L is read
back from memory no kernel computed, a placeholder.

Options: --amp bf16|fp16|none (autocast), --channels-last (NHWC tensors, what tensor-core convolutions want),
--no-cudnn (torch.backends.cudnn.enabled = False: PyTorch's own convolution kernels), --benchmark
(torch.backends.cudnn.benchmark = True: cuDNN times each engine and keeps the fastest), --compile MODE
(torch.compile), --image SIZE, --model resnet18|resnet34|resnet50|resnet101.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from datetime import timedelta

import torch
import torch.distributed as dist


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default="resnet50", choices=["resnet18", "resnet34", "resnet50", "resnet101"])
    p.add_argument("--batch", type=int, default=64, help="images per rank and step")
    p.add_argument("--image", type=int, default=224, help="image height and width")
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--amp", default="bf16", choices=["bf16", "fp16", "none"])
    p.add_argument("--channels-last", action="store_true", help="NHWC model and inputs")
    p.add_argument("--no-cudnn", action="store_true", help="torch.backends.cudnn.enabled = False")
    p.add_argument("--benchmark", action="store_true", help="torch.backends.cudnn.benchmark = True")
    p.add_argument("--ddp", action="store_true", help="DistributedDataParallel over the torchrun world")
    p.add_argument("--compile", default="off",
                   choices=["off", "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"])
    p.add_argument("--lr", type=float, default=0.1)
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
    import torchvision

    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if not torch.cuda.is_available():
        raise SystemExit("resnet.py: no CUDA device (on a machine without a GPU, run it under genie run)")
    torch.cuda.set_device(local_rank)
    dev = torch.device("cuda", local_rank)
    torch.backends.cudnn.enabled = not args.no_cudnn
    torch.backends.cudnn.benchmark = args.benchmark
    if args.ddp:
        dist.init_process_group("nccl", timeout=timedelta(seconds=600), device_id=dev)
    say = print if rank == 0 else (lambda *a, **k: None)
    fmt = torch.channels_last if args.channels_last else torch.contiguous_format

    model = getattr(torchvision.models, args.model)(weights=None).to(dev, memory_format=fmt)
    n_params = sum(p.numel() for p in model.parameters())
    if args.compile != "off":
        model = torch.compile(model, mode=args.compile)
    if args.ddp:
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = DDP(model, device_ids=[local_rank], gradient_as_bucket_view=True)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    amp_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "none": None}[args.amp]
    autocast = torch.autocast("cuda", dtype=amp_dtype) if amp_dtype else torch.autocast("cuda", enabled=False)
    scaler = torch.amp.GradScaler("cuda") if args.amp == "fp16" else None
    say(f"resnet.py: {args.model} params {n_params} ({n_params / 1e6:.1f}M) batch {args.batch} image {args.image} "
        f"amp {args.amp} layout {'nhwc' if args.channels_last else 'nchw'} cudnn {torch.backends.cudnn.enabled} "
        f"benchmark {args.benchmark} world {world} mode {'ddp' if args.ddp else 'single'} compile {args.compile} "
        f"device {torch.cuda.get_device_name(dev)}")
    if on_genie():
        say("resnet.py: on Genie kernels do not run: step times are the emulated GPUs' (virtual clock); the loss is "
            "read back from device memory no kernel computed, a placeholder, not a training result")

    # Synthetic images and labels (no downloads), different per rank, copied to the GPU each step from pinned memory.
    g = torch.Generator().manual_seed(1234 + rank)
    images = torch.randn(args.batch, 3, args.image, args.image, generator=g).pin_memory()
    labels = torch.randint(1000, (args.batch,), generator=g).pin_memory()
    loss_fn = torch.nn.CrossEntropyLoss()

    times = []
    for step in range(1, args.steps + 1):
        torch.cuda.nvtx.range_push("step")
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        x = images.to(dev, non_blocking=True).contiguous(memory_format=fmt)
        y = labels.to(dev, non_blocking=True)
        with autocast:
            loss = loss_fn(model(x), y)
        if scaler:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        opt.zero_grad(set_to_none=True)
        end.record()
        end.synchronize()
        torch.cuda.nvtx.range_pop()
        ms = start.elapsed_time(end)
        times.append(ms)
        loss_v = float(loss.item())
        if not math.isfinite(loss_v):
            print(f"resnet.py: step {step}: the loss read back is not finite ({loss_v})", file=sys.stderr)
        print(f"step {step} time_ms {ms:.3f} loss {loss_v:.4f}", flush=True)

    steady = times[1:] or times
    mean = sum(steady) / len(steady)
    images_per_s = args.batch * world / (mean / 1e3)
    say(f"resnet.py: mean step time_ms {mean:.3f} over steps {2 if len(times) > 1 else 1}-{len(times)}, "
        f"{images_per_s:.0f} images/s")
    if args.ddp:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
