// SPDX-License-Identifier: Apache-2.0
// SimTime: the integer nanosecond clock used by every timeline and simulator in Genie.
#pragma once

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>

namespace genie {

/// A point or span on a virtual or wall clock, in integer nanoseconds. Never a double clock: doubles
/// appear only in rate math and are rounded explicitly through from_seconds()/from_ns_double().
class SimTime {
 public:
  constexpr SimTime() = default;
  static constexpr SimTime ns(int64_t v) { return SimTime(v); }
  static constexpr SimTime us(int64_t v) { return SimTime(v * 1000); }
  static constexpr SimTime ms(int64_t v) { return SimTime(v * 1000000); }
  static constexpr SimTime zero() { return SimTime(0); }
  static constexpr SimTime max() { return SimTime(std::numeric_limits<int64_t>::max()); }
  /// Rounds to the nearest nanosecond (ties away from zero).
  static SimTime from_ns_double(double v) { return SimTime(static_cast<int64_t>(std::llround(v))); }
  static SimTime from_seconds(double s) { return from_ns_double(s * 1e9); }

  constexpr int64_t count_ns() const { return ns_; }
  constexpr double to_us() const { return static_cast<double>(ns_) / 1e3; }
  constexpr double to_ms() const { return static_cast<double>(ns_) / 1e6; }
  constexpr double to_seconds() const { return static_cast<double>(ns_) / 1e9; }

  constexpr auto operator<=>(const SimTime&) const = default;
  constexpr SimTime operator+(SimTime o) const { return SimTime(ns_ + o.ns_); }
  constexpr SimTime operator-(SimTime o) const { return SimTime(ns_ - o.ns_); }
  constexpr SimTime& operator+=(SimTime o) { ns_ += o.ns_; return *this; }
  constexpr SimTime& operator-=(SimTime o) { ns_ -= o.ns_; return *this; }
  constexpr SimTime operator*(int64_t k) const { return SimTime(ns_ * k); }

 private:
  constexpr explicit SimTime(int64_t v) : ns_(v) {}
  int64_t ns_ = 0;
};

constexpr SimTime max(SimTime a, SimTime b) { return a < b ? b : a; }
constexpr SimTime min(SimTime a, SimTime b) { return a < b ? a : b; }

}  // namespace genie
