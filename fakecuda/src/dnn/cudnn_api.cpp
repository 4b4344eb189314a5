// SPDX-License-Identifier: Apache-2.0
// libcudnn.so.9: what a framework needs to run with cuDNN present. Version queries answer the version of the
// nvidia-cudnn wheel the program brought (9.19 with torch 2.11+cu130, 9.26 with torch 2.15), so the framework's
// "compiled against / found" check passes whatever its wheel (wheel_version.hpp); handles,
// streams, callbacks and error strings keep real state. The backend (graph) API is cudnn_backend.cpp, its
// convolution engines conv_engines.cpp, the legacy descriptor API cudnn_legacy.cpp (docs/costmodel.md "cuDNN").
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
#include "dnn/dnn_common.hpp"

using genie::enum_raw;
using genie::fakecuda::dnn::DnnHandle;
using genie::fakecuda::dnn::fail;
using genie::fakecuda::dnn::find_handle;
using genie::fakecuda::dnn::guard;

namespace genie::fakecuda::dnn {
namespace {
GENIE_TLS_FAST thread_local char t_last_error[256] = "";

struct HandleRegistry {
  std::shared_mutex mu;
  std::unordered_map<const void*, std::unique_ptr<DnnHandle>> handles;
};
HandleRegistry& handle_registry() {
  static HandleRegistry* r = new HandleRegistry();  // never destroyed: used from atexit handlers
  return *r;
}
}  // namespace

char* last_error_buffer() { return t_last_error; }
size_t last_error_capacity() { return sizeof(t_last_error); }

cudnnStatus_t fail(const char* fn, const char* what, cudnnStatus_t st) {
  std::snprintf(t_last_error, sizeof(t_last_error), "%s: %s", fn, what);
  GENIE_LOG_WARN(genie::log::kFakecuda, "{}: {} (cuDNN status {})", fn, what, static_cast<int>(st));
  return st;
}

cudnnStatus_t fail(const char* fn, const std::string& what, cudnnStatus_t st) { return fail(fn, what.c_str(), st); }

DnnHandle* find_handle(const void* h) {
  HandleRegistry& r = handle_registry();
  std::shared_lock lk(r.mu);
  auto it = r.handles.find(h);
  return it == r.handles.end() ? nullptr : it->second.get();
}
}  // namespace genie::fakecuda::dnn

using genie::fakecuda::dnn::handle_registry;
using genie::fakecuda::dnn::HandleRegistry;

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
  char* last = genie::fakecuda::dnn::last_error_buffer();
  std::snprintf(message, max_size, "%s", last);
  last[0] = '\0';
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
    HandleRegistry& r = handle_registry();
    std::unique_lock lk(r.mu);
    r.handles.emplace(p, std::move(h));
    *handle = reinterpret_cast<cudnnHandle_t>(p);
    return CUDNN_STATUS_SUCCESS;
  });
}

GENIE_CUDNN_EXPORT cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) {
  return guard(__func__, [&] {
    HandleRegistry& r = handle_registry();
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
