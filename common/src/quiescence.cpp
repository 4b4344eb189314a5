// SPDX-License-Identifier: Apache-2.0
// GenieWait's registry of waiting threads and the /proc scan of QuiescenceProbe.
#include "genie/common/quiescence.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace genie {
namespace {

struct Waiter {
  pid_t tid = 0;
  std::atomic<int> depth{0};
  std::atomic<int> service{0};
  std::atomic<bool> alive{true};
};

struct Registry {
  std::mutex mu;
  std::vector<std::shared_ptr<Waiter>> waiters;
};
Registry& registry() {
  static auto* r = new Registry();  // never destroyed: waits may end in atexit handlers
  return *r;
}

// The calling thread's entry, registered on its first wait.
struct WaiterGuard {
  std::shared_ptr<Waiter> w;
  ~WaiterGuard() {
    if (w) w->alive.store(false, std::memory_order_release);
  }
  Waiter& get() {
    if (!w) {
      w = std::make_shared<Waiter>();
      w->tid = static_cast<pid_t>(::syscall(SYS_gettid));
      Registry& r = registry();
      std::lock_guard lk(r.mu);
      std::erase_if(r.waiters, [](const auto& x) { return !x->alive.load(std::memory_order_acquire); });
      r.waiters.push_back(w);
    }
    return *w;
  }
};
thread_local WaiterGuard tl_waiter;

// Reads a small /proc file from its start into `buf`; false when it cannot be read (the thread is gone).
bool pread_small(int fd, char* buf, size_t size) {
  if (fd < 0) return false;
  const ssize_t n = ::pread(fd, buf, size - 1, 0);
  if (n <= 0) return false;
  buf[n] = 0;
  return true;
}

// Opens /proc/self/task/TID/NAME for reading (-1 when the thread is gone).
int open_task_file(pid_t tid, const char* name) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/self/task/%d/%s", static_cast<int>(tid), name);
  return ::open(path, O_RDONLY | O_CLOEXEC);
}

}  // namespace

GenieWait::GenieWait() { tl_waiter.get().depth.fetch_add(1, std::memory_order_acq_rel); }
GenieWait::~GenieWait() { tl_waiter.get().depth.fetch_sub(1, std::memory_order_acq_rel); }
GenieService::GenieService() { tl_waiter.get().service.fetch_add(1, std::memory_order_acq_rel); }
GenieService::~GenieService() { tl_waiter.get().service.fetch_sub(1, std::memory_order_acq_rel); }

bool QuiescenceProbe::in_timed_wait(Thread& t, pid_t tid) {
  if (t.syscall_fd < 0) t.syscall_fd = open_task_file(tid, "syscall");
  char buf[256];
  if (!pread_small(t.syscall_fd, buf, sizeof(buf))) return false;
  // "NR arg1 ... arg6 sp pc" while blocked in a system call ("running" or "-1 ..." otherwise); arguments in hex.
  char* p = buf;
  const long nr = std::strtol(p, &p, 10);
  if (nr < 0 || p == buf) return false;
  unsigned long long a[6] = {};
  for (auto& x : a) x = std::strtoull(p, &p, 16);
#if defined(__x86_64__)
  switch (nr) {
    case SYS_nanosleep:
    case SYS_clock_nanosleep:
      return true;
    case SYS_poll:  // timeout in ms, the third argument; -1: none
      return static_cast<int>(a[2]) >= 0;
    case SYS_epoll_wait:
    case SYS_epoll_pwait:  // timeout in ms, the fourth argument
      return static_cast<int>(a[3]) >= 0;
    case SYS_ppoll:  // struct timespec*, the third
    case SYS_select:  // struct timeval*, the fifth
    case SYS_pselect6:
      return (nr == SYS_ppoll ? a[2] : a[4]) != 0;
    case SYS_futex: {  // FUTEX_WAIT / FUTEX_WAIT_BITSET with a timeout (the fourth argument)
      const unsigned long long op = a[1] & 0x7f;  // without FUTEX_PRIVATE_FLAG / FUTEX_CLOCK_REALTIME
      return (op == 0 || op == 9) && a[3] != 0;
    }
    default:
      return false;
  }
#else
  (void)a;
  return false;  // other architectures: a thread that used CPU is awake
#endif
}

