// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the fuzz targets: an invariant check that aborts (libFuzzer and the replay test report
// it as a crash, with the message), and splitting an input into parts.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

/// Inputs the target accepted (the replay driver checks that every seed is accepted: a stale corpus fails).
extern "C" size_t genie_fuzz_accepted;

/// Aborts with `what` when an invariant of the target does not hold: a finding, like a crash.
#define GENIE_FUZZ_CHECK(cond, what)                                                          \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      std::fprintf(stderr, "fuzz invariant failed at %s:%d: %s (%s)\n", __FILE__, __LINE__, \
                   std::string(what).c_str(), #cond);                                         \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)

namespace genie::fuzz {

/// The input as text.
inline std::string text_of(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// Splits `s` at every occurrence of `sep` (multi-part inputs: parts are separated by a line "\n--8<--\n").
inline std::vector<std::string> split(const std::string& s, std::string_view sep = "\n--8<--\n") {
  std::vector<std::string> parts;
  size_t pos = 0;
  for (;;) {
    const size_t at = s.find(sep, pos);
    if (at == std::string::npos) break;
    parts.push_back(s.substr(pos, at - pos));
    pos = at + sep.size();
  }
  parts.push_back(s.substr(pos));
  return parts;
}

/// Relative equality of doubles that went through a unit conversion (x * 1e9 / 1e9).
inline bool near(double a, double b) {
  if (a == b) return true;
  const double scale = std::max(std::abs(a), std::abs(b));
  return std::abs(a - b) <= 1e-12 * scale;
}

}  // namespace genie::fuzz
