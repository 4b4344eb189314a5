// SPDX-License-Identifier: Apache-2.0
// Status -> ncclResult_t, the last-error text and failure logging of the NCCL ABI.
#include "shim_errors.hpp"

#include "genie/common/status.hpp"

namespace genie::shim {
namespace {
thread_local std::string t_last_error;
}

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

void set_last_error(const std::string& msg) { t_last_error = msg; }

const char* last_error() noexcept { return t_last_error.c_str(); }

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
