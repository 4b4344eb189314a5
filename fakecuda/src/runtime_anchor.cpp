// SPDX-License-Identifier: Apache-2.0
// libgenie_runtime.so is made of whole static archives; this file gives the target a source of its own.
namespace genie {
/// Version of the Genie runtime library ("0.1.0").
const char* runtime_version() noexcept { return "0.1.0"; }
}  // namespace genie

// Genie's Python helpers (fakecuda/python/genie_small_values.py) mark their own CPU work with these two calls, so
// that the virtual host clock leaves it out as it leaves out the emulator's (Clock::begin_excluded_work): a program
// runs as fast in virtual time with them as without. Pairs may nest; a begin made while no CUDA runtime ran is
// matched by an end that does nothing. C linkage: Python finds them with ctypes in the preloaded libraries.
#include "genie/fakecuda/runtime.hpp"

namespace {
thread_local int g_host_work_depth = 0;
thread_local unsigned g_host_work_mask = 0;  // bit d: the begin at depth d reached the clock
}  // namespace

extern "C" __attribute__((visibility("default"))) int genie_host_work_begin(void) {
  genie::fakecuda::Runtime* rt = genie::fakecuda::Runtime::instance();
  const int d = g_host_work_depth++;
  if (rt == nullptr || d >= 32) return 0;
  rt->clock().begin_excluded_work();
  g_host_work_mask |= 1u << d;
  return 1;
}

extern "C" __attribute__((visibility("default"))) int genie_host_work_end(void) {
  if (g_host_work_depth == 0) return 0;
  const int d = --g_host_work_depth;
  if (d >= 32 || (g_host_work_mask & (1u << d)) == 0) return 0;
  g_host_work_mask &= ~(1u << d);
  genie::fakecuda::Runtime* rt = genie::fakecuda::Runtime::instance();
  if (rt != nullptr) rt->clock().end_excluded_work();
  return 1;
}
