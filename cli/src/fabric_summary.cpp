// SPDX-License-Identifier: Apache-2.0
// Summary of real vs simulated collective times from the shim's JSON lines.
#include "fabric_summary.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "genie/sched/report.hpp"

namespace genie::cli {

using sched::parse_fabric_record;

Status clear_fabric_records(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return system_error("cannot create " + dir + ": " + ec.message());
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("fabric-rank", 0) == 0 && n.size() > 6 && n.substr(n.size() - 6) == ".jsonl")
      std::filesystem::remove(e.path(), ec);
  }
  return Status::ok();
}

Result<int> print_fabric_summary(const std::string& dir) {
  struct Call {
    std::string op;
    uint64_t bytes = 0;
    double real_us = 0;
    double sim_us = -1;
  };
  std::map<std::pair<std::string, uint64_t>, Call> calls;  // (comm, seq)
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("fabric-rank", 0) != 0) continue;
    std::ifstream f(e.path());
    std::string line;
    int lineno = 0;
    while (std::getline(f, line)) {
      ++lineno;
      if (line.empty()) continue;
      auto r = parse_fabric_record(line);
      if (!r.is_ok())
        return invalid_argument(e.path().string() + ":" + std::to_string(lineno) + ": " + r.status().message());
      Call& c = calls[{r.value().comm, r.value().seq}];
      c.op = r.value().op;
      c.bytes = r.value().bytes;
      c.real_us = std::max(c.real_us, r.value().real_us);
      if (r.value().sim_us) c.sim_us = *r.value().sim_us;
    }
  }
  struct Agg {
    std::vector<double> real, sim;
  };
  std::map<std::pair<std::string, uint64_t>, Agg> agg;
  for (const auto& [k, c] : calls) {
    Agg& a = agg[{c.op, c.bytes}];
    a.real.push_back(c.real_us);
    if (c.sim_us >= 0) a.sim.push_back(c.sim_us);
  }
  if (agg.empty()) return 0;
  // The median: the first call of a shape also connects the peers and maps fresh pages; it is not the
  // collective's steady-state time.
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  std::printf("genie run: real fabric vs netsim, per collective (time of the slowest rank, median over calls)\n");
  std::printf("%16s %14s %7s %14s %14s %9s\n", "collective", "bytes", "calls", "real_us", "sim_us", "sim/real");
  for (const auto& [k, a] : agg) {
    const double real = median(a.real);
    const int n = static_cast<int>(a.real.size());
    if (!a.sim.empty()) {
      const double sim = median(a.sim);
      std::printf("%16s %14llu %7d %14.1f %14.1f %9.3f\n", k.first.c_str(), static_cast<unsigned long long>(k.second),
                  n, real, sim, real > 0 ? sim / real : 0.0);
    } else {
      std::printf("%16s %14llu %7d %14.1f %14s %9s\n", k.first.c_str(), static_cast<unsigned long long>(k.second), n,
                  real, "-", "-");
    }
  }
  std::printf("records: %s/fabric-rank*.jsonl\n", dir.c_str());
  return static_cast<int>(calls.size());
}

}  // namespace genie::cli
