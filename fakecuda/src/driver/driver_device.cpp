// SPDX-License-Identifier: Apache-2.0
// Driver API: initialisation, versions, error strings, devices, primary
// contexts, context queries.
#include <driver_types.h>  // cudaDeviceProp, to take the UUID from the same fill_device_prop as the runtime

#include <strings.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "driver_common.hpp"

namespace genie::fakecuda::drv {
using detail::guard;
using detail::reject;

namespace {

// Context flags the driver accepts (CU_CTX_SCHED_MASK | CU_CTX_MAP_HOST |
// CU_CTX_LMEM_RESIZE_TO_MAX | CU_CTX_COREDUMP_ENABLE |
// CU_CTX_USER_COREDUMP_ENABLE | CU_CTX_SYNC_MEMOPS), cuda.h CUctx_flags.
constexpr unsigned kValidCtxFlags = CU_CTX_SCHED_MASK | CU_CTX_MAP_HOST | CU_CTX_LMEM_RESIZE_TO_MAX |
                                    CU_CTX_COREDUMP_ENABLE | CU_CTX_USER_COREDUMP_ENABLE | CU_CTX_SYNC_MEMOPS;

const char* error_name(int e) {
  switch (e) {
#define X(name, value) \
  case value:          \
    return #name;
#include "cu_error_names.inc"
#undef X
  }
  return nullptr;
}

// Descriptions as the real cuGetErrorString prints them (cuda.h enum comments),
// for the codes we return.
const char* error_string(int e) {
  switch (e) {
    case CUDA_SUCCESS:
      return "no error";
    case CUDA_ERROR_INVALID_VALUE:
      return "invalid argument";
    case CUDA_ERROR_OUT_OF_MEMORY:
      return "out of memory";
    case CUDA_ERROR_NOT_INITIALIZED:
      return "initialization error";
    case CUDA_ERROR_DEINITIALIZED:
      return "driver shutting down";
    case CUDA_ERROR_NO_DEVICE:
      return "no CUDA-capable device is detected";
    case CUDA_ERROR_INVALID_DEVICE:
      return "invalid device ordinal";
    case CUDA_ERROR_INVALID_IMAGE:
      return "device kernel image is invalid";
    case CUDA_ERROR_INVALID_CONTEXT:
      return "invalid device context";
    case CUDA_ERROR_INVALID_HANDLE:
      return "invalid resource handle";
    case CUDA_ERROR_NOT_FOUND:
      return "named symbol not found";
    case CUDA_ERROR_NOT_READY:
      return "device not ready";
    case CUDA_ERROR_ILLEGAL_ADDRESS:
      return "an illegal memory access was encountered";
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
      return "too many resources requested for launch";
    case CUDA_ERROR_LAUNCH_TIMEOUT:
      return "the launch timed out and was terminated";
    case CUDA_ERROR_LAUNCH_FAILED:
      return "unspecified launch failure";
    case CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE:
      return "primary context active";
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return "context is destroyed";
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
      return "operation not permitted when stream is capturing";
    case CUDA_ERROR_NOT_SUPPORTED:
      return "operation not supported";
    case CUDA_ERROR_NOT_PERMITTED:
      return "operation not permitted";
    case CUDA_ERROR_ALREADY_MAPPED:
      return "resource already mapped";
    case CUDA_ERROR_NOT_MAPPED:
      return "resource not mapped";
    case CUDA_ERROR_UNKNOWN:
      return "unknown error";
    default:
      return nullptr;
  }
}

/// Attributes only the driver answers (cudaDeviceAttr has no name or a Reserved
/// slot for them); values describe what this emulation supports. nullopt: ask
/// device_attribute() (the enums share values).
std::optional<int> driver_only_attribute(const DeviceSpec& spec, int attr) {
  switch (attr) {
    case CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER:
      return 1;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
      return 1;  // cuMemCreate/cuMemMap emulated
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
      return 1;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED:
      return 0;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED:
      return 0;
    case CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED:
      return 0;
    case CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED:
      return 0;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS:
      return 1;
    case CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR:
      return 1;
    case CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED:
      return 0;
    case CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED:
      return spec.cc_major >= 9 ? 1 : 0;  // TMA: sm_90+
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED:
      return 0;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS:
      return 1;
    case CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED:
      return 0;  // cuMulticast* not emulated
    case CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK:
      return 0;
    case CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH:
      return 0;
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
      return 0;
    case CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
      return 0;
    case CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED:
      return 0;
    default:
      return std::nullopt;
  }
}

}  // namespace

// --- initialisation, versions, errors
// ---------------------------------------------------------------
CUresult cuInit(unsigned int Flags) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (Flags != 0) return reject(fn, "Flags");
    Runtime* r = detail::runtime();
    // A configuration that cannot be honoured leaves no device (the runtime
    // logged why).
    if (r == nullptr || r->device_count() == 0) return CUDA_ERROR_NO_DEVICE;
    driver_mark_initialized();
    return CUDA_SUCCESS;
  });
}

