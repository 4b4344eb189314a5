// SPDX-License-Identifier: Apache-2.0
// libcudnn.so.9: what a framework needs to run with cuDNN present. Version queries answer the version of the
// nvidia-cudnn wheel the program brought (9.19 with torch 2.11+cu130, 9.26 with torch 2.15), so the framework's
// "compiled against / found" check passes whatever its wheel (wheel_version.hpp); handles,
// streams, callbacks and error strings keep real state. The backend (graph) API keeps every descriptor's
// attributes, finalizes descriptors, and offers no engines: heuristics return zero configurations and execution
// plans cannot be finalized, so cudnn-frontend reports "no valid engine" as cuDNN does for an unsupported graph.
// docs/costmodel.md ("cuDNN") lists which PyTorch paths result (SDPA runs on flash/memory-efficient attention
// with TORCH_CUDNN_SDPA_DEPRIORITIZED=1, which `genie run` and `genie env` set).
#include <cudnn.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "genie/common/enum_raw.hpp"
#include "genie/common/log.hpp"
#include "genie/fakecuda/runtime.hpp"
#include "genie/fakecuda/wheel_version.hpp"

#define GENIE_CUDNN_EXPORT extern "C" __attribute__((visibility("default")))

using genie::enum_raw;

namespace {

GENIE_TLS_FAST thread_local char t_last_error[256] = "";

cudnnStatus_t fail(const char* fn, const char* what, cudnnStatus_t st) {
  std::snprintf(t_last_error, sizeof(t_last_error), "%s: %s", fn, what);
  GENIE_LOG_WARN(genie::log::kFakecuda, "{}: {} (cuDNN status {})", fn, what, static_cast<int>(st));
  return st;
}

template <class F>
cudnnStatus_t guard(const char* fn, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(fn, "out of host memory", CUDNN_STATUS_ALLOC_FAILED);
  } catch (const std::exception& e) {
    return fail(fn, e.what(), CUDNN_STATUS_INTERNAL_ERROR);
  } catch (...) {
    return fail(fn, "internal error", CUDNN_STATUS_INTERNAL_ERROR);
  }
}

// --- handles -------------------------------------------------------------------------------------------------------
struct DnnHandle {
  static constexpr uint32_t kMagic = 0x63646e6eu;  // "cdnn"
  uint32_t magic = kMagic;
  cudaStream_t stream = nullptr;
};

struct Registry {
  std::shared_mutex mu;
  std::unordered_map<const void*, std::unique_ptr<DnnHandle>> handles;
  std::unordered_map<const void*, std::unique_ptr<struct BackendDesc>> descriptors;
};
Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: used from atexit handlers
  return *r;
}

DnnHandle* find_handle(const void* h) {
  Registry& r = registry();
  std::shared_lock lk(r.mu);
  auto it = r.handles.find(h);
  return it == r.handles.end() ? nullptr : it->second.get();
}

// --- backend descriptors --------------------------------------------------------------------------------------
struct Attr {
  int type = 0;
  int64_t count = 0;
  std::vector<unsigned char> bytes;
};

struct BackendDesc {
  int type = 0;
  bool finalized = false;
  std::map<int, Attr> attrs;
};

/// Size of one element of a backend attribute type (cudnn_graph_v9.h: enums are int, descriptors and handles are
/// pointers, cudnnFraction_t is two int64).
int64_t element_size(int type) {
  switch (type) {
    case CUDNN_TYPE_HANDLE: case CUDNN_TYPE_VOID_PTR: case CUDNN_TYPE_BACKEND_DESCRIPTOR: return sizeof(void*);
    case CUDNN_TYPE_BOOLEAN: return sizeof(bool);
    case CUDNN_TYPE_INT64: return sizeof(int64_t);
    case CUDNN_TYPE_FLOAT: return sizeof(float);
    case CUDNN_TYPE_DOUBLE: return sizeof(double);
    case CUDNN_TYPE_CHAR: return sizeof(char);
    case CUDNN_TYPE_FRACTION: return sizeof(cudnnFraction_t);
    default: return type >= 0 && type <= CUDNN_TYPE_MOE_GROUPED_MATMUL_MODE ? static_cast<int64_t>(sizeof(int)) : 0;
  }
}

