// SPDX-License-Identifier: Apache-2.0
// The NCCL ABI's error plumbing: Status -> ncclResult_t in one place, the API guard, thread-local last error.
#pragma once

#include <nccl.h>

#include <exception>
#include <new>
#include <string>

#include "genie/common/log.hpp"
#include "genie/common/internal_scope.hpp"
#include "genie/common/status.hpp"

namespace genie::shim {

/// The one conversion of an internal error to NCCL's return codes.
ncclResult_t to_nccl(const Status& s) noexcept;

/// Records `msg` as the process's last error (ncclGetLastError; like NCCL's, one for the whole process, so an
/// error found on another thread reaches the application), truncated to 1023 bytes; with NCCL_DEBUG=WARN or
/// more, also prints it as an "NCCL WARN" line.
void set_last_error(const std::string& msg);
/// The process's last error text ("" when none).
const char* last_error() noexcept;

/// Fails a call: records and logs "<fn>: <message>" and returns the converted code.
ncclResult_t fail(const char* fn, const Status& s) noexcept;

/// Runs an API body that returns Status; never lets an exception cross the C ABI.
template <class F>
ncclResult_t guard(const char* fn, F&& body) noexcept {
  InternalScope internal;
  try {
    Status s = body();
    if (s.is_ok()) return ncclSuccess;
    if (s.code() == Errc::kNotReady) return ncclInProgress;  // non-blocking init still running
    return fail(fn, s);
  } catch (const std::bad_alloc&) {
    return fail(fn, Status(Errc::kSystem, "out of host memory"));
  } catch (const std::exception& e) {
    return fail(fn, Status(Errc::kInternal, std::string("internal error: ") + e.what()));
  } catch (...) {
    return fail(fn, Status(Errc::kInternal, "internal error: unknown exception"));
  }
}

}  // namespace genie::shim