CUresult cuDriverGetVersion(int* driverVersion) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (driverVersion == nullptr) return reject(fn, "driverVersion");
    *driverVersion = kDriverVersion;  // answered before cuInit, as by the real driver
    return CUDA_SUCCESS;
  });
}

// A C caller may pass any integer as a CUresult: read it as bytes (loading an out-of-range value as
// the enum type is undefined behaviour).
static int raw_code(const CUresult& e) {
  int v;
  std::memcpy(&v, &e, sizeof(v));
  return v;
}

CUresult cuGetErrorString(CUresult error, const char** pStr) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (pStr == nullptr) return reject(fn, "pStr");
    const char* s = error_string(raw_code(error));
    *pStr = s != nullptr ? s : error_name(raw_code(error));
    return *pStr != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  });
}

CUresult cuGetErrorName(CUresult error, const char** pStr) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (pStr == nullptr) return reject(fn, "pStr");
    *pStr = error_name(raw_code(error));
    return *pStr != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  });
}

// The driver's private function tables (NVIDIA's cudart, CUPTI and other tools ask for them by UUID): Genie has
// none, so every table id gets a clear refusal, CUDA_ERROR_NOT_SUPPORTED with a null table, which callers take as
// "not available" and fall back from (Genie's own libcupti.so.13 asks for none). Logged once per table id.
CUresult cuGetExportTable(const void** ppExportTable, const CUuuid* pExportTableId) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (ppExportTable == nullptr) return reject(fn, "ppExportTable");
    *ppExportTable = nullptr;
    if (pExportTableId == nullptr) return reject(fn, "pExportTableId");
    static constexpr char kHex[] = "0123456789abcdef";
    std::string id;
    for (char b : pExportTableId->bytes) {
      id += kHex[static_cast<unsigned char>(b) >> 4];
      id += kHex[static_cast<unsigned char>(b) & 0xf];
    }
    static std::mutex mu;
    static std::set<std::string> seen;
    std::lock_guard lk(mu);
    if (seen.insert(id).second)
      GENIE_LOG_WARN(log::kFakecuda, "{}: no driver export table {} in Genie (CUDA_ERROR_NOT_SUPPORTED); a tool "
                     "that needs it falls back or reports it", fn, id);
    return CUDA_ERROR_NOT_SUPPORTED;
  });
}

// --- devices
// ----------------------------------------------------------------------------------------
CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (device == nullptr) return reject(fn, "device");
    GENIE_CU_RT(r);
    GENIE_CU_DEVICE(r, ordinal);
    *device = ordinal;
    return CUDA_SUCCESS;
  });
}

CUresult cuDeviceGetCount(int* count) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (count == nullptr) return reject(fn, "count");
    GENIE_CU_RT(r);
    *count = r->device_count();
    return CUDA_SUCCESS;
  });
}

CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (name == nullptr || len <= 0) return reject(fn, name ? "len" : "name");
    GENIE_CU_RT(r);
    GENIE_CU_DEVICE(r, dev);
    const std::string& n = r->device(dev).spec().name;
    size_t k = std::min(n.size(), static_cast<size_t>(len) - 1);
    std::memcpy(name, n.data(), k);
    name[k] = '\0';
    return CUDA_SUCCESS;
  });
}

