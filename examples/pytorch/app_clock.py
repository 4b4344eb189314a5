#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Python's clocks under `genie run --app-clock python`: a program's own timing (time.time, time.perf_counter,
Megatron's timers, its log lines) reads the emulated GPUs' virtual time, while timeouts keep real time
(time.monotonic, threading, TCPStore and NCCL's watchdog in C++).

    genie run -n 2 --app-clock python -- python app_clock.py

Each rank times the same GPU work with CUDA events, with time.perf_counter and time.time around a synchronize, and
with megatron.core.timers.Timers; all must agree. Then a 0.2 s real sleep and a 0.2 s threading timeout must take
0.2 s on time.monotonic, and a barrier (TCPStore and NCCL) must complete. Prints "app_clock rank R: N failed".
On a real GPU (or without the option) the same script checks that the clocks agree with the events there too.
"""
import os
import sys
import threading
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check import expect_true, finish  # noqa: E402


def gpu_work(dev):
    a = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
    for _ in range(20):
        a = a @ a
    return a


def main():
    rank = int(os.environ.get("RANK", "0"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=dev)
    virtual = os.environ.get("GENIE_APP_CLOCK") == "python"
    gpu_work(dev)
    torch.cuda.synchronize()

    # The same GPU work timed four ways.
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    p0, t0 = time.perf_counter(), time.time()
    start.record()
    gpu_work(dev)
    end.record()
    torch.cuda.synchronize()
    p1, t1 = time.perf_counter(), time.time()
    events_ms = start.elapsed_time(end)
    perf_ms, time_ms = (p1 - p0) * 1e3, (t1 - t0) * 1e3
    print(f"app_clock rank {rank}: events {events_ms:.3f} ms, perf_counter {perf_ms:.3f} ms, time.time "
          f"{time_ms:.3f} ms (GENIE_APP_CLOCK={os.environ.get('GENIE_APP_CLOCK', 'wall')})", flush=True)
    # The clocks also hold the host's launch calls around the events: a few percent at most here.
    expect_true("perf_counter times the GPU work the events time", abs(perf_ms - events_ms) <= 0.05 * events_ms + 0.2,
                f"{events_ms:.3f} ms within 5% + 0.2 ms")
    expect_true("time.time times it too", abs(time_ms - events_ms) <= 0.05 * events_ms + 0.2,
                f"{events_ms:.3f} ms within 5% + 0.2 ms")
    try:
        from megatron.core.timers import Timers
    except ImportError:
        Timers = None
    if Timers is not None:
        timers = Timers(log_level=2, log_option="minmax")
        timers("work", log_level=0).start(barrier=False)
        gpu_work(dev)
        timers("work").stop(barrier=False)  # synchronizes the device, then reads time.time()
        mega_ms = timers("work").elapsed(reset=False, barrier=False) * 1e3
        expect_true("Megatron's timer times it too", abs(mega_ms - events_ms) <= 0.05 * events_ms + 0.2,
                    f"{events_ms:.3f} ms within 5% + 0.2 ms, got {mega_ms:.3f}")

    # Timeouts stay real: a sleep and a timed wait take their real duration on time.monotonic.
    m0, v0 = time.monotonic(), time.perf_counter()
    time.sleep(0.2)
    m1, v1 = time.monotonic(), time.perf_counter()
    expect_true("time.monotonic sees a 0.2 s sleep", 0.19 <= m1 - m0 < 5, f"0.2 s, got {m1 - m0:.3f}")
    if virtual:
        expect_true("the virtual clock does not: the sleep ran no GPU work", v1 - v0 < 0.05,
                    f"< 0.05 s, got {v1 - v0:.3f}")
    w0 = time.monotonic()
    expect_true("a 0.2 s threading timeout times out", not threading.Event().wait(0.2), "False")
    expect_true("... after 0.2 s of real time", 0.19 <= time.monotonic() - w0 < 5, f"{time.monotonic() - w0:.3f}")
    dist.barrier()
    dist.destroy_process_group()
    finish(f"app_clock rank {rank}")


if __name__ == "__main__":
    main()
