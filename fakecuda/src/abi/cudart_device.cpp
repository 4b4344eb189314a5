// SPDX-License-Identifier: Apache-2.0
// cudart ABI: devices, properties, versions, errors, peer access.
#include <cstring>
#include <string>

#include "abi_common.hpp"
#include "genie/fakecuda/driver.hpp"

using namespace genie::fakecuda;
using genie::fakecuda::abi::guard;
using genie::fakecuda::abi::reject;

namespace {

// CUDART_VERSION of the runtime we emulate (genie/fakecuda/driver.hpp: 13.2 for .so.13, 12.8 for .so.12) and the
// driver version we report (13.2, the same for both).
constexpr int kRuntimeVersion = GENIE_CUDART_MAJOR == 12 ? kCudart12Version : kCudart13Version;

cudaError_t check_device(Runtime* r, int device) {
  return device < 0 || device >= r->device_count() ? cudaErrorInvalidDevice : cudaSuccess;
}

// The name and text NVIDIA's libcudart gives a code ("unrecognized error code" for both when it knows none).
constexpr const char* kUnrecognized = "unrecognized error code";

const char* error_name(cudaError_t e) {
  switch (static_cast<int>(e)) {
#define X(name, value, text) \
  case value: return #name;
#include "cuda_error_names.inc"
#undef X
  }
  return kUnrecognized;
}

const char* error_string(cudaError_t e) {
  switch (static_cast<int>(e)) {
#define X(name, value, text) \
  case value: return text;
#include "cuda_error_names.inc"
#undef X
  }
  return kUnrecognized;
}

}  // namespace

int genie::fakecuda::abi::cudart_runtime_version() noexcept { return kRuntimeVersion; }

