#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks of genie run's report for the e2e tests (standard library only).

  report_tool.py check DIR [--calls N] [--ranks N]   schema of genie-report.json, validity of trace.json
  report_tool.py same DIR1 DIR2                      the virtual timelines of two runs are identical
  report_tool.py expect DIR EXPR                     EXPR (Python, `r` = the report) is true
  report_tool.py html FILE [--png OUT]               headless Chromium renders the page's charts
Every failure prints "FAIL <what>" and exits 1.
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

FAILS = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL " + msg)


def load(d):
    p = os.path.join(d, "genie-report.json") if os.path.isdir(d) else d
    with open(p) as f:
        return json.load(f)


BUSBW = {"AllReduce": lambda n: 2 * (n - 1) / n, "AllGather": lambda n: (n - 1) / n,
         "ReduceScatter": lambda n: (n - 1) / n, "AlltoAll": lambda n: (n - 1) / n, "Gather": lambda n: (n - 1) / n,
         "Scatter": lambda n: (n - 1) / n, "Broadcast": lambda n: 1.0, "Reduce": lambda n: 1.0,
         "SendRecv": lambda n: 1.0}


def check(d, calls=None, ranks=None):
    r = load(d)
    if r.get("schema") != "genie-report" or r.get("version") != 1:
        fail("schema/version: %r %r" % (r.get("schema"), r.get("version")))
    for k, t in (("job", dict), ("coordinator", dict), ("communicators", list), ("collectives", list),
                 ("ranks", list), ("totals", dict), ("links", dict)):
        if not isinstance(r.get(k), t):
            fail("$.%s is not a %s" % (k, t.__name__))
    if FAILS:
        return
    comms = {c["id"]: c for c in r["communicators"]}
    groups = {}
    for i, c in enumerate(r["collectives"]):
        where = "$.collectives[%d]" % i
        for k in ("rank", "comm", "seq", "op", "bytes", "ready_us", "start_us", "end_us", "time_us", "algbw_gbps",
                  "busbw_gbps", "datatype"):
            if k not in c:
                fail("%s.%s missing" % (where, k))
                return
        if c["comm"] not in comms:
            fail("%s.comm %s is not a communicator" % (where, c["comm"]))
        if c["end_us"] < c["start_us"] or abs(c["time_us"] - (c["end_us"] - c["start_us"])) > 0.002:
            fail("%s: end %s start %s time %s" % (where, c["end_us"], c["start_us"], c["time_us"]))
        if c["ready_us"] > c["start_us"] + 0.001 and "late_us" not in c:
            fail("%s: ready %s after start %s" % (where, c["ready_us"], c["start_us"]))
        n = comms[c["comm"]]["nranks"] if c["op"] != "SendRecv" else 2
        if c["time_us"] > 0:
            algbw = c["bytes"] / (c["time_us"] * 1e3)
            if not math.isclose(c["algbw_gbps"], algbw, rel_tol=1e-2, abs_tol=2e-3):
                fail("%s: algbw %s, bytes/time gives %s" % (where, c["algbw_gbps"], algbw))
            if not math.isclose(c["busbw_gbps"], c["algbw_gbps"] * BUSBW[c["op"]](n), rel_tol=1e-2, abs_tol=2e-3):
                fail("%s: busbw %s != algbw %s x factor" % (where, c["busbw_gbps"], c["algbw_gbps"]))
        if c["op"] == "SendRecv":  # one message: (src, dst) from whichever side this entry is
            src, dst = (c["rank"], c["peer"]) if c.get("direction") == "send" else (c["peer"], c["rank"])
            key = (c["comm"], c["seq"], c["op"], src, dst)
        else:
            key = (c["comm"], c["seq"], c["op"])
        groups.setdefault(key, []).append(c)
    for k, g in groups.items():
        if any("late_us" in c or "error" in c for c in g):
            continue
        if abs(max(c["ready_us"] for c in g) - g[0]["start_us"]) > 0.002:
            fail("call %s: start %s is not the last arrival %s" % (k, g[0]["start_us"], max(c["ready_us"] for c in g)))
        if len(set((c["start_us"], c["end_us"]) for c in g)) != 1:
            fail("call %s: ranks disagree on start/end" % (k,))
    if calls is not None and len(groups) != calls:
        fail("expected %d calls, found %d" % (calls, len(groups)))
    if ranks is not None and len(r["ranks"]) != ranks:
        fail("expected %d ranks in $.ranks, found %d" % (ranks, len(r["ranks"])))
    for i, k in enumerate(r["ranks"]):
        span = k["end_us"] - k["begin_us"]
        if k["exposed_communication_us"] > k["communication_us"] + 0.002:
            fail("$.ranks[%d]: exposed communication exceeds communication" % i)
        if k["idle_us"] > span + 0.002 or k["compute_us"] > span + 0.002 or k["communication_us"] > span + 0.002:
            fail("$.ranks[%d]: a part exceeds the span %s" % (i, span))
    # trace.json
    with open(os.path.join(d, "trace.json")) as f:
        t = json.load(f)
    ev = t.get("traceEvents")
    if not isinstance(ev, list) or not ev:
        fail("trace.json: no traceEvents")
        return
    flows = {}
    slices = 0
    for i, e in enumerate(ev):
        ph = e.get("ph")
        if ph not in ("X", "M", "s", "t", "f", "C"):
            fail("trace.json: event %d has phase %r" % (i, ph))
        if ph == "X":
            slices += 1
            if e["ts"] < 0 or e["dur"] < 0 or "pid" not in e or "tid" not in e or not e.get("name"):
                fail("trace.json: bad slice %r" % e)
        if ph in ("s", "t", "f"):
            flows.setdefault(e["id"], []).append(ph)
        if ph == "C" and not all(isinstance(v, (int, float)) for v in e["args"].values()):
            fail("trace.json: counter with non-numeric args %r" % e)
    for i, phs in flows.items():
        if phs.count("s") != 1 or phs.count("f") != 1:
            fail("trace.json: flow %s has phases %s" % (i, phs))
    if slices == 0:
        fail("trace.json: no slices")


