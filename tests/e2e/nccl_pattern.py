# SPDX-License-Identifier: Apache-2.0
"""The NCCL calls of a job, read from the shim's NCCL_DEBUG=TRACE lines, and checks that they follow the
communication pattern of a parallel training mode (DDP, FSDP, tensor parallel, pipeline parallel).

Input: the output of `genie run` with NCCL_DEBUG=TRACE. The shim (shim/src/nccl_debug.cpp) prints
  host:pid:tid [dev] NCCL TRACE ncclAllReduce: sendbuff P recvbuff P count N datatype D op O root R comm P [nranks=N] stream P
  host:pid:tid [dev] NCCL TRACE ncclSend: buff P count N datatype D peer R comm P [nranks=N] stream P
and `genie run` prefixes each line with `[rankN]: `. A call is the NCCL call a rank made (one line), in the
order that rank made it. Every check works on calls only (kinds, element counts, datatypes, communicator
sizes, peers), so the same checks run on the calls of genie-report.json (`from_report`: each rank's entries in
the order its stream reached them).

Command line: python3 nccl_pattern.py --mode ddp|fsdp|tp|pp [--steps N ...] TRACE_FILE   (exit 1 on mismatch)
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass

# ncclDataType_t and ncclRedOp_t values of nccl.h (NCCL 2.28).
DATATYPES = {0: "int8", 1: "uint8", 2: "int32", 3: "uint32", 4: "int64", 5: "uint64", 6: "float16", 7: "float32",
             8: "float64", 9: "bfloat16", 10: "fp8e4m3", 11: "fp8e5m2"}
DTYPE_BYTES = {"int8": 1, "uint8": 1, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "float16": 2, "float32": 4,
               "float64": 8, "bfloat16": 2, "fp8e4m3": 1, "fp8e5m2": 1}
REDOPS = {0: "sum", 1: "prod", 2: "max", 3: "min", 4: "avg"}

_PREFIX = r"^(?:\[rank(?P<rank>\d+)\]: )?\S+?:(?P<pid>\d+):\d+ \[-?\d+\] NCCL "
_COLL = re.compile(_PREFIX + r"TRACE nccl(?P<op>\w+): sendbuff \S+ recvbuff \S+ count (?P<count>\d+) "
                   r"datatype (?P<dt>\d+) op (?P<redop>\d+) root (?P<root>-?\d+) comm (?P<comm>\S+) "
                   r"\[nranks=(?P<nranks>\d+)\]")
_P2P = re.compile(_PREFIX + r"TRACE nccl(?P<op>Send|Recv): buff \S+ count (?P<count>\d+) datatype (?P<dt>\d+) "
                  r"peer (?P<peer>\d+) comm (?P<comm>\S+) \[nranks=(?P<nranks>\d+)\]")


@dataclass
class Call:
    """One NCCL call of one rank."""

    rank: int  # the job's rank (genie run's prefix), else the process id
    op: str  # AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AlltoAll, Send, Recv, ...
    count: int  # elements, as passed to NCCL (per rank for AllGather/ReduceScatter)
    dtype: str
    comm: str  # communicator handle, unique within the rank's process
    nranks: int
    redop: str = ""
    root: int = -1
    peer: int = -1  # Send/Recv: rank in the communicator

    @property
    def bytes(self):
        return self.count * DTYPE_BYTES[self.dtype]


def parse_trace(text: str) -> list[Call]:
    """The NCCL calls in the output of a job, in the order each rank made them."""
    calls = []
    for line in text.splitlines():
        m = _COLL.search(line)
        if m:
            calls.append(Call(_who(m), m["op"], int(m["count"]), DATATYPES[int(m["dt"])], m["comm"],
                              int(m["nranks"]), REDOPS.get(int(m["redop"]), m["redop"]), int(m["root"])))
            continue
        m = _P2P.search(line)
        if m:
            calls.append(Call(_who(m), m["op"], int(m["count"]), DATATYPES[int(m["dt"])], m["comm"],
                              int(m["nranks"]), peer=int(m["peer"])))
    return calls


# genie-report.json's datatype names (netsim's) -> the names above.
_REPORT_DTYPES = {"half": "float16", "float": "float32", "double": "float64", "f8e4m3": "fp8e4m3",
                  "f8e5m2": "fp8e5m2"}


def from_report(report: dict) -> list[Call]:
    """The calls of genie-report.json's `collectives`: a SendRecv entry is a Send on the sending rank and a Recv on
    the receiving one; each rank's calls in the order its streams reached them (ready time, then communicator and
    sequence number)."""
    sizes = {c["id"]: c["nranks"] for c in report["communicators"]}
    entries = sorted(report["collectives"], key=lambda e: (e["rank"], e["ready_us"], e["comm"], e["seq"]))
    calls = []
    for e in entries:
        dt = _REPORT_DTYPES.get(e["datatype"], e["datatype"])
        if e["op"] == "SendRecv":
            calls.append(Call(e["rank"], "Send" if e["direction"] == "send" else "Recv", e["count"], dt, e["comm"],
                              sizes[e["comm"]], peer=e["peer"]))
        else:
            calls.append(Call(e["rank"], e["op"], e["count"], dt, e["comm"], sizes[e["comm"]],
                              e.get("redop", ""), e.get("root", -1)))
    return calls


def _who(m):
    return int(m["rank"]) if m["rank"] is not None else int(m["pid"])


def by_rank(calls):
    out = defaultdict(list)
    for c in calls:
        out[c.rank].append(c)
    return dict(sorted(out.items()))


def summary(calls) -> str:
    """One line per rank: how many calls of each kind, per communicator size."""
    lines = []
    for rank, cs in by_rank(calls).items():
        kinds = Counter(f"{c.op}@{c.nranks}" for c in cs)
        lines.append(f"rank {rank}: " + ", ".join(f"{k} x{v}" for k, v in sorted(kinds.items())))
    return "\n".join(lines)


# ---- checks: each returns a list of problems (empty: the pattern holds) ------------------------------------


def _split_steps(seq, per_step_total):
    """Splits a sequence of counts into consecutive blocks that each sum to per_step_total."""
    blocks, cur, acc = [], [], 0
    for n in seq:
        cur.append(n)
        acc += n
        if acc == per_step_total:
            blocks.append(cur)
            cur, acc = [], 0
        elif acc > per_step_total:
            return None, cur
    return blocks, cur


def check_ddp(calls, world, steps, params, grad_dtype="float32"):
    """DDP: during each step every gradient bucket is all-reduced once on the data-parallel communicator, so
    each rank's gradient all-reduces (datatype grad_dtype) split into `steps` consecutive blocks whose element
    counts each sum to exactly the number of parameters. From the second step on the buckets are the same
    every step (DDP rebuilds them once, after the first)."""
    errs = []
    ranks = by_rank(calls)
    if len(ranks) != world:
        errs.append(f"expected NCCL calls from {world} ranks, got {len(ranks)}")
    for rank, cs in ranks.items():
        grads = [c.count for c in cs if c.op == "AllReduce" and c.nranks == world and c.dtype == grad_dtype]
        blocks, rest = _split_steps(grads, params)
        if blocks is None:
            errs.append(f"rank {rank}: gradient all-reduces do not add up to {params} elements per step "
                        f"(a step's buckets overshoot at {rest})")
            continue
        if len(blocks) != steps or rest:
            errs.append(f"rank {rank}: {len(blocks)} steps of gradient all-reduces of {params} elements "
                        f"(+{sum(rest)} left over), expected {steps}")
        later = {tuple(b) for b in blocks[1:]}
        if len(later) > 1:
            errs.append(f"rank {rank}: the gradient buckets differ between steps 2..{steps}: {sorted(later)}")
    return errs


def check_fsdp(calls, world, steps, units, unit_numel, param_dtype="bfloat16", reduce_dtype="float32"):
    """FSDP2 (fully_shard on each of `units` modules): per step, each unit all-gathers its parameters in
    the forward (datatype param_dtype, each rank contributing its shard) and again in the backward if it was
    resharded after the forward, and reduce-scatters its gradients once (reduce_dtype). `unit_numel` is the
    list of the units' parameter counts; FSDP pads each parameter's first dimension to a multiple of the
    world size, so a unit's reduce-scatter moves at least its numel and at most 1% (+64 rows) more."""
    errs = []
    ranks = by_rank(calls)
    if len(ranks) != world:
        errs.append(f"expected NCCL calls from {world} ranks, got {len(ranks)}")
    for rank, cs in ranks.items():
        ag = [c for c in cs if c.op == "AllGather" and c.nranks == world and c.dtype == param_dtype]
        rs = [c for c in cs if c.op == "ReduceScatter" and c.nranks == world and c.dtype == reduce_dtype]
        if len(rs) != steps * units:
            errs.append(f"rank {rank}: {len(rs)} gradient reduce-scatters, expected {steps} steps x {units} units")
        if not steps * units <= len(ag) <= 2 * steps * units or len(ag) % steps:
            errs.append(f"rank {rank}: {len(ag)} parameter all-gathers, expected between one and two per unit "
                        f"and step ({steps} x {units}), the same number every step")
        want = sorted(unit_numel)
        got = sorted(c.count * world for c in rs[:units])
        for w, g in zip(want, got):
            if not w <= g <= w + w // 100 + world * 64:  # FSDP pads each parameter's rows to a multiple of world
                errs.append(f"rank {rank}: a reduce-scatter of {g} elements in all does not match a unit of {w} "
                            f"parameters (units {want}, reduce-scatters {got})")
                break
    return errs


