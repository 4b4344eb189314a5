// SPDX-License-Identifier: Apache-2.0
// cudart ABI helpers: error conversion and thread-local last error.
#include "abi_common.hpp"

#include "genie/fakecuda/driver.hpp"

#include <cstring>

namespace genie::fakecuda::abi {
GENIE_TLS_FAST thread_local const char* t_api_name = nullptr;

namespace {
GENIE_TLS_FAST thread_local cudaError_t t_last_error = cudaSuccess;
}

cudaError_t to_cuda(const Status& s, cudaError_t fallback) noexcept {
  switch (s.code()) {
    case Errc::kOk: return cudaSuccess;
    case Errc::kInvalidArgument: return cudaErrorInvalidValue;
    case Errc::kInvalidUsage: return fallback;
    case Errc::kUnsupported: return cudaErrorNotSupported;
    case Errc::kNotFound: return cudaErrorInvalidResourceHandle;
    case Errc::kOutOfMemory: return cudaErrorMemoryAllocation;
    case Errc::kNotReady: return cudaErrorNotReady;
    case Errc::kTimeout: return cudaErrorLaunchTimeout;
    case Errc::kRemote:
    case Errc::kSystem:
    case Errc::kInternal: return cudaErrorUnknown;
  }
  return cudaErrorUnknown;
}

void record_error(cudaError_t e) noexcept {
  if (e != cudaSuccess && e != cudaErrorNotReady) t_last_error = e;
}

cudaError_t take_last_error() noexcept {
  cudaError_t e = t_last_error;
  t_last_error = cudaSuccess;
  return e;
}

cudaError_t peek_last_error() noexcept { return t_last_error; }

Runtime* rt() noexcept {
  try {
    driver_mark_initialized();  // the real cudart calls cuInit on first use; driver calls then work
    return Runtime::instance();
  } catch (...) {
    return nullptr;
  }
}

cudaError_t init_error() noexcept {
  // A configuration that cannot be honoured (unknown GENIE_DEVICE, bad file): the logged message says why.
  return cudaErrorInitializationError;
}

cudaError_t reject(const char* fn, const char* what, cudaError_t e) noexcept {
  if (t_api_name != nullptr && std::strcmp(fn, "operator()") == 0) fn = t_api_name;
  GENIE_LOG_WARN(log::kFakecuda, "{}: invalid argument '{}'", fn, what);
  return e;
}

}  // namespace genie::fakecuda::abi

namespace genie::fakecuda::abi {
void record_error_code(int e) noexcept { record_error(static_cast<cudaError_t>(e)); }
}  // namespace genie::fakecuda::abi