def timeline(r):
    return ([(c["rank"], c["comm"], c["seq"], c["op"], c["bytes"], c["ready_us"], c["start_us"], c["end_us"])
             for c in r["collectives"]],
            [(k["rank"], k["compute_us"], k["communication_us"], k["exposed_communication_us"], k["idle_us"])
             for k in r["ranks"]])


def same(a, b):
    ta, tb = timeline(load(a)), timeline(load(b))
    if ta[0] != tb[0]:
        diff = [(x, y) for x, y in zip(ta[0], tb[0]) if x != y][:5]
        fail("collectives differ (%d vs %d entries), first differences: %s" % (len(ta[0]), len(tb[0]), diff))
    if ta[1] != tb[1]:
        fail("per-rank breakdowns differ: %s vs %s" % (ta[1], tb[1]))
    if not FAILS:
        print("same: %d collective entries and %d ranks identical" % (len(ta[0]), len(ta[1])))


def expect(d, expr):
    r = load(d)
    ok = eval(expr, {"r": r, "math": math})  # noqa: S307 - test-only expressions written in CMake
    print("expect: %s -> %s" % (expr, bool(ok)))
    if not ok:
        fail("expectation false: " + expr)


def html(path, png=None):
    exe = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not exe:
        fail("no chromium on PATH (Debian package chromium)")
        return
    url = "file://" + os.path.abspath(path)
    with tempfile.TemporaryDirectory() as prof:
        base = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + prof]
        out = subprocess.run(base + ["--dump-dom", url], capture_output=True, text=True, timeout=120)
        if png:
            subprocess.run(base + ["--screenshot=" + png, "--window-size=1200,1600", url], capture_output=True,
                           timeout=120)
    dom = out.stdout
    if 'data-rendered="ok' not in dom:
        status = dom[dom.find("render-status"):][:300] if "render-status" in dom else out.stderr[-500:]
        fail("charts did not render: " + status)
        return
    n = dom.count("<svg")
    print("html: Chromium rendered %d charts (%s)" % (n, dom[dom.find("charts rendered"):][:160]))


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    cmd = sys.argv[1]
    if cmd == "check":
        args = sys.argv[3:]
        calls = int(args[args.index("--calls") + 1]) if "--calls" in args else None
        ranks = int(args[args.index("--ranks") + 1]) if "--ranks" in args else None
        check(sys.argv[2], calls, ranks)
        if not FAILS:
            print("check: report and trace of %s are valid" % sys.argv[2])
    elif cmd == "same":
        same(sys.argv[2], sys.argv[3])
    elif cmd == "expect":
        expect(sys.argv[2], sys.argv[3])
    elif cmd == "html":
        png = sys.argv[sys.argv.index("--png") + 1] if "--png" in sys.argv else None
        html(sys.argv[2], png)
    else:
        print(__doc__)
        return 2
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
