// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the cudart ABI layer: the API guard, Status -> cudaError_t, last-error state.
#pragma once

#include <cuda_runtime_api.h>

#include <cstring>
#include <new>

#include "genie/common/enum_raw.hpp"
#include "genie/common/internal_scope.hpp"
#include "genie/common/log.hpp"
#include "genie/fakecuda/activity.hpp"
#include "genie/fakecuda/runtime.hpp"

/// Export marker for C ABI functions (the libraries are built with -fvisibility=hidden).
#define GENIE_CUDART_EXPORT extern "C" __attribute__((visibility("default")))

#ifndef GENIE_CUDART_MAJOR
#define GENIE_CUDART_MAJOR 13
#endif

namespace genie::fakecuda::abi {

using genie::enum_raw;

/// The one place a Status becomes a cudaError_t (STYLE.md §3). `fallback` is used for kInvalidUsage,
/// whose CUDA code depends on the call (capture misuse, handle misuse...).
cudaError_t to_cuda(const Status& s, cudaError_t fallback = cudaErrorInvalidValue) noexcept;

/// Records `e` as the thread's last error (cudaGetLastError), except cudaSuccess and cudaErrorNotReady.
void record_error(cudaError_t e) noexcept;
cudaError_t take_last_error() noexcept;
cudaError_t peek_last_error() noexcept;

/// CUDART_VERSION of this library (13020 for libcudart.so.13, 12080 for .so.12; cudart_device.cpp, which is
/// compiled once per soname). cudaGetDriverEntryPoint resolves driver functions for this version.
int cudart_runtime_version() noexcept;

/// The process runtime, or nullptr when it could not start (the caller returns init_error()).
Runtime* rt() noexcept;
cudaError_t init_error() noexcept;

/// Runs an API body: never lets an exception escape, records the returned error, logs a warning naming
/// the function for errors other than not-ready.
/// Name of the API function whose body is running on this thread (for messages from inside lambdas).
extern GENIE_TLS_FAST thread_local const char* t_api_name;

template <class F>
cudaError_t guard(const char* fn, F&& body) noexcept {
  cudaError_t e;
  InternalScope internal;
  const char* outer = t_api_name;
  t_api_name = fn;
  ApiActivityScope activity(ApiDomain::kRuntime, fn);  // a profiler's view of the call (activity.hpp)
  GENIE_LOG_TRACE(log::kFakecuda, "{}", fn);
  try {
    e = body();
  } catch (const std::bad_alloc&) {
    e = cudaErrorMemoryAllocation;
  } catch (const std::exception& ex) {
    GENIE_LOG_ERROR(log::kFakecuda, "{}: internal error: {}", fn, ex.what());
    e = cudaErrorUnknown;
  } catch (...) {
    GENIE_LOG_ERROR(log::kFakecuda, "{}: internal error", fn);
    e = cudaErrorUnknown;
  }
  t_api_name = outer;
  activity.set_result(static_cast<int>(e));
  if (e != cudaSuccess && e != cudaErrorNotReady) {
    record_error(e);
    GENIE_LOG_DEBUG(log::kFakecuda, "{} -> {}", fn, static_cast<int>(e));
  }
  return e;
}

/// Logs (warn) and returns `e`: for arguments rejected at the boundary, naming the argument.
cudaError_t reject(const char* fn, const char* what, cudaError_t e = cudaErrorInvalidValue) noexcept;

}  // namespace genie::fakecuda::abi

/// Body prologue: resolves the runtime or returns its init error.
#define GENIE_RT(var)                                        \
  ::genie::fakecuda::Runtime* var = ::genie::fakecuda::abi::rt(); \
  if (var == nullptr) return ::genie::fakecuda::abi::init_error()

/// Resolves a stream handle or returns cudaErrorInvalidResourceHandle.
#define GENIE_STREAM(var, rtv, handle, ptds)                                                         \
  ::genie::fakecuda::Stream* var = (rtv)->resolve_stream(static_cast<const void*>(handle), ptds);     \
  if (var == nullptr) return ::genie::fakecuda::abi::reject(__func__, "stream", cudaErrorInvalidResourceHandle)

/// Defines the plain export `name` and its per-thread-default-stream twin `name##_ptsz` from one body
/// template `impl_##name(bool ptds, args...)`.
#define GENIE_UNPAREN(...) __VA_ARGS__
#define GENIE_CUDART_PTSZ(name, params, args)                                                         \
  GENIE_CUDART_EXPORT cudaError_t name##_ptsz params;                                                 \
  GENIE_CUDART_EXPORT cudaError_t name params { return impl_##name(false, GENIE_UNPAREN args); }      \
  GENIE_CUDART_EXPORT cudaError_t name##_ptsz params { return impl_##name(true, GENIE_UNPAREN args); }
#define GENIE_CUDART_PTDS(name, params, args)                                                         \
  GENIE_CUDART_EXPORT cudaError_t name##_ptds params;                                                 \
  GENIE_CUDART_EXPORT cudaError_t name params { return impl_##name(false, GENIE_UNPAREN args); }      \
  GENIE_CUDART_EXPORT cudaError_t name##_ptds params { return impl_##name(true, GENIE_UNPAREN args); }
