#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""chakra_replay.py --genie BIN --ranks N --tolerance PCT [--device D] -- PROGRAM ARGS...

Records a job with `genie run --chakra` and replays its Chakra traces with `genie sim --workload` at the same size:
every rank's replayed end and, when the program marks steps with an NVTX range "step", its mean step time from the
second step on must agree with the live run's report (genie-report.json) within PCT percent (docs/chakra.md,
docs/validation.md). Prints one "Expectation ... / Actual ..." line per check and "chakra_replay: N failed"."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

failed = 0


def expect(what, ok, expected, actual):
    global failed
    print(f"{'ok  ' if ok else 'FAIL'} {what}: Expectation {expected} / Actual {actual}", flush=True)
    if not ok:
        failed += 1


def steady(v):
    v = v[1:] or v
    return sum(v) / len(v) if v else None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--genie", required=True)
    p.add_argument("--ranks", type=int, required=True)
    p.add_argument("--tolerance", type=float, required=True, help="percent")
    p.add_argument("--device", default="h200")
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    cmd = a.command[1:] if a.command and a.command[0] == "--" else a.command
    work = tempfile.mkdtemp(prefix="chakra_replay_")
    try:
        env = dict(os.environ)
        env["GENIE_HOST_CPU_SCALE"] = "0"  # host time = modelled API costs: the same every run
        env.setdefault("GENIE_FAKECUDA_QUERY_WAIT_MS", "2000")
        et, rep = os.path.join(work, "et"), os.path.join(work, "rep")
        run = [a.genie, "run", "-n", str(a.ranks), "--device", a.device, "--stall-grace", "0.1", "--chakra", et,
               "--report", rep, "--"] + cmd
        print("run:", " ".join(run), flush=True)
        r = subprocess.run(run, env=env, capture_output=True, text=True, timeout=1500)
        print("\n".join(l for l in (r.stdout + r.stderr).splitlines() if " NCCL TRACE " not in l)[-6000:])
        expect("genie run exit code", r.returncode == 0, 0, r.returncode)
        traces = sorted(f for f in os.listdir(et) if f.endswith(".et")) if os.path.isdir(et) else []
        expect("one trace per rank", len(traces) == a.ranks, a.ranks, len(traces))
        if r.returncode != 0 or len(traces) != a.ranks:
            return
        out = os.path.join(work, "replay.json")
        q = subprocess.run([a.genie, "sim", "--workload", et, "--json", out], capture_output=True, text=True,
                           timeout=600)
        print(q.stdout + q.stderr)
        expect("genie sim --workload exit code", q.returncode == 0, 0, q.returncode)
        if q.returncode != 0:
            return
        report = json.load(open(os.path.join(rep, "genie-report.json")))
        replay = json.load(open(out))
        live_end = {x["rank"]: x["end_us"] for x in report["ranks"]}
        live_steps = {}
        for x in report.get("ranges", []):
            if x["name"] == "step":
                live_steps.setdefault(x["rank"], []).append((x["index"], x["time_us"]))
        tol = a.tolerance / 100
        for k in replay["ranks"]:
            rank = k["rank"]
            le, re_ = live_end.get(rank), k["end_us"]
            expect(f"rank {rank} end (us), replay vs live within {a.tolerance}%",
                   le is not None and abs(re_ - le) <= tol * le, le, re_)
            if rank in live_steps:
                ls = steady([t for _, t in sorted(live_steps[rank])])
                rs = steady(k["ranges_us"].get("step", []))
                ok = rs is not None and abs(rs - ls) <= tol * ls
                dev = f"{100 * (rs - ls) / ls:+.4f}%" if rs is not None else "none"
                expect(f"rank {rank} mean step from the second (us), replay vs live within {a.tolerance}%", ok,
                       f"{ls:.3f}", f"{rs if rs is None else round(rs, 3)} ({dev})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
    print(f"chakra_replay: {failed} failed")
    sys.exit(1 if failed else 0)
