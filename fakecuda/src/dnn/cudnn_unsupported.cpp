// SPDX-License-Identifier: Apache-2.0
// libcudnn.so.9 exports that are not emulated (the legacy convolution, normalisation, RNN, CTC, pooling ... API):
// each answers CUDNN_STATUS_NOT_SUPPORTED and logs a warning, so a client that links any cuDNN name loads and
// fails cleanly at the call. No cuDNN header is included: the stubs take no parameters (every cuDNN function
// returns cudnnStatus_t or is ignored; on x86-64 SysV a callee that ignores its arguments is ABI-compatible).
#include "genie/common/log.hpp"

namespace {
constexpr int kCudnnStatusNotSupported = 3000;  // CUDNN_STATUS_NOT_SUPPORTED in cudnn_graph_v9.h
int not_emulated(const char* name) {
  GENIE_LOG_WARN(genie::log::kFakecuda, "{} is not emulated by Genie (CUDNN_STATUS_NOT_SUPPORTED)", name);
  return kCudnnStatusNotSupported;
}
}  // namespace

#define X(name)                                                 \
  extern "C" __attribute__((visibility("default"))) int name(); \
  extern "C" __attribute__((visibility("default"))) int name() { return not_emulated(#name); }
#include "cudnn_unsupported.inc"
#undef X
