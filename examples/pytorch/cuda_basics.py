#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""torch.cuda on one process: device discovery, the caching allocator, copies, streams and events, OOM,
expandable segments (the driver entry points of c10::cuda::DriverAPI), CUDA graphs, NVML's device count.
Plain PyTorch: on a real GPU the data checks pass too; timing checks compare CUDA-event times with
measurements taken on a real H200 (tests/data/calibration/h200/device.json) and only run on Genie's H200.

    python cuda_basics.py [--expandable]   (--expandable: run under PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from check import expect_eq, expect_match, expect_near, expect_raises, expect_true, finish  # noqa: E402

GiB = 2**30
# Real H200 SXM, PyTorch 2.11.0+cu130 (tests/data/calibration/h200/device.json "measurements"): a 1 GiB
# device-to-device copy took 509.98 us and a 1 GiB pinned host-to-device copy 19442.4 us.
H200_D2D_1GIB_US = 509.98
H200_H2D_PINNED_1GIB_US = 19442.4
TIMING_TOL = 0.10  # the copy models are fits to these points; 10% is the fit's stated accuracy bound


def timed(fn):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) * 1000.0  # us


def main():
    expandable = "--expandable" in sys.argv
    if expandable and "expandable_segments:True" not in os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""):
        raise SystemExit("cuda_basics.py --expandable: set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")
    want_gpus = int(os.environ.get("GENIE_GPUS", "8"))

    # Discovery (cudaGetDeviceCount, cudaGetDeviceProperties) and NVML: Genie's libnvidia-ml.so.1 counts the same
    # devices as the runtime (examples/pytorch/nvml_monitoring.py checks the rest of NVML).
    expect_true("torch.cuda.is_available()", torch.cuda.is_available())
    expect_eq("device_count", want_gpus, torch.cuda.device_count())
    # Genie: kernels are timed, not run, so a filled tensor does not read back as filled.
    on_genie = torch.full((4,), 3.0, device="cuda").cpu()[0].item() != 3.0
    torch.cuda.empty_cache()  # the probe's segment, so the allocator checks below start from nothing
    if on_genie:
        expect_eq("NVML device count = device_count", want_gpus, torch.cuda._device_count_nvml())
    props = torch.cuda.get_device_properties(0)
    on_h200 = props.name == "NVIDIA H200"
    expect_eq("capability", (9, 0) if on_h200 else torch.cuda.get_device_capability(0),
              torch.cuda.get_device_capability(0))
    free0, total = torch.cuda.mem_get_info(0)
    expect_eq("total_memory == cudaMemGetInfo total", total, props.total_memory)
    expect_true("sm_90 kernels in this build", "sm_90" in torch.cuda.get_arch_list())

    # Caching allocator: a 1 GiB tensor is one segment, freed blocks are reused, empty_cache returns them.
    x = torch.empty(GiB, dtype=torch.uint8, device="cuda")
    expect_eq("memory_allocated after 1 GiB", GiB, torch.cuda.memory_allocated())
    reserved = torch.cuda.memory_reserved()
    expect_true("memory_reserved >= 1 GiB", reserved >= GiB, ">= 1 GiB")
    expect_eq("cudaMemGetInfo free drops by the reserved bytes", free0 - reserved, torch.cuda.mem_get_info(0)[0])
    segments = torch.cuda.memory_stats()["segment.all.allocated"]
    del x
    y = torch.empty(GiB, dtype=torch.uint8, device="cuda")
    expect_eq("a freed 1 GiB block is reused (no new segment)", segments,
              torch.cuda.memory_stats()["segment.all.allocated"])
    del y
    torch.cuda.empty_cache()
    expect_eq("memory_reserved after empty_cache", 0, torch.cuda.memory_reserved())
    expect_eq("cudaMemGetInfo free after empty_cache", free0, torch.cuda.mem_get_info(0)[0])

    # Copies move real bytes (kernels do not run on Genie, so data checks use copies only).
    host = torch.arange(1 << 20, dtype=torch.int64)
    dev = host.to("cuda")
    expect_true("H2D + D2H round trip", torch.equal(dev.cpu(), host), "equal")
    dev2 = torch.empty_like(dev)
    dev2.copy_(dev)
    expect_true("D2D copy", torch.equal(dev2.cpu(), host), "equal")
    pinned = host.pin_memory()
    expect_true("pin_memory().is_pinned()", pinned.is_pinned())
    expect_true("non_blocking pinned H2D", torch.equal(pinned.to("cuda", non_blocking=True).cpu(), host), "equal")
    if torch.cuda.device_count() >= 2:
        expect_true("copy to cuda:1 (peer)", torch.equal(dev.to("cuda:1").cpu(), host), "equal")
        expect_true("can_device_access_peer(0, 1)", torch.cuda.can_device_access_peer(0, 1))

    # Copy times on the emulated H200 against the real one (CUDA events on the virtual clock). Copies back to
    # back, as the calibration did; the time of one is (time of 20 - time of 10) / 10, so the host's time to
    # launch the first one (this machine's CPU, not the GPU's) does not count.
    if on_h200:
        a = torch.empty(GiB, dtype=torch.uint8, device="cuda")
        b = torch.empty(GiB, dtype=torch.uint8, device="cuda")
        d2d_us = (timed(lambda: [b.copy_(a) for _ in range(20)]) - timed(lambda: [b.copy_(a) for _ in range(10)])) / 10
        expect_near("1 GiB D2D copy time (us) vs real H200", H200_D2D_1GIB_US, d2d_us, TIMING_TOL)
        h = torch.empty(GiB, dtype=torch.uint8).pin_memory()
        expect_near("1 GiB pinned H2D copy time (us) vs real H200", H200_H2D_PINNED_1GIB_US,
                    timed(lambda: [a.copy_(h, non_blocking=True) for _ in range(4)]) / 4, TIMING_TOL)

        # Streams and events: the main stream is kept busy by ten copies; a copy on a side stream that
        # waits for it (wait_stream) ends one copy time after the main stream's last copy.
        s = torch.cuda.Stream(priority=-1)
        expect_eq("stream priority", -1, s.priority)
        main_end, side_end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        for _ in range(10):
            b.copy_(a)
        main_end.record()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            a.copy_(b)
            side_end.record(s)
        side_end.synchronize()
        expect_near("side stream after wait_stream ends one copy later (us)", d2d_us,
                    main_end.elapsed_time(side_end) * 1000.0, 0.02)
        expect_true("event.query() after synchronize", side_end.query())
        torch.cuda.current_stream().wait_stream(s)
        del a, b, h

    # OOM at the preset's capacity, with torch's usual message.
    cap_gib = props.total_memory / GiB
    big = int(total * 0.7) // GiB * GiB
    before = torch.cuda.memory_allocated()
    keep = torch.empty(big, dtype=torch.uint8, device="cuda")
    msg = expect_raises("allocating past capacity raises OutOfMemoryError", torch.OutOfMemoryError,
                        r"CUDA out of memory\. Tried to allocate [0-9.]+ GiB",
                        lambda: torch.empty(big, dtype=torch.uint8, device="cuda"))
    if msg:
        expect_match("OOM message names the capacity", rf"GPU 0 has a total capacity of {cap_gib:.2f} GiB", msg)
        expect_match("OOM message says what is free and allocated",
                     r"of which [0-9.]+ GiB is free\. .*Of the allocated memory [0-9.]+ GiB is allocated by PyTorch",
                     msg)
    del keep
    torch.cuda.empty_cache()
    expect_eq("memory_allocated after OOM and free", before, torch.cuda.memory_allocated())
    expect_true("num_ooms counted", torch.cuda.memory_stats().get("num_ooms", 0) >= 1, ">= 1")

    # Expandable segments: cuMemCreate/cuMemMap/cuMemSetAccess through the driver entry points.
    if expandable:
        torch.cuda.empty_cache()
        z = torch.empty(3 * GiB + 123, dtype=torch.uint8, device="cuda")
        zz = torch.empty(1 << 20, dtype=torch.int64, device="cuda")
        zz.copy_(host)
        expect_true("expandable segment holds data", torch.equal(zz.cpu(), host), "equal")
        expect_true("3 GiB mapped", torch.cuda.memory_reserved() >= 3 * GiB, ">= 3 GiB")
        del z, zz
        torch.cuda.empty_cache()
        expect_true("unmapped by empty_cache", torch.cuda.memory_reserved() < GiB, "< 1 GiB")

    # CUDA graphs: a captured copy reads its source at replay time.
    src = torch.zeros(1024, dtype=torch.int64, device="cuda")
    dst = torch.empty_like(src)
    g = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        dst.copy_(src)  # warm-up outside capture, as torch recommends
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(g):
        dst.copy_(src)
        _ = dst + 1  # a kernel in the graph (timed, not run)
    src.copy_(host[:1024])
    g.replay()
    torch.cuda.synchronize()
    expect_true("graph replay copies the current source", torch.equal(dst.cpu(), host[:1024]), "equal")
    # A replay takes what the captured work takes when run eagerly (times of 20 minus 10, as above).
    big_src = torch.empty(GiB // 4, dtype=torch.uint8, device="cuda")
    big_dst = torch.empty_like(big_src)

    def work():
        big_dst.copy_(big_src)
        big_dst.add_(1)

    work()
    g2 = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g2):
        work()
    eager = (timed(lambda: [work() for _ in range(20)]) - timed(lambda: [work() for _ in range(10)])) / 10
    replay = (timed(lambda: [g2.replay() for _ in range(20)]) - timed(lambda: [g2.replay() for _ in range(10)])) / 10
    expect_near("graph replay time (us) vs the same work eagerly", eager, replay, 0.05)
    expect_true("torch.cuda hasPrimaryContext(0) (libcuda.so.1)", torch._C._cuda_hasPrimaryContext(0))
    finish("cuda_basics")


if __name__ == "__main__":
    main()
