// SPDX-License-Identifier: Apache-2.0
// Clock implementation: per-thread virtual time from sampled thread CPU time plus modelled overheads.
#include "genie/sched/clock.hpp"

#include "genie/common/status.hpp"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

namespace genie::sched {
namespace {

std::atomic<uint64_t> g_next_clock_id{1};

// Wall time beyond CPU time between two samples above which a thread is taken to have slept (blocked in the
// kernel) rather than been preempted for a moment: a few scheduler ticks on a busy 2-core machine.
constexpr SimTime kSleptThreshold = SimTime::ms(2);

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

// Written only by the owning thread; read by other threads through estimate(). The three clock fields
// change together under a sequence lock (odd `version` = update in progress), so a reader never combines a
// new sample with an old CPU reading.
struct Clock::ThreadState {
  uint64_t clock_id = 0;
  std::atomic<uint32_t> version{0};
  std::atomic<int64_t> vt_ns{0};
  std::atomic<int64_t> excluded_ns{0};  // emulator CPU time to subtract at the next sample
  std::atomic<int64_t> last_cpu_ns{0};
  std::atomic<int> excluded_depth{0};   // > 0 while inside emulator work (begin_excluded_work)
  int64_t last_wall_ns = 0;
  int64_t work_wall_ns = 0;             // CLOCK_MONOTONIC at the outermost begin_excluded_work

