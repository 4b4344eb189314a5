// SPDX-License-Identifier: Apache-2.0
// Example: NVML next to the CUDA runtime, as PyTorch and pynvml use it (dlopen("libnvidia-ml.so.1")), one rank per
// device under genie run. Checks: calls before nvmlInit, device count and handles (by index, PCI bus id and UUID agree
// with the runtime's), memory info after a cudaMalloc, this process in the process list, the other rank's process on
// its device, utilization after timed kernels and once the device has been idle for the window, P2P status, an
// unimplemented call, error strings, shutdown.
// With tests/e2e/data/spin_table.json `spin` takes 20 ms.
// Usage: nvml_query [hold FILE]   (hold: after the checks, keep the memory and wait until FILE exists: genie smi's
// test)
#include <dlfcn.h>
#include <strings.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "check.cuh"
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include "nvml.h"

__global__ void spin() {}

namespace {

constexpr size_t kAlloc = 256u << 20;  // 256 MiB
constexpr int kBusyKernels = 10;       // 10 x 20 ms in the 1 s utilization window: 20%
constexpr int kIdleKernels = 60;       // 1.2 s of work on another device: past the window, this one is idle

void* g_nvml = nullptr;
template <class F>
F sym(const char* name) {
  void* p = dlsym(g_nvml, name);
  if (p == nullptr) {
    std::printf("FAIL %s: not exported by libnvidia-ml.so.1\n", name);
    std::exit(2);
  }
  return reinterpret_cast<F>(p);
}
#define NVML(name) sym<decltype(&name)>(#name)

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

// This device's processes: (pid, memory) pairs through pynvml's two-call protocol.
int processes(nvmlDevice_t d, nvmlProcessInfo_t* out, unsigned cap) {
  unsigned n = 0;
  nvmlReturn_t r = NVML(nvmlDeviceGetComputeRunningProcesses_v3)(d, &n, nullptr);
  if (r == NVML_SUCCESS) return 0;
  if (r != NVML_ERROR_INSUFFICIENT_SIZE || n > cap) return -1;
  n = cap;
  return NVML(nvmlDeviceGetComputeRunningProcesses_v3)(d, &n, out) == NVML_SUCCESS ? static_cast<int>(n) : -1;
}

}  // namespace

