// SPDX-License-Identifier: Apache-2.0
// Driver entry points: the table of emulated driver functions (filled by the driver module).
#include "genie/fakecuda/driver.hpp"

namespace genie::fakecuda {

void* driver_entry_point(const char* name, int cuda_version) noexcept {
  (void)name;
  (void)cuda_version;
  return nullptr;
}

}  // namespace genie::fakecuda
