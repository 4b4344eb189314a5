// SPDX-License-Identifier: Apache-2.0
// ncclComm handles: init completion, readiness and the registry of live handles.
#include "comm_handle.hpp"

#include "genie/common/log.hpp"

void ncclComm::finish(genie::Result<std::shared_ptr<genie::shim::Communicator>> r) {
  std::lock_guard lk(mu);
  if (r.is_ok()) {
    impl = std::move(r).value();
    state = State::kReady;
  } else {
    init_status = r.status();
    state = State::kFailed;
    GENIE_LOG_WARN("shim", "communicator init failed: {}", init_status.message());
  }
  cv.notify_all();
}

genie::Result<genie::shim::Communicator*> ncclComm::wait_ready() {
  std::unique_lock lk(mu);
  cv.wait(lk, [&] { return state != State::kInitializing; });
  if (state == State::kFailed) return init_status;
  return impl.get();
}

namespace genie::shim {

HandleRegistry& HandleRegistry::instance() {
  static auto* r = new HandleRegistry();  // never destroyed: handles may be used from atexit handlers
  return *r;
}

void HandleRegistry::add(ncclComm* c) {
  std::lock_guard lk(mu_);
  live_.insert(c);
}

bool HandleRegistry::contains(const ncclComm* c) {
  std::lock_guard lk(mu_);
  return live_.count(c) != 0;
}

bool HandleRegistry::remove(ncclComm* c) {
  std::lock_guard lk(mu_);
  return live_.erase(c) != 0;
}

Result<Communicator*> ready_comm_ptr(ncclComm_t comm, const char* arg) {
  if (comm == nullptr) return invalid_argument(std::string(arg) + " argument is NULL");
  if (!HandleRegistry::instance().contains(comm))
    return invalid_argument(std::string(arg) + " is not a valid communicator (destroyed or never created)");
  auto r = comm->wait_ready();
  if (!r.is_ok()) return Status(r.status().code(), "communicator init failed: " + r.status().message());
  if (!r.value()) return invalid_argument(std::string(arg) + " is not a communicator (split with NCCL_SPLIT_NOCOLOR)");
  return r;
}

Result<std::shared_ptr<Communicator>> ready_comm(ncclComm_t comm, const char* arg) {
  GENIE_ASSIGN_OR_RETURN(Communicator * c, ready_comm_ptr(comm, arg));
  return c->shared_from_this();
}

}  // namespace genie::shim
