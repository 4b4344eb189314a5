// SPDX-License-Identifier: Apache-2.0
// Doorbell: shared (not process-private) futex operations, since ringer and sleeper are different processes.
#include "doorbell.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>

namespace genie::shim {
namespace {
long futex(std::atomic<uint32_t>* word, int op, uint32_t val, const timespec* ts) noexcept {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, val, ts, nullptr, 0);
}
}  // namespace

void Doorbell::ring() noexcept {
  seq.fetch_add(1, std::memory_order_seq_cst);
  if (waiters.load(std::memory_order_seq_cst) > 0) futex(&seq, FUTEX_WAKE, INT_MAX, nullptr);
}

void Doorbell::wait(uint32_t seen, long timeout_ns) noexcept {
  if (timeout_ns <= 0) return;
  const timespec ts{timeout_ns / 1'000'000'000, timeout_ns % 1'000'000'000};
  futex(&seq, FUTEX_WAIT, seen, &ts);  // returns at once when seq is no longer `seen`
}

}  // namespace genie::shim
