#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""e2e test of examples/pytorch/gpt.py under `genie run`: the exit code, one `step N time_ms X` line per rank
and step, the report's per-step breakdown (gpt.py's NVTX "step" ranges in genie-report.json: one per rank and
step, as long as the step the CUDA events measured, compute + exposed communication + idle adding up), the NCCL
calls against the mode's communication pattern (tests/e2e/nccl_pattern.py, both from the shim's NCCL_DEBUG=TRACE
lines and from the report's `collectives`, which must be the same calls), and with --twice the same step times in a second run (virtual clock,
GENIE_HOST_CPU_SCALE=0 so host CPU time does not enter, GENIE_FAKECUDA_QUERY_WAIT_MS=2000 so no query answers
before its collective is resolved).

    torch_gpt.py --genie BUILD/bin/genie --python .venv/bin/python --ranks N [--pattern ddp|fsdp|tp|pp]
                 [--twice] -- GPT_ARGS...

Prints "Expectation ... / Actual ..." lines and "torch_gpt: N failed"; exit 0 only when all checks pass.
Fails (does not skip) when the Python environment is missing.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccl_pattern  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GPT = os.path.join(ROOT, "examples", "pytorch", "gpt.py")
STEP = re.compile(r"^\[rank(\d+)\]: step (\d+) time_ms ([0-9.]+)")
HEADER = re.compile(r"^\[rank0\]: gpt\.py: \S+ params (\d+) .* layers (\d+) heads \d+ embd (\d+) vocab \d+ "
                    r"batch (\d+) seq (\d+) amp (\S+) world (\d+) dp (\d+) tp (\d+) pp (\d+)")
MICRO = re.compile(r"^\[rank0\]: gpt\.py: pipeline micro-batches (\d+)")
failures = 0


def expect(what, ok, expected, actual):
    global failures
    print(f"{'ok  ' if ok else 'FAIL'} {what}: Expectation {expected} / Actual {actual}", flush=True)
    failures += 0 if ok else 1
    return ok


def check_python(python, version="2.11.0"):
    """A venv that scripts/setup-venv.sh makes, with a CUDA 13 build of torch `version`."""
    if not os.path.exists(python):
        return (f"{python} does not exist: the PyTorch tests need the .venv that scripts/setup-venv.sh makes "
                "(./scripts/test.sh runs it; it needs PyPI)")
    r = subprocess.run([python, "-c", "import torch; print(torch.__version__, torch.version.cuda)"],
                       capture_output=True, text=True)
    if r.returncode != 0 or not r.stdout.startswith(version) or " 13." not in r.stdout:
        return f"{python} lacks torch {version} (CUDA 13): {r.stdout.strip()} {r.stderr.strip()[-300:]}"
    return None


def run(args, gpt_args, trace, report_dir=None):
    env = dict(os.environ)
    env["GENIE_HOST_CPU_SCALE"] = "0"  # host time = modelled API costs: the same every run
    # A query (cudaEventQuery by the caching allocator, FSDP) on a collective still waiting for peers waits this
    # long in wall time for them before it answers not-ready; long enough, it answers from virtual time only.
    env["GENIE_FAKECUDA_QUERY_WAIT_MS"] = "2000"
    env.setdefault("TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC", "1000")
    if trace:
        env["NCCL_DEBUG"] = "TRACE"
    # --stall-grace 0.1: a job whose threads all sleep (PyTorch's often do) is moved on by the coordinator's
    # probe at once; the stall rule is left for a rank that runs outside Genie without moving its host time, which
    # these tests should not wait 2 s for. Relaxed steps are counted in the report; the checks still apply.
    report = ["--report", report_dir] if report_dir else ["--no-report"]
    cmd = [args.genie, "run", "-n", str(args.ranks), "--device", "h200", "--stall-grace", "0.1"] + report + [
        "--", args.python, GPT] + gpt_args
    print("run:", " ".join(cmd), flush=True)
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    out = p.stdout + p.stderr
    for line in out.splitlines():  # the log, without the (many) per-call trace lines
        if " NCCL TRACE " not in line:
            print(line)
    return p.returncode, out


def step_times(out):
    times = {}
    for line in out.splitlines():
        m = STEP.match(line)
        if m:
            times[(int(m[1]), int(m[2]))] = m[3]
    return times