  int64_t vt() const { return vt_ns.load(std::memory_order_relaxed); }
  // The owner's updates of (vt, excluded, last_cpu).
  void write(int64_t vt, int64_t excluded, int64_t last_cpu) {
    // Release stores, acquire loads in estimate(): a reader that sees any of these values sees the odd version
    // before it, so its second version read fails (no fences: ThreadSanitizer does not model them).
    version.fetch_add(1, std::memory_order_acq_rel);
    vt_ns.store(vt, std::memory_order_release);
    excluded_ns.store(excluded, std::memory_order_release);
    last_cpu_ns.store(last_cpu, std::memory_order_release);
    version.fetch_add(1, std::memory_order_release);
  }
  void set_vt(int64_t vt) { write(vt, excluded_ns.load(std::memory_order_relaxed), last_cpu_ns.load(std::memory_order_relaxed)); }
};

Clock::Clock(ClockOptions options)
    : options_(options), id_(g_next_clock_id.fetch_add(1)), epoch_wall_ns_(read_clock_ns(CLOCK_MONOTONIC)) {}

Clock::ThreadState& Clock::thread_state() {
  GENIE_TLS_FAST thread_local ThreadState ts;
  if (ts.clock_id != id_) {
    ts.clock_id = id_;
    ts.write(max_host_ns_.load(std::memory_order_relaxed), 0, read_clock_ns(CLOCK_THREAD_CPUTIME_ID));
    ts.excluded_depth.store(0, std::memory_order_relaxed);
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

int64_t Clock::charge(int64_t cpu_ns) const {
  if (cpu_ns <= 0) return 0;
  if (options_.cpu_time_scale == 1.0) return cpu_ns;
  return std::llround(static_cast<double>(cpu_ns) * options_.cpu_time_scale);
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

SimTime Clock::peek() { return is_virtual() ? SimTime::ns(thread_state().vt()) : wall_now(); }

void Clock::resume_no_earlier(SimTime t) {
  const int64_t v = t.count_ns();
  int64_t cur = resume_floor_ns_.load(std::memory_order_relaxed);
  while (v > cur && !resume_floor_ns_.compare_exchange_weak(cur, v, std::memory_order_acq_rel)) {
  }
  publish(t);
}

void Clock::apply_resume_floor(ThreadState& ts) {
  const int64_t f = resume_floor_ns_.load(std::memory_order_acquire);
  if (f > ts.vt()) ts.set_vt(f);
}

SimTime Clock::now() {
  if (!is_virtual()) return wall_now();
  ThreadState& ts = thread_state();
  apply_resume_floor(ts);
  // Host time is the modelled costs only (scale 0), or stands still inside emulator work (its CPU time is excluded).
  if (options_.cpu_time_scale == 0.0 || ts.excluded_depth.load(std::memory_order_relaxed) > 0)
    return SimTime::ns(ts.vt());
  return sample(ts, read_clock_ns(CLOCK_MONOTONIC));
}

SimTime Clock::sample(ThreadState& ts, int64_t wall) {
  if (options_.cpu_time_scale == 0.0) return SimTime::ns(ts.vt());
  if (wall - ts.last_wall_ns >= options_.cpu_sample_interval.count_ns()) {
    int64_t cpu = read_clock_ns(CLOCK_THREAD_CPUTIME_ID);
    const int64_t cpu_used = cpu - ts.last_cpu_ns.load(std::memory_order_relaxed);
    const int64_t used = cpu_used - ts.excluded_ns.load(std::memory_order_relaxed);
    int64_t vt = ts.vt() + charge(used);
    // A thread that slept outside Genie (a condition variable, a barrier, the GIL) was woken by another thread
    // of this process: it resumes no earlier than the latest host time the process had reached.
    if ((wall - ts.last_wall_ns) - cpu_used > kSleptThreshold.count_ns())
      vt = std::max(vt, max_host_ns_.load(std::memory_order_relaxed));
    ts.write(vt, 0, cpu);
    ts.last_wall_ns = wall;
    publish(SimTime::ns(ts.vt()));
  }
  return SimTime::ns(ts.vt());
}

SimTime Clock::api_call(SimTime overhead) {
  if (!is_virtual()) return wall_now();
  now();
  ThreadState& ts = thread_state();
  ts.set_vt(ts.vt() + overhead.count_ns());
  return SimTime::ns(ts.vt());  // published at the next sample or wait: new threads need only a bound
}

void Clock::wait_until(SimTime t) {
  if (!is_virtual()) return;
  ThreadState& ts = thread_state();
  if (t.count_ns() > ts.vt()) {
    ts.set_vt(t.count_ns());
    publish(t);
  }
}

void Clock::exclude_cpu_time(SimTime dt) {
  if (!is_virtual()) return;
  ThreadState& ts = thread_state();
  ts.write(ts.vt(), ts.excluded_ns.load(std::memory_order_relaxed) + dt.count_ns(),
           ts.last_cpu_ns.load(std::memory_order_relaxed));
}

SimTime Clock::begin_excluded_work() {
  if (!is_virtual()) return wall_now();
  ThreadState& ts = thread_state();
  if (ts.excluded_depth.load(std::memory_order_relaxed) > 0) {  // nested: the outermost region excludes
    ts.excluded_depth.fetch_add(1, std::memory_order_acq_rel);
    return SimTime::ns(ts.vt());
  }
  apply_resume_floor(ts);
  const int64_t wall = read_clock_ns(CLOCK_MONOTONIC);
  const SimTime t = sample(ts, wall);
  ts.work_wall_ns = wall;
  ts.excluded_depth.fetch_add(1, std::memory_order_acq_rel);
  return t;
}

SimTime Clock::end_excluded_work(SimTime overhead) {
  if (!is_virtual()) return wall_now();
  ThreadState& ts = thread_state();
  if (ts.excluded_depth.load(std::memory_order_relaxed) > 1) {  // nested: the outermost region excludes
    ts.excluded_depth.fetch_sub(1, std::memory_order_acq_rel);
  } else {
    const int64_t wall = read_clock_ns(CLOCK_MONOTONIC);
    // Excluded before the region ends, so estimate() never counts the region's CPU time.
    exclude_cpu_time(SimTime::ns(wall - ts.work_wall_ns));
    ts.excluded_depth.fetch_sub(1, std::memory_order_acq_rel);
    apply_resume_floor(ts);
    sample(ts, wall);
  }
  if (overhead > SimTime::zero()) ts.set_vt(ts.vt() + overhead.count_ns());
  return SimTime::ns(ts.vt());
}

void Clock::discard_cpu_time() {
  if (!is_virtual()) return;
  ThreadState& ts = thread_state();
  ts.write(ts.vt(), 0, read_clock_ns(CLOCK_THREAD_CPUTIME_ID));
  ts.last_wall_ns = read_clock_ns(CLOCK_MONOTONIC);
}

SimTime Clock::estimate(const ThreadState* ts, int64_t cpu_now_ns) const {
  if (!is_virtual()) return wall_now();
  for (;;) {
    const uint32_t v1 = ts->version.load(std::memory_order_acquire);
    if (v1 & 1u) continue;  // the owner is writing
    const int64_t vt = ts->vt_ns.load(std::memory_order_acquire);
    const int64_t excluded = ts->excluded_ns.load(std::memory_order_acquire);
    const int64_t last_cpu = ts->last_cpu_ns.load(std::memory_order_acquire);
    const bool in_work = ts->excluded_depth.load(std::memory_order_acquire) > 0;
    if (ts->version.load(std::memory_order_relaxed) != v1) continue;
    const int64_t floor = resume_floor_ns_.load(std::memory_order_acquire);
    if (in_work || ts->clock_id != id_ || options_.cpu_time_scale == 0.0) return SimTime::ns(std::max(vt, floor));
    return SimTime::ns(std::max(vt + charge(cpu_now_ns - last_cpu - excluded), floor));
  }
}

}  // namespace genie::sched
