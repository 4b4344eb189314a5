// SPDX-License-Identifier: Apache-2.0
#include "engine/sim_budget.hpp"

#include <unistd.h>

#include <cstdio>

#include "genie/netsim/simulator.hpp"
#include "genie/netsim/sweep.hpp"

namespace genie::netsim {

uint64_t resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long size = 0, resident = 0;
  const int got = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  if (got != 2) return 0;
  return static_cast<uint64_t>(resident) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

uint64_t default_memory_limit() {
  std::FILE* f = std::fopen("/proc/meminfo", "r");
  if (f == nullptr) return 0;
  char line[256];
  unsigned long long kb = 0;
  bool found = false;
  while (!found && std::fgets(line, sizeof(line), f) != nullptr)
    found = std::sscanf(line, "MemAvailable: %llu kB", &kb) == 1;
  std::fclose(f);
  return found ? static_cast<uint64_t>(kb) * 1024 / 10 * 9 : 0;
}

std::string format_bytes(uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f %s" : "%.1f %s", v, kUnits[u]);
  return buf;
}

std::string describe_schedule(const Schedule& s) {
  char buf[256];
  const double ops = static_cast<double>(s.num_ops());
  std::snprintf(buf, sizeof(buf), "%s/%s %s of %llu bytes on %d ranks, %d channels, %.1f M ops%s",
                algorithm_name(s.tuning.algorithm), protocol_name(s.tuning.protocol),
                collective_name(s.spec.collective), static_cast<unsigned long long>(s.payload_bytes()), s.spec.nranks,
                s.tuning.nchannels, ops / 1e6, s.is_compact() ? " (compact)" : "");
  return buf;
}

std::string too_big_help(const Schedule& s) {
  std::string h =
      "smaller simulations: --engine analytical (compact schedules keep their symmetry there), fewer --nodes";
  if (!s.is_compact())
    h += ", an algorithm netsim times by symmetry (NCCL_ALGO=Ring, or PAT for all_gather/reduce_scatter)";
  return h + ", or a higher --max-memory on a machine that has it";
}

uint64_t estimate_state_bytes(const Schedule& s, uint32_t period) {
  constexpr uint64_t kUnitBytes = kStateBytesPerUnit, kDepBytes = kStateBytesPerDep;
  if (s.is_compact()) {
    const auto& cs = *s.compact;
    const uint64_t m = period > 0 ? period : static_cast<uint64_t>(s.spec.nranks);
    const uint64_t units = cs.ops.size() * m, deps = cs.deps.size() * m;
    uint64_t bytes = units * kUnitBytes + deps * kDepBytes;
    if (period == 0) bytes += units * sizeof(Step) + deps * sizeof(uint32_t);  // the expanded DAG itself
    return bytes;
  }
  return s.ops.size() * kUnitBytes + s.deps.size() * kDepBytes;
}

}  // namespace genie::netsim
