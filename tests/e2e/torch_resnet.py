#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""e2e test of examples/pytorch/resnet.py (torchvision ResNet) under `genie run` on Genie's cuDNN: the exit code,
one `step N time_ms X` line per rank and step, and in every rank's last NVTX step range (report and trace) one
cuDNN forward, one weight-gradient and one data-gradient convolution kernel per convolution layer of the model
(the first layer has no data gradient: the images need none), counted as compute; with --compare-native the same
run with torch.backends.cudnn.enabled = False must be slower (PyTorch's im2col + GEMM path against cuDNN's
implicit GEMM on tensor cores, docs/costmodel.md "Convolutions"); with --ddp the report holds the gradient
all-reduces; with --compile the last step also holds Inductor's Triton kernels (each run compiles afresh).

    torch_resnet.py --genie BUILD/bin/genie --python .venv/bin/python --ranks N [--compare-native]
                    -- RESNET_ARGS...

Prints "Expectation ... / Actual ..." lines and "torch_resnet: N failed"; exit 0 only when all checks pass.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import torch_gpt  # noqa: E402  (its expect() and failure count)

expect = torch_gpt.expect
RESNET = os.path.join(ROOT, "examples", "pytorch", "resnet.py")
STEP = re.compile(r"^\[rank(\d+)\]: step (\d+) time_ms ([0-9.]+)")
# Convolution layers of torchvision's ResNets: the stem, two (basic) or three (bottleneck) per block, one
# downsample per stage after the first (and in the first stage of bottleneck ResNets).
CONVS = {"resnet18": 20, "resnet34": 36, "resnet50": 53, "resnet101": 104}
# The main kernel of each engine per pass (fakecuda/src/dnn/conv_engines.cpp).
PASSES = {
    "fprop": ("xmma_fprop_", "implicit_convolve_sgemm", "cudnn::winograd_nonfused::winograd_fprop"),
    "dgrad": ("xmma_dgrad_", "cudnn::detail::dgrad_engine", "cudnn::winograd_nonfused::winograd_dgrad"),
    "wgrad": ("xmma_wgrad_", "cudnn::detail::wgrad_alg0_engine"),
}

def run(args, resnet_args, report_dir):
    env = dict(os.environ)
    env["GENIE_HOST_CPU_SCALE"] = "0"  # host time = modelled API costs: step times are the GPUs'
    if "--compile" in resnet_args:  # compile afresh: Inductor's and Triton's caches in the run's own folders
        env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(report_dir + "-cache", "inductor")
        env["TRITON_CACHE_DIR"] = os.path.join(report_dir + "-cache", "triton")
    cmd = [args.genie, "run", "-n", str(args.ranks), "--device", "h200", "--stall-grace", "0.1", "--report",
           report_dir, "--", args.python, RESNET] + resnet_args
    print("run:", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    out = p.stdout + p.stderr
    print(out)
    times = {}
    for line in out.splitlines():
        m = STEP.match(line)
        if m:
            times[(int(m[1]), int(m[2]))] = float(m[3])
    return p.returncode, times


def last_step_kernels(report_dir, steps):
    """Per rank: the kernel names inside its last NVTX "step" range, and that range from the report."""
    with open(os.path.join(report_dir, "genie-report.json")) as f:
        report = json.load(f)
    with open(os.path.join(report_dir, "trace.json")) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    pids = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            m = re.match(r"rank (\d+)", e.get("args", {}).get("name", ""))
            if m:
                pids[e["pid"]] = int(m[1])
    last = {x["rank"]: x for x in report.get("ranges", []) if x["name"] == "step" and x["index"] == steps - 1}
    names = {r: [] for r in last}
    for e in events:
        if e.get("ph") != "X" or e.get("cat") != "kernel":
            continue
        r = pids.get(e.get("pid"))
        x = last.get(r)
        if x is not None and x["start_us"] - 0.01 <= e["ts"] and e["ts"] + e["dur"] <= x["end_us"] + 0.01:
            names[r].append(e["name"])
    return report, last, names


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--genie", required=True)
    p.add_argument("--python", required=True)
    p.add_argument("--ranks", type=int, required=True)
    p.add_argument("--compare-native", action="store_true")
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("resnet_args", nargs=argparse.REMAINDER)
    args = p.parse_args()
    resnet_args = [a for a in args.resnet_args if a != "--"]
    model = resnet_args[resnet_args.index("--model") + 1] if "--model" in resnet_args else "resnet50"
    steps = int(resnet_args[resnet_args.index("--steps") + 1]) if "--steps" in resnet_args else 5
    if not os.path.exists(args.python):
        expect("the PyTorch venv", False, "scripts/setup-venv.sh made it", f"{args.python} is missing")
        print(f"torch_resnet: {torch_gpt.failures} failed")
        return 1

    with tempfile.TemporaryDirectory() as tmp:
        rc, times = run(args, resnet_args, os.path.join(tmp, "cudnn"))
        expect("exit code", rc == 0, 0, rc)
        want = {(r, s) for r in range(args.ranks) for s in range(1, steps + 1)}
        expect("a step line per rank and step", set(times) == want, len(want), len(times))
        if rc != 0:
            print(f"torch_resnet: {torch_gpt.failures} failed")
            return 1
        report, last, names = last_step_kernels(os.path.join(tmp, "cudnn"), steps)
        for r in range(args.ranks):
            got = {p: sum(1 for n in names.get(r, []) if n.startswith(PASSES[p])) for p in PASSES}
            n = CONVS[model]
            expect(f"rank {r}: cuDNN convolution kernels in the last step (fprop, wgrad, dgrad)",
                   got == {"fprop": n, "wgrad": n, "dgrad": n - 1}, f"{n}, {n}, {n - 1}", got)
            x = last.get(r)
            expect(f"rank {r}: the last step's compute", x is not None and x["compute_us"] > 0, "> 0",
                   x["compute_us"] if x else None)
            if "--compile" in resnet_args:  # batch norm and activations fused into Triton kernels
                triton = sum(1 for n in names.get(r, []) if n.startswith("triton_"))
                expect(f"rank {r}: Inductor's Triton kernels in the last step", triton > 0, "> 0", triton)
        if "--ddp" in resnet_args:
            # One entry per rank and call (docs/report.md): the bucketed gradient all-reduces, on every rank.
            per_rank = [sum(1 for c in report.get("collectives", []) if c["op"] == "AllReduce" and c["rank"] == r)
                        for r in range(args.ranks)]
            expect("DDP's gradient all-reduces in the report, per rank", min(per_rank) >= steps, f">= {steps}",
                   per_rank)
        if args.compare_native:
            rc2, native = run(args, resnet_args + ["--no-cudnn"], os.path.join(tmp, "native"))
            expect("exit code without cuDNN", rc2 == 0, 0, rc2)
            a, b = times.get((0, steps)), native.get((0, steps))
            expect("cuDNN's step is faster than PyTorch's native convolutions", a is not None and b is not None and
                   a < b, "cuDNN < native", f"{a} ms vs {b} ms")
    print(f"torch_resnet: {torch_gpt.failures} failed")
    return 0 if torch_gpt.failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
