// SPDX-License-Identifier: Apache-2.0
// Helpers for Genie's own threads, which live inside other people's programs.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <thread>
#include <utility>

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

}  // namespace genie
