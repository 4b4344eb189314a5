// SPDX-License-Identifier: Apache-2.0
// Peer buffers: the owner's memfd is opened through /proc/<pid>/fd (same user, same host) and mapped once, until the
// owner frees it.
#include "peer_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pthread.h>

#include <atomic>
#include <cerrno>
#include <mutex>
#include <cstring>
#include <string>

#include "genie/common/huge_pages.hpp"
#include "genie/fakecuda/runtime.hpp"
#include "pidfd.hpp"

namespace genie::shim {
namespace {
std::string hex(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%p", p);
  return buf;
}
}  // namespace

namespace {
// getpid() is a system call (glibc no longer caches it) and this sits on every call's path: cache it, and
// refresh it in a forked child (examples and launchers fork ranks after loading us).
std::atomic<int32_t> g_pid{0};
int32_t self_pid() {
  int32_t p = g_pid.load(std::memory_order_relaxed);
  if (p == 0) {
    static std::once_flag once;
    std::call_once(once, [] { pthread_atfork(nullptr, nullptr, [] { g_pid.store(0, std::memory_order_relaxed); }); });
    p = static_cast<int32_t>(getpid());
    g_pid.store(p, std::memory_order_relaxed);
  }
  return p;
}
}  // namespace

PeerMemory& PeerMemory::instance() {
  static auto* pm = new PeerMemory();  // never destroyed: stream workers may use it during exit
  return *pm;
}

Result<BufferRef> PeerMemory::publish(fakecuda::Runtime& rt, const void* p, uint64_t bytes, const char* what,
                                      bool cross_process) {
  BufferRef ref;
  ref.addr = reinterpret_cast<uint64_t>(p);
  ref.pid = self_pid();
  if (bytes == 0) return ref;
  if (p == nullptr) return invalid_argument(std::string(what) + " is NULL");
  auto a = rt.memory().find(p, 1);
  if (!a)
    return invalid_argument(std::string(what) + " " + hex(p) +
                            " is not memory allocated by the CUDA runtime (cudaMalloc, ncclMemAlloc, cudaHostAlloc)");
  if (!a->contains(ref.addr, bytes))
    return invalid_argument(std::string(what) + " " + hex(p) + ": " + std::to_string(bytes) +
                            " bytes run past the end of its allocation of " + std::to_string(a->size) + " bytes");
  if (a->shared_fd < 0 && !cross_process) return ref;
  if (a->shared_fd < 0) {
    if (a->mapped_size == 0)
      return invalid_argument(std::string(what) + " " + hex(p) +
                              " is registered host memory, which peers in other processes cannot map");
    GENIE_ASSIGN_OR_RETURN(fakecuda::Allocation shared, rt.memory().make_shareable(reinterpret_cast<void*>(a->base)));
    a = shared;
  }
  ref.fd = a->shared_fd;
  ref.fd_id = a->shared_id;
  ref.offset = ref.addr - a->base;
  ref.map_size = a->mapped_size;
  return ref;
}

Result<char*> PeerMemory::resolve(const BufferRef& ref) {
  if (ref.pid == self_pid() || ref.addr == 0) return reinterpret_cast<char*>(ref.addr);
  std::lock_guard lk(mu_);
  auto key = std::make_tuple(ref.pid, ref.fd_id);
  auto it = maps_.find(key);
  if (it != maps_.end() && it->second.size >= ref.map_size) return it->second.base + ref.offset;
  if (it == maps_.end()) drop_freed();
  std::string path = "/proc/" + std::to_string(ref.pid) + "/fd/" + std::to_string(ref.fd);
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return Status(Errc::kRemote, "cannot open peer memory " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_ino) != ref.fd_id) {
    ::close(fd);
    return Status(Errc::kRemote, "peer memory " + path + " was freed while in use");
  }
  void* p = mmap(nullptr, ref.map_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  int err = errno;
  ::close(fd);
  if (p == MAP_FAILED) return Status(Errc::kSystem, std::string("mmap of peer memory: ") + std::strerror(err));
  advise_huge_pages(p, ref.map_size);
  if (it != maps_.end()) munmap(it->second.base, it->second.size);
  maps_[key] = Mapping{static_cast<char*>(p), ref.map_size, ref.fd};
  if (pidfds_.find(ref.pid) == pidfds_.end()) pidfds_[ref.pid] = open_pidfd(ref.pid);
  return static_cast<char*>(p) + ref.offset;
}

size_t PeerMemory::mapped() const {
  std::lock_guard lk(mu_);
  return maps_.size();
}

void PeerMemory::drop_freed() {
  for (auto it = maps_.begin(); it != maps_.end();) {
    const auto [pid, inode] = it->first;
    const auto pf = pidfds_.find(pid);
    // Without a pidfd an exited owner cannot be told from a live one that freed the buffer: keep the mapping.
    if (pf == pidfds_.end() || pf->second < 0 || pidfd_exited(pf->second)) {
      ++it;
      continue;
    }
    const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(it->second.fd);
    struct stat st {};
    const int rc = ::stat(path.c_str(), &st);
    // Gone: the fd is closed, or its number now names another file. Any other answer (no permission) keeps it, and so
    // does an owner that exited since the check above (an exited process has no fds either).
    const bool gone = rc == 0 ? static_cast<uint64_t>(st.st_ino) != inode : errno == ENOENT;
    if (!gone || pidfd_exited(pf->second)) {
      ++it;
      continue;
    }
    munmap(it->second.base, it->second.size);
    it = maps_.erase(it);
  }
}

}  // namespace genie::shim
