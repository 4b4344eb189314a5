#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""e2e test of examples/megatron/train_gpt.py (megatron-core from PyPI, unmodified) under `genie run`: the exit
code, one `iteration N time_ms X update_ok 1` line per rank and iteration, and the NCCL calls of each iteration
(genie-report.json's `collectives`, bucketed by the example's NVTX "step" ranges) against the communication pattern
Megatron's design dictates for the layout (process groups in Megatron's default order tp-cp-ep-dp-pp):

* tensor parallelism (tp > 1, no sequence parallelism): per micro-batch, an all-reduce on the TP group for each
  row-parallel layer's forward output and each column-parallel layer's input gradient, 4 per transformer layer, plus
  the vocab-parallel embedding's forward output on the first stage, and on the last stage the vocab-parallel
  cross entropy's 3 (max, target logit, sum of exponentials) and the output layer's input gradient; full
  activation recomputation runs each layer's forward again in the backward (2 more per layer);
* pipeline parallelism (pp == 2, 1F1B): per micro-batch, one send and one receive on the PP group (activations
  forward, their gradients back) per boundary between consecutive stages (2 x chunks - 1 with the interleaved
  schedule's model chunks), and one all-reduce of the tied word-embedding gradients per iteration on the group of
  the first and last stages (with tp 1 also the gradient norm's: that group is then the model-parallel group);
* data parallelism: gradients reduced on the DP group every iteration, all-reduce without the distributed
  optimizer, reduce-scatter of gradients and all-gather of parameters with it;
* expert parallelism (MoE, all-to-all dispatcher): all-to-all exchanges (grouped sends and receives) on the EP group
  in every MoE layer, forward (dispatch, combine) and backward.
Every iteration must make the same calls on every communicator, and the coordinator must have relaxed no clock
step (the default stall grace). Fails (does not skip) when the venv is missing.

    torch_megatron.py --genie BUILD/bin/genie --python .venv/bin/python --ranks N -- TRAIN_GPT_ARGS...
Prints "Expectation ... / Actual ..." lines and "torch_megatron: N failed"; exit 0 only when all checks pass.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_gpt  # noqa: E402 - its expect() and failure count
from torch_gpt import expect  # noqa: E402

EXAMPLE = os.path.join(torch_gpt.ROOT, "examples", "megatron", "train_gpt.py")
ITER = re.compile(r"^\[rank(\d+)\]: iteration (\d+) time_ms ([0-9.]+) update_ok (\d)")
LAYOUT = re.compile(r"^\[rank0\]: train_gpt\.py: \S+ world (\d+) tp (\d+) pp (\d+) vpp (\d+) cp (\d+) ep (\d+) "
                    r"dp (\d+) micro_batches (\d+) layers (\d+) hidden \d+ experts (\d+) sp (\d) dist_opt (\d) "
                    r"recompute (\S+)")


def groups(world, tp, pp):
    """Megatron's dense groups (order tp-dp-pp, cp 1): rank = tp_rank + tp * (dp_rank + dp * pp_rank)."""
    dp = world // (tp * pp)
    pos = {r: (r % tp, (r // tp) % dp, r // (tp * dp)) for r in range(world)}
    tp_g = {r: tuple(q for q in range(world) if pos[q][1:] == pos[r][1:]) for r in range(world)}
    dp_g = {r: tuple(q for q in range(world) if (pos[q][0], pos[q][2]) == (pos[r][0], pos[r][2])) for r in range(world)}
    pp_g = {r: tuple(q for q in range(world) if pos[q][:2] == pos[r][:2]) for r in range(world)}
    return pos, tp_g, dp_g, pp_g


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--genie", required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("rest", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    example_args = args.rest[1:] if args.rest[:1] == ["--"] else args.rest
    if not os.path.exists(args.python):
        print(f"FAIL {args.python} does not exist: the torch tests need the venv scripts/setup-venv.sh makes")
        print("torch_megatron: 1 failed")
        return 1
    env = dict(os.environ)
    env["GENIE_HOST_CPU_SCALE"] = "0"  # host time = modelled API costs: the same every run
    with tempfile.TemporaryDirectory(prefix="genie-megatron-") as tmp:
        report = os.path.join(tmp, "report")
        # The default stall grace (2 s): the clock must know why it waits, so no step may be relaxed.
        cmd = [args.genie, "run", "-n", str(args.ranks), "--device", "h200", "--report", report, "--", args.python,
               EXAMPLE] + example_args
        print("running:", " ".join(cmd), flush=True)
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=840)
        out = p.stdout + p.stderr
        lines = out.splitlines()
        expect("genie run exit code", p.returncode == 0, 0, p.returncode)
        if p.returncode != 0:
            kept = [l for l in lines if "warnings.warn" not in l and "UserWarning" not in l]
            # The first error is the cause; what follows is mostly the other ranks failing because of it.
            first = next((i for i, l in enumerate(kept) if "Traceback" in l or "Error" in l or "error" in l), None)
            if first is not None:
                print("first error:\n" + "\n".join(kept[max(0, first - 5):first + 60]) + "\n[...]")
            # Every exception line (a traceback's last line) of every rank, wherever it is in the log.
            raised = [l for l in kept if re.match(r"^(\[rank\d+\]: )+[\w.]*(Error|Exception|Interrupt)\b", l)]
            if raised:
                print("exceptions raised:\n" + "\n".join(raised[:20]))
                # The innermost frames of the first one (the op that raised it).
                at = kept.index(raised[0])
                print("its innermost frames:\n" + "\n".join(kept[max(0, at - 30):at + 1]))
            print("\n".join(kept)[-6000:])
        layout = next((LAYOUT.match(l) for l in lines if LAYOUT.match(l)), None)
        if not expect("the example's layout line", layout is not None, "present", layout is not None):
            print(f"torch_megatron: {torch_gpt.failures} failed")
            return 1
        world, tp, pp, vpp, cp, ep, dp, micro, layers, experts, sp, dist_opt = map(int, layout.groups()[:-1])
        recompute = layout.groups()[-1]
        iters = Counter()
        for l in lines:
            m = ITER.match(l)
            if m:
                iters[int(m.group(1))] += 1
                if m.group(4) != "1":
                    expect(f"rank {m.group(1)} iteration {m.group(2)}: the optimizer step ran", False, 1, m.group(4))
        n_iter = max(iters.values()) if iters else 0
        expect("every rank printed every iteration", len(iters) == world and len(set(iters.values())) == 1,
               f"{world} ranks x {n_iter}", dict(iters))
        try:
            with open(os.path.join(report, "genie-report.json")) as f:
                rep = json.load(f)
        except (OSError, ValueError) as e:
            expect("genie-report.json", False, "readable", e)
            print(f"torch_megatron: {torch_gpt.failures} failed")
            return 1
    co = rep.get("coordinator", {})
    expect("no relaxed clock step (every wait of the clock explained)", co.get("relaxed_steps") == 0, 0,
           co.get("relaxed_steps"))
    expect("no late arrival", co.get("late_arrivals") == 0, 0, co.get("late_arrivals"))
    comms = {c["id"]: tuple(c["ranks"]) for c in rep["communicators"]}
    steps = defaultdict(list)  # rank -> [(start, end)] of its "step" ranges, in order
    for r in rep["ranges"]:
        if r["name"] == "step":
            steps[r["rank"]].append((r["start_us"], r["end_us"]))
    # calls[rank][step] = Counter((op, members))
    calls = defaultdict(lambda: defaultdict(Counter))
    for c in rep["collectives"]:
        for i, (s, e) in enumerate(sorted(steps[c["rank"]])):
            if s <= c["ready_us"] <= e:
                calls[c["rank"]][i][(c["op"], comms[c["comm"]])] += 1
                break
    pos, tp_g, dp_g, pp_g = groups(world, tp, pp)
    for r in range(world):
        per_step = [calls[r][i] for i in range(len(steps[r]))]
        expect(f"rank {r}: NVTX step ranges", len(per_step) == n_iter, n_iter, len(per_step))
        if not per_step:
            continue
        expect(f"rank {r}: every iteration makes the same NCCL calls", all(s == per_step[0] for s in per_step),
               dict(per_step[0]), [dict(s) for s in per_step if s != per_step[0]][:1])
        first, last = pos[r][2] == 0, pos[r][2] == pp - 1
        layers_here = layers // pp
        step = per_step[-1]
        if tp > 1 and not sp:
            want = micro * (4 * layers_here + (1 if first else 0) + (4 if last else 0))
            if recompute == "full":  # the backward recomputes each layer's forward: its 2 all-reduces again
                want += micro * 2 * layers_here
            if pp == 1:  # the TP group is then the model-parallel group: the gradient norm's all-reduce too
                want += 1
            expect(f"rank {r}: TP all-reduces per iteration on {tp_g[r]}", step[("AllReduce", tp_g[r])] == want,
                   want, step[("AllReduce", tp_g[r])])
        if tp > 1 and sp:
            # Sequence parallelism: per layer and micro-batch, forward 2 all-gathers (before the column-parallel
            # QKV and FC1) and 2 reduce-scatters (after the row-parallel projection and FC2); backward 2
            # reduce-scatters (the column-parallel layers' input gradients) and 4 all-gathers (their inputs again
            # for the weight gradients, the row-parallel layers' output gradients). All-reduces stay only where no
            # sequence dimension is split: the vocab-parallel embedding (first stage) and cross entropy's 3 (last),
            # per micro-batch, and once per iteration the layer norms' partial weight gradients.
            ag, rs = step[("AllGather", tp_g[r])], step[("ReduceScatter", tp_g[r])]
            expect(f"rank {r}: SP all-gathers per iteration on {tp_g[r]}", ag >= 6 * layers_here * micro,
                   f">= {6 * layers_here * micro}", ag)
            expect(f"rank {r}: SP reduce-scatters per iteration on {tp_g[r]}", rs >= 4 * layers_here * micro,
                   f">= {4 * layers_here * micro}", rs)
            want = micro * ((1 if first else 0) + (3 if last else 0)) + 1 + (1 if pp == 1 else 0)  # pp 1: + norm
            expect(f"rank {r}: TP all-reduces per iteration on {tp_g[r]} (embedding, cross entropy, norm weights)",
                   step[("AllReduce", tp_g[r])] == want, want, step[("AllReduce", tp_g[r])])
        others = {k: v for k, v in step.items() if k[1] != tp_g[r] and k[0] == "AllReduce" and tp > 1
                  and len(k[1]) == tp and k[1] not in (dp_g[r], pp_g[r])}
        expect(f"rank {r}: no all-reduce on another TP-sized group", not others, {}, others)
        if pp == 2:
            # Both stages take part in every boundary between consecutive (virtual) stages: pp x chunks - 1 of them,
            # crossed forward and backward by every micro-batch (interleaved 1F1B: chunks model chunks per rank).
            chunks = vpp or 1
            want = 2 * micro * (pp * chunks - 1)
            expect(f"rank {r}: PP sends and receives per iteration on {pp_g[r]}",
                   step[("SendRecv", pp_g[r])] == want, want, step[("SendRecv", pp_g[r])])
            # With tp 1 the model-parallel group is the PP group: the gradient norm's all-reduce (gradient clipping,
            # on in train_gpt.py) lands on it too.
            want = 1 + (1 if tp == 1 else 0)
            expect(f"rank {r}: tied-embedding all-reduce per iteration on the first and last stages {pp_g[r]}"
                   + (" (and the gradient norm's)" if tp == 1 else ""),
                   step[("AllReduce", pp_g[r])] == want, want, step[("AllReduce", pp_g[r])])
        if pp == 1:
            p2p = sum(v for k, v in step.items() if k[0] == "SendRecv")
            if not experts:
                expect(f"rank {r}: no point-to-point without pipeline or expert parallelism", p2p == 0, 0, p2p)
        if dist_opt:
            expect(f"rank {r}: distributed optimizer: gradients reduce-scattered on the DP group {dp_g[r]}",
                   step[("ReduceScatter", dp_g[r])] >= 1, ">= 1", step[("ReduceScatter", dp_g[r])])
            expect(f"rank {r}: distributed optimizer: parameters all-gathered on the DP group {dp_g[r]}",
                   step[("AllGather", dp_g[r])] >= 1, ">= 1", step[("AllGather", dp_g[r])])
        else:
            expect(f"rank {r}: gradients all-reduced on the DP group {dp_g[r]}", step[("AllReduce", dp_g[r])] >= 1,
                   ">= 1", step[("AllReduce", dp_g[r])])
        if experts:
            # Expert-parallel groups (order tp-cp-ep-dp-pp, tp 1, pp 1): consecutive blocks of ep ranks.
            ep_g = tuple(range(r - r % ep, r - r % ep + ep))
            a2a = step[("SendRecv", ep_g)]
            want = 4 * layers * micro
            expect(f"rank {r}: MoE all-to-all exchanges per iteration on the EP group {ep_g}", a2a >= want,
                   f">= {want}", a2a)
    print(f"torch_megatron: {torch_gpt.failures} failed")
    return 1 if torch_gpt.failures else 0


if __name__ == "__main__":
    sys.exit(main())
