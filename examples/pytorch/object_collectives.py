#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""torch.distributed's object collectives with the NCCL backend: all_gather_object, gather_object,
broadcast_object_list and scatter_object_list, with objects of different kinds and sizes on every rank (dicts,
strings of a length that depends on the rank, None, tuples, payloads of 100-300 KB). Every rank checks that it
received exactly the objects that were sent. Run it as several ranks (`genie run -n N`, torchrun).

On Genie these need genie_small_values (docs/pytorch.md, "Small values"): torch sizes the buffers with small
reductions and comparisons whose kernels do not run (2.11: `torch.sum(sizes).item()`, `max(list of tensors)`;
newer: `sizes.max().item()`). With GENIE_TORCH_SMALL_VALUES=0 they fail.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from check import expect_eq, expect_true, finish  # noqa: E402


def payload(r, n):
    """n bytes that depend on the rank, so a byte from the wrong rank or place is noticed."""
    return bytes((r * 31 + i * 7) % 251 for i in range(n))


def obj(r):
    """Rank r's object: a dict whose pickle length differs on every rank."""
    return {"rank": r, "name": "r" * (37 * r + 1), "nested": [r, None, (r, "t" * r)], "f": r / 3}


def run(r, w):
    # all_gather_object: every rank gets every rank's object, in rank order.
    got = [None] * w
    dist.all_gather_object(got, obj(r))
    expect_eq("all_gather_object (dicts of different sizes)", [obj(p) for p in range(w)], got)
    got = [None] * w
    dist.all_gather_object(got, None if r % 2 else "s" * (1000 * r + 3))
    expect_eq("all_gather_object (None and strings)", [None if p % 2 else "s" * (1000 * p + 3) for p in range(w)], got)
    got = [None] * w
    dist.all_gather_object(got, payload(r, 100_000 + 50_000 * r))
    expect_true("all_gather_object (100-300 KB payloads)",
                got == [payload(p, 100_000 + 50_000 * p) for p in range(w)], "every payload intact")

    # gather_object to the last rank.
    dst = w - 1
    got = [None] * w if r == dst else None
    dist.gather_object(("t", r, "g" * (11 * r)), got, dst=dst)
    if r == dst:
        expect_eq("gather_object to the last rank", [("t", p, "g" * (11 * p)) for p in range(w)], got)

    # broadcast_object_list from rank 1 (rank 0 when alone): several objects, then one large one.
    src = 1 if w > 1 else 0
    sent = [obj(src), "hello " * 50, None, payload(src, 20_000), 12345]
    lst = list(sent) if r == src else [None] * len(sent)
    dist.broadcast_object_list(lst, src=src)
    expect_eq("broadcast_object_list (5 objects)", sent, lst)
    big = [payload(src, 250_000)]
    lst = list(big) if r == src else [None]
    dist.broadcast_object_list(lst, src=src)
    expect_true("broadcast_object_list (one 250 KB object)", lst == big, "intact")

    # scatter_object_list from rank 0: rank p gets object p (sizes differ).
    items = [{"to": p, "data": "d" * (500 * p + 1)} for p in range(w)]
    out = [None]
    dist.scatter_object_list(out, items if r == 0 else None, src=0)
    expect_eq("scatter_object_list", items[r], out[0])
    out = [None]
    dist.scatter_object_list(out, [payload(p, 120_000 + p) for p in range(w)] if r == 0 else None, src=0)
    expect_true("scatter_object_list (120 KB payloads)", out[0] == payload(r, 120_000 + r), "intact")

    # The same on a subgroup (even ranks), whose object collective device is the group's.
    if w > 2:
        evens = list(range(0, w, 2))
        g = dist.new_group(evens)
        if r in evens:
            got = [None] * len(evens)
            dist.all_gather_object(got, obj(r), group=g)
            expect_eq("all_gather_object on a subgroup", [obj(p) for p in evens], got)


def main():
    r = int(os.environ.get("RANK", "0"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    try:
        run(r, dist.get_world_size())
    finally:
        dist.destroy_process_group()
    finish(f"object_collectives rank {r}")


if __name__ == "__main__":
    main()