def check_steps(report, times, ranks, steps):
    """gpt.py wraps each step in an NVTX range "step": the report has one per rank and step, covering the step the
    CUDA events measured (the range also holds the host's API calls before the first event and after the last;
    the first step's also the tail of the set-up work still on the stream when it began, e.g. DDP's parameter
    broadcast), and its compute, exposed communication and idle time add up to it (copies may overlap either)."""
    ranges = [x for x in report.get("ranges", []) if x["name"] == "step"]
    got = sorted((x["rank"], x["index"]) for x in ranges)
    want = [(r, i) for r in range(ranks) for i in range(steps)]
    expect("NVTX step ranges in the report (rank, index)", got == want, f"{len(want)} ranges", f"{len(got)}: {got[:8]}")
    bad_time, bad_sum = [], []
    for x in ranges:
        ev = times.get((x["rank"], x["index"] + 1))
        if ev is not None:
            ev_us = float(ev) * 1e3
            # The event time is printed to 1 us; the range may exceed it by the host's own API costs only.
            upper = ev_us * 1.01 + 100.0 if x["index"] > 0 else float("inf")
            if not (ev_us - 1.0 <= x["time_us"] <= upper):
                bad_time.append(f"rank {x['rank']} step {x['index'] + 1}: range {x['time_us']} us, events {ev_us} us")
        lo = x["compute_us"] + x["exposed_communication_us"] + x["idle_us"]
        if not (lo - 0.01 <= x["time_us"] <= lo + x["copy_us"] + 0.01):
            bad_sum.append(f"rank {x['rank']} step {x['index'] + 1}: {x}")
    expect("each step range is the step the CUDA events measured", not bad_time,
           "at least the events' time; from step 2 within 1% + 100 us",
           "; ".join(bad_time[:4]) or "all")
    expect("compute + exposed communication + idle = the step", not bad_sum, "all", "; ".join(bad_sum[:2]) or "all")
    totals = {t["name"]: t for t in report.get("range_totals", [])}
    if "step" in totals:
        t = totals["step"]
        print(f"report: step ranges: mean {t['mean_time_us']:.1f} us = compute {t['mean_compute_us']:.1f} + "
              f"exposed communication {t['mean_exposed_communication_us']:.1f} + idle {t['mean_idle_us']:.1f} us")


def check_kernels(trace, report, prefix, steps, ranks):
    """Kernels whose names start with `prefix` (Inductor's Triton kernels: "triton_") run in the last step of every
    rank: the trace has them inside the rank's last NVTX step range, on a device row, with their modelled
    durations, and the report counts them as compute. With mode="reduce-overhead" the last step is a CUDA graph
    replay, so this checks that a graph's kernels are traced and counted (OpSpec::parts)."""
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    last = {x["rank"]: x for x in report.get("ranges", []) if x["name"] == "step" and x["index"] == steps - 1}
    pids = {}
    for e in events:  # process_name metadata: "rank R ..." per trace process
        if e.get("ph") == "M" and e.get("name") == "process_name":
            m = re.match(r"rank (\d+)", e.get("args", {}).get("name", ""))
            if m:
                pids[e["pid"]] = int(m[1])
    found, bad = {}, []
    for e in kernels:
        r = pids.get(e.get("pid"))
        x = last.get(r)
        if x is None or not e.get("name", "").startswith(prefix):
            continue
        if x["start_us"] - 0.01 <= e["ts"] and e["ts"] + e["dur"] <= x["end_us"] + 0.01:
            found[r] = found.get(r, 0) + 1
    for r in range(ranks):
        x = last.get(r)
        if found.get(r, 0) == 0:
            bad.append(f"rank {r}: none")
        elif x["compute_us"] <= 0:
            bad.append(f"rank {r}: compute {x['compute_us']} us")
    expect(f"{prefix}* kernels in each rank's last step, counted as compute", not bad and found,
           f"some on each of {ranks} ranks", "; ".join(bad) or f"{found}")


def check_pattern(mode, out, h, steps, micro, report):
    traced = nccl_pattern.parse_trace(out)
    print(nccl_pattern.summary(traced))
    reported = nccl_pattern.from_report(report) if report else []
    # ncclBcast is ncclBroadcast in place: the report names the collective, Broadcast. A message's count and
    # datatype in the report are the sender's, so a receive posted as another datatype compares by size.
    def key(c):
        p2p = c.op in ("Send", "Recv")
        return (c.rank, "Broadcast" if c.op == "Bcast" else c.op, c.bytes if p2p else c.count,
                "bytes" if p2p else c.dtype, c.nranks, c.peer)
    diff = (Counter(map(key, traced)) - Counter(map(key, reported))) + (
        Counter(map(key, reported)) - Counter(map(key, traced)))
    expect("the report's collectives are the traced NCCL calls", report and not diff, "the same calls",
           f"{sum(diff.values())} differ: {list(diff)[:4]}" if diff else "the same calls")
    for source, calls in (("NCCL calls (TRACE)", traced), ("report's collectives", reported)):
        _check_mode(mode, source, calls, h, steps, micro)


