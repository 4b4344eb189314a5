# SPDX-License-Identifier: Apache-2.0
"""torch.profiler on Genie's CUPTI (docs/profiler.md): a small MLP (optionally DDP) profiled with
activities=[CPU, CUDA]; the Chrome trace is written per rank. Run it under `genie run`, then check the traces against
Genie's report with --check: kernels on GPU rows, linked to CPU ops, with the report's durations and gaps.

  genie run -n 1 --report R -- python profiler_timeline.py --out T       # T/trace_rank0.json
  python profiler_timeline.py --check T R                                 # "profiler_timeline: 0 failed"
"""
import argparse
import json
import os
import sys

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"FAIL {what}", flush=True)


def run(args):
    import torch
    import torch.nn as nn
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    torch.cuda.set_device(dev)
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 256)).to(dev)
    if args.ddp:
        import torch.distributed as dist
        dist.init_process_group("nccl", device_id=dev)
        model = nn.parallel.DistributedDataParallel(model, device_ids=[dev.index])
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(64, 256)

    def step():
        xs = x.to(dev, non_blocking=False)
        loss = model(xs).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=False)

    for _ in range(2):
        step()
    torch.cuda.synchronize()
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(2):
            step()
        torch.cuda.synchronize()
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"trace_rank{rank}.json")
    prof.export_chrome_trace(path)
    trace = json.load(open(path))
    ev = trace["traceEvents"]
    kernels = [e for e in ev if e.get("cat") == "kernel"]
    check(len(kernels) > 0, "the trace has kernels")
    check(any(e.get("cat") == "gpu_memcpy" for e in ev), "the trace has copies")
    check(any(e.get("cat") == "cuda_runtime" and e.get("name") == "cudaLaunchKernel" for e in ev),
          "the trace has cudaLaunchKernel calls")
    linked = [e for e in kernels if e.get("args", {}).get("External id", 0)]
    check(len(linked) == len(kernels), f"every kernel is linked to a CPU op ({len(linked)} of {len(kernels)})")
    if args.ddp:
        check(any(e["name"].startswith("ncclDevKernel_AllReduce") for e in kernels), "NCCL kernels are on the GPU rows")
    if args.ddp:
        import torch.distributed as dist
        dist.destroy_process_group()
    print(f"profiler_timeline rank {rank}: {len(kernels)} kernels, {len(failures)} failed", flush=True)
    return 0 if not failures else 1


def gpu_ops(events, cats):
    return sorted((e for e in events if e.get("ph") == "X" and e.get("cat") in cats), key=lambda e: e["ts"])


def check_against_report(trace_dir, report_dir):
    genie = json.load(open(os.path.join(report_dir, "trace.json")))["traceEvents"]
    ranks = sorted(int(f[len("trace_rank"):-len(".json")]) for f in os.listdir(trace_dir) if f.startswith("trace_rank"))
    check(len(ranks) > 0, "traces to check")
    for r in ranks:
        torch_k = gpu_ops(json.load(open(os.path.join(trace_dir, f"trace_rank{r}.json")))["traceEvents"], {"kernel"})
        genie_k = gpu_ops([e for e in genie if e.get("pid") == r], {"kernel", "collective", "p2p"})
        # CUPTI names a collective ncclDevKernel_<name> (as NCCL's kernels are named); the report names it <name>.
        names = [e["name"].removeprefix("ncclDevKernel_") for e in torch_k]
        # The profiled kernels are the report's in the same order: find where they start (the last match).
        at = [o for o in range(len(genie_k) - len(names) + 1)
              if [e["name"] for e in genie_k[o:o + len(names)]] == names]
        check(len(at) > 0, f"rank {r}: the {len(names)} profiled kernels are a run of the report's kernels")
        if not at or len(names) < 2:
            continue
        g = genie_k[at[-1]:at[-1] + len(names)]
        # Kineto converts CUPTI's TSC ticks with its own TSC->Unix clock fit: one scale for every time, fitted here
        # from the span; beyond it every start and duration must be the report's to the ns of the trace's rounding.
        span_t = torch_k[-1]["ts"] - torch_k[0]["ts"]
        span_g = g[-1]["ts"] - g[0]["ts"]
        scale = span_t / span_g if span_g > 0 else 1.0
        check(abs(scale - 1) < 2e-3, f"rank {r}: Kineto's clock scale {scale:.6f} is 1 within 0.2%")
        bad = 0
        for t, e in zip(torch_k, g):
            dt = (t["ts"] - torch_k[0]["ts"]) - scale * (e["ts"] - g[0]["ts"])
            dd = t["dur"] - scale * e["dur"]
            if abs(dt) > 0.004 or abs(dd) > 0.004:
                bad += 1
                if bad <= 5:
                    print(f"rank {r}: {t['name'][:60]} torch ts+{t['ts'] - torch_k[0]['ts']:.3f} dur {t['dur']:.3f}"
                          f" / report ts+{e['ts'] - g[0]['ts']:.3f} dur {e['dur']:.3f}", flush=True)
        check(bad == 0, f"rank {r}: {bad} of {len(g)} kernels differ from the report's start or duration")
        print(f"profiler_timeline check rank {r}: {len(g)} kernels match the report (scale {scale:.7f})", flush=True)
    print(f"profiler_timeline: {len(failures)} failed", flush=True)
    return 0 if not failures else 1


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--out", default="profiler_traces")
    p.add_argument("--ddp", action="store_true")
    p.add_argument("--check", nargs=2, metavar=("TRACE_DIR", "REPORT_DIR"))
    a = p.parse_args()
    sys.exit(check_against_report(*a.check) if a.check else run(a))
