// SPDX-License-Identifier: Apache-2.0
// MemoryRegistry: lazily backed mappings, range lookup, safe copies and IPC sharing through memfd.
#include "genie/fakecuda/memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>

#include "genie/common/huge_pages.hpp"

namespace genie::fakecuda {

MemoryRegistry::~MemoryRegistry() = default;  // mappings are released by the process, not here

size_t MemoryRegistry::page_round(size_t n) {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (n + page - 1) / page * page;
}

Result<void*> MemoryRegistry::map_anonymous(size_t size, bool huge_pages) {
  size_t len = page_round(size == 0 ? 1 : size);
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return Status(Errc::kOutOfMemory, std::string("mmap failed: ") + std::strerror(errno));
  if (huge_pages) advise_huge_pages(p, len);
  return p;
}

Status MemoryRegistry::check_mapped(const void* p, size_t n) {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  if (n == 0) return Status::ok();
  const auto lo = reinterpret_cast<uintptr_t>(p);
  if (lo == 0 || n > UINTPTR_MAX - lo) return invalid_argument("null or wrapping host range");
  const uintptr_t a = lo / page * page, b = (lo + n + page - 1) / page * page;
  // ENOMEM: part of the range is not mapped. MS_ASYNC writes nothing back and reads no page.
  if (msync(reinterpret_cast<void*>(a), b - a, MS_ASYNC) != 0)
    return invalid_argument("copy touches memory that is not mapped in this process");
  return Status::ok();
}

namespace {
uint64_t inode_of(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}
}  // namespace

Status MemoryRegistry::map_shareable(size_t size, Allocation* a, bool huge_pages) {
  const size_t len = page_round(size == 0 ? 1 : size);
  int fd = memfd_create("genie-device", MFD_CLOEXEC);
  if (fd < 0) return system_error(std::string("memfd_create: ") + std::strerror(errno));
  if (ftruncate(fd, static_cast<off_t>(len)) != 0) {
    int err = errno;
    close(fd);
    return Status(Errc::kOutOfMemory, std::string("ftruncate of device memory: ") + std::strerror(err));
  }
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    close(fd);
    return Status(Errc::kOutOfMemory, std::string("mmap failed: ") + std::strerror(err));
  }
  if (huge_pages) advise_huge_pages(p, len);
  a->base = reinterpret_cast<uintptr_t>(p);
  a->size = size;
  a->mapped_size = len;
  a->shared_fd = fd;
  a->shared_id = inode_of(fd);
  return Status::ok();
}

void MemoryRegistry::zero(void* p, size_t n) {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto lo = reinterpret_cast<uintptr_t>(p), hi = lo + n;
  const uintptr_t a = (lo + page - 1) / page * page, b = hi / page * page;
  if (a >= b) {
    std::memset(p, 0, n);
    return;
  }
  std::memset(p, 0, a - lo);
  std::memset(reinterpret_cast<void*>(b), 0, hi - b);
  void* start = reinterpret_cast<void*>(a);
  // MADV_REMOVE punches a hole in a shared (memfd) mapping's file, so every process that maps it reads zeros;
  // on private memory it fails with EINVAL, and MADV_DONTNEED drops the private pages (zero on next read).
  if (madvise(start, b - a, MADV_REMOVE) == 0) return;
  if (errno == EINVAL && madvise(start, b - a, MADV_DONTNEED) == 0) return;
  std::memset(start, 0, b - a);
}

void MemoryRegistry::unmap(void* p, size_t mapped_size) {
  if (p != nullptr && mapped_size != 0) munmap(p, mapped_size);
}

void MemoryRegistry::add(const Allocation& a) {
  std::unique_lock lk(mu_);
  ranges_[a.base] = a;
}

Result<Allocation> MemoryRegistry::remove(const void* base) {
  std::unique_lock lk(mu_);
  auto it = ranges_.find(reinterpret_cast<uintptr_t>(base));
  if (it == ranges_.end()) return not_found("no allocation starts at this address");
  Allocation a = it->second;
  ranges_.erase(it);
  return a;
}

