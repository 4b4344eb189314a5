// SPDX-License-Identifier: Apache-2.0
// Lower-case hex of a byte string, for tests that compare encodings byte for byte.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace genie::testing {

inline std::string hex(std::string_view s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (char c : s) {
    const auto b = static_cast<uint8_t>(c);
    out += d[b >> 4];
    out += d[b & 15];
  }
  return out;
}

}  // namespace genie::testing