int main(int argc, char** argv) {
  const int local = env_int("LOCAL_RANK", 0);
  const int peer = env_int("LOCAL_WORLD_SIZE", 1) > 1 ? local ^ 1 : -1;
  g_nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (g_nvml == nullptr) {
    std::printf("FAIL dlopen(libnvidia-ml.so.1): %s\n", dlerror());
    return 2;
  }
  unsigned count = 0;
  EXPECT_ERR("count before nvmlInit", NVML_ERROR_UNINITIALIZED, NVML(nvmlDeviceGetCount_v2)(&count));
  EXPECT_ERR("nvmlInit_v2", NVML_SUCCESS, NVML(nvmlInit_v2)());
  int cuda_count = 0;
  CHECK_CUDA(cudaGetDeviceCount(&cuda_count));
  EXPECT_ERR("nvmlDeviceGetCount_v2", NVML_SUCCESS, NVML(nvmlDeviceGetCount_v2)(&count));
  EXPECT_EQ_INT("device count = cudaGetDeviceCount", cuda_count, count);
  CHECK_CUDA(cudaSetDevice(local));

  // Handles: by index, by the runtime's PCI bus id, by the runtime's UUID: one device.
  nvmlDevice_t dev = nullptr, by_bus = nullptr, by_uuid = nullptr;
  EXPECT_ERR("handle by index", NVML_SUCCESS, NVML(nvmlDeviceGetHandleByIndex_v2)(local, &dev));
  char bus[32];
  CHECK_CUDA(cudaDeviceGetPCIBusId(bus, sizeof(bus), local));
  EXPECT_ERR("handle by PCI bus id", NVML_SUCCESS, NVML(nvmlDeviceGetHandleByPciBusId_v2)(bus, &by_bus));
  EXPECT_EQ_INT("same handle by PCI bus id", 1, by_bus == dev);
  nvmlPciInfo_t pci{};
  EXPECT_ERR("PCI info", NVML_SUCCESS, NVML(nvmlDeviceGetPciInfo_v3)(dev, &pci));
  EXPECT_EQ_INT("PCI bus id as the runtime's", 0, strcasecmp(pci.busIdLegacy, bus));
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, local));
  const auto* u = reinterpret_cast<const unsigned char*>(&prop.uuid);
  char uuid[96];
  std::snprintf(uuid, sizeof(uuid), "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
  EXPECT_ERR("handle by UUID", NVML_SUCCESS, NVML(nvmlDeviceGetHandleByUUID)(uuid, &by_uuid));
  EXPECT_EQ_INT("same handle by UUID", 1, by_uuid == dev);
  char name[96];
  EXPECT_ERR("name", NVML_SUCCESS, NVML(nvmlDeviceGetName)(dev, name, sizeof(name)));
  EXPECT_EQ_INT("name as cudaGetDeviceProperties", 0, std::strcmp(name, prop.name));

  // Memory and processes: a cudaMalloc of 256 MiB shows in the memory used and in this process's entry.
  nvmlMemory_t before{}, after{};
  EXPECT_ERR("memory info", NVML_SUCCESS, NVML(nvmlDeviceGetMemoryInfo)(dev, &before));
  EXPECT_EQ_INT("total memory = totalGlobalMem", prop.totalGlobalMem, before.total);
  void* buf = nullptr;
  CHECK_CUDA(cudaMalloc(&buf, kAlloc));
  EXPECT_ERR("memory info", NVML_SUCCESS, NVML(nvmlDeviceGetMemoryInfo)(dev, &after));
  EXPECT_EQ_INT("used grows by the allocation", kAlloc, after.used - before.used);
  nvmlProcessInfo_t procs[8];
  int n = processes(dev, procs, 8);
  bool me = false;
  for (int i = 0; i < n; ++i) me |= procs[i].pid == static_cast<unsigned>(getpid()) && procs[i].usedGpuMemory == kAlloc;
  EXPECT_EQ_INT("this process listed with its 256 MiB", 1, me);

  // Utilization: none before any work, 20% after 200 ms of kernels in the 1 s window, 0 once 1.2 s of work on
  // another device moved the host past the window; that device is then busy the whole window.
  nvmlUtilization_t util{};
  EXPECT_ERR("utilization", NVML_SUCCESS, NVML(nvmlDeviceGetUtilizationRates)(dev, &util));
  EXPECT_EQ_INT("utilization before any kernel", 0, util.gpu);
  for (int i = 0; i < kBusyKernels; ++i) spin<<<1, 1>>>();
  CHECK_CUDA(cudaDeviceSynchronize());
  EXPECT_ERR("utilization", NVML_SUCCESS, NVML(nvmlDeviceGetUtilizationRates)(dev, &util));
  EXPECT_NEAR_DBL("utilization after 10 kernels of 20 ms", 20.0, util.gpu, 2.0);
  const int other = static_cast<int>(count) - 1;  // a device no rank uses
  CHECK_CUDA(cudaSetDevice(other));
  for (int i = 0; i < kIdleKernels; ++i) spin<<<1, 1>>>();
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaSetDevice(local));
  EXPECT_ERR("utilization", NVML_SUCCESS, NVML(nvmlDeviceGetUtilizationRates)(dev, &util));
  EXPECT_EQ_INT("utilization once idle for the window", 0, util.gpu);
  nvmlDevice_t busy = nullptr;
  EXPECT_ERR("handle of the busy device", NVML_SUCCESS, NVML(nvmlDeviceGetHandleByIndex_v2)(other, &busy));
  EXPECT_ERR("utilization", NVML_SUCCESS, NVML(nvmlDeviceGetUtilizationRates)(busy, &util));
  EXPECT_EQ_INT("utilization of the device that ran 1.2 s of kernels", 100, util.gpu);

  // The other rank's process on its device, from its status record (published every 500 ms): wait up to 20 s.
  if (peer >= 0) {
    nvmlDevice_t pd = nullptr;
    EXPECT_ERR("peer's handle", NVML_SUCCESS, NVML(nvmlDeviceGetHandleByIndex_v2)(peer, &pd));
    bool seen = false;
    for (int tries = 0; tries < 200 && !seen; ++tries) {
      n = processes(pd, procs, 8);
      for (int i = 0; i < n; ++i)
        seen |= procs[i].pid != static_cast<unsigned>(getpid()) && procs[i].usedGpuMemory == kAlloc;
      if (!seen) usleep(100000);
    }
    EXPECT_EQ_INT("the other rank's process on its device, with its 256 MiB", 1, seen);
    // Keep this process's record up a while longer: the other rank may still be waiting to see it (records are
    // refreshed every 500 ms, and removed when a process exits).
    usleep(1500000);
    nvmlGpuP2PStatus_t p2p = NVML_P2P_STATUS_UNKNOWN;
    EXPECT_ERR("P2P status", NVML_SUCCESS, NVML(nvmlDeviceGetP2PStatus)(dev, pd, NVML_P2P_CAPS_INDEX_NVLINK, &p2p));
    EXPECT_EQ_INT("NVLink P2P with the other rank's device (same node)", NVML_P2P_STATUS_OK, p2p);
  }

  unsigned fan = 0;
  EXPECT_ERR("fan speed (not emulated)", NVML_ERROR_NOT_SUPPORTED, NVML(nvmlDeviceGetFanSpeed)(dev, &fan));
  EXPECT_EQ_INT("error string", 0, std::strcmp(NVML(nvmlErrorString)(NVML_ERROR_NOT_SUPPORTED), "Not Supported"));

  if (argc > 2 && std::strcmp(argv[1], "hold") == 0) {
    std::printf("nvml_query: holding %zu MiB on device %d until %s exists\n", kAlloc >> 20, local, argv[2]);
    std::fflush(stdout);
    for (int i = 0; i < 1200 && access(argv[2], F_OK) != 0; ++i) usleep(100000);
  }
  EXPECT_ERR("nvmlShutdown", NVML_SUCCESS, NVML(nvmlShutdown)());
  EXPECT_ERR("count after nvmlShutdown", NVML_ERROR_UNINITIALIZED, NVML(nvmlDeviceGetCount_v2)(&count));
  CHECK_CUDA(cudaFree(buf));
  std::printf("nvml_query: %d failed\n", g_failures);
  return g_failures == 0 ? 0 : 1;
}