def check_tp(calls, world, tp, steps, layers, seq, batch, embd, act_dtype="bfloat16"):
    """Megatron tensor parallel with sequence parallel on communicators of `tp` ranks. Per step: each
    block all-gathers the sequence before attention and before the MLP and reduce-scatters after each, in
    the forward, and does the reverse in the backward (4 all-gathers + 4 reduce-scatters of seq x batch x embd
    elements in all); the embedding adds a reduce-scatter (forward) and an all-gather (backward), the output
    layer an all-gather and a reduce-scatter; the vocab-parallel cross-entropy all-reduces three times (max,
    target logit, sum of exponentials), the sequence-parallel gradients once and the gradient norm once."""
    errs = []
    ranks = by_rank(calls)
    if len(ranks) != world:
        errs.append(f"expected NCCL calls from {world} ranks, got {len(ranks)}")
    full = seq * batch * embd
    want_ag = want_rs = steps * (4 * layers + 2)
    for rank, cs in ranks.items():
        mine = [c for c in cs if c.nranks == tp]
        ag = [c for c in mine if c.op == "AllGather" and c.count * tp == full]
        rs = [c for c in mine if c.op == "ReduceScatter" and c.count * tp == full]
        ar = [c for c in mine if c.op == "AllReduce"]
        if len(ag) != want_ag:
            errs.append(f"rank {rank}: {len(ag)} sequence all-gathers of {full} elements, expected {want_ag} "
                        f"({steps} steps x (4 x {layers} layers + 2))")
        if len(rs) != want_rs:
            errs.append(f"rank {rank}: {len(rs)} sequence reduce-scatters of {full} elements, expected {want_rs}")
        maxes = [c for c in ar if c.redop == "max" and c.count == seq * batch]
        if len(maxes) != steps:
            errs.append(f"rank {rank}: {len(maxes)} all-reduce(max) of the cross-entropy, expected {steps}")
        if len(ar) < 5 * steps:
            errs.append(f"rank {rank}: {len(ar)} all-reduces, expected at least 5 per step ({5 * steps})")
        block_dtypes = Counter(c.dtype for c in ag + rs)
        if act_dtype and set(block_dtypes) - {act_dtype, "float32"}:
            errs.append(f"rank {rank}: sequence collectives in unexpected datatypes {dict(block_dtypes)}")
    return errs


