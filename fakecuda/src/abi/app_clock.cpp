// SPDX-License-Identifier: Apache-2.0
// GENIE_APP_CLOCK=virtual: the program's own clock reads (clock_gettime on the monotonic and realtime clocks,
// gettimeofday) answer the calling thread's virtual host time, so programs that time themselves with the
// clock (nccl-tests times with std::chrono::steady_clock) print modelled times. Genie's own threads and calls
// made inside Genie's API read the real clock (InternalScope). Off by default: a program that waits with
// timeouts computed from the clock (Python's threading, TCPStore) must see real time. GENIE_APP_CLOCK=python
// leaves the C clocks real and gives Python's time.time / perf_counter virtual time (genie_app_clock_ns).
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/time.h>
#include <time.h>

#include <atomic>

#include "genie/common/internal_scope.hpp"
#include "genie/fakecuda/runtime.hpp"

namespace genie::fakecuda {
namespace {

using ClockGettime = int (*)(clockid_t, timespec*);
using GetTimeOfDay = int (*)(timeval*, void*);

// This file's clock_gettime runs in any context: inside malloc (sanitizer allocators read the clock holding
// their locks), in a thread's teardown, before static initialisers. So it never allocates, locks or reads the
// configuration: the real functions are found when the library loads, the mode is the runtime's
// (RuntimeOptions::app_clock_virtual, decided when it started), and until the library's constructor ran the
// kernel answers directly.
std::atomic<ClockGettime> g_real_clock_gettime{nullptr};
std::atomic<GetTimeOfDay> g_real_gettimeofday{nullptr};
// Offsets of the virtual clock from the real ones: the real clocks when the library loaded.
int64_t g_base_mono_ns = 0, g_base_real_ns = 0;

int64_t to_ns(const timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; }

int real_clock_gettime(clockid_t id, timespec* ts) {
  if (ClockGettime f = g_real_clock_gettime.load(std::memory_order_relaxed)) return f(id, ts);
  return static_cast<int>(syscall(SYS_clock_gettime, id, ts));
}

__attribute__((constructor)) void find_real_clocks() {
  g_real_clock_gettime.store(reinterpret_cast<ClockGettime>(dlsym(RTLD_NEXT, "clock_gettime")));
  g_real_gettimeofday.store(reinterpret_cast<GetTimeOfDay>(dlsym(RTLD_NEXT, "gettimeofday")));
  timespec a{}, b{};
  real_clock_gettime(CLOCK_MONOTONIC, &a);
  real_clock_gettime(CLOCK_REALTIME, &b);
  g_base_mono_ns = to_ns(a);
  g_base_real_ns = to_ns(b);
}

// glibc declares clock_gettime's and gettimeofday's pointers nonnull, so the compiler may fold our null tests of
// them away; a caller that passes null anyway must reach the real function (which answers as without Genie), not
// a store through null here. The empty asm hides what the pointer is.
template <typename T>
T* opaque(T* p) {
  asm("" : "+r"(p));
  return p;
}

bool is_monotonic(clockid_t id) {
  return id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_RAW || id == CLOCK_MONOTONIC_COARSE || id == CLOCK_BOOTTIME;
}
bool is_realtime(clockid_t id) { return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE; }

// The calling thread's virtual host time, or -1 when the real clock must answer. `any_mode`: whatever
// GENIE_APP_CLOCK says (genie_app_clock_ns, which Python's time functions call under GENIE_APP_CLOCK=python).
int64_t virtual_now_ns(clockid_t id, bool any_mode = false) {
  if (internal_depth() > 0 || !(is_monotonic(id) || is_realtime(id))) return -1;
  // Before the program's first CUDA call the real clock answers (virtual time has not started).
  Runtime* rt = Runtime::existing();
  if (!rt || !(any_mode || rt->options().app_clock_virtual) || !rt->clock().is_virtual()) return -1;
  InternalScope internal;  // sampling the thread's CPU clock reads clocks too
  const int64_t vt = rt->clock().now().count_ns();
  return (is_monotonic(id) ? g_base_mono_ns : g_base_real_ns) + vt;
}

}  // namespace
}  // namespace genie::fakecuda

extern "C" __attribute__((visibility("default"))) int clock_gettime(clockid_t id, struct timespec* ts) {
  const int64_t v = genie::fakecuda::virtual_now_ns(id);
  if (v < 0 || genie::fakecuda::opaque(ts) == nullptr) return genie::fakecuda::real_clock_gettime(id, ts);
  ts->tv_sec = static_cast<time_t>(v / 1000000000);
  ts->tv_nsec = static_cast<long>(v % 1000000000);
  return 0;
}

extern "C" __attribute__((visibility("default"))) int gettimeofday(struct timeval* tv, void* tz) {
  const int64_t v = genie::fakecuda::opaque(tv) != nullptr ? genie::fakecuda::virtual_now_ns(CLOCK_REALTIME) : -1;
  if (v < 0) {
    if (auto real = genie::fakecuda::g_real_gettimeofday.load(std::memory_order_relaxed)) return real(tv, tz);
    return static_cast<int>(syscall(SYS_gettimeofday, tv, tz));
  }
  tv->tv_sec = static_cast<time_t>(v / 1000000000);
  tv->tv_usec = static_cast<suseconds_t>((v % 1000000000) / 1000);
  return 0;
}

// GENIE_APP_CLOCK=python (sitecustomize.py): Python's time.time / time.perf_counter (and their _ns forms) call this
// through ctypes, while the C clocks stay real, so a Python program's own timing reads virtual time and the
// timeouts of C++ code (TCPStore, the NCCL watchdog) and of Python's time.monotonic read the real one.
// `realtime` selects CLOCK_REALTIME's offset (time.time) over CLOCK_MONOTONIC's (time.perf_counter). -1 while the
// runtime has not started or its clock is not virtual: the caller then reads the real clock.
extern "C" __attribute__((visibility("default"))) int64_t genie_app_clock_ns(int realtime) {
  return genie::fakecuda::virtual_now_ns(realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC, /*any_mode=*/true);
}