CUresult cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (pi == nullptr) return reject(fn, "pi");
    GENIE_CU_RT(r);
    GENIE_CU_DEVICE(r, dev);
    int a = static_cast<int>(attrib);
    if (a <= 0 || a >= static_cast<int>(CU_DEVICE_ATTRIBUTE_MAX)) return reject(fn, "attrib");
    const DeviceSpec& spec = r->device(dev).spec();
    if (auto v = driver_only_attribute(spec, a)) {
      *pi = *v;
      return CUDA_SUCCESS;
    }
    // CUdevice_attribute and cudaDeviceAttr share their values (checked in
    // driver_api_test.cpp).
    auto v = device_attribute(spec, dev, a);
    if (!v.is_ok()) return reject(fn, "attrib");
    *pi = v.value();
    return CUDA_SUCCESS;
  });
}

CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (bytes == nullptr) return reject(fn, "bytes");
    GENIE_CU_RT(r);
    GENIE_CU_DEVICE(r, dev);
    *bytes = r->device(dev).spec().memory_bytes;
    return CUDA_SUCCESS;
  });
}

CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (uuid == nullptr) return reject(fn, "uuid");
    GENIE_CU_RT(r);
    GENIE_CU_DEVICE(r, dev);
    auto prop = std::make_unique<cudaDeviceProp>();  // the runtime's UUID, by
                                                     // construction
    fill_device_prop(r->device(dev).spec(), dev, prop.get());
    static_assert(sizeof(prop->uuid) == sizeof(*uuid));
    std::memcpy(uuid, &prop->uuid, sizeof(*uuid));
    return CUDA_SUCCESS;
  });
}

CUresult cuDeviceComputeCapability(int* major, int* minor, CUdevice dev) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (major == nullptr || minor == nullptr) return reject(fn, major ? "minor" : "major");
    GENIE_CU_RT(r);
    GENIE_CU_DEVICE(r, dev);
    *major = r->device(dev).spec().cc_major;
    *minor = r->device(dev).spec().cc_minor;
    return CUDA_SUCCESS;
  });
}

CUresult cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (pciBusId == nullptr || len <= 0) return reject(fn, "pciBusId");
    GENIE_CU_RT(r);
    GENIE_CU_DEVICE(r, dev);
    std::string id = pci_bus_id(r->device(dev).spec(), dev);
    std::strncpy(pciBusId, id.c_str(), static_cast<size_t>(len));
    pciBusId[len - 1] = '\0';
    return CUDA_SUCCESS;
  });
}

CUresult cuDeviceGetByPCIBusId(CUdevice* dev, const char* pciBusId) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (dev == nullptr || pciBusId == nullptr) return reject(fn, dev ? "pciBusId" : "dev");
    GENIE_CU_RT(r);
    for (int d = 0; d < r->device_count(); ++d) {
      if (strcasecmp(pci_bus_id(r->device(d).spec(), d).c_str(), pciBusId) == 0) {
        *dev = d;
        return CUDA_SUCCESS;
      }
    }
    return reject(fn, "pciBusId", CUDA_ERROR_INVALID_DEVICE);
  });
}

CUresult cuDeviceCanAccessPeer(int* canAccessPeer, CUdevice dev, CUdevice peerDev) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (canAccessPeer == nullptr) return reject(fn, "canAccessPeer");
    GENIE_CU_RT(r);
    GENIE_CU_DEVICE(r, dev);
    GENIE_CU_DEVICE(r, peerDev);
    *canAccessPeer = dev != peerDev ? 1 : 0;  // as cudaDeviceCanAccessPeer: one NVSwitch domain
    return CUDA_SUCCESS;
  });
}

