// SPDX-License-Identifier: Apache-2.0
// Replays a fuzz target's seed corpus, then deterministic mutations of every seed (bit flips, truncations,
// byte insertions and splices from a fixed-seed generator), in any build: the corpus stays a regression test
// where libFuzzer is not available. A crash or abort of the target fails the test.
// Usage: <replay> CORPUS_DIR [MUTATIONS_PER_SEED]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" size_t genie_fuzz_accepted;  // defined by the target: inputs it decoded

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [MUTATIONS_PER_SEED]\n", argv[0]);
    return 2;
  }
  const long mutations = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 200;
  std::vector<std::vector<uint8_t>> seeds;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(argv[1], ec)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    seeds.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (ec || seeds.empty()) {
    std::fprintf(stderr, "%s: no seed files in '%s'\n", argv[0], argv[1]);
    return 2;
  }
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&] {  // splitmix64: the same mutations on every run
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  size_t runs = 0;
  for (const auto& s : seeds) {
    const size_t before = genie_fuzz_accepted;
    LLVMFuzzerTestOneInput(s.data(), s.size());
    ++runs;
    if (genie_fuzz_accepted == before) {
      std::fprintf(stderr, "%s: a seed (%zu bytes) does not decode: the corpus is stale\n", argv[0], s.size());
      return 1;
    }
    for (long k = 0; k < mutations; ++k) {
      std::vector<uint8_t> m = s;
      const int edits = 1 + static_cast<int>(next() % 4);
      for (int j = 0; j < edits; ++j) {
        switch (next() % 4) {
          case 0:
            if (!m.empty()) m[next() % m.size()] ^= static_cast<uint8_t>(1u << (next() % 8));
            break;
          case 1:
            if (!m.empty()) m.resize(next() % m.size());
            break;
          case 2:
            m.insert(m.begin() + static_cast<long>(m.empty() ? 0 : next() % m.size()), static_cast<uint8_t>(next()));
            break;
          default: {
            const auto& o = seeds[next() % seeds.size()];
            if (!o.empty()) m.insert(m.end(), o.begin() + static_cast<long>(next() % o.size()), o.end());
          }
        }
      }
      LLVMFuzzerTestOneInput(m.data(), m.size());
      ++runs;
    }
  }
  std::printf("replayed %zu inputs from %zu seeds, %zu decoded: no crash\n", runs, seeds.size(), genie_fuzz_accepted);
  return 0;
}