def check_pp(calls, world, pp, steps, microbatches, act_count, stage_of, act_dtype="float32"):
    """Pipeline parallel: per step and micro-batch, each stage but the last sends its activations to the
    next stage and each stage but the first receives them (forward); the gradients go the other way
    (backward). Every message has act_count elements of act_dtype, compared in bytes (point-to-point moves bytes:
    a receive may be posted with another datatype of the same size). `stage_of(rank)` gives a rank's stage."""
    errs = []
    act_bytes = act_count * DTYPE_BYTES[act_dtype]
    ranks = by_rank(calls)
    if len(ranks) != world:
        errs.append(f"expected NCCL calls from {world} ranks, got {len(ranks)}")
    for rank, cs in ranks.items():
        s = stage_of(rank)
        sends = [c for c in cs if c.op == "Send" and c.bytes == act_bytes]
        recvs = [c for c in cs if c.op == "Recv" and c.bytes == act_bytes]
        n = steps * microbatches * ((s > 0) + (s < pp - 1))
        if len(sends) != n or len(recvs) != n:
            errs.append(f"rank {rank} (stage {s}): {len(sends)} sends and {len(recvs)} receives of {act_count} "
                        f"elements, expected {n} of each ({steps} steps x {microbatches} micro-batches x "
                        f"{(s > 0) + (s < pp - 1)} neighbours)")
        other = [c for c in cs if c.op in ("Send", "Recv") and c.bytes != act_bytes]
        if other:
            errs.append(f"rank {rank}: {len(other)} point-to-point messages of other sizes, e.g. {other[0]}")
    return errs


def main(argv=None):
    p = argparse.ArgumentParser(description="check NCCL TRACE lines against a training pattern")
    p.add_argument("trace")
    p.add_argument("--summary", action="store_true", help="only print the calls per rank")
    args = p.parse_args(argv)
    with open(args.trace, errors="replace") as f:
        calls = parse_trace(f.read())
    print(summary(calls))
    return 0


if __name__ == "__main__":
    sys.exit(main())
