// SPDX-License-Identifier: Apache-2.0
// Clock implementation: per-thread virtual time from sampled thread CPU time plus modelled overheads.
#include "genie/sched/clock.hpp"

#include "genie/common/status.hpp"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

namespace genie::sched {
namespace {

std::atomic<uint64_t> g_next_clock_id{1};

int64_t read_clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

bool parse_clock_mode(const char* text, ClockMode* out) {
  if (text == nullptr) return false;
  if (std::strcmp(text, "virtual") == 0) { *out = ClockMode::kVirtual; return true; }
  if (std::strcmp(text, "realtime") == 0) { *out = ClockMode::kRealtime; return true; }
  return false;
}

const char* clock_mode_name(ClockMode m) { return m == ClockMode::kVirtual ? "virtual" : "realtime"; }

struct Clock::ThreadState {
  uint64_t clock_id = 0;
  int64_t vt_ns = 0;
  int64_t excluded_ns = 0;  // emulator CPU time to subtract at the next sample
  int64_t last_cpu_ns = 0;
  int64_t last_wall_ns = 0;
};

Clock::Clock(ClockOptions options)
    : options_(options), id_(g_next_clock_id.fetch_add(1)), epoch_wall_ns_(read_clock_ns(CLOCK_MONOTONIC)) {}

Clock::ThreadState& Clock::thread_state() {
  GENIE_TLS_FAST thread_local ThreadState ts;
  if (ts.clock_id != id_) {
    ts.clock_id = id_;
    ts.vt_ns = max_host_ns_.load(std::memory_order_relaxed);
    ts.last_cpu_ns = read_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    ts.last_wall_ns = read_clock_ns(CLOCK_MONOTONIC);
  }
  return ts;
}

void Clock::publish(SimTime t) {
  int64_t v = t.count_ns();
  int64_t cur = max_host_ns_.load(std::memory_order_relaxed);
  while (v > cur && !max_host_ns_.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}

SimTime Clock::wall_now() const {
  const int64_t w = read_clock_ns(CLOCK_MONOTONIC) - epoch_wall_ns_;
  if (is_virtual() || options_.dilation == 1.0) return SimTime::ns(w);
  return SimTime::ns(static_cast<int64_t>(static_cast<double>(w) / options_.dilation));
}

void Clock::sleep_until(SimTime t) const {
  const SimTime left = t - wall_now();
  if (left <= SimTime::zero()) return;
  const double d = is_virtual() ? 1.0 : options_.dilation;
  std::this_thread::sleep_for(std::chrono::nanoseconds(static_cast<int64_t>(static_cast<double>(left.count_ns()) * d)));
}

SimTime Clock::peek() { return is_virtual() ? SimTime::ns(thread_state().vt_ns) : wall_now(); }

SimTime Clock::now() {
  if (!is_virtual()) return wall_now();
  ThreadState& ts = thread_state();
  int64_t wall = read_clock_ns(CLOCK_MONOTONIC);
  if (wall - ts.last_wall_ns >= options_.cpu_sample_interval.count_ns()) {
    int64_t cpu = read_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    ts.vt_ns += std::max<int64_t>(0, cpu - ts.last_cpu_ns - ts.excluded_ns);
    ts.excluded_ns = 0;
    ts.last_cpu_ns = cpu;
    ts.last_wall_ns = wall;
    publish(SimTime::ns(ts.vt_ns));
  }
  return SimTime::ns(ts.vt_ns);
}

SimTime Clock::api_call(SimTime overhead) {
  if (!is_virtual()) return wall_now();
  now();
  ThreadState& ts = thread_state();
  ts.vt_ns += overhead.count_ns();
  return SimTime::ns(ts.vt_ns);  // published at the next sample or wait: new threads need only a bound
}

void Clock::wait_until(SimTime t) {
  if (!is_virtual()) return;
  ThreadState& ts = thread_state();
  if (t.count_ns() > ts.vt_ns) {
    ts.vt_ns = t.count_ns();
    publish(t);
  }
}

void Clock::exclude_cpu_time(SimTime dt) {
  if (!is_virtual()) return;
  thread_state().excluded_ns += dt.count_ns();
}

void Clock::discard_cpu_time() {
  if (!is_virtual()) return;
  ThreadState& ts = thread_state();
  ts.last_cpu_ns = read_clock_ns(CLOCK_THREAD_CPUTIME_ID);
  ts.last_wall_ns = read_clock_ns(CLOCK_MONOTONIC);
  ts.excluded_ns = 0;
}

}  // namespace genie::sched
