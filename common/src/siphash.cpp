// SPDX-License-Identifier: Apache-2.0
// SipHash-2-4, written from the paper's description (2 compression rounds per word, 4 finalisation rounds).
#include "genie/common/siphash.hpp"

#include <cstring>

namespace genie {
namespace {

inline uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

inline uint64_t load_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

struct State {
  uint64_t v0, v1, v2, v3;
  void round() {
    v0 += v1;
    v1 = rotl(v1, 13);
    v1 ^= v0;
    v0 = rotl(v0, 32);
    v2 += v3;
    v3 = rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotl(v1, 17);
    v1 ^= v2;
    v2 = rotl(v2, 32);
  }
  void absorb(uint64_t m) {
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
};

}  // namespace

uint64_t siphash24(const std::array<uint8_t, 16>& key, const void* data, size_t len) noexcept {
  const uint64_t k0 = load_le64(key.data());
  const uint64_t k1 = load_le64(key.data() + 8);
  // The initialisation constants spell "somepseudorandomlygeneratedbytes" (paper, section 2).
  State s{k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull, k0 ^ 0x6c7967656e657261ull,
          k1 ^ 0x7465646279746573ull};
  const auto* p = static_cast<const uint8_t*>(data);
  const size_t whole = len / 8 * 8;
  for (size_t i = 0; i < whole; i += 8) s.absorb(load_le64(p + i));
  uint8_t last[8] = {};
  if (len > whole) std::memcpy(last, p + whole, len - whole);  // data may be null when len is 0
  last[7] = static_cast<uint8_t>(len);
  s.absorb(load_le64(last));
  s.v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) s.round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

bool equal_constant_time(const void* a, const void* b, size_t len) noexcept {
  const auto* x = static_cast<const uint8_t*>(a);
  const auto* y = static_cast<const uint8_t*>(b);
  uint8_t diff = 0;
  for (size_t i = 0; i < len; ++i) diff |= static_cast<uint8_t>(x[i] ^ y[i]);
  return diff == 0;
}

}  // namespace genie
