// SPDX-License-Identifier: Apache-2.0
// libcublas / libcublasLt exports that are not emulated: each answers CUBLAS_STATUS_NOT_SUPPORTED and logs a
// warning, so a client that links or dlsym()s any name of NVIDIA's library loads and fails cleanly.
//
// This file must not include the cuBLAS headers: the stubs take no parameters (every cuBLAS function returns
// cublasStatus_t, an int, or ignores its result; on x86-64 SysV a callee that ignores its arguments is
// ABI-compatible with any caller), so their declarations would clash with the headers' prototypes.
#include "genie/common/log.hpp"

namespace {
constexpr int kCublasStatusNotSupported = 15;  // CUBLAS_STATUS_NOT_SUPPORTED in cublas_api.h
int not_emulated(const char* name) {
  GENIE_LOG_WARN(genie::log::kFakecuda, "{} is not emulated by Genie (CUBLAS_STATUS_NOT_SUPPORTED)", name);
  return kCublasStatusNotSupported;
}
}  // namespace

#define X(name)                                                 \
  extern "C" __attribute__((visibility("default"))) int name(); \
  extern "C" __attribute__((visibility("default"))) int name() { return not_emulated(#name); }
#ifdef GENIE_CUBLASLT_STUBS
#include "cublaslt_unsupported.inc"
#else
#include "cublas_unsupported.inc"
#endif
#undef X
