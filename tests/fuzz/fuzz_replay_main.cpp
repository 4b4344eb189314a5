// SPDX-License-Identifier: Apache-2.0
// Replays a fuzz target's seed corpus, then deterministic mutations of every seed (bit flips, truncations,
// byte insertions and splices from a fixed-seed generator), in any build: the corpus stays a regression test
// where libFuzzer is not available. A crash or abort of the target fails the test. Every seed must be accepted
// by the target (a stale corpus fails), except regression inputs: files named regress-* are inputs that once
// crashed a target (a fuzz finding) and are usually invalid; they only have to run without a crash, and are
// run as they are (no mutations of their own).
// Usage: <replay> CORPUS_DIR [MUTATIONS_PER_SEED]
#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" size_t genie_fuzz_accepted;  // defined by the target: inputs it decoded

namespace {
// The input being run, written out by the signal handler when the target crashes or aborts (replay-crash-input
// in the working directory, to reproduce it under a debugger or libFuzzer and to add it to the corpus).
const std::vector<uint8_t>* g_current = nullptr;
char g_where[256] = "";

extern "C" void on_crash(int sig) {
  // Async-signal-safe calls only.
  const int fd = ::open("replay-crash-input", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0 && g_current) {
    ssize_t w = ::write(fd, g_current->data(), g_current->size());
    (void)w;
    ::close(fd);
  }
  const char msg[] = "fuzz replay: the target crashed on ";
  ssize_t w = ::write(2, msg, sizeof(msg) - 1);
  w = ::write(2, g_where, std::strlen(g_where));
  const char tail[] = "; the input is in ./replay-crash-input\n";
  w = ::write(2, tail, sizeof(tail) - 1);
  (void)w;
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [MUTATIONS_PER_SEED]\n", argv[0]);
    return 2;
  }
  const long mutations = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 200;
  std::vector<std::vector<uint8_t>> seeds;
  std::vector<std::string> names;
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(argv[1], ec))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());  // the same mutations on every run, whatever the directory order
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    seeds.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    names.push_back(f.filename().string());
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
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, on_crash);
  size_t runs = 0, regressions = 0;
  for (size_t i = 0; i < seeds.size(); ++i) {
    const auto& s = seeds[i];
    const bool regression = names[i].rfind("regress-", 0) == 0;
    const size_t before = genie_fuzz_accepted;
    g_current = &s;
    std::snprintf(g_where, sizeof(g_where), "seed %s", names[i].c_str());
    LLVMFuzzerTestOneInput(s.data(), s.size());
    ++runs;
    regressions += regression ? 1 : 0;
    if (!regression && genie_fuzz_accepted == before) {
      std::fprintf(stderr, "%s: seed %s (%zu bytes) is not accepted: the corpus is stale\n", argv[0],
                   names[i].c_str(), s.size());
      return 1;
    }
    for (long k = 0; k < (regression ? 0 : mutations); ++k) {
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
      g_current = &m;
      std::snprintf(g_where, sizeof(g_where), "mutation %ld of seed %s", k, names[i].c_str());
      LLVMFuzzerTestOneInput(m.data(), m.size());
      ++runs;
    }
  }
  std::printf("replayed %zu inputs from %zu seeds (%zu regression inputs), %zu accepted: no crash\n", runs,
              seeds.size(), regressions, genie_fuzz_accepted);
  return 0;
}
