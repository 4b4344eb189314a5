#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Unit tests of nccl_pattern.py on synthetic NCCL_DEBUG=TRACE output: the parser reads the shim's lines, and
each pattern check accepts the pattern it describes and reports a deviation from it."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccl_pattern as P  # noqa: E402

DT = {"float32": 7, "bfloat16": 9}
OP = {"sum": 0, "max": 2, "avg": 4}


def coll(rank, op, count, dtype="float32", redop="sum", nranks=2, comm="0x10"):
    return (f"[rank{rank}]: vm:100{rank}:7 [{rank}] NCCL TRACE nccl{op}: sendbuff 0x1 recvbuff 0x2 count {count} "
            f"datatype {DT[dtype]} op {OP[redop]} root 0 comm {comm} [nranks={nranks}] stream 0x3")


def p2p(rank, op, count, peer, nranks=2):
    return (f"[rank{rank}]: vm:100{rank}:7 [{rank}] NCCL TRACE nccl{op}: buff 0x1 count {count} datatype 7 "
            f"peer {peer} comm 0x20 [nranks={nranks}] stream 0x3")


class Parse(unittest.TestCase):
    def test_reads_collectives_and_p2p_with_genie_prefix_and_without(self):
        text = "\n".join([coll(0, "AllReduce", 10, "bfloat16", "max"), p2p(1, "Send", 4, 0),
                          "vm:4242:7 [0] NCCL TRACE ncclAllGather: sendbuff 0x1 recvbuff 0x2 count 3 datatype 7 op 0 "
                          "root 0 comm 0x9 [nranks=4] stream 0x3", "unrelated line"])
        calls = P.parse_trace(text)
        self.assertEqual([(c.rank, c.op, c.count, c.dtype, c.nranks) for c in calls],
                         [(0, "AllReduce", 10, "bfloat16", 2), (1, "Send", 4, "float32", 2),
                          (4242, "AllGather", 3, "float32", 4)])
        self.assertEqual(calls[0].redop, "max")
        self.assertEqual(calls[1].peer, 0)
        self.assertEqual(calls[0].bytes, 20)


class FromReport(unittest.TestCase):
    def test_report_entries_become_each_ranks_calls_in_stream_order(self):
        report = {"communicators": [{"id": "c0", "nranks": 2}],
                  "collectives": [
                      {"rank": 1, "op": "AllReduce", "count": 8, "datatype": "half", "comm": "c0", "seq": 2,
                       "ready_us": 5.0, "redop": "sum", "root": -1},
                      {"rank": 1, "op": "SendRecv", "count": 64, "datatype": "uint8", "comm": "c0", "seq": 1,
                       "ready_us": 1.0, "direction": "recv", "peer": 0},
                      {"rank": 0, "op": "SendRecv", "count": 64, "datatype": "uint8", "comm": "c0", "seq": 1,
                       "ready_us": 0.5, "direction": "send", "peer": 1}]}
        calls = P.from_report(report)
        self.assertEqual([(c.rank, c.op, c.count, c.dtype, c.nranks, c.peer) for c in calls],
                         [(0, "Send", 64, "uint8", 2, 1), (1, "Recv", 64, "uint8", 2, 0),
                          (1, "AllReduce", 8, "float16", 2, -1)])
        self.assertEqual(calls[1].bytes, 64)

    def test_pipeline_messages_compare_in_bytes(self):
        report = {"communicators": [{"id": "c0", "nranks": 2}],
                  "collectives": [{"rank": r, "op": "SendRecv", "count": 64, "datatype": "uint8", "comm": "c0",
                                   "seq": i, "ready_us": float(i), "direction": d, "peer": 1 - r}
                                  for i in range(3) for r, d in ((0, "send"), (1, "recv"))]
                  + [{"rank": r, "op": "SendRecv", "count": 64, "datatype": "uint8", "comm": "c0", "seq": 3 + i,
                      "ready_us": 3.0 + i, "direction": d, "peer": 1 - r}
                     for i in range(3) for r, d in ((1, "send"), (0, "recv"))]}
        self.assertEqual(P.check_pp(P.from_report(report), world=2, pp=2, steps=1, microbatches=3, act_count=16,
                                    stage_of=lambda r: r), [])
        self.assertTrue(P.check_pp(P.from_report(report), world=2, pp=2, steps=1, microbatches=3, act_count=32,
                                   stage_of=lambda r: r))


