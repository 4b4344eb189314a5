// SPDX-License-Identifier: Apache-2.0
// libcuda.so.1: the real library's exports that are not emulated. Each answers
// CUDA_ERROR_NOT_SUPPORTED and logs a warning, so a client that dlsym()s or
// links any driver symbol loads and fails cleanly.
//
// This file must not include cuda.h: the stubs take no parameters (every driver
// function returns CUresult, an int, and on x86-64 SysV a callee that ignores
// its arguments is ABI-compatible with any caller), so their declarations would
// clash with cuda.h's prototypes.
#include "genie/fakecuda/driver.hpp"

#define X(name)                                                 \
  extern "C" __attribute__((visibility("default"))) int name(); \
  extern "C" __attribute__((visibility("default"))) int name() { return ::genie::fakecuda::driver_not_emulated(#name); }
#include "libcuda_unsupported.inc"
#undef X
