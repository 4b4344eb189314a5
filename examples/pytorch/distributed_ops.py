#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""torch.distributed with the NCCL backend: every collective (eight datatypes and complex, avg and premul_sum,
list forms, coalesced), all_to_all_single, batch_isend_irecv, send/recv, new_group (split from the parent when the
default group is bound to a device), new_subgroups, split_group, CUDA-graph capture of a collective, the NCCL
watchdog (a timed-out collective, an asynchronous NCCL error) and destroy_process_group.
Run it as several ranks (torchrun or `genie run -n N`); every rank checks the data it received (tensors are
filled by host-to-device copies, since kernels do not run on Genie).

    distributed_ops.py [--no-device-id]      collectives; exit 0 when every check passed
    distributed_ops.py --watchdog-timeout    rank 1 skips an all-reduce: the others' watchdog must time out
    distributed_ops.py --watchdog-error      rank 1 all-reduces a different count: NCCL reports an error
"""
import datetime
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from check import expect_eq, expect_true, finish  # noqa: E402


def filled(shape, values, dev, dtype=torch.float32):
    """A device tensor holding `values` (a host tensor or a scalar), written by a host-to-device copy."""
    host = values if isinstance(values, torch.Tensor) else torch.full(shape, float(values))
    out = torch.empty(shape, dtype=dtype, device=dev)
    out.copy_(host.to(dtype).reshape(shape))
    return out


def collectives(r, w, dev, split):
    f = lambda shape, v: filled(shape, v, dev)  # noqa: E731
    x = f((1024,), r + 1)
    dist.all_reduce(x)
    expect_eq("all_reduce sum", [w * (w + 1) / 2] * 2, x[:2].tolist())
    y = f((16,), r + 1)
    dist.all_reduce(y, op=dist.ReduceOp.MAX)
    expect_eq("all_reduce max", float(w), y[0].item())
    y = f((16,), r + 1)
    dist.all_reduce(y, op=dist.ReduceOp.AVG)
    expect_eq("all_reduce avg", (w + 1) / 2, y[0].item())
    b16 = filled((64,), r + 1, dev, torch.bfloat16)
    dist.all_reduce(b16)
    expect_eq("all_reduce bf16", w * (w + 1) / 2, b16[0].item())

    out = torch.empty(w * 4, device=dev)
    dist.all_gather_into_tensor(out, f((4,), r))
    expect_eq("all_gather_into_tensor", [float(i) for i in range(w)], out.cpu().view(w, 4)[:, 0].tolist())
    parts = [torch.empty(4, device=dev) for _ in range(w)]
    dist.all_gather(parts, f((4,), r))
    expect_eq("all_gather (list)", [float(i) for i in range(w)], [p[0].item() for p in parts])
    rs = torch.empty(4, device=dev)
    dist.reduce_scatter_tensor(rs, f((w * 4,), torch.arange(w * 4, dtype=torch.float32)))
    expect_eq("reduce_scatter_tensor", [float(w * (4 * r + i)) for i in range(4)], rs.cpu().tolist())
    b = f((4,), r)
    dist.broadcast(b, src=w - 1)
    expect_eq("broadcast from the last rank", float(w - 1), b[0].item())
    red = f((4,), 1)
    dist.reduce(red, dst=0)
    if r == 0:
        expect_eq("reduce to rank 0", float(w), red[0].item())

    a2a_in = f((w * 2,), torch.arange(w * 2, dtype=torch.float32) + 100 * r)
    a2a_out = torch.empty(w * 2, device=dev)
    dist.all_to_all_single(a2a_out, a2a_in)
    expect_eq("all_to_all_single (equal split)", [float(100 * p + 2 * r + k) for p in range(w) for k in range(2)],
              a2a_out.cpu().tolist())
    # Uneven: rank r sends p+1 elements to rank p, so it receives r+1 from everyone.
    send_splits = [p + 1 for p in range(w)]
    recv_splits = [r + 1] * w
    src = f((sum(send_splits),), torch.cat([torch.full((p + 1,), float(10 * r + p)) for p in range(w)]))
    dst = torch.empty(sum(recv_splits), device=dev)
    dist.all_to_all_single(dst, src, recv_splits, send_splits)
    expect_eq("all_to_all_single (uneven splits)", [float(10 * p + r) for p in range(w) for _ in range(r + 1)],
              dst.cpu().tolist())

    send = f((4,), r)
    recv = torch.empty(4, device=dev)
    ops = [dist.P2POp(dist.isend, send, (r + 1) % w), dist.P2POp(dist.irecv, recv, (r - 1) % w)]
    for q in dist.batch_isend_irecv(ops):
        q.wait()
    expect_eq("batch_isend_irecv ring", float((r - 1) % w), recv[0].item())
    if w >= 2 and r < 2:
        peer = 1 - r
        if r == 0:
            dist.send(f((4,), 42), peer)
        else:
            got = torch.empty(4, device=dev)
            dist.recv(got, peer)
            expect_eq("send/recv", 42.0, got[0].item())

    work = dist.all_reduce(f((8,), 1), async_op=True)
    work.wait()
    torch.cuda.current_stream().synchronize()
    expect_true("async work completed after the stream synchronised", work.is_completed())
    dist.barrier()
    objs = [None] * w
    dist.all_gather_object(objs, {"rank": r})
    expect_eq("all_gather_object", [{"rank": i} for i in range(w)], objs)

    more_collectives(r, w, dev, split)

    # new_group: with device_id, the default group's communicator is split (ncclCommSplit) once per new group;
    # ranks outside a group take part with NCCL_SPLIT_NOCOLOR. Without device_id each group's communicator is
    # created on its first collective (ncclCommInitRankConfig), nothing is split.
    # (Two or more ranks: torch refuses an empty group.)
    if w >= 2:
        pg = dist.distributed_c10d._get_default_group()
        # ProcessGroupNCCL counts its splits; torch 2.15's ProcessGroupNCCL2 has no such counter.
        counts = hasattr(pg._get_backend(dev), "comm_split_count")
        splits_before = pg._get_backend(dev).comm_split_count() if counts else 0
        even = dist.new_group([i for i in range(w) if i % 2 == 0])
        odd = dist.new_group([i for i in range(w) if i % 2 == 1])
        g = even if r % 2 == 0 else odd
        z = f((8,), r)
        dist.all_reduce(z, group=g)
        expect_eq("all_reduce on new_group", float(sum(i for i in range(w) if i % 2 == r % 2)), z[0].item())
        if counts:
            splits = pg._get_backend(dev).comm_split_count() - splits_before
            expect_eq("communicators split from the default group by new_group", 2 if split else 0, splits)

    # A collective captured in a CUDA graph runs at every replay.
    c = f((256,), r + 1)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        dist.all_reduce(c)
    torch.cuda.current_stream().wait_stream(side)
    c.copy_(torch.full((256,), float(r + 1)))
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        dist.all_reduce(c)
    graph.replay()
    graph.replay()
    torch.cuda.synchronize()
    s = w * (w + 1) / 2
    expect_eq("graph-captured all_reduce, two replays", s * w, c[0].item())


def more_collectives(r, w, dev, split):
    """PreMulSum, the other datatypes (complex as its real view), gather/scatter, the list forms of reduce_scatter
    and all_to_all, coalesced collectives, and with device_id new_subgroups and split_group."""
    f = lambda shape, v, dt=torch.float32: filled(shape, v, dev, dt)  # noqa: E731
    s = w * (w + 1) / 2
    x = f((8,), r + 1)
    dist.all_reduce(x, op=dist._make_nccl_premul_sum(2.0))
    expect_eq("all_reduce premul_sum(2.0)", 2 * s, x[0].item())
    for dt in (torch.float16, torch.float64, torch.int8, torch.uint8, torch.int32, torch.int64):
        x = f((8,), r + 1, dt)
        dist.all_reduce(x)
        expect_eq(f"all_reduce {dt}", s, float(x[0].item()))
    z = torch.empty(4, dtype=torch.complex64, device=dev)
    z.copy_(torch.full((4,), complex(r + 1, 1)))
    dist.all_reduce(z)
    expect_eq("all_reduce complex64", complex(s, w), z[0].item())

    got = [torch.empty(4, device=dev) for _ in range(w)] if r == 0 else None
    dist.gather(f((4,), r), got, dst=0)
    if r == 0:
        expect_eq("gather to rank 0", [float(i) for i in range(w)], [g[0].item() for g in got])
    part = torch.empty(4, device=dev)
    dist.scatter(part, [f((4,), 10 * i) for i in range(w)] if r == w - 1 else None, src=w - 1)
    expect_eq("scatter from the last rank", float(10 * r), part[0].item())
    part = torch.empty(4, device=dev)
    dist.reduce_scatter(part, [f((4,), r + i) for i in range(w)])
    expect_eq("reduce_scatter (list)", float(sum(k + r for k in range(w))), part[0].item())
    outs = [torch.empty(2, device=dev) for _ in range(w)]
    dist.all_to_all(outs, [f((2,), 100 * r + i) for i in range(w)])
    expect_eq("all_to_all (list)", [float(100 * i + r) for i in range(w)], [o[0].item() for o in outs])

    xs = [f((16,), r + 1) for _ in range(3)]
    with dist._coalescing_manager(async_ops=True) as cm:
        for t in xs:
            dist.all_reduce(t)
    cm.wait()
    expect_eq("coalesced all_reduces", [s] * 3, [t[0].item() for t in xs])

    if split and w >= 4 and w % 2 == 0:
        sub, _ = dist.new_subgroups(group_size=2)
        x = f((4,), r + 1)
        dist.all_reduce(x, group=sub)
        expect_eq("all_reduce on new_subgroups(2)", float(2 * (r // 2) * 2 + 3), x[0].item())
        g = dist.split_group(split_ranks=[[i for i in range(w) if i % 2 == p] for p in range(2)])
        x = f((4,), r)
        dist.all_reduce(x, group=g)
        expect_eq("all_reduce on split_group", float(sum(i for i in range(w) if i % 2 == r % 2)), x[0].item())


def main():
    r, w = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    mode = next((a for a in sys.argv[1:] if a.startswith("--watchdog")), None)
    split = "--no-device-id" not in sys.argv and mode is None
    timeout = datetime.timedelta(seconds=5 if mode else 120)
    dist.init_process_group("nccl", timeout=timeout, **({"device_id": dev} if split else {}))
    if mode is None:
        collectives(r, w, dev, split)
        dist.destroy_process_group()
        expect_true("destroy_process_group", not dist.is_initialized(), "not initialized")
        finish(f"distributed_ops rank {r}")
    x = filled((1024,), 1, dev)
    dist.all_reduce(x)
    torch.cuda.synchronize()
    print(f"rank {r}: first all_reduce done", flush=True)
    if mode == "--watchdog-timeout" and r == 1:
        time.sleep(60)  # never joins; the watchdog of the others aborts them
        sys.exit(0)
    if mode == "--watchdog-error":
        x = filled((2048 if r == 1 else 1024,), 1, dev)
    dist.all_reduce(x)
    deadline = time.time() + 60
    while time.time() < deadline:  # the watchdog thread ends the process (TORCH_NCCL_ASYNC_ERROR_HANDLING)
        time.sleep(0.5)
    print(f"rank {r}: the watchdog did not end the process", flush=True)
    sys.exit(3)


if __name__ == "__main__":
    main()
