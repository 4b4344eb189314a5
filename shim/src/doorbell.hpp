// SPDX-License-Identifier: Apache-2.0
// Doorbell: a futex word in memory that processes of one host share (a memfd page), on which a rank that has
// nothing to do sleeps until a peer rings it. One mechanism for both same-host transports: the shim's control
// segment (one bell per communicator) and libfabric's shm provider, whose only wait object (FI_WAIT_YIELD) spins
// on sched_yield (one bell per endpoint, transport/fabric_bell.hpp). Spinning with sched_yield does not hand the
// core over: under EEVDF (Linux 6.6 and later) a yielding task whose peer on the same core is not "eligible" runs
// on, so two ranks per core pass a message once per scheduler slice (docs/fabric.md, "Waiting").
#pragma once

#include <atomic>
#include <cstdint>

namespace genie::shim {

struct alignas(64) Doorbell {
  std::atomic<uint32_t> seq{0};      ///< futex word: bumped by every ring()
  std::atomic<uint32_t> waiters{0};  ///< threads asleep on `seq` (ring() skips the wake-up system call when 0)

  /// After publishing what a sleeper may wait for: wakes every thread asleep on this bell.
  void ring() noexcept;
  /// Sleeps until a ring(), a signal or `timeout_ns`, unless `ready()` is true once this thread has announced
  /// itself (so a ring() between the caller's last check and the sleep is not missed). Returns that check.
  template <class Ready>
  bool sleep_unless(const Ready& ready, long timeout_ns) noexcept {
    // seq_cst on both sides (Dekker): either the ringer sees this waiter, or this thread sees the new `seq` (and
    // then whatever the ringer published before it rang).
    waiters.fetch_add(1, std::memory_order_seq_cst);
    const uint32_t seen = seq.load(std::memory_order_seq_cst);
    const bool r = ready();
    if (!r) wait(seen, timeout_ns);
    waiters.fetch_sub(1, std::memory_order_seq_cst);
    return r;
  }

 private:
  void wait(uint32_t seen, long timeout_ns) noexcept;
};
static_assert(sizeof(Doorbell) == 64, "a doorbell fills one cache line");

}  // namespace genie::shim