void QuiescenceProbe::note_awake(pid_t tid, const char* why) {
  char comm[32] = {};
  const int fd = open_task_file(tid, "comm");
  if (pread_small(fd, comm, sizeof(comm))) comm[std::strcspn(comm, "\n")] = 0;
  if (fd >= 0) ::close(fd);
  awake_ = "thread " + std::to_string(tid) + " (" + comm + ") " + why;
}

void QuiescenceProbe::Thread::close_files() {
  for (int fd : {schedstat_fd, stat_fd, syscall_fd})
    if (fd >= 0) ::close(fd);
}

QuiescenceProbe::~QuiescenceProbe() {
  for (auto& [tid, t] : threads_) t.close_files();
}

bool QuiescenceProbe::all_asleep() {
  const pid_t self = static_cast<pid_t>(::syscall(SYS_gettid));
  std::vector<pid_t> in_genie, services;
  {
    Registry& r = registry();
    std::lock_guard lk(r.mu);
    for (const auto& w : r.waiters) {
      if (!w->alive.load(std::memory_order_acquire)) continue;
      if (w->service.load(std::memory_order_acquire) > 0) services.push_back(w->tid);
      else if (w->depth.load(std::memory_order_acquire) > 0) in_genie.push_back(w->tid);
    }
  }
  DIR* d = ::opendir("/proc/self/task");
  if (!d) return false;
  ++round_;
  awake_.clear();
  bool asleep = true;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const pid_t tid = static_cast<pid_t>(std::atoi(e->d_name));
    if (tid == self || std::find(services.begin(), services.end(), tid) != services.end()) continue;
    // Each thread's /proc files stay open between calls and are read again with pread: opening them (a path
    // walk each) cost most of a probe, and a process of PyTorch ranks is probed every few ms while the clock waits.
    auto [it, fresh] = threads_.try_emplace(tid);
    Thread& t = it->second;
    if (fresh) {
      t.schedstat_fd = open_task_file(tid, "schedstat");
      t.stat_fd = open_task_file(tid, "stat");
    }
    t.round = round_;
    char buf[512];
    // CPU time first, state second: a thread that ran between the two reads shows in one or the other.
    if (!pread_small(t.schedstat_fd, buf, sizeof(buf))) continue;  // exited meanwhile
    const uint64_t run = std::strtoull(buf, nullptr, 10);
    // A thread waiting inside Genie may use CPU (it wakes to check for failures); one that has been woken to go
    // on is runnable, which the state shows.
    // A thread outside Genie that used CPU since the previous look is awake, unless it is back in a timed wait: then
    // what ran was most likely its own timeout (gloo's 10 ms epoll loop, torch's watchdog and heartbeat, a libuv
    // timer), which it repeats whether or not the clock moves. A thread that came out of an untimed wait was woken
    // by something, and what woke it may go on.
    if (std::find(in_genie.begin(), in_genie.end(), tid) == in_genie.end() && (fresh || t.run_ns != run) &&
        !in_timed_wait(t, tid)) {
      if (asleep) note_awake(tid, fresh ? "new" : "used CPU");
      asleep = false;
    }
    t.run_ns = run;
    if (!pread_small(t.stat_fd, buf, sizeof(buf))) continue;
    // "tid (comm) S ...": the state follows the last ')' (comm may contain spaces or parentheses).
    const char* p = std::strrchr(buf, ')');
    const char state = p && p[1] == ' ' ? p[2] : '?';
    if (state == 'R' || state == 'D' || state == '?') {
      if (asleep) note_awake(tid, state == 'R' ? "running" : state == 'D' ? "in uninterruptible sleep" : "unknown");
      asleep = false;
    }
  }
  ::closedir(d);
  // Threads that exited (and the two files of a tid the kernel may hand out again).
  for (auto it = threads_.begin(); it != threads_.end();) {
    if (it->second.round == round_) {
      ++it;
      continue;
    }
    it->second.close_files();
    it = threads_.erase(it);
  }
  return asleep;
}

}  // namespace genie
