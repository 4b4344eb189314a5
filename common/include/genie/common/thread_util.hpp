// SPDX-License-Identifier: Apache-2.0
// Helpers for Genie's own threads, which live inside other people's programs.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <thread>
#include <utility>

namespace genie {

/// Starts a thread with every asynchronous signal blocked: Genie's helper threads (stream workers, the
/// coordinator and its clients) must never take a signal the program, or a launcher's signalfd, expects to
/// receive on its own threads.
template <class F>
std::thread start_quiet_thread(F&& fn) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  std::thread t(std::forward<F>(fn));
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return t;
}

}  // namespace genie
