// SPDX-License-Identifier: Apache-2.0
// NCCL_DEBUG output. Written to stderr (NCCL writes stdout by default; we never write to a program's stdout).
#include "nccl_debug.hpp"

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
  std::fprintf(stderr, "%s:%d:%ld [%d] NCCL %s %s\n", host, static_cast<int>(getpid()),
               static_cast<long>(syscall(SYS_gettid)), dev, kNames[static_cast<int>(level)], msg);
}

void nccl_debug_init_line(const Communicator& c) {
  static std::once_flag once;
  std::call_once(once, [&] {
    if (nccl_debug_level() >= NcclDebugLevel::kVersion)
      std::fprintf(stderr, "NCCL version 2.28.9+cuda13.0 (Genie: %s)\n",
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
