// SPDX-License-Identifier: Apache-2.0
// Every other function of nvml.h: present, so programs that look NVML functions up (pynvml, torch, DCGM exporters)
// find them, and answering NVML_ERROR_NOT_SUPPORTED (NVML_ERROR_UNINITIALIZED before nvmlInit, as the real library)
// with one warning naming the function. No NVML header here: each stub is declared without parameters (the x86-64
// C calling convention lets the caller pass any arguments) and returns the nvmlReturn_t value as int.
#include <mutex>
#include <set>
#include <string>

#include "genie/common/log.hpp"
#include "nvml/nvml_state.hpp"

namespace genie::fakecuda::nvml {
namespace {
constexpr int kNvmlErrorUninitialized = 1;  // NVML_ERROR_UNINITIALIZED in nvml.h
constexpr int kNvmlErrorNotSupported = 3;   // NVML_ERROR_NOT_SUPPORTED in nvml.h

int not_supported(const char* name) noexcept {
  if (!initialized()) return kNvmlErrorUninitialized;
  try {
    static std::mutex mu;
    static std::set<std::string> warned;
    std::lock_guard lk(mu);
    if (warned.insert(name).second)
      GENIE_LOG_WARN(log::kFakecuda, "{} is not emulated by Genie's NVML: returning NVML_ERROR_NOT_SUPPORTED", name);
  } catch (...) {
  }
  return kNvmlErrorNotSupported;
}
}  // namespace
}  // namespace genie::fakecuda::nvml

#define X(name) \
  extern "C" __attribute__((visibility("default"))) int name() { return genie::fakecuda::nvml::not_supported(#name); }
#include "nvml_unsupported.inc"
#undef X
