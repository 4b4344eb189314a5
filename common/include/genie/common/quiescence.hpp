// SPDX-License-Identifier: Apache-2.0
// Whether a whole process is asleep: the coordinator's test for a job in which nothing can happen until the
// global clock moves (docs/coordinator.md, "When the clock cannot advance").
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <unordered_map>

namespace genie {

/// Marks the calling thread, for the scope's lifetime, as waiting inside Genie for something that only Genie or
/// another process can end (a dependency, a peer's arrival, the coordinator's resolution): a QuiescenceProbe counts
/// it as asleep even though it wakes now and then to check for failures and timeouts. Nests; cheap (one atomic
/// add after the thread's first use).
class GenieWait {
 public:
  GenieWait();
  ~GenieWait();
  GenieWait(const GenieWait&) = delete;
  GenieWait& operator=(const GenieWait&) = delete;
};

/// Marks the calling thread, for the scope's lifetime, as a Genie service that never injects traffic nor wakes a
/// thread that would except by messages the coordinator accounts for (the coordinator's own poll loop, hosted in rank
/// 0's process by GENIE_COORDINATOR=auto): a QuiescenceProbe does not look at it at all, running or not.
class GenieService {
 public:
  GenieService();
  ~GenieService();
  GenieService(const GenieService&) = delete;
  GenieService& operator=(const GenieService&) = delete;
};

/// Looks at every thread of this process but the calling one and GenieService threads. all_asleep() is true when none is running or runnable
/// and each is either waiting inside Genie (GenieWait) or, outside Genie, has used no CPU time since the previous
/// call or is blocked in a wait with a timeout (a periodic waker: what it ran was its own timeout). A thread seen for
/// the first time counts as awake unless it is in such a wait, so the first call after any activity is false: ask
/// twice.
class QuiescenceProbe {
 public:
  QuiescenceProbe() = default;
  ~QuiescenceProbe();
  QuiescenceProbe(const QuiescenceProbe&) = delete;
  QuiescenceProbe& operator=(const QuiescenceProbe&) = delete;
  bool all_asleep();
  /// After all_asleep() returned false: the first thread it found awake and why ("thread 123 (python) used CPU").
  const std::string& awake() const { return awake_; }

 private:
  struct Thread;
  void note_awake(pid_t tid, const char* why);
  /// Whether the thread is blocked in a system call that returns by itself (a sleep, or a poll, epoll wait, select or
  /// futex wait with a timeout): /proc/self/task/TID/syscall.
  bool in_timed_wait(Thread& t, pid_t tid);
  struct Thread {
    int schedstat_fd = -1;  ///< /proc/self/task/TID/schedstat, kept open (read with pread)
    int stat_fd = -1;       ///< /proc/self/task/TID/stat
    int syscall_fd = -1;    ///< /proc/self/task/TID/syscall, opened when first needed
    uint64_t run_ns = 0;    ///< CPU time at the previous call
    uint64_t round = 0;     ///< the last call that saw the thread
    void close_files();
  };
  std::unordered_map<pid_t, Thread> threads_;
  uint64_t round_ = 0;
  std::string awake_;
};

}  // namespace genie
