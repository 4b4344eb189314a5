// SPDX-License-Identifier: Apache-2.0
// SipHash-2-4: a keyed 64-bit PRF, used as the MAC that proves knowledge of a job secret without sending it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace genie {

/// SipHash-2-4 of `data` under the 128-bit `key` (Aumasson & Bernstein, "SipHash: a fast short-input PRF",
/// 2012; the reference vectors of its appendix A are checked in tests/common/siphash_test.cpp).
uint64_t siphash24(const std::array<uint8_t, 16>& key, const void* data, size_t len) noexcept;

/// Constant-time comparison of two byte strings of equal length (a MAC check must not leak where it differs).
bool equal_constant_time(const void* a, const void* b, size_t len) noexcept;

}  // namespace genie
