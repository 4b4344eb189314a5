// SPDX-License-Identifier: Apache-2.0
// GenieWait's registry of waiting threads and the /proc scan of QuiescenceProbe.
#include "genie/common/quiescence.hpp"

#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
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

// Reads a small /proc file into `buf`; false when it cannot be read (the thread is gone).
bool read_small(const char* path, char* buf, size_t size) {
  FILE* f = std::fopen(path, "re");
  if (!f) return false;
  const size_t n = std::fread(buf, 1, size - 1, f);
  std::fclose(f);
  buf[n] = 0;
  return n > 0;
}

}  // namespace

GenieWait::GenieWait() { tl_waiter.get().depth.fetch_add(1, std::memory_order_acq_rel); }
GenieWait::~GenieWait() { tl_waiter.get().depth.fetch_sub(1, std::memory_order_acq_rel); }
GenieService::GenieService() { tl_waiter.get().service.fetch_add(1, std::memory_order_acq_rel); }
GenieService::~GenieService() { tl_waiter.get().service.fetch_sub(1, std::memory_order_acq_rel); }

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
  bool asleep = true;
  std::unordered_map<pid_t, uint64_t> seen;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const pid_t tid = static_cast<pid_t>(std::atoi(e->d_name));
    if (tid == self || std::find(services.begin(), services.end(), tid) != services.end()) continue;
    char path[64], buf[512];
    // CPU time first, state second: a thread that ran between the two reads shows in one or the other.
    std::snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", static_cast<int>(tid));
    if (!read_small(path, buf, sizeof(buf))) continue;  // exited meanwhile
    const uint64_t run = std::strtoull(buf, nullptr, 10);
    seen[tid] = run;
    // A thread waiting inside Genie may use CPU (it wakes to check for failures); one that has been woken to go
    // on is runnable, which the state shows.
    if (std::find(in_genie.begin(), in_genie.end(), tid) == in_genie.end()) {
      auto prev = run_ns_.find(tid);
      if (prev == run_ns_.end() || prev->second != run) asleep = false;
    }
    std::snprintf(path, sizeof(path), "/proc/self/task/%d/stat", static_cast<int>(tid));
    if (!read_small(path, buf, sizeof(buf))) continue;
    // "tid (comm) S ...": the state follows the last ')' (comm may contain spaces or parentheses).
    const char* p = std::strrchr(buf, ')');
    const char state = p && p[1] == ' ' ? p[2] : '?';
    if (state == 'R' || state == 'D' || state == '?') asleep = false;
  }
  ::closedir(d);
  run_ns_ = std::move(seen);
  return asleep;
}

}  // namespace genie