BackendDesc* find_desc(const void* d) {
  Registry& r = registry();
  std::shared_lock lk(r.mu);
  auto it = r.descriptors.find(d);
  return it == r.descriptors.end() ? nullptr : it->second.get();
}

}  // namespace

// --- versions, errors, callbacks ------------------------------------------------------------------------------
namespace {
/// The cuDNN version the program brought (its nvidia-cudnn wheel, or fakecuda.cudnn_version), else the headers'.
genie::fakecuda::LibraryVersion reported_version() {
  return genie::fakecuda::program_library_version(genie::fakecuda::WheelLibrary::kCudnn9,
                                                  {CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL});
}
}  // namespace

GENIE_CUDNN_EXPORT size_t cudnnGetVersion(void) { return static_cast<size_t>(reported_version().encoded()); }
// Not a library version: the newest compute capability the library has code for. NVIDIA's libcudnn.so.9 answers 1210
// (12.1) in both 9.19.0 and 9.26.0 (called through ctypes, no GPU needed), and so does this one.
GENIE_CUDNN_EXPORT size_t cudnnGetMaxDeviceVersion(void) { return 1210; }
// cuDNN 9.19 for CUDA 13 was built on 13.1 (NVIDIA's library answers 13010; 9.26 answers 13040). No framework checks
// it, so it stays the 9.19 answer.
GENIE_CUDNN_EXPORT size_t cudnnGetCudartVersion(void) { return 13010; }

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetProperty(libraryPropertyType type, int* value) {
  if (value == nullptr) return fail(__func__, "value is null", CUDNN_STATUS_BAD_PARAM);  // as libcudnn 9.19
  switch (enum_raw(type)) {
    case MAJOR_VERSION: *value = reported_version().major; return CUDNN_STATUS_SUCCESS;
    case MINOR_VERSION: *value = reported_version().minor; return CUDNN_STATUS_SUCCESS;
    case PATCH_LEVEL: *value = reported_version().patch; return CUDNN_STATUS_SUCCESS;
    default: return fail(__func__, "type", CUDNN_STATUS_BAD_PARAM);
  }
}

