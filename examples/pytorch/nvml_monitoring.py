#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""NVML as PyTorch and training monitors use it, one rank per device under genie run: pynvml (nvidia-ml-py) and
torch.cuda's NVML-based calls (device_count through NVML, utilization, memory_usage, temperature, power_draw,
clock_rate, list_gpu_processes), after the caching allocator has taken memory and kernels have kept the device busy.
On a real GPU the identity and memory checks pass too; the values of the utilization, temperature and power checks
are Genie's (nominal preset values, docs/nvml.md) and run only on Genie.

    genie run -n 2 -- python nvml_monitoring.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pynvml  # noqa: E402
import torch  # noqa: E402
from check import expect_eq, expect_match, expect_true, finish  # noqa: E402

MiB = 2**20


def main():
    local = int(os.environ.get("LOCAL_RANK", "0"))
    gpus = int(os.environ.get("GENIE_GPUS", "8"))
    # Before CUDA starts: torch counts devices through NVML (libnvidia-ml.so.1 is preloaded and on the path).
    expect_eq("torch.cuda._device_count_nvml() (NVML, before CUDA starts)", gpus, torch.cuda._device_count_nvml())
    torch.cuda.set_device(local)
    torch.ones(1, device="cuda")  # CUDA starts: the caching allocator's first segment
    on_genie = "GENIE_NODE" in os.environ  # set by genie run for every rank

    pynvml.nvmlInit()
    expect_eq("pynvml device count", torch.cuda.device_count(), pynvml.nvmlDeviceGetCount())
    h = pynvml.nvmlDeviceGetHandleByIndex(local)
    props = torch.cuda.get_device_properties(local)
    expect_eq("pynvml name = torch name", props.name, pynvml.nvmlDeviceGetName(h))
    expect_eq("pynvml total memory = torch total_memory", props.total_memory, pynvml.nvmlDeviceGetMemoryInfo(h).total)
    pci = pynvml.nvmlDeviceGetPciInfo(h)
    by_bus = pynvml.nvmlDeviceGetHandleByPciBusId(pci.busId)
    expect_eq("handle by PCI bus id: same index", local, pynvml.nvmlDeviceGetIndex(by_bus))
    uuid = pynvml.nvmlDeviceGetUUID(h)
    expect_match("UUID form", r"^GPU-[0-9a-f]{8}-[0-9a-f]{4}-", uuid)
    expect_eq("UUID = torch's", str(props.uuid), uuid[4:])
    major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(h)
    expect_eq("compute capability", (props.major, props.minor), (major, minor))

    # Memory: the caching allocator's segment of a 512 MiB tensor shows in NVML's used memory and in this process's
    # entry (torch.cuda.device_memory_used and list_gpu_processes read them).
    used0, reserved0 = pynvml.nvmlDeviceGetMemoryInfo(h).used, torch.cuda.memory_reserved(local)
    x = torch.empty(512 * MiB, dtype=torch.uint8, device="cuda")
    reserved = torch.cuda.memory_reserved(local)
    used1 = pynvml.nvmlDeviceGetMemoryInfo(h).used
    if on_genie:  # a real GPU's driver also takes memory for the context and kernels
        expect_eq("NVML used grows by the allocator's new segment", reserved - reserved0, used1 - used0)
    expect_true("NVML used >= the allocator's reserved", used1 >= reserved, f">= {reserved}")
    expect_eq("torch.cuda.device_memory_used", used1, torch.cuda.device_memory_used(local))
    mine = [p for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h) if p.pid == os.getpid()]
    expect_eq("this process in nvmlDeviceGetComputeRunningProcesses", 1, len(mine))
    if mine:
        expect_true("its memory >= 512 MiB", mine[0].usedGpuMemory >= 512 * MiB, ">= 512 MiB")
    listing = torch.cuda.list_gpu_processes(local)
    expect_match("torch.cuda.list_gpu_processes names this process", rf"process\s+{os.getpid()} uses\s+\d+\.\d+ MB",
                 listing)

    # Utilization: 0 before this process's first kernels (NVML window: 1 s of host time), busy after 200 ms of
    # matmuls (each 8192^3 bf16 GEMM takes ~1.1 ms on the H200 model), then the torch.cuda wrappers.
    if on_genie:
        expect_eq("torch.cuda.utilization before any work", 0, torch.cuda.utilization(local))
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    for _ in range(200):
        a @ a
    torch.cuda.synchronize()
    util = torch.cuda.utilization(local)
    expect_true("torch.cuda.utilization after 200 GEMMs", 0 < util <= 100, "in (0, 100]")
    expect_eq("pynvml gpu utilization = torch's", util, pynvml.nvmlDeviceGetUtilizationRates(h).gpu)
    mem_util = torch.cuda.memory_usage(local)
    expect_true("torch.cuda.memory_usage in [0, 100]", 0 <= mem_util <= 100, "in [0, 100]")
    if on_genie:
        expect_eq("torch.cuda.temperature (nominal)", 35, torch.cuda.temperature(local))
        # Nominal power (h200 preset): 70 W idle to the 700 W limit by the utilization of the window.
        expect_eq("torch.cuda.power_draw (mW) = idle + utilization x (limit - idle)",
                  round((70 + 630 * torch.cuda.utilization(local) / 100) * 1000), torch.cuda.power_draw(local))
        expect_eq("torch.cuda.clock_rate (SM MHz)", 1980, torch.cuda.clock_rate(local))
        expect_eq("power limit (mW)", 700000, pynvml.nvmlDeviceGetPowerManagementLimit(h))
    # Another device of the node, as the other rank sees this one: P2P over NVLink.
    other = pynvml.nvmlDeviceGetHandleByIndex((local + 1) % gpus)
    expect_eq("P2P NVLink status", pynvml.NVML_P2P_STATUS_OK,
              pynvml.nvmlDeviceGetP2PStatus(h, other, pynvml.NVML_P2P_CAPS_INDEX_NVLINK))
    try:
        pynvml.nvmlDeviceGetFanSpeed(h)
        expect_true("fan speed: NVMLError_NotSupported", False)
    except pynvml.NVMLError_NotSupported:
        expect_true("fan speed: NVMLError_NotSupported", True)
    del x
    pynvml.nvmlShutdown()
    return finish("nvml_monitoring")


if __name__ == "__main__":
    sys.exit(main())
