// SPDX-License-Identifier: Apache-2.0
// InternalScope: marks code that runs on behalf of Genie (API bodies, Genie's own threads), so that the
// program's clock interposition (GENIE_APP_CLOCK=virtual) answers Genie with the real clock.
#pragma once

namespace genie {

/// Depth of Genie-internal execution on the calling thread. One copy per process (it lives in
/// libgenie_runtime.so, shared by every drop-in library).
int& internal_depth() noexcept;

/// RAII: the calling thread runs Genie code for the scope's lifetime.
struct InternalScope {
  InternalScope() noexcept : depth_(internal_depth()) { ++depth_; }
  ~InternalScope() { --depth_; }
  InternalScope(const InternalScope&) = delete;
  InternalScope& operator=(const InternalScope&) = delete;

 private:
  int& depth_;
};

}  // namespace genie
