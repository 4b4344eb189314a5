// SPDX-License-Identifier: Apache-2.0
// GENIE_APP_CLOCK=virtual: the program's own clock reads (clock_gettime on the monotonic and realtime clocks,
// gettimeofday) answer the calling thread's virtual host time, so programs that time themselves with the
// clock (nccl-tests times with std::chrono::steady_clock) print modelled times. Genie's own threads and calls
// made inside Genie's API read the real clock (InternalScope). Off by default: a program that waits with
// timeouts computed from the clock (Python's threading, TCPStore) must see real time.
#include <dlfcn.h>
#include <sys/time.h>
#include <time.h>

#include <atomic>

#include "genie/common/config.hpp"
#include "genie/common/internal_scope.hpp"
#include "genie/fakecuda/runtime.hpp"

namespace genie::fakecuda {
namespace {

const config::Param<std::string> kAppClock{
    "app_clock", "wall",
    "What the program's clock reads return (clock_gettime on CLOCK_MONOTONIC/REALTIME and their variants, "
    "gettimeofday): wall (the real clock) or virtual (the calling thread's virtual host time, offset from the "
    "real clock at start-up), for programs that time their own work, like nccl-tests.",
    {"wall", "virtual"}};

using ClockGettime = int (*)(clockid_t, timespec*);
using GetTimeOfDay = int (*)(timeval*, void*);

ClockGettime real_clock_gettime() {
  static const auto f = reinterpret_cast<ClockGettime>(dlsym(RTLD_NEXT, "clock_gettime"));
  return f;
}

// 0: not decided yet, 1: wall, 2: virtual. Decided on the first read outside Genie.
std::atomic<int> g_mode{0};
int64_t g_base_mono_ns = 0, g_base_real_ns = 0;

int64_t to_ns(const timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; }

bool virtual_clock() {
  int m = g_mode.load(std::memory_order_acquire);
  if (m != 0) return m == 2;
  InternalScope internal;  // configuration and logging read clocks themselves
  const bool v = config::global().get(kAppClock) == "virtual";
  timespec a{}, b{};
  real_clock_gettime()(CLOCK_MONOTONIC, &a);
  real_clock_gettime()(CLOCK_REALTIME, &b);
  g_base_mono_ns = to_ns(a);
  g_base_real_ns = to_ns(b);
  g_mode.store(v ? 2 : 1, std::memory_order_release);
  return v;
}

bool is_monotonic(clockid_t id) {
  return id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_RAW || id == CLOCK_MONOTONIC_COARSE || id == CLOCK_BOOTTIME;
}
bool is_realtime(clockid_t id) { return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE; }

// The calling thread's virtual host time, or -1 when the real clock must answer.
int64_t virtual_now_ns(clockid_t id) {
  if (internal_depth() > 0 || !(is_monotonic(id) || is_realtime(id))) return -1;
  // Before the program's first CUDA call the real clock answers (virtual time has not started), and the
  // configuration is not loaded from here: this runs inside other libraries' static initialisers, before
  // every parameter is declared.
  Runtime* rt = Runtime::existing();
  if (!rt || !rt->clock().is_virtual()) return -1;
  if (!virtual_clock()) return -1;
  InternalScope internal;  // sampling the thread's CPU clock reads clocks too
  const int64_t vt = rt->clock().now().count_ns();
  return (is_monotonic(id) ? g_base_mono_ns : g_base_real_ns) + vt;
}

}  // namespace
}  // namespace genie::fakecuda

extern "C" __attribute__((visibility("default"))) int clock_gettime(clockid_t id, struct timespec* ts) {
  const int64_t v = genie::fakecuda::virtual_now_ns(id);
  if (v < 0 || ts == nullptr) return genie::fakecuda::real_clock_gettime()(id, ts);
  ts->tv_sec = static_cast<time_t>(v / 1000000000);
  ts->tv_nsec = static_cast<long>(v % 1000000000);
  return 0;
}

extern "C" __attribute__((visibility("default"))) int gettimeofday(struct timeval* tv, void* tz) {
  const int64_t v = tv ? genie::fakecuda::virtual_now_ns(CLOCK_REALTIME) : -1;
  if (v < 0) {
    static const auto real = reinterpret_cast<genie::fakecuda::GetTimeOfDay>(dlsym(RTLD_NEXT, "gettimeofday"));
    return real(tv, tz);
  }
  tv->tv_sec = static_cast<time_t>(v / 1000000000);
  tv->tv_usec = static_cast<suseconds_t>((v % 1000000000) / 1000);
  return 0;
}