class Ddp(unittest.TestCase):
    # System: 2 ranks, 100 parameters, 3 steps; buckets 60 + 40 (step 1: 100 in one bucket, as before DDP
    # rebuilds its buckets). Expectation: accepted; dropping one bucket of step 3 is reported.
    def trace(self, drop_last=False):
        lines = []
        for r in range(2):
            lines.append(coll(r, "AllReduce", 100))
            lines += [coll(r, "AllReduce", 60), coll(r, "AllReduce", 40), coll(r, "AllReduce", 60)]
            if not drop_last:
                lines.append(coll(r, "AllReduce", 40))
        return P.parse_trace("\n".join(lines))

    def test_accepts_each_gradient_once_per_step(self):
        self.assertEqual(P.check_ddp(self.trace(), world=2, steps=3, params=100), [])

    def test_reports_a_missing_bucket(self):
        errs = P.check_ddp(self.trace(drop_last=True), world=2, steps=3, params=100)
        self.assertTrue(any("2 steps" in e for e in errs), errs)


class Fsdp(unittest.TestCase):
    # System: 2 ranks, units of 8 and 4 parameters, 2 steps; per step the first unit all-gathers twice
    # (forward, backward), the second (root) once, and each reduce-scatters once.
    def trace(self, rs_per_step=2):
        lines = []
        for r in range(2):
            for _ in range(2):
                lines += [coll(r, "AllGather", 2, "bfloat16"), coll(r, "AllGather", 4, "bfloat16"),
                          coll(r, "AllGather", 4, "bfloat16")]
                lines += [coll(r, "ReduceScatter", 4, "float32", "avg"), coll(r, "ReduceScatter", 2, "float32",
                                                                                "avg")][:rs_per_step]
        return P.parse_trace("\n".join(lines))

    def test_accepts_per_unit_gather_and_reduce_scatter(self):
        self.assertEqual(P.check_fsdp(self.trace(), world=2, steps=2, units=2, unit_numel=[8, 4]), [])

    def test_reports_a_missing_reduce_scatter(self):
        errs = P.check_fsdp(self.trace(rs_per_step=1), world=2, steps=2, units=2, unit_numel=[8, 4])
        self.assertTrue(any("reduce-scatters" in e for e in errs), errs)


class Tp(unittest.TestCase):
    # System: tp 2, 1 layer, seq 4 x batch 1 x embd 2 = 8 elements per sequence collective, 1 step:
    # 6 all-gathers and 6 reduce-scatters of 4 elements per rank, 5 all-reduces (one a max of seq x batch).
    def trace(self, all_gathers=6):
        lines = []
        for r in range(2):
            lines += [coll(r, "AllGather", 4, "bfloat16")] * all_gathers
            lines += [coll(r, "ReduceScatter", 4, "bfloat16")] * 6
            lines += [coll(r, "AllReduce", 4, redop="max")] + [coll(r, "AllReduce", 4)] * 4
        return P.parse_trace("\n".join(lines))

    def test_accepts_the_megatron_pattern(self):
        self.assertEqual(P.check_tp(self.trace(), world=2, tp=2, steps=1, layers=1, seq=4, batch=1, embd=2), [])

    def test_reports_a_missing_all_gather(self):
        errs = P.check_tp(self.trace(5), world=2, tp=2, steps=1, layers=1, seq=4, batch=1, embd=2)
        self.assertTrue(any("all-gathers" in e for e in errs), errs)


class Pp(unittest.TestCase):
    # System: 2 stages, 3 micro-batches, 1 step, activations of 16 elements: stage 0 sends 3 activations and
    # receives 3 gradients; stage 1 the reverse.
    def trace(self, stage1_recvs=3):
        lines = [p2p(0, "Send", 16, 1)] * 3 + [p2p(0, "Recv", 16, 1)] * 3
        lines += [p2p(1, "Recv", 16, 0)] * stage1_recvs + [p2p(1, "Send", 16, 0)] * 3
        return P.parse_trace("\n".join(lines))

    def test_accepts_one_message_each_way_per_micro_batch(self):
        self.assertEqual(P.check_pp(self.trace(), world=2, pp=2, steps=1, microbatches=3, act_count=16,
                                    stage_of=lambda r: r), [])

    def test_reports_a_missing_receive(self):
        errs = P.check_pp(self.trace(2), world=2, pp=2, steps=1, microbatches=3, act_count=16, stage_of=lambda r: r)
        self.assertTrue(any("rank 1" in e for e in errs), errs)


if __name__ == "__main__":
    unittest.main()