GENIE_CUDNN_EXPORT const char* cudnnGetErrorString(cudnnStatus_t status) {
  switch (enum_raw(status)) {
#define GENIE_S(x) \
  case x: return #x;
    GENIE_S(CUDNN_STATUS_SUCCESS)
    GENIE_S(CUDNN_STATUS_NOT_INITIALIZED)
    GENIE_S(CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH)
    GENIE_S(CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH)
    GENIE_S(CUDNN_STATUS_DEPRECATED)
    GENIE_S(CUDNN_STATUS_LICENSE_ERROR)
    GENIE_S(CUDNN_STATUS_RUNTIME_IN_PROGRESS)
    GENIE_S(CUDNN_STATUS_RUNTIME_FP_OVERFLOW)
    GENIE_S(CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED)
    GENIE_S(CUDNN_STATUS_BAD_PARAM)
    case 2001: return "CUDNN_STATUS_INVALID_VALUE";  // deprecated enumerator (cudnn_graph.h), still named
    GENIE_S(CUDNN_STATUS_BAD_PARAM_NULL_POINTER)
    GENIE_S(CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER)
    GENIE_S(CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED)
    GENIE_S(CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND)
    GENIE_S(CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT)
    GENIE_S(CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH)
    GENIE_S(CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH)
    GENIE_S(CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES)
    GENIE_S(CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE)
    GENIE_S(CUDNN_STATUS_BAD_PARAM_CUDA_GRAPH_MISMATCH)
    GENIE_S(CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE)
    GENIE_S(CUDNN_STATUS_NOT_SUPPORTED)
    GENIE_S(CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN)
    GENIE_S(CUDNN_STATUS_NOT_SUPPORTED_SHAPE)
    GENIE_S(CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE)
    GENIE_S(CUDNN_STATUS_NOT_SUPPORTED_LAYOUT)
    GENIE_S(CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER)
    GENIE_S(CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART)
    GENIE_S(CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH)
    GENIE_S(CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING)
    GENIE_S(CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE)
    GENIE_S(CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT)
    GENIE_S(CUDNN_STATUS_NOT_SUPPORTED_PADDING)
    GENIE_S(CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM)
    GENIE_S(CUDNN_STATUS_NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API)
    GENIE_S(CUDNN_STATUS_NOT_SUPPORTED_INVALID_DYNAMIC_SHAPE)
    GENIE_S(CUDNN_STATUS_INTERNAL_ERROR)
    GENIE_S(CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED)
    GENIE_S(CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE)
    GENIE_S(CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED)
    GENIE_S(CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED)
    GENIE_S(CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM)
    GENIE_S(CUDNN_STATUS_INTERNAL_ERROR_TEXTURE_CREATION_FAILED)
    GENIE_S(CUDNN_STATUS_EXECUTION_FAILED)
    GENIE_S(CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER)
    GENIE_S(CUDNN_STATUS_EXECUTION_FAILED_CUBLAS)
    GENIE_S(CUDNN_STATUS_EXECUTION_FAILED_CUDART)
    GENIE_S(CUDNN_STATUS_EXECUTION_FAILED_CURAND)
#undef GENIE_S
    default: return "CUDNN_UNKNOWN_STATUS";  // libcudnn 9's text for a code it does not know
  }
}

