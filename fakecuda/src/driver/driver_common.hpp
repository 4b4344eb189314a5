// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the emulated driver: the API guard, Status -> CUresult,
// init state, primary contexts.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>
#include <optional>

#include "genie/common/internal_scope.hpp"
#include "genie/common/log.hpp"
#include "genie/fakecuda/activity.hpp"
#include "genie/fakecuda/driver.hpp"
#include "genie/fakecuda/driver_api.hpp"
#include "genie/fakecuda/runtime.hpp"

namespace genie::fakecuda::drv::detail {

/// The one place a Status becomes a CUresult (STYLE.md §3). `fallback` is used
/// for kInvalidUsage.
CUresult to_cu(const Status& s, CUresult fallback = CUDA_ERROR_INVALID_VALUE) noexcept;

/// Logs (warn) and returns `e`: for arguments rejected at the boundary, naming
/// the argument.
CUresult reject(const char* fn, const char* what, CUresult e = CUDA_ERROR_INVALID_VALUE) noexcept;

/// Logs (warn) that `fn` is not emulated and returns CUDA_ERROR_NOT_SUPPORTED.
CUresult not_supported(const char* fn) noexcept;

/// Runs an API body `body(fn)`: never lets an exception escape, logs errors at
/// debug level. The body gets the API name so that the GENIE_CU_* macros and
/// reject() name the function (a lambda's __func__ would not).
template <class F>
CUresult guard(const char* fn, F&& body) noexcept {
  InternalScope internal;
  ApiActivityScope activity(ApiDomain::kDriver, fn);  // a profiler's view of the call (activity.hpp)
  CUresult e;
  try {
    e = body(fn);
  } catch (const std::bad_alloc&) {
    e = CUDA_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& ex) {
    GENIE_LOG_ERROR(log::kFakecuda, "{}: internal error: {}", fn, ex.what());
    e = CUDA_ERROR_UNKNOWN;
  } catch (...) {
    GENIE_LOG_ERROR(log::kFakecuda, "{}: internal error", fn);
    e = CUDA_ERROR_UNKNOWN;
  }
  activity.set_result(static_cast<int>(e));
  if (e != CUDA_SUCCESS && e != CUDA_ERROR_NOT_READY)
    GENIE_LOG_DEBUG(log::kFakecuda, "{} -> {}", fn, static_cast<int>(e));
  return e;
}

/// True once cuInit succeeded or the runtime was used
/// (driver_mark_initialized).
bool initialized() noexcept;

/// The process runtime, or nullptr when the configuration could not be
/// honoured.
Runtime* runtime() noexcept;

/// A primary context: one per device, never freed; the CUcontext handle is its
/// address.
struct Context {
  static constexpr uint32_t kMagic = 0x63747874u;  // "ctxt"
  uint32_t magic = kMagic;
  int device = 0;
  std::mutex mu;
  unsigned flags = 0;   ///< cuDevicePrimaryCtxSetFlags flags
  int retained = 0;     ///< cuDevicePrimaryCtxRetain count
  bool active = false;  ///< made current, retained or used since the last reset
};

/// The primary context of `device` (valid ordinal of `r`).
Context* primary(Runtime& r, int device);
/// A CUcontext we handed out, validated; nullptr otherwise.
Context* from_handle(Runtime& r, CUcontext ctx);
/// The calling thread's current context (the primary context of the runtime's
/// current device unless the thread popped or cleared it); nullptr when there
/// is none.
Context* current(Runtime& r);

inline CUdeviceptr to_dptr(const void* p) { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }
inline void* from_dptr(CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }

/// A cuMemMap mapping (driver_vmm.cpp), as pointer queries report it.
struct VmmMapping {
  uintptr_t base = 0;  ///< start of the mapping
  size_t size = 0;
  int device = 0;             ///< location of the physical allocation
  uint64_t handle_types = 0;  ///< CUmemAllocationHandleType bits requested at cuMemCreate
  uint64_t block_id = 0;      ///< process-unique id of the physical allocation
  unsigned access = 0;        ///< CU_MEM_ACCESS_FLAGS_PROT_* granted by cuMemSetAccess
};
/// The mapping containing `p`, if any.
std::optional<VmmMapping> vmm_find(uintptr_t p);

/// Per-lookup result of the entry-point table (driver_api.cpp).
/// The live function behind `f` (a CUfunction, or a CUkernel of a loaded library, whose function is made at its first
/// use), nullptr when there is none (driver_module.cpp).
CUfunction live_function(CUfunction f);

enum class Lookup { kFound, kNotFound, kVersionTooLow };
/// Looks `name` up for `cuda_version`; `ptds` selects the
/// per-thread-default-stream variant when one exists.
Lookup lookup_entry_point(const char* name, int cuda_version, bool ptds, void** fn) noexcept;

}  // namespace genie::fakecuda::drv::detail

/// Body prologue: the driver must be initialised and the runtime alive.
#define GENIE_CU_RT(var)                                                                 \
  if (!::genie::fakecuda::drv::detail::initialized()) return CUDA_ERROR_NOT_INITIALIZED; \
  ::genie::fakecuda::Runtime* var = ::genie::fakecuda::drv::detail::runtime();           \
  if (var == nullptr) return CUDA_ERROR_NOT_INITIALIZED

/// The GENIE_CU_* macros are used inside guard bodies, where `fn` names the
/// API. Resolves the calling thread's current context or returns
/// CUDA_ERROR_INVALID_CONTEXT.
#define GENIE_CU_CTX(var, rtv)                                                                    \
  ::genie::fakecuda::drv::detail::Context* var = ::genie::fakecuda::drv::detail::current(*(rtv)); \
  if (var == nullptr) return ::genie::fakecuda::drv::detail::reject(fn, "current context", CUDA_ERROR_INVALID_CONTEXT)

/// Validates a device ordinal or returns CUDA_ERROR_INVALID_DEVICE.
#define GENIE_CU_DEVICE(rtv, dev)                  \
  if ((dev) < 0 || (dev) >= (rtv)->device_count()) \
  return ::genie::fakecuda::drv::detail::reject(fn, "device", CUDA_ERROR_INVALID_DEVICE)

/// Resolves a CUstream (same handle space as cudaStream_t) or returns
/// CUDA_ERROR_INVALID_HANDLE.
#define GENIE_CU_STREAM(var, rtv, handle, ptds)                                                   \
  ::genie::fakecuda::Stream* var = (rtv)->resolve_stream(static_cast<const void*>(handle), ptds); \
  if (var == nullptr) return ::genie::fakecuda::drv::detail::reject(fn, "stream", CUDA_ERROR_INVALID_HANDLE)
