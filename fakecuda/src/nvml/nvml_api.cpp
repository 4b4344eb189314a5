// SPDX-License-Identifier: Apache-2.0
// libnvidia-ml.so.1: the NVML calls PyTorch, pynvml (nvidia-ml-py) and training monitors make, answered from the
// emulated devices: identity from the preset, memory from the runtime's allocator, utilization from the virtual
// timeline, processes from this process and the job's status records (docs/nvml.md). Built against NVIDIA's nvml.h
// (nvml.h beside this file, from the nvidia-nvml-dev wheel: the CUDA toolkit here ships none); every function of
// it that is not here answers NVML_ERROR_NOT_SUPPORTED (nvml_unsupported.cpp).
//
// nvml.h carries this notice, which its license asks us to repeat: "NVIDIA MAKES NO REPRESENTATION ABOUT THE
// SUITABILITY OF THIS SOURCE CODE FOR ANY PURPOSE. IT IS PROVIDED "AS IS" WITHOUT EXPRESS OR IMPLIED WARRANTY OF ANY
// KIND." and the U.S. Government End Users notice at the top of nvml.h.
#define NVML_NO_UNVERSIONED_FUNC_DEFS  // declare nvmlInit, nvmlDeviceGetCount, ... under their own names too
#include "nvml/nvml.h"

#include <driver_types.h>  // cudaDeviceProp: the UUID comes from the same fill_device_prop as the runtime's
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "genie/common/internal_scope.hpp"
#include "genie/common/log.hpp"
#include "genie/fakecuda/device_spec.hpp"
#include "genie/fakecuda/device_status.hpp"
#include "genie/fakecuda/driver.hpp"
#include "genie/fakecuda/runtime.hpp"
#include "nvml/nvml_state.hpp"

/// An emulated device as NVML hands it out: one per ordinal of the node, allocated at the first nvmlInit and never
/// freed (handles stay valid across nvmlShutdown / nvmlInit, as the real library's do).
struct nvmlDevice_st {
  static constexpr uint32_t kMagic = 0x6e766d6cu;  // "nvml"
  uint32_t magic = kMagic;
  int index = 0;
  std::string uuid;    ///< "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  std::string serial;  ///< 13 decimal digits, derived from the UUID
  unsigned bus = 0;
};

