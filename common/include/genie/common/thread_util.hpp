// SPDX-License-Identifier: Apache-2.0
// Helpers for Genie's own threads, which live inside other people's programs.
#pragma once

#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <thread>
#include <utility>
#include <vector>

#include "genie/common/internal_scope.hpp"

namespace genie {

/// Starts a thread with every asynchronous signal blocked: Genie's helper threads (stream workers, the
/// coordinator and its clients) must never take a signal the program, or a launcher's signalfd, expects to
/// receive on its own threads.
template <class F>
std::thread start_quiet_thread(F&& fn) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  std::thread t([f = std::forward<F>(fn)]() mutable {
    InternalScope internal;  // everything this thread does is Genie's own work
    f();
  });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return t;
}

/// The CPUs the calling thread may run on (its affinity), in increasing order; empty if they cannot be read.
inline std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

}  // namespace genie
