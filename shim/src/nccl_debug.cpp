// SPDX-License-Identifier: Apache-2.0
// NCCL_DEBUG output. Written to stderr (NCCL writes stdout by default; we never write to a program's stdout).
#include "nccl_debug.hpp"

#include <nccl.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <string>

#include "communicator.hpp"
#include "genie/common/config.hpp"

namespace genie::shim {
namespace {

const config::Param<std::string> kNcclDebug{"shim.nccl_debug",
                                            "",
                                            "NCCL_DEBUG: VERSION, WARN, INFO or TRACE.",
                                            {"", "VERSION", "WARN", "INFO", "TRACE", "ABORT"},
                                            {},
                                            {},
                                            "NCCL_DEBUG"};

const config::Param<std::string> kNcclDebugFile{
    "shim.nccl_debug_file",
    "",
    "NCCL_DEBUG_FILE: write NCCL_DEBUG lines (above VERSION) to this file "
    "instead of stderr; %h is the host name, %p the pid, %% a percent sign.",
    {},
    {},
    {},
    "NCCL_DEBUG_FILE"};

NcclDebugLevel parse_level() {
  std::string v = config::global().get(kNcclDebug);
  if (v == "VERSION") return NcclDebugLevel::kVersion;
  if (v == "WARN" || v == "ABORT") return NcclDebugLevel::kWarn;
  if (v == "INFO") return NcclDebugLevel::kInfo;
  if (v == "TRACE") return NcclDebugLevel::kTrace;
  return NcclDebugLevel::kNone;
}

}  // namespace

NcclDebugLevel nccl_debug_level() {
  static const NcclDebugLevel level = parse_level();
  return level;
}

std::string expand_debug_file(const std::string& pattern, const std::string& host, int pid) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    const char c = pattern[++i];
    if (c == '%')
      out += '%';
    else if (c == 'h')
      out += host;
    else if (c == 'p')
      out += std::to_string(pid);
    else  // as NCCL: anything else is kept as written
      out += std::string("%") + c;
  }
  return out;
}

namespace {
// Where NCCL_DEBUG lines go: NCCL_DEBUG_FILE's file (opened once, line-buffered, as NCCL does when the level is
// above VERSION), else stderr (NCCL writes stdout; we never write to a program's stdout).
FILE* debug_stream() {
  static FILE* const stream = [] {
    const std::string pattern = config::global().get(kNcclDebugFile);
    if (pattern.empty() || nccl_debug_level() <= NcclDebugLevel::kVersion) return stderr;
    char host[64] = {};
    gethostname(host, sizeof(host) - 1);
    const std::string path = expand_debug_file(pattern, host, static_cast<int>(getpid()));
    FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) return stderr;
    setlinebuf(f);
    return f;
  }();
  return stream;
}
}  // namespace

void nccl_debug(NcclDebugLevel level, int dev, const char* fmt, ...) {
  if (nccl_debug_level() < level) return;
  static const char* kNames[] = {"", "VERSION", "WARN", "INFO", "TRACE"};
  char host[64] = {};
  gethostname(host, sizeof(host) - 1);
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  std::fprintf(debug_stream(), "%s:%d:%ld [%d] NCCL %s %s\n", host, static_cast<int>(getpid()),
               static_cast<long>(syscall(SYS_gettid)), dev, kNames[static_cast<int>(level)], msg);
}

void nccl_debug_init_line(const Communicator& c) {
  static std::once_flag once;
  std::call_once(once, [&] {
    if (nccl_debug_level() >= NcclDebugLevel::kVersion)
      std::fprintf(debug_stream(), "NCCL version %d.%d.%d+cuda13.2 (Genie: %s)\n", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH,
                   c.real_fabric() ? "real fabric" : "simulated fabric");
  });
  if (nccl_debug_level() < NcclDebugLevel::kInfo) return;
  auto& t = const_cast<Communicator&>(c).timing();
  nccl_debug(NcclDebugLevel::kInfo, c.cuda_dev(),
             "comm %p rank %d nRanks %d nNodes %d localRanks %d cudaDev %d - Init COMPLETE",
             static_cast<const void*>(&c), c.rank(), c.nranks(), t.num_nodes(), c.nranks() / std::max(1, t.num_nodes()),
             c.cuda_dev());
  const std::string data = c.real_fabric() ? "over the real fabric (libfabric " + c.fabric_provider() + ")"
                           : c.cross_process() ? "through shared memory between processes"
                                               : "within this process";
  nccl_debug(NcclDebugLevel::kInfo, c.cuda_dev(), "Genie: topology %s, rank %d on GPU %d, data %s",
             t.topology_name().c_str(), c.rank(), t.gpu_of(c.rank()), data.c_str());
}

}  // namespace genie::shim