GENIE_CUDNN_EXPORT void cudnnGetLastErrorString(char* message, size_t max_size) {
  if (message == nullptr || max_size == 0) return;
  std::snprintf(message, max_size, "%s", t_last_error);
  t_last_error[0] = '\0';
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnQueryRuntimeError(cudnnHandle_t handle, cudnnStatus_t* rstatus,
                                                        cudnnErrQueryMode_t, cudnnRuntimeTag_t*) {
  if (find_handle(handle) == nullptr) return fail(__func__, "handle", CUDNN_STATUS_BAD_PARAM);
  if (rstatus == nullptr) return fail(__func__, "rstatus is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
  *rstatus = CUDNN_STATUS_SUCCESS;  // kernels do not run: no device-side errors
  return CUDNN_STATUS_SUCCESS;
}

namespace {
std::mutex g_callback_mu;
unsigned g_callback_mask = 0;
void* g_callback_udata = nullptr;
cudnnCallback_t g_callback = nullptr;
}  // namespace

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnSetCallback(unsigned mask, void* udata, cudnnCallback_t fptr) {
  std::lock_guard lk(g_callback_mu);
  g_callback_mask = mask;
  g_callback_udata = udata;
  g_callback = fptr;
  return CUDNN_STATUS_SUCCESS;
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetCallback(unsigned* mask, void** udata, cudnnCallback_t* fptr) {
  if (mask == nullptr || udata == nullptr || fptr == nullptr)
    return fail(__func__, "null output", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
  std::lock_guard lk(g_callback_mu);
  *mask = g_callback_mask;
  *udata = g_callback_udata;
  *fptr = g_callback;
  return CUDNN_STATUS_SUCCESS;
}

// The sub-libraries are all "present" and of the same version.
GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGraphVersionCheck(void) { return CUDNN_STATUS_SUCCESS; }
GENIE_CUDNN_EXPORT cudnnStatus_t cudnnOpsVersionCheck(void) { return CUDNN_STATUS_SUCCESS; }
GENIE_CUDNN_EXPORT cudnnStatus_t cudnnCnnVersionCheck(void) { return CUDNN_STATUS_SUCCESS; }
GENIE_CUDNN_EXPORT cudnnStatus_t cudnnAdvVersionCheck(void) { return CUDNN_STATUS_SUCCESS; }

// --- handles and streams --------------------------------------------------------------------------------------
GENIE_CUDNN_EXPORT cudnnStatus_t cudnnCreate(cudnnHandle_t* handle) {
  return guard(__func__, [&] {
    if (handle == nullptr) return fail("cudnnCreate", "handle is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    if (genie::fakecuda::Runtime::instance() == nullptr)
      return fail("cudnnCreate", "the CUDA emulation cannot start", CUDNN_STATUS_NOT_INITIALIZED);
    auto h = std::make_unique<DnnHandle>();
    DnnHandle* p = h.get();
    Registry& r = registry();
    std::unique_lock lk(r.mu);
    r.handles.emplace(p, std::move(h));
    *handle = reinterpret_cast<cudnnHandle_t>(p);
    return CUDNN_STATUS_SUCCESS;
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) {
  return guard(__func__, [&] {
    Registry& r = registry();
    std::unique_lock lk(r.mu);
    if (r.handles.erase(handle) == 0) return fail("cudnnDestroy", "handle", CUDNN_STATUS_BAD_PARAM);
    return CUDNN_STATUS_SUCCESS;
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream) {
  DnnHandle* h = find_handle(handle);
  if (h == nullptr) return fail(__func__, "handle", CUDNN_STATUS_BAD_PARAM);
  h->stream = stream;
  return CUDNN_STATUS_SUCCESS;
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnGetStream(cudnnHandle_t handle, cudaStream_t* stream) {
  DnnHandle* h = find_handle(handle);
  if (h == nullptr) return fail(__func__, "handle", CUDNN_STATUS_BAD_PARAM);
  if (stream == nullptr) return fail(__func__, "streamId is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
  *stream = h->stream;
  return CUDNN_STATUS_SUCCESS;
}

// --- the backend (graph) API ----------------------------------------------------------------------------------
GENIE_CUDNN_EXPORT cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type,
                                                              cudnnBackendDescriptor_t* descriptor) {
  return guard(__func__, [&] {
    if (descriptor == nullptr) return fail("cudnnBackendCreateDescriptor", "descriptor is null",
                                           CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    int t = enum_raw(type);
    if (t < 0 || t > CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR)
      return fail("cudnnBackendCreateDescriptor", "descriptorType", CUDNN_STATUS_BAD_PARAM);
    auto d = std::make_unique<BackendDesc>();
    d->type = t;
    BackendDesc* p = d.get();
    Registry& r = registry();
    std::unique_lock lk(r.mu);
    r.descriptors.emplace(p, std::move(d));
    *descriptor = reinterpret_cast<cudnnBackendDescriptor_t>(p);
    return CUDNN_STATUS_SUCCESS;
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor) {
  return guard(__func__, [&] {
    Registry& r = registry();
    std::unique_lock lk(r.mu);
    if (r.descriptors.erase(descriptor) == 0)
      return fail("cudnnBackendDestroyDescriptor", "descriptor", CUDNN_STATUS_BAD_PARAM);
    return CUDNN_STATUS_SUCCESS;
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnBackendInitialize(cudnnBackendDescriptor_t descriptor) {
  BackendDesc* d = find_desc(descriptor);
  if (d == nullptr) return fail(__func__, "descriptor", CUDNN_STATUS_BAD_PARAM);
  d->attrs.clear();
  d->finalized = false;
  return CUDNN_STATUS_SUCCESS;
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor) {
  BackendDesc* d = find_desc(descriptor);
  if (d == nullptr) return fail(__func__, "descriptor", CUDNN_STATUS_BAD_PARAM);
  if (d->finalized) return fail(__func__, "descriptor is already finalized", CUDNN_STATUS_BAD_PARAM);
  // No engine exists in this library, so none can be selected, configured or planned.
  if (d->type == CUDNN_BACKEND_ENGINE_DESCRIPTOR || d->type == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR ||
      d->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)
    return fail(__func__, "cuDNN engines are not emulated by Genie", CUDNN_STATUS_NOT_SUPPORTED);
  d->finalized = true;
  return CUDNN_STATUS_SUCCESS;
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
                                                          cudnnBackendAttributeName_t name,
                                                          cudnnBackendAttributeType_t type, int64_t count,
                                                          const void* elements) {
  return guard(__func__, [&] {
    BackendDesc* d = find_desc(descriptor);
    if (d == nullptr) return fail("cudnnBackendSetAttribute", "descriptor", CUDNN_STATUS_BAD_PARAM);
    if (d->finalized)
      return fail("cudnnBackendSetAttribute", "descriptor is finalized", CUDNN_STATUS_NOT_INITIALIZED);
    const int64_t size = element_size(enum_raw(type));
    if (size == 0) return fail("cudnnBackendSetAttribute", "attributeType", CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE);
    if (count < 0) return fail("cudnnBackendSetAttribute", "elementCount", CUDNN_STATUS_BAD_PARAM);
    if (count > 0 && elements == nullptr)
      return fail("cudnnBackendSetAttribute", "arrayOfElements is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    Attr a;
    a.type = enum_raw(type);
    a.count = count;
    a.bytes.assign(static_cast<const unsigned char*>(elements), static_cast<const unsigned char*>(elements) + count * size);
    d->attrs[enum_raw(name)] = std::move(a);
    return CUDNN_STATUS_SUCCESS;
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const descriptor,
                                                          cudnnBackendAttributeName_t name,
                                                          cudnnBackendAttributeType_t type, int64_t requested,
                                                          int64_t* count, void* elements) {
  return guard(__func__, [&] {
    BackendDesc* d = find_desc(descriptor);
    if (d == nullptr) return fail("cudnnBackendGetAttribute", "descriptor", CUDNN_STATUS_BAD_PARAM);
    if (!d->finalized) return fail("cudnnBackendGetAttribute", "descriptor is not finalized",
                                   CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED);
    const int n = enum_raw(name);
    // What the library computes rather than stores: no engine exists for any operation graph, and heuristics
    // therefore return no configurations.
    if (n == CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT || n == CUDNN_ATTR_ENGINEHEUR_RESULTS) {
      if (count == nullptr) return fail("cudnnBackendGetAttribute", "elementCount is null",
                                        CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
      *count = 0;
      if (n == CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT && elements != nullptr && requested >= 1) {
        int64_t zero = 0;
        std::memcpy(elements, &zero, sizeof(zero));
        *count = 1;
      }
      return CUDNN_STATUS_SUCCESS;
    }
    auto it = d->attrs.find(n);
    if (it == d->attrs.end())
      return fail("cudnnBackendGetAttribute", "attribute was never set", CUDNN_STATUS_NOT_SUPPORTED);
    if (it->second.type != enum_raw(type))
      return fail("cudnnBackendGetAttribute", "attributeType", CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE);
    if (count == nullptr) return fail("cudnnBackendGetAttribute", "elementCount is null",
                                      CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    *count = it->second.count;
    if (elements != nullptr && requested > 0) {
      const int64_t n_copy = std::min(requested, it->second.count);
      std::memcpy(elements, it->second.bytes.data(), static_cast<size_t>(n_copy * element_size(it->second.type)));
    }
    return CUDNN_STATUS_SUCCESS;
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t, cudnnBackendDescriptor_t) {
  if (find_handle(handle) == nullptr) return fail(__func__, "handle", CUDNN_STATUS_BAD_PARAM);
  return fail(__func__, "cuDNN engines are not emulated by Genie", CUDNN_STATUS_NOT_SUPPORTED);
}
