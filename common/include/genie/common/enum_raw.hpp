// SPDX-License-Identifier: Apache-2.0
// enum_raw: the integer a C caller passed for an enum parameter, read without undefined behaviour.
#pragma once

#include <cstring>

namespace genie {

/// The raw integer of an enum argument from C code, read as bytes: a C caller may pass any value, and loading
/// an out-of-range value as the C++ enum type is undefined behaviour (UBSan: -fsanitize=enum). Used at the
/// CUDA and NCCL ABIs before any range check.
template <class E>
int enum_raw(const E& e) noexcept {
  static_assert(sizeof(E) == sizeof(int));
  int v;
  std::memcpy(&v, &e, sizeof(v));
  return v;
}

}  // namespace genie
