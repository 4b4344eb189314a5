// SPDX-License-Identifier: Apache-2.0
// One-sided communication and suspension of a communicator (one_sided.hpp): window exchange, ncclPutSignal /
// ncclSignal as the sender's stream reaches them, ncclWaitSignal, ncclCommSuspend / ncclCommResume.
#include "one_sided.hpp"

#include <chrono>
#include <cstring>
#include <new>
#include <thread>

#include "communicator.hpp"
#include "genie/common/log.hpp"
#include "genie/fakecuda/runtime.hpp"
#include "peer_memory.hpp"

namespace genie::shim {
namespace {

// What each rank contributes to a window registration.
struct WindowEntry {
  BufferRef window;
  uint64_t size = 0;
  BufferRef signals;
};
static_assert(sizeof(WindowEntry) <= kGatherBytes);

}  // namespace

Status Communicator::exchange_window(Window& w) {
  {
    // Peers on other hosts cannot map this rank's memory; the fabric transport moves no one-sided traffic yet.
    bool other_host = false;
    for (const auto& p : transport_->peers())
      other_host |= std::strncmp(p.host, transport_->peers()[0].host, sizeof(p.host)) != 0;
    if (other_host)
      return invalid_usage("windows for one-sided communication need every rank on one host (Genie's real-fabric "
                           "transport carries no one-sided traffic)");
  }
  PeerMemory& pm = PeerMemory::instance();
  if (!signals_) {
    auto area = std::make_unique<SignalArea>();
    area->bytes = sizeof(SignalSlot) * static_cast<uint64_t>(nranks_);
    GENIE_ASSIGN_OR_RETURN(area->alloc, rt_.device_alloc(cuda_dev_, area->bytes));
    area->local = static_cast<SignalSlot*>(area->alloc);
    for (int r = 0; r < nranks_; ++r) new (&area->local[r]) SignalSlot();
    signals_ = std::move(area);
    signals_consumed_.assign(static_cast<size_t>(nranks_), 0);
  }
  WindowEntry mine;
  if (w.size > 0) {
    GENIE_ASSIGN_OR_RETURN(mine.window, pm.publish(rt_, w.base, w.size, "buff", true));
  }
  mine.size = w.size;
  GENIE_ASSIGN_OR_RETURN(mine.signals, pm.publish(rt_, signals_->alloc, signals_->bytes, "signals", true));
  std::vector<int> everyone(static_cast<size_t>(nranks_));
  for (int r = 0; r < nranks_; ++r) everyone[static_cast<size_t>(r)] = r;
  GENIE_ASSIGN_OR_RETURN(auto all, gather_small(everyone, &mine, sizeof(mine)));
  w.ranks.resize(static_cast<size_t>(nranks_));
  w.sizes.resize(static_cast<size_t>(nranks_));
  const bool first = signals_->peers.empty();
  if (first) {
    signals_->peers.resize(static_cast<size_t>(nranks_));
    signals_->mapped.assign(static_cast<size_t>(nranks_), nullptr);
  }
  for (int r = 0; r < nranks_; ++r) {
    WindowEntry e;
    std::memcpy(&e, all[static_cast<size_t>(r)].data(), sizeof(e));
    w.ranks[static_cast<size_t>(r)] = e.window;
    w.sizes[static_cast<size_t>(r)] = e.size;
    if (first) signals_->peers[static_cast<size_t>(r)] = e.signals;
  }
  signals_ready_.store(true, std::memory_order_release);
  return Status::ok();
}

uint64_t Communicator::persistent_bytes() const { return signals_ ? signals_->bytes : 0; }

Status Communicator::suspend(int /*flags*/) {
  // Nothing of this communicator's device memory is dynamic (the signal area lives as long as the communicator), so
  // NCCL_SUSPEND_MEM releases nothing (ncclStatGpuMemSuspend is 0). Calls issued before the suspend complete first,
  // as NCCL requires the communicator idle.
  GENIE_TRY(drain());
  bool was = suspended_.exchange(true, std::memory_order_acq_rel);
  if (was) return invalid_usage("the communicator is already suspended (ncclCommSuspend)");
  return Status::ok();
}

Status Communicator::resume() {
  bool was = suspended_.exchange(false, std::memory_order_acq_rel);
  if (!was) return invalid_usage("the communicator is not suspended (ncclCommResume without ncclCommSuspend)");
  return Status::ok();
}

Result<SimTime> Communicator::run_put(const PutCall& p, uint64_t order, SimTime ready, const sched::ExternalOp& lane) {
  if (aborted() || async_error() != Errc::kOk)
    return hold_after_failure(*this, ready, Status(Errc::kRemote, "communicator failed"));
  std::unique_lock lk(exec_mu_);
  TurnGuard turn{*this, order};
  if (Status t = wait_turn(lk, order, lane); !t.is_ok()) return hold_after_failure(*this, ready, t);
  ready = max(ready, last_end_);
  lane.hold(ready);
  // Timed as a message of its bytes from this rank to the peer, alone on its path (the coordinator does not see it).
  Result<SimTime> d = timing_->p2p(rank_, p.peer, p.bytes);
  if (!d.is_ok()) return fail_call(ready, d.status());
  SimTime end = ready + d.value();
  sched::Clock& clock = rt_.clock();
  if (!clock.is_virtual()) {
    end = max(ready, clock.wall_now()) + d.value();
    clock.sleep_until(end);
  }
  PeerMemory& pm = PeerMemory::instance();
  if (p.win != nullptr && p.bytes > 0 && rt_.moves_bytes(p.bytes)) {  // GENIE_DATA=none: control data only
    Result<char*> dst = pm.resolve(p.win->ranks[static_cast<size_t>(p.peer)]);
    if (!dst.is_ok()) return fail_call(ready, dst.status());
    std::memcpy(dst.value() + p.offset, p.src, p.bytes);
  }
  SignalSlot*& area = signals_->mapped[static_cast<size_t>(p.peer)];
  if (area == nullptr) {
    Result<char*> a = pm.resolve(signals_->peers[static_cast<size_t>(p.peer)]);
    if (!a.is_ok()) return fail_call(ready, a.status());
    area = reinterpret_cast<SignalSlot*>(a.value());
  }
  SignalSlot& slot = area[rank_];
  const uint64_t k = slot.count.load(std::memory_order_relaxed);  // only this rank raises this slot
  slot.arrival_ns[k % kSignalRing].store(end.count_ns(), std::memory_order_relaxed);
  slot.latest_ns.store(end.count_ns(), std::memory_order_relaxed);
  slot.count.store(k + 1, std::memory_order_release);  // after the bytes and the arrival time
  last_end_ = end;
  return end;
}

Result<SimTime> Communicator::run_wait_signal(const std::vector<SignalWait>& waits, uint64_t order, SimTime ready,
                                              const sched::ExternalOp& lane) {
  if (aborted() || async_error() != Errc::kOk)
    return hold_after_failure(*this, ready, Status(Errc::kRemote, "communicator failed"));
  std::unique_lock lk(exec_mu_);
  TurnGuard turn{*this, order};
  if (Status t = wait_turn(lk, order, lane); !t.is_ok()) return hold_after_failure(*this, ready, t);
  ready = max(ready, last_end_);
  // The wait injects nothing: while it waits the lane holds back no one's clock; its end is the senders' arrivals.
  lane.gate();
  SimTime end = ready;
  const double limit = hang_timeout_s();
  const auto t0 = std::chrono::steady_clock::now();
  for (const SignalWait& w : waits) {
    SignalSlot& slot = signals_->local[w.peer];
    uint64_t& consumed = signals_consumed_[static_cast<size_t>(w.peer)];
    const uint64_t target = consumed + w.count;
    uint64_t have = slot.count.load(std::memory_order_acquire);
    while (have < target) {
      if (aborted()) return hold_after_failure(*this, ready, Status(Errc::kRemote, "communicator aborted"));
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (limit > 0 && waited > limit)
        return fail_call(ready, Status(Errc::kRemote, "ncclWaitSignal: rank " + std::to_string(rank_) + " waited " +
                                                          std::to_string(static_cast<int>(waited)) + " s for " +
                                                          std::to_string(target - have) + " more signal(s) from rank " +
                                                          std::to_string(w.peer) + " (GENIE_HANG_TIMEOUT)"));
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      have = slot.count.load(std::memory_order_acquire);
    }
    if (have - consumed > kSignalRing) {
      end = max(end, SimTime::ns(slot.latest_ns.load(std::memory_order_relaxed)));
    } else {
      for (uint64_t k = consumed; k < target; ++k)
        end = max(end, SimTime::ns(slot.arrival_ns[k % kSignalRing].load(std::memory_order_relaxed)));
    }
    consumed = target;
  }
  lane.hold(end);
  last_end_ = end;
  return end;
}

}  // namespace genie::shim