GENIE_CUDART_EXPORT cudaError_t cudaGetDeviceCount(int* count) {
  return guard(__func__, [&]() -> cudaError_t {
    if (count == nullptr) return reject(__func__, "count");
    GENIE_RT(r);
    *count = r->device_count();
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaSetDevice(int device) {
  return guard(__func__, [&]() -> cudaError_t {
    GENIE_RT(r);
    if (check_device(r, device) != cudaSuccess) return reject(__func__, "device", cudaErrorInvalidDevice);
    r->set_current_device(device);
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaInitDevice(int device, unsigned int, unsigned int) {
  return guard(__func__, [&]() -> cudaError_t {
    GENIE_RT(r);
    return check_device(r, device);
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaGetDevice(int* device) {
  return guard(__func__, [&]() -> cudaError_t {
    if (device == nullptr) return reject(__func__, "device");
    GENIE_RT(r);
    *device = r->current_device();
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaSetDeviceFlags(unsigned int) { return cudaSuccess; }
GENIE_CUDART_EXPORT cudaError_t cudaGetDeviceFlags(unsigned int* flags) {
  if (flags == nullptr) return guard(__func__, [] { return reject("cudaGetDeviceFlags", "flags"); });
  *flags = 0;
  return cudaSuccess;
}

#if GENIE_CUDART_MAJOR == 12
// CUDA 12 headers map cudaGetDeviceProperties to cudaGetDeviceProperties_v2; both write the 12.x layout.
GENIE_CUDART_EXPORT cudaError_t cudaGetDeviceProperties_v2(void* prop, int device);
GENIE_CUDART_EXPORT cudaError_t cudaGetDeviceProperties_v2(void* prop, int device) {
  return guard(__func__, [&]() -> cudaError_t {
    if (prop == nullptr) return reject(__func__, "prop");
    GENIE_RT(r);
    if (check_device(r, device) != cudaSuccess) return reject(__func__, "device", cudaErrorInvalidDevice);
    fill_device_prop_v12(r->device(device).spec(), device, prop);
    return cudaSuccess;
  });
}
GENIE_CUDART_EXPORT cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  return cudaGetDeviceProperties_v2(prop, device);
}
#else
GENIE_CUDART_EXPORT cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  return guard(__func__, [&]() -> cudaError_t {
    if (prop == nullptr) return reject(__func__, "prop");
    GENIE_RT(r);
    if (check_device(r, device) != cudaSuccess) return reject(__func__, "device", cudaErrorInvalidDevice);
    fill_device_prop(r->device(device).spec(), device, prop);
    return cudaSuccess;
  });
}
#endif

GENIE_CUDART_EXPORT cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  return guard(__func__, [&]() -> cudaError_t {
    if (value == nullptr) return reject(__func__, "value");
    GENIE_RT(r);
    if (check_device(r, device) != cudaSuccess) return reject(__func__, "device", cudaErrorInvalidDevice);
    auto v = device_attribute(r->device(device).spec(), device, abi::enum_raw(attr));
    if (!v.is_ok()) return reject(__func__, "attr");
    *value = v.value();
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaDeviceGetPCIBusId(char* pciBusId, int len, int device) {
  return guard(__func__, [&]() -> cudaError_t {
    if (pciBusId == nullptr || len <= 0) return reject(__func__, "pciBusId");
    GENIE_RT(r);
    if (check_device(r, device) != cudaSuccess) return reject(__func__, "device", cudaErrorInvalidDevice);
    std::string id = pci_bus_id(r->device(device).spec(), device);
    std::strncpy(pciBusId, id.c_str(), static_cast<size_t>(len));
    pciBusId[len - 1] = '\0';
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaDeviceGetByPCIBusId(int* device, const char* pciBusId) {
  return guard(__func__, [&]() -> cudaError_t {
    if (device == nullptr || pciBusId == nullptr) return reject(__func__, "pciBusId");
    GENIE_RT(r);
    for (int d = 0; d < r->device_count(); ++d) {
      if (strcasecmp(pci_bus_id(r->device(d).spec(), d).c_str(), pciBusId) == 0) {
        *device = d;
        return cudaSuccess;
      }
    }
    return reject(__func__, "pciBusId", cudaErrorInvalidDevice);
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaDeviceSynchronize(void) {
  return guard(__func__, [&]() -> cudaError_t {
    GENIE_RT(r);
    return abi::to_cuda(r->synchronize_device(r->current_device()), cudaErrorStreamCaptureUnsupported);
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaDeviceReset(void) {
  return guard(__func__, [&]() -> cudaError_t {
    GENIE_RT(r);
    // Work is waited for; allocations stay valid (a real reset would destroy the context; programs
    // call this at exit, where keeping the memory is harmless).
    return abi::to_cuda(r->synchronize_device(r->current_device()));
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total) {
  return guard(__func__, [&]() -> cudaError_t {
    if (free_bytes == nullptr || total == nullptr) return reject(__func__, "free/total");
    GENIE_RT(r);
    Device& d = r->device(r->current_device());
    *total = d.spec().memory_bytes;
    *free_bytes = d.spec().memory_bytes - d.used_bytes();
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaDriverGetVersion(int* v) {
  if (v == nullptr) return guard(__func__, [] { return reject("cudaDriverGetVersion", "driverVersion"); });
  *v = kDriverVersion;
  return cudaSuccess;
}

GENIE_CUDART_EXPORT cudaError_t cudaRuntimeGetVersion(int* v) {
  if (v == nullptr) return guard(__func__, [] { return reject("cudaRuntimeGetVersion", "runtimeVersion"); });
  *v = kRuntimeVersion;
  return cudaSuccess;
}

GENIE_CUDART_EXPORT const char* cudaGetErrorString(cudaError_t e) { return error_string(e); }

GENIE_CUDART_EXPORT const char* cudaGetErrorName(cudaError_t e) { return error_name(e); }

GENIE_CUDART_EXPORT cudaError_t cudaGetLastError(void) { return abi::take_last_error(); }
GENIE_CUDART_EXPORT cudaError_t cudaPeekAtLastError(void) { return abi::peek_last_error(); }

GENIE_CUDART_EXPORT cudaError_t cudaDeviceCanAccessPeer(int* can, int device, int peer) {
  return guard(__func__, [&]() -> cudaError_t {
    if (can == nullptr) return reject(__func__, "canAccessPeer");
    GENIE_RT(r);
    if (check_device(r, device) != cudaSuccess || check_device(r, peer) != cudaSuccess)
      return reject(__func__, "device", cudaErrorInvalidDevice);
    *can = device != peer ? 1 : 0;  // all emulated GPUs of a node share NVLink through NVSwitch
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags) {
  return guard(__func__, [&]() -> cudaError_t {
    GENIE_RT(r);
    if (flags != 0) return reject(__func__, "flags");
    int cur = r->current_device();
    if (check_device(r, peer) != cudaSuccess || peer == cur) return reject(__func__, "peerDevice", cudaErrorInvalidDevice);
    if (r->device(cur).peer_access_enabled(peer)) return cudaErrorPeerAccessAlreadyEnabled;
    r->device(cur).set_peer_access(peer, true);
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaDeviceDisablePeerAccess(int peer) {
  return guard(__func__, [&]() -> cudaError_t {
    GENIE_RT(r);
    int cur = r->current_device();
    if (check_device(r, peer) != cudaSuccess) return reject(__func__, "peerDevice", cudaErrorInvalidDevice);
    if (!r->device(cur).peer_access_enabled(peer)) return cudaErrorPeerAccessNotEnabled;
    r->device(cur).set_peer_access(peer, false);
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
  if (least) *least = genie::fakecuda::kLeastStreamPriority;
  if (greatest) *greatest = genie::fakecuda::kGreatestStreamPriority;
  return cudaSuccess;
}

GENIE_CUDART_EXPORT cudaError_t cudaDeviceSetLimit(cudaLimit, size_t) { return cudaSuccess; }
GENIE_CUDART_EXPORT cudaError_t cudaDeviceGetLimit(size_t* value, cudaLimit limit) {
  return guard(__func__, [&]() -> cudaError_t {
    if (value == nullptr) return reject(__func__, "pValue");
    switch (limit) {
      case cudaLimitStackSize: *value = 1024; break;
      case cudaLimitPrintfFifoSize: *value = 1 << 20; break;
      case cudaLimitMallocHeapSize: *value = 8 << 20; break;
      default: *value = 0; break;
    }
    return cudaSuccess;
  });
}
GENIE_CUDART_EXPORT cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache) { return cudaSuccess; }
GENIE_CUDART_EXPORT cudaError_t cudaDeviceGetCacheConfig(cudaFuncCache* c) {
  if (c) *c = cudaFuncCachePreferNone;
  return c ? cudaSuccess : cudaErrorInvalidValue;
}
GENIE_CUDART_EXPORT cudaError_t cudaProfilerStart(void) { return cudaSuccess; }
GENIE_CUDART_EXPORT cudaError_t cudaProfilerStop(void) { return cudaSuccess; }
