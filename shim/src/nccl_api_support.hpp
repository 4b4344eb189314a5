// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the NCCL ABI files: argument conversion and checks, streams, and host-time accounting.
#pragma once

#include <nccl.h>

#include <cstring>
#include <string>

#include "genie/common/enum_raw.hpp"
#include "genie/common/config.hpp"
#include "genie/common/status.hpp"
#include "genie/fakecuda/runtime.hpp"
#include "genie/netsim/schedule.hpp"

#define GENIE_NCCL_EXPORT extern "C" __attribute__((visibility("default")))
/// NCCL's profiling alias pncclXxx of an entry point (must sit in the entry point's file).
#define GENIE_NCCL_ALIAS(ret, name, params) GENIE_NCCL_EXPORT ret p##name params __attribute__((alias(#name)));

namespace genie::shim {

using genie::enum_raw;

/// The modelled host time of one launching NCCL call (GENIE_SHIM_LAUNCH_OVERHEAD_NS).
SimTime launch_overhead();

/// The process's CUDA runtime, or nullptr when it failed to start: the one place the shim asks for it. Communicators
/// are handed it when they are made.
inline fakecuda::Runtime* runtime_or_null() { return fakecuda::Runtime::instance(); }
/// The runtime, or why there is none.
inline Result<fakecuda::Runtime*> the_runtime() {
  fakecuda::Runtime* rt = runtime_or_null();
  if (!rt)
    return Status(Errc::kSystem,
                  "the CUDA runtime is not available: " + fakecuda::Runtime::instance_status().message());
  return rt;
}

// Host-time accounting of an NCCL call in virtual mode: the emulator's own CPU time (checks, hand-off to the
// stream worker, planning) is excluded, and a launching call is charged NCCL's modelled launch cost instead, so
// virtual timelines do not depend on how fast this machine runs Genie.
// `name` (a static string) puts the call on the trace's host track.
class HostCost {
 public:
  explicit HostCost(bool launches, const char* name = nullptr) : launches_(launches), name_(name) {
    rt_ = runtime_or_null();
    clock_ = rt_ ? &rt_->clock() : nullptr;
    if (clock_ && clock_->is_virtual()) {
      t0_ = clock_->begin_excluded_work();
    } else {
      clock_ = nullptr;
    }
  }
  ~HostCost() {
    if (!clock_) return;
    const SimTime t1 = clock_->end_excluded_work(launches_ ? launch_overhead() : SimTime::zero());
    if (name_) rt_->timeline().record_host(name_, t0_, t1, sched::OpKind::kOther);
  }
  HostCost(const HostCost&) = delete;
  HostCost& operator=(const HostCost&) = delete;

 private:
  bool launches_;
  const char* name_;
  fakecuda::Runtime* rt_ = nullptr;
  sched::Clock* clock_ = nullptr;
  SimTime t0_;
};

inline Result<netsim::DataType> to_datatype(int v) {
  if (v < 0 || v >= static_cast<int>(ncclNumTypes)) return invalid_argument("invalid datatype " + std::to_string(v));
  return static_cast<netsim::DataType>(v);  // same order as ncclDataType_t
}

inline Status check_ptr(const void* p, const char* what) {
  if (p == nullptr) return invalid_argument(std::string(what) + " argument is NULL");
  return Status::ok();
}

/// The fakecuda stream of a call on a communicator of CUDA device `device`. NULL, cudaStreamLegacy and
/// cudaStreamPerThread are that device's, whichever device is current: NCCL launches with the communicator's device
/// current (nccl-tests -y 1 -g 2 drives two devices' legacy streams from one thread).
inline Result<fakecuda::Stream*> stream_of(cudaStream_t stream, int device) {
  GENIE_ASSIGN_OR_RETURN(fakecuda::Runtime * rt, the_runtime());
  fakecuda::Stream* s = rt->resolve_stream(stream, false, device);
  if (!s) return invalid_argument("stream is not a valid CUDA stream");
  return s;
}

}  // namespace genie::shim