std::optional<Allocation> MemoryRegistry::find(const void* p, size_t n) const {
  uintptr_t u = reinterpret_cast<uintptr_t>(p);
  std::shared_lock lk(mu_);
  auto it = ranges_.upper_bound(u);
  if (it == ranges_.begin()) return std::nullopt;
  --it;
  if (!it->second.contains(u, n == 0 ? 1 : n)) return std::nullopt;
  return it->second;
}

Status MemoryRegistry::copy(void* dst, const void* src, size_t n) const {
  if (n == 0) return Status::ok();
  if (find(dst, n) && find(src, n)) {
    std::memmove(dst, src, n);
    return Status::ok();
  }
  // At least one side is memory we did not allocate: let the kernel check it.
  size_t done = 0;
  while (done < n) {
    iovec local{static_cast<char*>(dst) + done, n - done};
    iovec remote{const_cast<char*>(static_cast<const char*>(src)) + done, n - done};
    ssize_t r = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    if (r <= 0) {
      if (r < 0 && errno == EPERM) {  // process_vm_readv not permitted (seccomp): plain copy
        std::memmove(static_cast<char*>(dst) + done, static_cast<const char*>(src) + done, n - done);
        return Status::ok();
      }
      return invalid_argument("copy touches memory that is not mapped in this process");
    }
    done += static_cast<size_t>(r);
  }
  return Status::ok();
}

Result<Allocation> MemoryRegistry::make_shareable(const void* base) {
  std::unique_lock lk(mu_);
  auto it = ranges_.find(reinterpret_cast<uintptr_t>(base));
  if (it == ranges_.end()) return invalid_argument("not the base of a device allocation");
  Allocation& a = it->second;
  if (a.shared_fd >= 0) return a;
  if (a.mapped_size == 0) return invalid_argument("memory not owned by this process cannot be exported");
  int fd = memfd_create("genie-ipc", MFD_CLOEXEC);
  if (fd < 0) return system_error(std::string("memfd_create: ") + std::strerror(errno));
  if (ftruncate(fd, static_cast<off_t>(a.mapped_size)) != 0) {
    close(fd);
    return system_error(std::string("ftruncate: ") + std::strerror(errno));
  }
  // Copy the current contents into the memfd, then replace the mapping in place (same address).
  void* tmp = mmap(nullptr, a.mapped_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  if (tmp == MAP_FAILED) {
    close(fd);
    return system_error(std::string("mmap memfd: ") + std::strerror(errno));
  }
  std::memcpy(tmp, reinterpret_cast<void*>(a.base), a.size);
  munmap(tmp, a.mapped_size);
  void* p = mmap(reinterpret_cast<void*>(a.base), a.mapped_size, PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_FIXED | MAP_NORESERVE, fd, 0);
  if (p == MAP_FAILED) {
    close(fd);
    return system_error(std::string("mmap fixed: ") + std::strerror(errno));
  }
  a.shared_fd = fd;
  a.shared_id = inode_of(fd);
  return a;
}

Result<void*> MemoryRegistry::open_shared(int pid, int fd, size_t mapped_size, size_t offset, int device) {
  std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  int local = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (local < 0) return invalid_argument("cannot open the exporting process's memory (" + path + "): " +
                                         std::strerror(errno));
  void* p = mmap(nullptr, mapped_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, local, 0);
  close(local);
  if (p == MAP_FAILED) return system_error(std::string("mmap of IPC memory: ") + std::strerror(errno));
  advise_huge_pages(p, mapped_size);
  Allocation a;
  a.base = reinterpret_cast<uintptr_t>(p);
  a.size = mapped_size;
  a.mapped_size = mapped_size;
  a.kind = MemKind::kIpcMapped;
  a.device = device;
  add(a);
  return static_cast<void*>(static_cast<char*>(p) + offset);
}

}  // namespace genie::fakecuda
