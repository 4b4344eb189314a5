// SPDX-License-Identifier: Apache-2.0
// The per-thread depth of Genie-internal execution.
#include "genie/common/internal_scope.hpp"

#include "genie/common/status.hpp"

namespace genie {

int& internal_depth() noexcept {
  GENIE_TLS_FAST thread_local int depth = 0;
  return depth;
}

}  // namespace genie
