// SPDX-License-Identifier: Apache-2.0
// libcupti.so.13 exports that are not emulated (events, metrics, PC sampling, the profiler and range-profiler APIs,
// NVTX payloads, checkpoints, ...): each answers CUPTI_ERROR_NOT_SUPPORTED and logs a warning, so a client that
// links any CUPTI name loads and fails cleanly at the call. No CUPTI header is included: the stubs take no
// parameters (every CUPTI function returns CUptiResult; on x86-64 SysV a callee that ignores its arguments is
// ABI-compatible).
#include "genie/common/log.hpp"

namespace {
constexpr int kCuptiErrorNotSupported = 27;  // CUPTI_ERROR_NOT_SUPPORTED in cupti_result.h
int not_emulated(const char* name) {
  GENIE_LOG_WARN(genie::log::kFakecuda, "{} is not emulated by Genie (CUPTI_ERROR_NOT_SUPPORTED)", name);
  return kCuptiErrorNotSupported;
}
}  // namespace

#define X(name)                                                 \
  extern "C" __attribute__((visibility("default"))) int name(); \
  extern "C" __attribute__((visibility("default"))) int name() { return not_emulated(#name); }
#include "cupti_unsupported.inc"
#undef X