namespace genie::fakecuda::nvml {
namespace {

// nvmlSystemGetNVMLVersion: "13." + the driver version (kReportedDriverVersion), as NVML 13 reports it (nvml.h:
// NVML_API_VERSION 13).
std::string nvml_version_string() { return std::string("13.") + kReportedDriverVersion; }
constexpr unsigned kPciVendorNvidia = 0x10de;
// PCI identity NVML reports for the NVSwitch at the far end of every NVLink (nvmlDeviceGetNvLinkRemotePciInfo): the
// HGX H100/H200 baseboards' third-generation NVSwitch, PCI device 0x22a3 (The PCI ID Repository, vendor 10de), on a
// bus of its own above the GPUs'.
constexpr unsigned kNvSwitchPciDeviceId = 0x22a3;
constexpr unsigned kNvSwitchBus = 0xf0;

struct State {
  std::mutex mu;
  int refcount = 0;
  bool loaded = false;
  DeviceSpec spec;
  int devices = 0;
  std::vector<int> visible;  ///< node ordinal of each of this process's CUDA devices
  std::vector<std::unique_ptr<nvmlDevice_st>> handles;
};
State& state() {
  static State* s = new State();  // never destroyed: NVML may be called from atexit handlers
  return *s;
}

std::atomic<bool> g_initialized{false};

// Loads the devices once: the runtime's options when it exists (the same configuration), else read now. Loading
// does not start the CUDA emulation: NVML answers before any CUDA call, as torch's device count asks it.
nvmlReturn_t load_locked(State& s) {
  if (s.loaded) return NVML_SUCCESS;
  RuntimeOptions o;
  if (Runtime* rt = Runtime::existing()) {
    o = rt->options();
  } else {
    Result<RuntimeOptions> r = options_from_config();
    if (!r.is_ok()) {
      GENIE_LOG_ERROR(log::kFakecuda, "NVML cannot start: {}", r.status().message());
      return NVML_ERROR_DRIVER_NOT_LOADED;
    }
    o = std::move(r.value());
  }
  s.spec = o.spec;
  s.devices = o.physical_device_count;
  s.visible = o.visible_ordinals;
  for (int i = 0; i < s.devices; ++i) {
    auto h = std::make_unique<nvmlDevice_st>();
    h->index = i;
    auto prop = std::make_unique<cudaDeviceProp>();
    fill_device_prop(s.spec, i, prop.get());
    const auto* u = reinterpret_cast<const unsigned char*>(&prop->uuid);
    char buf[64];
    std::snprintf(buf, sizeof(buf), "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                  u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    h->uuid = buf;
    uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v = (v << 8) | u[k];
    std::snprintf(buf, sizeof(buf), "1%012llu", static_cast<unsigned long long>(v % 1000000000000ULL));
    h->serial = buf;
    h->bus = static_cast<unsigned>(prop->pciBusID);
    s.handles.push_back(std::move(h));
  }
  s.loaded = true;
  return NVML_SUCCESS;
}

nvmlReturn_t init() {
  State& s = state();
  std::lock_guard lk(s.mu);
  if (nvmlReturn_t r = load_locked(s); r != NVML_SUCCESS) return r;
  ++s.refcount;
  g_initialized.store(true);
  return NVML_SUCCESS;
}

// Runs an NVML body: never lets an exception escape, answers NVML_ERROR_UNINITIALIZED before nvmlInit.
template <class F>
nvmlReturn_t guard(const char* fn, bool needs_init, F&& body) noexcept {
  InternalScope internal;
  GENIE_LOG_TRACE(log::kFakecuda, "{}", fn);
  if (needs_init && !initialized()) return NVML_ERROR_UNINITIALIZED;
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return NVML_ERROR_MEMORY;
  } catch (const std::exception& e) {
    GENIE_LOG_ERROR(log::kFakecuda, "{}: internal error: {}", fn, e.what());
  } catch (...) {
    GENIE_LOG_ERROR(log::kFakecuda, "{}: internal error", fn);
  }
  return NVML_ERROR_UNKNOWN;
}

// The device behind a handle we gave out, nullptr for anything else.
const nvmlDevice_st* dev(nvmlDevice_t d) {
  if (d == nullptr || d->magic != nvmlDevice_st::kMagic) return nullptr;
  return d;
}

nvmlReturn_t copy_string(const std::string& v, char* out, unsigned length) {
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (length < v.size() + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, v.c_str(), v.size() + 1);
  return NVML_SUCCESS;
}

// This process's CUDA device on node ordinal `index`, -1 when it does not see it (CUDA_VISIBLE_DEVICES).
int local_device(int index) {
  const std::vector<int>& vis = state().visible;
  for (size_t i = 0; i < vis.size(); ++i)
    if (vis[i] == index) return static_cast<int>(i);
  return vis.empty() && index >= 0 ? index : -1;
}

/// What NVML reports for one device: this process's use of it (from the live runtime), plus that of the job's
/// other processes on the same node (their status records, refreshed every status interval).
struct DeviceView {
  uint64_t used_bytes = 0;
  unsigned util_gpu = 0, util_mem = 0;
  struct Proc {
    unsigned pid;
    uint64_t used_bytes;
  };
  std::vector<Proc> procs;
};

DeviceView view(int index) {
  DeviceView v;
  Runtime* rt = Runtime::existing();
  const int d = local_device(index);
  if (rt != nullptr && d >= 0 && d < rt->device_count()) {
    const DeviceUsage u = device_usage(*rt, d, status_now(*rt), utilization_window());
    v.used_bytes = u.used_bytes;
    v.util_gpu = static_cast<unsigned>(u.util_gpu_pct);
    v.util_mem = static_cast<unsigned>(u.util_mem_pct);
    if (u.used_bytes > 0 || rt->timeline().device_ran_ops(d))
      v.procs.push_back({static_cast<unsigned>(getpid()), u.used_bytes});
  }
  const std::string node = local_node_name();
  for (const ProcessStatus& p : read_status_dir(status_dir(), static_cast<int>(getpid()))) {
    if (p.node != node) continue;
    for (const DeviceUsage& u : p.devices) {
      if (u.index != index) continue;
      v.used_bytes += u.used_bytes;
      v.util_gpu = std::max(v.util_gpu, static_cast<unsigned>(u.util_gpu_pct));
      v.util_mem = std::max(v.util_mem, static_cast<unsigned>(u.util_mem_pct));
      v.procs.push_back({static_cast<unsigned>(p.pid), u.used_bytes});
    }
  }
  return v;
}

void fill_pci_legacy(const nvmlDevice_st& d, nvmlPciInfo_t* pci) {
  const DeviceSpec& spec = state().spec;
  std::snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT,
                static_cast<unsigned>(spec.pci_domain), d.bus, 0u);
  pci->domain = static_cast<unsigned>(spec.pci_domain);
  pci->bus = d.bus;
  pci->device = 0;
  pci->pciDeviceId = (static_cast<unsigned>(spec.pci_device_id) << 16) | kPciVendorNvidia;
  pci->pciSubSystemId = pci->pciDeviceId;
}

void fill_pci(const nvmlDevice_st& d, nvmlPciInfo_t* pci) {
  std::memset(pci, 0, sizeof(*pci));
  fill_pci_legacy(d, pci);
  std::snprintf(pci->busId, sizeof(pci->busId), NVML_DEVICE_PCI_BUS_ID_FMT,
                static_cast<unsigned>(state().spec.pci_domain), d.bus, 0u);
}

// The layout of nvmlPciInfo_t before NVML 2.285's busId[32] (nvmlDeviceGetPciInfo and _v2 write it): the legacy
// fields then four reserved words, 16 bytes shorter than today's struct.
constexpr size_t kPciInfoV1Size = offsetof(nvmlPciInfo_t, busId) + 4 * sizeof(unsigned);

nvmlReturn_t pci_info_legacy(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  const nvmlDevice_st* d = dev(device);
  if (d == nullptr || pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  nvmlPciInfo_t full{};
  fill_pci(*d, &full);
  std::memset(pci, 0, kPciInfoV1Size);
  std::memcpy(pci, &full, offsetof(nvmlPciInfo_t, busId));
  return NVML_SUCCESS;
}

// Parses "0000:18:00.0", "00000000:18:00.0" or "18:00.0" (domain 0); false when it is none of these.
bool parse_bus_id(const char* text, unsigned* domain, unsigned* bus, unsigned* device) {
  unsigned a = 0, b = 0, c = 0, f = 0;
  if (std::sscanf(text, "%x:%x:%x.%x", &a, &b, &c, &f) >= 3) {
    *domain = a, *bus = b, *device = c;
    return true;
  }
  if (std::sscanf(text, "%x:%x.%x", &b, &c, &f) >= 2) {
    *domain = 0, *bus = b, *device = c;
    return true;
  }
  return false;
}

template <class Info>
nvmlReturn_t running_processes(nvmlDevice_t device, unsigned* count, Info* infos, bool full) {
  const nvmlDevice_st* d = dev(device);
  if (d == nullptr || count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const DeviceView v = view(d->index);
  const unsigned n = static_cast<unsigned>(v.procs.size());
  if (n == 0) {
    *count = 0;
    return NVML_SUCCESS;
  }
  if (infos == nullptr || *count < n) {
    *count = n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned i = 0; i < n; ++i) {
    std::memset(&infos[i], 0, sizeof(Info));
    infos[i].pid = v.procs[i].pid;
    infos[i].usedGpuMemory = v.procs[i].used_bytes;
    if constexpr (sizeof(Info) >= sizeof(nvmlProcessInfo_v2_t)) {
      if (full) {
        infos[i].gpuInstanceId = 0xFFFFFFFFu;  // no MIG (nvml.h)
        infos[i].computeInstanceId = 0xFFFFFFFFu;
      }
    }
  }
  *count = n;
  return NVML_SUCCESS;
}

nvmlReturn_t no_processes(nvmlDevice_t device, unsigned* count) {
  if (dev(device) == nullptr || count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *count = 0;  // no graphics or MPS clients on an emulated compute GPU
  return NVML_SUCCESS;
}

// NVLink generation of the architecture (Ampere 3, Hopper 4, Blackwell 5), as nvmlNvlinkVersion_t.
unsigned nvlink_version(const DeviceSpec& spec) {
  if (spec.cc_major >= 10) return NVML_NVLINK_VERSION_5_0;
  if (spec.cc_major == 9) return NVML_NVLINK_VERSION_4_0;
  return NVML_NVLINK_VERSION_3_0;
}

nvmlReturn_t check_link(nvmlDevice_t device, unsigned link) {
  if (dev(device) == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (state().spec.nvlink_links == 0) return NVML_ERROR_NOT_SUPPORTED;
  if (link >= static_cast<unsigned>(state().spec.nvlink_links)) return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_SUCCESS;
}

nvmlReturn_t clock_mhz(nvmlDevice_t device, nvmlClockType_t type, unsigned* mhz) {
  if (dev(device) == nullptr || mhz == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const DeviceSpec& spec = state().spec;
  switch (type) {
    case NVML_CLOCK_GRAPHICS:
    case NVML_CLOCK_SM:
      *mhz = static_cast<unsigned>(spec.sm_clock_khz / 1000);
      return NVML_SUCCESS;
    case NVML_CLOCK_MEM:
      *mhz = static_cast<unsigned>(spec.mem_clock_khz / 1000);
      return NVML_SUCCESS;
    default:
      return NVML_ERROR_NOT_SUPPORTED;  // the video clock is not in the presets
  }
}

nvmlReturn_t fabric_info_fill(unsigned char* cluster_uuid, nvmlReturn_t* status, unsigned* clique,
                              nvmlGpuFabricState_t* state_out) {
  std::memset(cluster_uuid, 0, NVML_GPU_FABRIC_UUID_LEN);
  *status = NVML_SUCCESS;
  *clique = 0;
  *state_out = NVML_GPU_FABRIC_STATE_NOT_SUPPORTED;  // no multi-node NVLink fabric (no IMEX domain) is emulated
  return NVML_SUCCESS;
}

}  // namespace

bool initialized() noexcept { return g_initialized.load(); }

}  // namespace genie::fakecuda::nvml

using namespace genie::fakecuda::nvml;  // NOLINT: the C ABI below is this file's only content
using genie::fakecuda::DeviceSpec;

#define GENIE_NVML_EXPORT extern "C" __attribute__((visibility("default")))

// --- init, shutdown, errors ---------------------------------------------------------------------------------------

GENIE_NVML_EXPORT nvmlReturn_t nvmlInit_v2(void) {
  return guard(__func__, false, [] { return init(); });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlInit(void) {
  return guard(__func__, false, [] { return init(); });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int flags) {
  return guard(__func__, false, [] { return init(); });  // NO_GPUS / NO_ATTACH: devices are always there
}

GENIE_NVML_EXPORT nvmlReturn_t nvmlShutdown(void) {
  return guard(__func__, false, [] {
    State& s = state();
    std::lock_guard lk(s.mu);
    if (s.refcount == 0) return NVML_ERROR_UNINITIALIZED;
    if (--s.refcount == 0) g_initialized.store(false);
    return NVML_SUCCESS;
  });
}

GENIE_NVML_EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case NVML_ERROR_ALREADY_INITIALIZED:
      return "Already Initialized";
    case NVML_ERROR_NOT_FOUND:
      return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case NVML_ERROR_INSUFFICIENT_POWER:
      return "Insufficient External Power";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT:
      return "Timeout";
    case NVML_ERROR_IRQ_ISSUE:
      return "Interrupt Request Issue";
    case NVML_ERROR_LIBRARY_NOT_FOUND:
      return "NVML Shared Library Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return "Function Not Found";
    case NVML_ERROR_CORRUPTED_INFOROM:
      return "Corrupted infoROM";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    case NVML_ERROR_RESET_REQUIRED:
      return "GPU requires restart";
    case NVML_ERROR_OPERATING_SYSTEM:
      return "The operating system has blocked the request.";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "RM has detected an NVML/RM version mismatch.";
    case NVML_ERROR_IN_USE:
      return "In use by another client";
    case NVML_ERROR_MEMORY:
      return "Insufficient Memory";
    case NVML_ERROR_NO_DATA:
      return "No data";
    case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED:
      return "vGPU ECC Not Supported";
    case NVML_ERROR_INSUFFICIENT_RESOURCES:
      return "Insufficient Resources";
    case NVML_ERROR_FREQ_NOT_SUPPORTED:
      return "Frequency Not Supported";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
      return "Argument Version Mismatch";
    case NVML_ERROR_DEPRECATED:
      return "Deprecated";
    case NVML_ERROR_NOT_READY:
      return "Not Ready";
    case NVML_ERROR_GPU_NOT_FOUND:
      return "GPU Not Found";
    case NVML_ERROR_INVALID_STATE:
      return "Invalid State";
    case NVML_ERROR_RESET_TYPE_NOT_SUPPORTED:
      return "Reset Type Not Supported";
    default:
      return "Unknown Error";
  }
}

// --- system -------------------------------------------------------------------------------------------------------

GENIE_NVML_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  return guard(__func__, true, [&] { return copy_string(genie::fakecuda::kReportedDriverVersion, version, length); });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
  return guard(__func__, true, [&] { return copy_string(nvml_version_string(), version, length); });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* v) {
  return guard(__func__, true, [&] {
    if (v == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *v = genie::fakecuda::kDriverVersion;
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* v) {
  return guard(__func__, true, [&] {
    if (v == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *v = genie::fakecuda::kDriverVersion;
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char* name, unsigned int length) {
  return guard(__func__, true, [&] {
    FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/comm").c_str(), "r");
    if (f == nullptr) return NVML_ERROR_NOT_FOUND;
    char buf[256] = {};
    const bool ok = std::fgets(buf, sizeof(buf), f) != nullptr;
    std::fclose(f);
    if (!ok) return NVML_ERROR_NOT_FOUND;
    std::string s = buf;
    while (!s.empty() && s.back() == '\n') s.pop_back();
    if (length == 0 || name == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    // The real call truncates to the buffer rather than failing.
    std::snprintf(name, length, "%s", s.c_str());
    return NVML_SUCCESS;
  });
}

// --- device enumeration -------------------------------------------------------------------------------------------

GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  return guard(__func__, true, [&] {
    if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *count = static_cast<unsigned>(state().devices);  // the node's devices: NVML ignores CUDA_VISIBLE_DEVICES
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) { return nvmlDeviceGetCount_v2(count); }

GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  return guard(__func__, true, [&] {
    if (device == nullptr || index >= static_cast<unsigned>(state().devices)) return NVML_ERROR_INVALID_ARGUMENT;
    *device = state().handles[index].get();
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return nvmlDeviceGetHandleByIndex_v2(index, device);
}

GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, nvmlDevice_t* device) {
  return guard(__func__, true, [&] {
    unsigned domain = 0, bus = 0, slot = 0;
    if (bus_id == nullptr || device == nullptr || !parse_bus_id(bus_id, &domain, &bus, &slot))
      return NVML_ERROR_INVALID_ARGUMENT;
    if (domain != static_cast<unsigned>(state().spec.pci_domain) || slot != 0) return NVML_ERROR_NOT_FOUND;
    for (auto& h : state().handles)
      if (h->bus == bus) {
        *device = h.get();
        return NVML_SUCCESS;
      }
    return NVML_ERROR_NOT_FOUND;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char* bus_id, nvmlDevice_t* device) {
  return nvmlDeviceGetHandleByPciBusId_v2(bus_id, device);
}

GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  return guard(__func__, true, [&] {
    if (uuid == nullptr || device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    for (auto& h : state().handles)
      if (strcasecmp(h->uuid.c_str(), uuid) == 0) {
        *device = h.get();
        return NVML_SUCCESS;
      }
    return NVML_ERROR_NOT_FOUND;
  });
}

GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleBySerial(const char* serial, nvmlDevice_t* device) {
  return guard(__func__, true, [&] {
    if (serial == nullptr || device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    for (auto& h : state().handles)
      if (h->serial == serial) {
        *device = h.get();
        return NVML_SUCCESS;
      }
    return NVML_ERROR_NOT_FOUND;
  });
}

// --- identity -----------------------------------------------------------------------------------------------------

GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  return guard(__func__, true, [&] {
    if (dev(device) == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    return copy_string(state().spec.name, name, length);
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  return guard(__func__, true, [&] {
    const nvmlDevice_st* d = dev(device);
    if (d == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    return copy_string(d->uuid, uuid, length);
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char* serial, unsigned int length) {
  return guard(__func__, true, [&] {
    const nvmlDevice_st* d = dev(device);
    if (d == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    return copy_string(d->serial, serial, length);
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index) {
  return guard(__func__, true, [&] {
    const nvmlDevice_st* d = dev(device);
    if (d == nullptr || index == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *index = static_cast<unsigned>(d->index);
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int* minor) {
  return guard(__func__, true, [&] {
    const nvmlDevice_st* d = dev(device);
    if (d == nullptr || minor == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *minor = static_cast<unsigned>(d->index);  // /dev/nvidia<minor>
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t device, nvmlBrandType_t* brand) {
  return guard(__func__, true, [&] {
    if (dev(device) == nullptr || brand == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *brand = NVML_BRAND_NVIDIA;  // data-center GPUs since Ampere report the NVIDIA brand, not Tesla
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device, nvmlDeviceArchitecture_t* arch) {
  return guard(__func__, true, [&] {
    if (dev(device) == nullptr || arch == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const DeviceSpec& spec = state().spec;
    if (spec.cc_major >= 10)
      *arch = NVML_DEVICE_ARCH_BLACKWELL;
    else if (spec.cc_major == 9)
      *arch = NVML_DEVICE_ARCH_HOPPER;
    else if (spec.cc_major == 8)
      *arch = spec.cc_minor == 9 ? NVML_DEVICE_ARCH_ADA : NVML_DEVICE_ARCH_AMPERE;
    else if (spec.cc_major == 7)
      *arch = spec.cc_minor >= 5 ? NVML_DEVICE_ARCH_TURING : NVML_DEVICE_ARCH_VOLTA;
    else
      *arch = NVML_DEVICE_ARCH_UNKNOWN;
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major, int* minor) {
  return guard(__func__, true, [&] {
    if (dev(device) == nullptr || major == nullptr || minor == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *major = state().spec.cc_major;
    *minor = state().spec.cc_minor;
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return guard(__func__, true, [&] {
    const nvmlDevice_st* d = dev(device);
    if (d == nullptr || pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    fill_pci(*d, pci);
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return guard(__func__, true, [&] { return pci_info_legacy(device, pci); });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return guard(__func__, true, [&] { return pci_info_legacy(device, pci); });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfoExt(nvmlDevice_t device, nvmlPciInfoExt_t* pci) {
  return guard(__func__, true, [&] {
    const nvmlDevice_st* d = dev(device);
    if (d == nullptr || pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (pci->version != nvmlPciInfoExt_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    nvmlPciInfo_t full{};
    fill_pci(*d, &full);
    std::memset(pci, 0, sizeof(*pci));
    pci->version = nvmlPciInfoExt_v1;
    pci->domain = full.domain;
    pci->bus = full.bus;
    pci->device = full.device;
    pci->pciDeviceId = full.pciDeviceId;
    pci->pciSubSystemId = full.pciSubSystemId;
    pci->baseClass = 0x03;  // display controller
    pci->subClass = 0x02;   // 3D controller, as data-center GPUs enumerate
    std::memcpy(pci->busId, full.busId, sizeof(pci->busId));
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int* gen) {
  return guard(__func__, true, [&] {
    if (dev(device) == nullptr || gen == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *gen = state().spec.cc_major >= 9 ? 5 : 4;  // Hopper and Blackwell are PCIe Gen5, Ampere Gen4 (datasheets)
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int* gen) {
  return nvmlDeviceGetMaxPcieLinkGeneration(device, gen);
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int* width) {
  return guard(__func__, true, [&] {
    if (dev(device) == nullptr || width == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *width = 16;
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int* width) {
  return nvmlDeviceGetMaxPcieLinkWidth(device, width);
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t device, unsigned int size, unsigned long* set) {
  return guard(__func__, true, [&] {
    if (dev(device) == nullptr || set == nullptr || size == 0) return NVML_ERROR_INVALID_ARGUMENT;
    // Every CPU this process may run on: an emulated device is near all of them.
    std::memset(set, 0, size * sizeof(unsigned long));
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0) return NVML_ERROR_UNKNOWN;
    const unsigned bits = 8 * sizeof(unsigned long);
    for (unsigned c = 0; c < size * bits && c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &cpus)) set[c / bits] |= 1UL << (c % bits);
    return NVML_SUCCESS;
  });
}

// --- memory, utilization, processes -------------------------------------------------------------------------------

GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  return guard(__func__, true, [&] {
    const nvmlDevice_st* d = dev(device);
    if (d == nullptr || memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const uint64_t total = state().spec.memory_bytes;
    const uint64_t used = std::min(view(d->index).used_bytes, total);
    memory->total = total;
    memory->used = used;
    memory->free = total - used;
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  return guard(__func__, true, [&] {
    const nvmlDevice_st* d = dev(device);
    if (d == nullptr || memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (memory->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    const uint64_t total = state().spec.memory_bytes;
    const uint64_t used = std::min(view(d->index).used_bytes, total);
    memory->total = total;
    memory->reserved = 0;  // the emulation sets nothing aside for a driver
    memory->used = used;
    memory->free = total - used;
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryBusWidth(nvmlDevice_t device, unsigned int* width) {
  return guard(__func__, true, [&] {
    if (dev(device) == nullptr || width == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *width = static_cast<unsigned>(state().spec.mem_bus_width_bits);
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNumGpuCores(nvmlDevice_t device, unsigned int* cores) {
  return guard(__func__, true, [&] {
    if (dev(device) == nullptr || cores == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    // FP32 lanes: 64 per SM on Ampere A100, 128 on Hopper and Blackwell (architecture whitepapers, presets' sources).
    *cores = static_cast<unsigned>(state().spec.sm_count * (state().spec.cc_major >= 9 ? 128 : 64));
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* util) {
  return guard(__func__, true, [&] {
    const nvmlDevice_st* d = dev(device);
    if (d == nullptr || util == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    const DeviceView v = view(d->index);
    util->gpu = v.util_gpu;
    util->memory = v.util_mem;
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int* count,
                                                                    nvmlProcessInfo_v1_t* infos) {
  return guard(__func__, true, [&] { return running_processes(device, count, infos, false); });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int* count,
                                                                       nvmlProcessInfo_v2_t* infos) {
  return guard(__func__, true, [&] { return running_processes(device, count, infos, true); });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* count,
                                                                       nvmlProcessInfo_t* infos) {
  return guard(__func__, true, [&] { return running_processes(device, count, infos, true); });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device, unsigned int* count,
                                                                     nvmlProcessInfo_v1_t*) {
  return guard(__func__, true, [&] { return no_processes(device, count); });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device, unsigned int* count,
                                                                        nvmlProcessInfo_v2_t*) {
  return guard(__func__, true, [&] { return no_processes(device, count); });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int* count,
                                                                        nvmlProcessInfo_t*) {
  return guard(__func__, true, [&] { return no_processes(device, count); });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses(nvmlDevice_t device, unsigned int* count,
                                                                       nvmlProcessInfo_v1_t*) {
  return guard(__func__, true, [&] { return no_processes(device, count); });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int* count,
                                                                          nvmlProcessInfo_v2_t*) {
  return guard(__func__, true, [&] { return no_processes(device, count); });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* count,
                                                                          nvmlProcessInfo_t*) {
  return guard(__func__, true, [&] { return no_processes(device, count); });
}

// --- clocks, power, temperature, modes ----------------------------------------------------------------------------

GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock) {
  return guard(__func__, true, [&] { return clock_mhz(device, type, clock); });  // nominal: always the boost clock
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                                         unsigned int* clock) {
  return guard(__func__, true, [&] { return clock_mhz(device, type, clock); });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetClock(nvmlDevice_t device, nvmlClockType_t type, nvmlClockId_t id,
                                                  unsigned int* clock) {
  return guard(__func__, true, [&] {
    if (id >= NVML_CLOCK_ID_COUNT) return NVML_ERROR_INVALID_ARGUMENT;
    return clock_mhz(device, type, clock);
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMaxCustomerBoostClock(nvmlDevice_t device, nvmlClockType_t type,
                                                                  unsigned int* clock) {
  return guard(__func__, true, [&] { return clock_mhz(device, type, clock); });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t device, nvmlClockType_t type,
                                                              unsigned int* clock) {
  return guard(__func__, true, [&] { return clock_mhz(device, type, clock); });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t device, nvmlClockType_t type,
                                                                     unsigned int* clock) {
  return guard(__func__, true, [&] { return clock_mhz(device, type, clock); });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* mw) {
  return guard(__func__, true, [&] {
    const nvmlDevice_st* d = dev(device);
    if (d == nullptr || mw == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (state().spec.power_limit_w == 0) return NVML_ERROR_NOT_SUPPORTED;
    *mw = genie::fakecuda::nominal_power_mw(state().spec, static_cast<int>(view(d->index).util_gpu));
    return NVML_SUCCESS;
  });
}
static nvmlReturn_t power_limit_mw(nvmlDevice_t device, unsigned int* mw) {
  if (dev(device) == nullptr || mw == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (state().spec.power_limit_w == 0) return NVML_ERROR_NOT_SUPPORTED;
  *mw = static_cast<unsigned>(state().spec.power_limit_w) * 1000u;
  return NVML_SUCCESS;
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int* mw) {
  return guard(__func__, true, [&] { return power_limit_mw(device, mw); });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device, unsigned int* mw) {
  return guard(__func__, true, [&] { return power_limit_mw(device, mw); });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* mw) {
  return guard(__func__, true, [&] { return power_limit_mw(device, mw); });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementMode(nvmlDevice_t device, nvmlEnableState_t* mode) {
  return guard(__func__, true, [&] {
    if (dev(device) == nullptr || mode == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *mode = state().spec.power_limit_w > 0 ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensor,
                                                        unsigned int* temp) {
  return guard(__func__, true, [&] {
    if (dev(device) == nullptr || temp == nullptr || sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
    if (state().spec.temperature_c == 0) return NVML_ERROR_NOT_SUPPORTED;
    *temp = static_cast<unsigned>(state().spec.temperature_c);
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t* temp) {
  return guard(__func__, true, [&] {
    if (dev(device) == nullptr || temp == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (temp->version != nvmlTemperature_v1) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (temp->sensorType != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
    if (state().spec.temperature_c == 0) return NVML_ERROR_NOT_SUPPORTED;
    temp->temperature = state().spec.temperature_c;
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlPstates_t* pstate) {
  return guard(__func__, true, [&] {
    if (dev(device) == nullptr || pstate == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *pstate = NVML_PSTATE_0;
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerState(nvmlDevice_t device, nvmlPstates_t* pstate) {
  return nvmlDeviceGetPerformanceState(device, pstate);
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                                      unsigned long long* reasons) {
  return guard(__func__, true, [&] {
    const nvmlDevice_st* d = dev(device);
    if (d == nullptr || reasons == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *reasons = view(d->index).util_gpu == 0 ? nvmlClocksEventReasonGpuIdle : nvmlClocksEventReasonNone;
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                                         unsigned long long* reasons) {
  return nvmlDeviceGetCurrentClocksEventReasons(device, reasons);
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t* mode) {
  return guard(__func__, true, [&] {
    if (dev(device) == nullptr || mode == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *mode = NVML_FEATURE_ENABLED;  // as on a data-center node with the persistence daemon
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, nvmlComputeMode_t* mode) {
  return guard(__func__, true, [&] {
    if (dev(device) == nullptr || mode == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *mode = NVML_COMPUTEMODE_DEFAULT;
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetDisplayMode(nvmlDevice_t device, nvmlEnableState_t* mode) {
  return guard(__func__, true, [&] {
    if (dev(device) == nullptr || mode == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *mode = NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetDisplayActive(nvmlDevice_t device, nvmlEnableState_t* mode) {
  return nvmlDeviceGetDisplayMode(device, mode);
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t* current,
                                                    nvmlEnableState_t* pending) {
  return guard(__func__, true, [&] {
    if (dev(device) == nullptr || current == nullptr || pending == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *current = *pending = NVML_FEATURE_ENABLED;  // HBM parts run with ECC on
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int* current, unsigned int* pending) {
  return guard(__func__, true, [&] {
    if (dev(device) == nullptr || current == nullptr || pending == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *current = *pending = NVML_DEVICE_MIG_DISABLE;
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int* is_mig) {
  return guard(__func__, true, [&] {
    if (dev(device) == nullptr || is_mig == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *is_mig = 0;
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMultiGpuBoard(nvmlDevice_t device, unsigned int* multi) {
  return guard(__func__, true, [&] {
    if (dev(device) == nullptr || multi == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *multi = 0;
    return NVML_SUCCESS;
  });
}

// --- topology: P2P, NVLink, fabric --------------------------------------------------------------------------------

GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2,
                                                      nvmlGpuP2PCapsIndex_t index, nvmlGpuP2PStatus_t* status) {
  return guard(__func__, true, [&] {
    if (dev(device1) == nullptr || dev(device2) == nullptr || status == nullptr || index >= NVML_P2P_CAPS_INDEX_UNKNOWN)
      return NVML_ERROR_INVALID_ARGUMENT;
    // NVML sees one node: every pair shares its NVLink domain (NVSwitch), and PCIe P2P works as well. A device
    // model without NVLink has PCIe only.
    const bool nvlink = state().spec.nvlink_links > 0;
    *status = index == NVML_P2P_CAPS_INDEX_NVLINK && !nvlink ? NVML_P2P_STATUS_NOT_SUPPORTED : NVML_P2P_STATUS_OK;
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceOnSameBoard(nvmlDevice_t device1, nvmlDevice_t device2, int* same) {
  return guard(__func__, true, [&] {
    if (dev(device1) == nullptr || dev(device2) == nullptr || same == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *same = 0;  // SXM modules: one GPU per board
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
                                                        nvmlEnableState_t* active) {
  return guard(__func__, true, [&] {
    if (active == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (nvmlReturn_t r = check_link(device, link); r != NVML_SUCCESS) return r;
    *active = NVML_FEATURE_ENABLED;
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t device, unsigned int link,
                                                          unsigned int* version) {
  return guard(__func__, true, [&] {
    if (version == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (nvmlReturn_t r = check_link(device, link); r != NVML_SUCCESS) return r;
    *version = nvlink_version(state().spec);
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkCapability(nvmlDevice_t device, unsigned int link,
                                                             nvmlNvLinkCapability_t cap, unsigned int* result) {
  return guard(__func__, true, [&] {
    if (result == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (nvmlReturn_t r = check_link(device, link); r != NVML_SUCCESS) return r;
    // P2P, system memory access, atomics: yes; SLI bridge and IBM NPU links: no.
    *result =
        cap == NVML_NVLINK_CAP_SLI_BRIDGE || cap == NVML_NVLINK_CAP_VALID ? (cap == NVML_NVLINK_CAP_VALID ? 1 : 0) : 1;
    return NVML_SUCCESS;
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link,
                                                                   nvmlIntNvLinkDeviceType_t* type) {
  return guard(__func__, true, [&] {
    if (type == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (nvmlReturn_t r = check_link(device, link); r != NVML_SUCCESS) return r;
    *type = NVML_NVLINK_DEVICE_TYPE_SWITCH;  // HGX nodes: every link goes to an NVSwitch (netsim's node presets)
    return NVML_SUCCESS;
  });
}
static nvmlReturn_t nvlink_remote_pci(nvmlDevice_t device, unsigned link, nvmlPciInfo_t* pci, bool legacy) {
  if (pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (nvmlReturn_t r = check_link(device, link); r != NVML_SUCCESS) return r;
  nvmlPciInfo_t p{};
  const unsigned domain = static_cast<unsigned>(state().spec.pci_domain);
  std::snprintf(p.busIdLegacy, sizeof(p.busIdLegacy), NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT, domain, kNvSwitchBus, 0u);
  std::snprintf(p.busId, sizeof(p.busId), NVML_DEVICE_PCI_BUS_ID_FMT, domain, kNvSwitchBus, 0u);
  p.domain = domain;
  p.bus = kNvSwitchBus;
  p.pciDeviceId = (kNvSwitchPciDeviceId << 16) | kPciVendorNvidia;
  p.pciSubSystemId = p.pciDeviceId;
  if (legacy) {
    std::memset(pci, 0, kPciInfoV1Size);
    std::memcpy(pci, &p, offsetof(nvmlPciInfo_t, busId));
  } else {
    *pci = p;
  }
  return NVML_SUCCESS;
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link,
                                                                   nvmlPciInfo_t* pci) {
  return guard(__func__, true, [&] { return nvlink_remote_pci(device, link, pci, false); });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo(nvmlDevice_t device, unsigned int link,
                                                                nvmlPciInfo_t* pci) {
  return guard(__func__, true, [&] { return nvlink_remote_pci(device, link, pci, true); });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t device, nvmlGpuFabricInfo_t* info) {
  return guard(__func__, true, [&] {
    if (dev(device) == nullptr || info == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    return fabric_info_fill(info->clusterUuid, &info->status, &info->cliqueId, &info->state);
  });
}
GENIE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfoV_t* info) {
  return guard(__func__, true, [&] {
    if (dev(device) == nullptr || info == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    // v2 and v3 share their first fields; v3 adds healthSummary.
    if (info->version != nvmlGpuFabricInfo_v2 && info->version != nvmlGpuFabricInfo_v3)
      return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    info->healthMask = 0;
    if (info->version == nvmlGpuFabricInfo_v3) info->healthSummary = NVML_GPU_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED;
    return fabric_info_fill(info->clusterUuid, &info->status, &info->cliqueId, &info->state);
  });
}
