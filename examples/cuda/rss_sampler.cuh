// SPDX-License-Identifier: Apache-2.0
// Resident-set samples for the soak examples: RSS read from /proc/<pid>/statm at 10%, 20%, ... 100% of a run's
// calls, one "soak ..." line per sample, and the growth from the first sample to the last checked against a bound.
#pragma once
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

// Resident set of `pid` (0: this process) in MiB, from the second field of /proc/<pid>/statm; -1 if unreadable.
static inline double rss_mib(int pid = 0) {
  const std::string path = pid == 0 ? std::string("/proc/self/statm") : "/proc/" + std::to_string(pid) + "/statm";
  FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return -1;
  long size = 0, resident = 0;
  const int n = std::fscanf(f, "%ld %ld", &size, &resident);
  std::fclose(f);
  if (n != 2) return -1;
  return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

// The command name of `pid` (/proc/<pid>/comm), "" if unreadable.
static inline std::string comm_of(int pid) {
  FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/comm").c_str(), "r");
  if (!f) return "";
  char buf[64] = {};
  const bool ok = std::fgets(buf, sizeof(buf), f) != nullptr;
  std::fclose(f);
  std::string s = ok ? buf : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

// Samples taken at tenths of `total` calls. who: "" or "[rank r] " (printed before each line).
struct RssSamples {
  std::string name, who;
  long long total = 0;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  std::vector<double> mib;
  int watch_pid = 0;  // another process to sample alongside (the genie run coordinator), 0: none
  std::vector<double> watch_mib;

  // True when `done` calls (1-based count) completes a tenth of the run.
  bool due(long long done) const { return total >= 10 && done % (total / 10) == 0 && done / (total / 10) <= 10; }

  void take(long long done) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    mib.push_back(rss_mib());
    std::printf("%ssoak %s sample %lld%% calls %lld elapsed_s %.2f us_per_call %.2f rss_mib %.1f", who.c_str(),
                name.c_str(), done * 100 / total, done, s, done > 0 ? s * 1e6 / double(done) : 0.0, mib.back());
    if (watch_pid > 0) {
      watch_mib.push_back(rss_mib(watch_pid));
      std::printf(" coordinator_rss_mib %.1f", watch_mib.back());
    }
    std::printf("\n");
    std::fflush(stdout);
  }

  double growth() const { return mib.size() < 2 ? 0.0 : mib.back() - mib.front(); }
  double watch_growth() const { return watch_mib.size() < 2 ? 0.0 : watch_mib.back() - watch_mib.front(); }
};
