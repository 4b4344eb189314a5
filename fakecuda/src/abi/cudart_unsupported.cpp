// SPDX-License-Identifier: Apache-2.0
// Every other name the real libcudart exports: present, so programs load and link, and answering
// cudaErrorNotSupported with a warning naming the function, so nothing silently pretends to work.
// This file deliberately includes no CUDA header: each stub is declared without parameters (the x86-64
// C calling convention lets the caller pass any arguments) and returns the cudaError_t value as int.
#include <mutex>
#include <set>
#include <string>

#include "genie/common/log.hpp"

namespace genie::fakecuda::abi {
void record_error_code(int e) noexcept;

namespace {
constexpr int kCudaErrorNotSupported = 801;  // cudaErrorNotSupported in driver_types.h

int not_supported(const char* name) noexcept {
  try {
    static std::mutex mu;
    static std::set<std::string> warned;
    std::lock_guard lk(mu);
    if (warned.insert(name).second)
      GENIE_LOG_WARN(log::kFakecuda, "{} is not emulated by Genie: returning cudaErrorNotSupported", name);
  } catch (...) {
  }
  record_error_code(kCudaErrorNotSupported);
  return kCudaErrorNotSupported;
}
}  // namespace
}  // namespace genie::fakecuda::abi

#define X(name) \
  extern "C" __attribute__((visibility("default"))) int name() { return genie::fakecuda::abi::not_supported(#name); }
#include "cudart_unsupported.inc"
#undef X