// --- primary contexts
// ---------------------------------------------------------------------------------
CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (pctx == nullptr) return reject(fn, "pctx");
    GENIE_CU_RT(r);
    GENIE_CU_DEVICE(r, dev);
    detail::Context* c = detail::primary(*r, dev);
    std::lock_guard lk(c->mu);
    ++c->retained;
    c->active = true;
    *pctx = reinterpret_cast<CUcontext>(c);
    return CUDA_SUCCESS;
  });
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    GENIE_CU_DEVICE(r, dev);
    detail::Context* c = detail::primary(*r, dev);
    std::lock_guard lk(c->mu);
    if (c->retained == 0) return reject(fn, "dev (primary context not retained)", CUDA_ERROR_INVALID_CONTEXT);
    --c->retained;  // the context stays: the runtime still uses it (its memory
                    // and streams live on)
    return CUDA_SUCCESS;
  });
}

CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (flags == nullptr || active == nullptr) return reject(fn, flags ? "active" : "flags");
    GENIE_CU_RT(r);
    GENIE_CU_DEVICE(r, dev);
    detail::Context* c = detail::primary(*r, dev);
    std::lock_guard lk(c->mu);
    *flags = c->flags;
    // Active once used: retained, made current, or holding memory (the runtime
    // allocated on it).
    *active = (c->active || c->retained > 0 || r->device(dev).used_bytes() > 0) ? 1 : 0;
    return CUDA_SUCCESS;
  });
}

CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    GENIE_CU_DEVICE(r, dev);
    if ((flags & ~kValidCtxFlags) != 0 || (flags & CU_CTX_SCHED_MASK) == 0x3 || (flags & CU_CTX_SCHED_MASK) > 0x4)
      return reject(fn, "flags");
    detail::Context* c = detail::primary(*r, dev);
    std::lock_guard lk(c->mu);
    c->flags = flags;
    return CUDA_SUCCESS;
  });
}

CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    GENIE_CU_DEVICE(r, dev);
    // Work is waited for; allocations stay valid (as cudaDeviceReset here: the
    // runtime owns them).
    CUresult e = detail::to_cu(r->synchronize_device(dev));
    detail::Context* c = detail::primary(*r, dev);
    std::lock_guard lk(c->mu);
    c->active = false;
    c->retained = 0;
    return e;
  });
}

// --- context queries
// ----------------------------------------------------------------------------------
CUresult cuCtxGetDevice(CUdevice* device) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (device == nullptr) return reject(fn, "device");
    GENIE_CU_RT(r);
    GENIE_CU_CTX(c, r);
    *device = c->device;
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxGetDevice_v2(CUdevice* device, CUcontext ctx) {
  if (ctx == nullptr) return drv::cuCtxGetDevice(device);
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (device == nullptr) return reject(fn, "device");
    GENIE_CU_RT(r);
    detail::Context* c = detail::from_handle(*r, ctx);
    if (c == nullptr) return reject(fn, "ctx", CUDA_ERROR_INVALID_CONTEXT);
    *device = c->device;
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxSynchronize() {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    GENIE_CU_CTX(c, r);
    return detail::to_cu(r->synchronize_device(c->device), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  });
}

CUresult cuCtxSynchronize_v2(CUcontext ctx) {
  if (ctx == nullptr) return drv::cuCtxSynchronize();
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    detail::Context* c = detail::from_handle(*r, ctx);
    if (c == nullptr) return reject(fn, "ctx", CUDA_ERROR_INVALID_CONTEXT);
    return detail::to_cu(r->synchronize_device(c->device), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  });
}

CUresult cuCtxGetFlags(unsigned int* flags) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (flags == nullptr) return reject(fn, "flags");
    GENIE_CU_RT(r);
    GENIE_CU_CTX(c, r);
    std::lock_guard lk(c->mu);
    *flags = c->flags;
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    GENIE_CU_CTX(c, r);
    (void)c;
    if (leastPriority != nullptr) *leastPriority = kLeastStreamPriority;
    if (greatestPriority != nullptr) *greatestPriority = kGreatestStreamPriority;
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxDestroy_v2(CUcontext ctx) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    // Only primary contexts exist and they cannot be destroyed with
    // cuCtxDestroy.
    (void)ctx;
    return reject(fn, "ctx (a primary context)", CUDA_ERROR_INVALID_CONTEXT);
  });
}

}  // namespace genie::fakecuda::drv
