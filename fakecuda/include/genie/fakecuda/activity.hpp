// SPDX-License-Identifier: Apache-2.0
// ActivitySink: the one observer interface through which a profiler (the CUPTI drop-in, fakecuda/src/cupti) sees
// the runtime's API calls and every op it puts on a stream, with the op's virtual start and end.
#pragma once

#include <cstdint>

#include "genie/common/sim_time.hpp"
#include "genie/sched/timeline.hpp"

namespace genie::fakecuda {

class Stream;
struct KernelShape;

/// Which C API an entry point belongs to (CUPTI's runtime and driver callback domains).
enum class ApiDomain : uint8_t { kRuntime = 0, kDriver = 1 };

/// Receives the runtime's activity while registered (Runtime::set_activity_sink). Three hooks:
/// - api_enter / api_exit around each cudart and driver entry point (ApiActivityScope in their guards);
/// - op_submitted when Runtime::submit puts an op on a stream or into the graph a stream captures: the sink
///   returns an id (OpSpec::activity; 0: not followed) which the op, and the graph node it becomes, carry;
/// - op_completed (sched::OpObserver) when a followed op ends, with its parts (a graph replay's nodes, each with the
///   id its node got when captured).
/// Every hook runs on the calling thread, is noexcept and must be quick: op_completed runs under a lane's lock.
/// Times are the runtime's virtual (or realtime) clock in ns, the times of the report and trace.
class ActivitySink : public sched::OpObserver {
 public:
  /// A C API call begins on the calling thread (`name`: its entry point, a static string). Returns a token for
  /// api_exit (0: nothing to close).
  virtual uint64_t api_enter(ApiDomain domain, const char* name) noexcept = 0;
  /// The call of `token` returns `result` (its cudaError_t or CUresult).
  virtual void api_exit(uint64_t token, int result) noexcept = 0;
  /// An op goes onto `s` at host time `host_now` (`captured`: into the graph `s` is capturing, to run at each
  /// replay). `shape`: the launch shape of a kernel launched through Runtime::launch_kernel, else null.
  virtual uint32_t op_submitted(Stream& s, const sched::OpSpec& spec, SimTime host_now, const KernelShape* shape,
                                bool captured) noexcept = 0;
};

/// The sink registered with the process's runtime, nullptr when none. One atomic load: every API guard asks.
ActivitySink* activity_sink() noexcept;

/// RAII for an API guard: tells the registered sink, if any, that the call begins and ends.
class ApiActivityScope {
 public:
  ApiActivityScope(ApiDomain domain, const char* name) noexcept : sink_(activity_sink()) {
    if (sink_ != nullptr) token_ = sink_->api_enter(domain, name);
  }
  ~ApiActivityScope() {
    if (token_ != 0) sink_->api_exit(token_, result_);
  }
  /// The call's return code, reported at exit.
  void set_result(int r) noexcept { result_ = r; }
  ApiActivityScope(const ApiActivityScope&) = delete;
  ApiActivityScope& operator=(const ApiActivityScope&) = delete;

 private:
  ActivitySink* sink_;
  uint64_t token_ = 0;
  int result_ = 0;
};

}  // namespace genie::fakecuda