def _check_mode(mode, source, calls, h, steps, micro):
    world, dp, tp, pp = h["world"], h["dp"], h["tp"], h["pp"]
    if mode == "ddp":
        if tp * pp != 1:
            raise SystemExit("--pattern ddp checks plain data parallelism (no --tp/--pp)")
        errs = nccl_pattern.check_ddp(calls, world, steps, h["params"])
    elif mode == "fsdp":
        units = h["layers"] + 1  # fully_shard on each block and on the root
        C, L = h["embd"], h["layers"]
        block = 12 * C * C + 13 * C
        errs = nccl_pattern.check_fsdp(calls, world, steps, units, [block] * L + [h["params"] - L * block],
                                       param_dtype="bfloat16" if h["amp"] == "bf16" else "float32")
    elif mode == "tp":
        errs = nccl_pattern.check_tp(calls, world, tp, steps, h["layers"], h["seq"], h["batch"], h["embd"])
    elif mode == "pp":
        act = (h["seq"] // tp) * (h["batch"] // micro) * h["embd"]
        errs = nccl_pattern.check_pp(calls, world, pp, steps, micro, act, lambda r: r // (tp * dp))
    else:
        raise SystemExit(f"unknown pattern {mode}")
    expect(f"{source} follow the {mode} pattern", not errs, "no deviation", "; ".join(errs) or "none")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--genie", required=True)
    p.add_argument("--python", required=True)
    p.add_argument("--ranks", type=int, required=True)
    p.add_argument("--pattern")
    p.add_argument("--twice", action="store_true")
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("--torch-version", default="2.11.0", help="the torch the venv must have")
    p.add_argument("--kernels", help="a kernel name prefix that must appear in each rank's last step (e.g. triton_)")
    p.add_argument("gpt_args", nargs=argparse.REMAINDER)
    args = p.parse_args()
    gpt_args = args.gpt_args[1:] if args.gpt_args[:1] == ["--"] else args.gpt_args
    problem = check_python(args.python, args.torch_version)
    if problem:
        print(f"FAIL python environment: {problem}")
        print("torch_gpt: 1 failed")
        return 1
    steps = int(gpt_args[gpt_args.index("--steps") + 1]) if "--steps" in gpt_args else 5

    # torch.compile: a cache of this test's own, so the run compiles (a warm cache would skip what is tested) and
    # tests running side by side do not share one.
    cache_dir = None
    if "--compile" in gpt_args and "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
        cache_dir = tempfile.mkdtemp(prefix="torch_gpt_inductor_")
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
        os.environ["TRITON_CACHE_DIR"] = os.path.join(cache_dir, "triton")
    report_dir = tempfile.mkdtemp(prefix="torch_gpt_report_")
    rc, out = -1, ""
    try:
        rc, out = run(args, gpt_args, trace=bool(args.pattern), report_dir=report_dir)
        with open(os.path.join(report_dir, "genie-report.json")) as f:
            report = json.load(f)
        if args.kernels:
            with open(os.path.join(report_dir, "trace.json")) as f:
                trace = json.load(f)
    except (OSError, ValueError) as e:
        report = None
        expect("genie-report.json", False, "written", str(e))
    finally:
        shutil.rmtree(report_dir, ignore_errors=True)
    expect("genie run exit code", rc == 0, 0, rc)
    times = step_times(out)
    expect("step lines (ranks x steps)", len(times) == args.ranks * steps, args.ranks * steps, len(times))
    if report:
        check_steps(report, times, args.ranks, steps)
        if args.kernels:
            check_kernels(trace, report, args.kernels, steps, args.ranks)
    m = next((HEADER.match(line) for line in out.splitlines() if HEADER.match(line)), None)
    expect("gpt.py header line", m is not None, "present", "present" if m else "missing")
    if m and args.pattern:
        keys = ["params", "layers", "embd", "batch", "seq", "amp", "world", "dp", "tp", "pp"]
        h = {k: (v if k == "amp" else int(v)) for k, v in zip(keys, m.groups())}
        mm = next((MICRO.match(line) for line in out.splitlines() if MICRO.match(line)), None)
        micro = int(mm[1]) if mm else 1
        check_pattern(args.pattern, out, h, steps, micro, report)
    if args.twice and rc == 0:
        rc2, out2 = run(args, gpt_args, trace=False)
        times2 = step_times(out2)
        expect("second run exit code", rc2 == 0, 0, rc2)
        diff = [f"rank {r} step {s}: {t} vs {times2.get((r, s))}" for (r, s), t in sorted(times.items())
                if times2.get((r, s)) != t]
        expect("the same step times in a second run (virtual clock)", not diff and times2, "identical",
               "; ".join(diff[:6]) or "identical")
    if cache_dir:
        shutil.rmtree(cache_dir, ignore_errors=True)
    print(f"torch_gpt: {failures} failed")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
