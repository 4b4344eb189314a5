// SPDX-License-Identifier: Apache-2.0
// Process handles that survive pid reuse: a pidfd refers to one process, and polls readable once it has exited.
#pragma once

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace genie::shim {

/// A pidfd for process `pid` (close it when done), or -1 where the kernel has none or the process is gone.
inline int open_pidfd(int pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

/// True when the process behind `pidfd` has exited (false for -1: unknown).
inline bool pidfd_exited(int pidfd) {
  if (pidfd < 0) return false;
  pollfd p{pidfd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

}  // namespace genie::shim
