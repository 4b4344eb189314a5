// SPDX-License-Identifier: Apache-2.0
// struct ncclComm: the C handle. It exists from the moment ncclCommInitRank* returns (a non-blocking
// communicator is still joining then) and owns the shim::Communicator once it is ready.
#pragma once

#include <nccl.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "communicator.hpp"

struct ncclComm {
  static constexpr uint64_t kMagic = 0x4e43434c48414e44ull;  // "NCCLHAND"
  enum class State { kInitializing, kReady, kFailed };
  uint64_t magic = kMagic;
  std::mutex mu;
  std::condition_variable cv;
  State state = State::kInitializing;
  genie::Status init_status;
  std::shared_ptr<genie::shim::Communicator> impl;
  std::thread init_thread;  ///< non-blocking init
  bool blocking = true;
  int cuda_dev = 0;
  ncclComm_t* out = nullptr;  ///< where the caller wants the handle (cleared if init yields no communicator)

  /// Completes initialisation (from the init thread or inline).
  void finish(genie::Result<std::shared_ptr<genie::shim::Communicator>> r);
  /// Waits until initialisation finished; the communicator (null for a NOCOLOR split; the handle keeps it, no
  /// reference is taken) or the init error.
  genie::Result<genie::shim::Communicator*> wait_ready();
};

namespace genie::shim {

/// Live handles. ncclComm_t arguments are validated here (NCCL's CommCheck), so a stale or garbage
/// pointer yields ncclInvalidArgument instead of a crash.
class HandleRegistry {
 public:
  static HandleRegistry& instance();
  void add(ncclComm* c);
  bool contains(const ncclComm* c);
  bool remove(ncclComm* c);

 private:
  std::mutex mu_;
  std::unordered_set<const ncclComm*> live_;
};

/// Validates `comm` and waits for it to be ready.
Result<std::shared_ptr<Communicator>> ready_comm(ncclComm_t comm, const char* arg = "comm");
/// The same without taking a reference, for calls that use the communicator only while they run (the handle keeps
/// it; destroying a communicator while another thread calls on it is an error in NCCL too).
Result<Communicator*> ready_comm_ptr(ncclComm_t comm, const char* arg = "comm");

}  // namespace genie::shim
