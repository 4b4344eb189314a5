// SPDX-License-Identifier: Apache-2.0
// Status -> ncclResult_t, the last-error text and failure logging of the NCCL ABI.
#include "shim_errors.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>

#include "genie/common/status.hpp"
#include "nccl_debug.hpp"

namespace genie::shim {
namespace {
// The process's last error, as NCCL keeps it (one string for the process, not per thread or communicator: an
// error found by a stream's worker or a proxy thread is what the application thread asks ncclGetLastError for).
// Messages go round a ring of buffers, so the text a caller holds stays intact for the next kSlots - 1 errors.
constexpr size_t kSlots = 16, kLength = 1024;
char g_last[kSlots][kLength];
std::atomic<unsigned> g_current{0};
std::mutex g_last_mu;
}  // namespace

ncclResult_t to_nccl(const Status& s) noexcept {
  switch (s.code()) {
    case Errc::kOk:
      return ncclSuccess;
    case Errc::kInvalidArgument:
    case Errc::kNotFound:
      return ncclInvalidArgument;
    case Errc::kInvalidUsage:
    case Errc::kUnsupported:
      return ncclInvalidUsage;
    case Errc::kSystem:
    case Errc::kOutOfMemory:
      return ncclSystemError;
    case Errc::kRemote:
    case Errc::kTimeout:
      return ncclRemoteError;
    case Errc::kNotReady:
      return ncclInProgress;
    case Errc::kInternal:
      return ncclInternalError;
  }
  return ncclInternalError;
}

void set_last_error(const std::string& msg) {
  {
    std::lock_guard lk(g_last_mu);
    const unsigned next = (g_current.load(std::memory_order_relaxed) + 1) % kSlots;
    const size_t n = std::min(msg.size(), kLength - 1);
    std::memcpy(g_last[next], msg.data(), n);
    g_last[next][n] = '\0';
    g_current.store(next, std::memory_order_release);
  }
  // NCCL_DEBUG=WARN (and above) shows every error as NCCL does, with the text ncclGetLastError returns.
  nccl_debug(NcclDebugLevel::kWarn, -1, "%s", msg.c_str());
}

const char* last_error() noexcept { return g_last[g_current.load(std::memory_order_acquire)]; }

ncclResult_t fail(const char* fn, const Status& s) noexcept {
  try {
    std::string msg = std::string(fn) + ": " + s.message();
    set_last_error(msg);
    GENIE_LOG_WARN("shim", "{} ({})", msg, errc_name(s.code()));
  } catch (...) {
  }
  return to_nccl(s);
}

}  // namespace genie::shim
