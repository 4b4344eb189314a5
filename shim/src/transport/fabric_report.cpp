// SPDX-License-Identifier: Apache-2.0
// Writes the real fabric's per-collective JSON lines.
#include "transport/fabric_report.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "genie/common/config.hpp"
#include "genie/common/log.hpp"

namespace genie::shim {
namespace {

const config::Param<std::string> kCompare{"compare", "",
                                          "With the real fabric: sim also times every collective's Schedule in "
                                          "netsim and records both (genie run --compare sim).",
                                          {"", "sim"}};
const config::Param<std::string> kReportDir{"report_dir", "",
                                            "Directory of the real fabric's per-collective records "
                                            "(fabric-rank<R>.jsonl; default ./genie-report when GENIE_COMPARE=sim).",
                                            {}, {}, {}, "GENIE_REPORT_DIR"};

std::atomic<int> g_rank{-1};

std::string json_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') o += '\\';
    if (static_cast<unsigned char>(ch) < 0x20) continue;
    o += ch;
  }
  return o;
}

}  // namespace

bool fabric_compare_sim() {
  static const bool v = config::global().get(kCompare) == "sim";
  return v;
}

bool fabric_records_enabled() {
  static const bool v = fabric_compare_sim() || !config::global().get(kReportDir).empty();
  return v;
}

void fabric_report_set_rank(int rank) {
  int expected = -1;
  g_rank.compare_exchange_strong(expected, rank);
}

void fabric_record(const FabricRecord& r) {
  static std::mutex mu;
  static int fd = -1;
  static bool failed = false;
  std::lock_guard lk(mu);
  if (failed) return;
  if (fd < 0) {
    std::string dir = config::global().get(kReportDir);
    if (dir.empty()) dir = "genie-report";
    ::mkdir(dir.c_str(), 0755);
    const int file_rank = g_rank.load() >= 0 ? g_rank.load() : r.rank;
    const std::string path = dir + "/fabric-rank" + std::to_string(file_rank) + ".jsonl";
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
      GENIE_LOG_WARN("shim", "cannot write fabric records to {}: {}", path, std::strerror(errno));
      failed = true;
      return;
    }
  }
  std::string line = fmt::format(
      "{{\"comm\":\"{:#x}\",\"seq\":{},\"rank\":{},\"nranks\":{},\"op\":\"{}\",\"count\":{},\"bytes\":{},"
      "\"datatype\":\"{}\",\"algorithm\":\"{}\",\"protocol\":\"{}\",\"channels\":{},\"provider\":\"{}\","
      "\"start_us\":{:.3f},\"real_us\":{:.3f},\"sim_us\":{}}}\n",
      r.comm, r.seq, r.rank, r.nranks, json_escape(r.op), r.count, r.bytes, json_escape(r.datatype),
      json_escape(r.algorithm), json_escape(r.protocol), r.channels, json_escape(r.provider), r.start_us, r.real_us,
      r.sim_us < 0 ? std::string("null") : fmt::format("{:.3f}", r.sim_us));
  ssize_t w = ::write(fd, line.data(), line.size());
  (void)w;
}

}  // namespace genie::shim
