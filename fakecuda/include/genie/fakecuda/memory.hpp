// SPDX-License-Identifier: Apache-2.0
// MemoryRegistry: device and pinned-host allocations backed by host memory (mmap MAP_NORESERVE).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <shared_mutex>

#include "genie/common/status.hpp"

namespace genie::fakecuda {

enum class MemKind { kDevice, kManaged, kHostPinned, kHostRegistered, kIpcMapped };

/// One registered range.
struct Allocation {
  uintptr_t base = 0;
  size_t size = 0;         ///< bytes the caller asked for
  size_t mapped_size = 0;  ///< bytes mapped (page-rounded); 0 when we do not own the mapping
  MemKind kind = MemKind::kDevice;
  int device = -1;         ///< owning device for device/managed/IPC memory, -1 for host memory
  unsigned flags = 0;      ///< cudaHostAlloc flags
  int shared_fd = -1;      ///< memfd once the range was made shareable (IPC)
  uint64_t shared_id = 0;  ///< inode of `shared_fd`: tells a reused fd number from the original memory
  uint64_t accounted = 0;  ///< bytes charged against the device's capacity
  bool pooled = false;     ///< from the device's default memory pool (cudaMallocAsync)

  bool is_device() const { return kind == MemKind::kDevice || kind == MemKind::kManaged || kind == MemKind::kIpcMapped; }
  bool contains(uintptr_t p, size_t n) const { return p >= base && n <= size && p - base <= size - n; }
};

/// All ranges the runtime knows, keyed by base address. Thread-safe.
class MemoryRegistry {
 public:
  MemoryRegistry() = default;
  ~MemoryRegistry();

  /// Maps `size` bytes of zero-filled, lazily backed memory (untouched pages cost nothing). `huge_pages`: advise 2 MiB
  /// pages for large mappings (off in timing-only runs, where one written byte would then cost 2 MiB).
  static Result<void*> map_anonymous(size_t size, bool huge_pages = true);
  /// Maps `size` bytes of zero-filled memory on a fresh memfd (MAP_SHARED, lazily backed) so other
  /// processes can map the same pages (NCCL peers, CUDA IPC). Fills `a`'s base, sizes, fd and id.
  static Status map_shareable(size_t size, Allocation* a, bool huge_pages = true);
  /// Ok when every page of [p, p+n) is mapped in this process; kInvalidArgument otherwise. Touches no page (msync with
  /// MS_ASYNC, which Linux answers from the mappings alone): timing-only copies check a host pointer with it.
  static Status check_mapped(const void* p, size_t n);
  static void unmap(void* p, size_t mapped_size);
  static size_t page_round(size_t n);
  /// Zeroes [p, p+n) inside a mapping made by map_anonymous or map_shareable: the whole pages are released
  /// (MADV_REMOVE on a memfd, MADV_DONTNEED on private memory; both read back as zeros and are backed again
  /// when written), the partial pages at the ends are written. Falls back to memset if the kernel refuses.
  static void zero(void* p, size_t n);
  /// memset_async zeroes by release from this size on; smaller ranges are written.
  static constexpr size_t kZeroByReleaseMin = size_t{2} << 20;

  void add(const Allocation& a);
  /// Removes the range starting exactly at `base`; kNotFound if there is none.
  Result<Allocation> remove(const void* base);
  /// The range containing [p, p+n), if any.
  std::optional<Allocation> find(const void* p, size_t n = 1) const;
  /// Makes the allocation at `base` shareable with other processes (moves it onto a memfd at the same
  /// address, contents preserved) and returns it with shared_fd set. Device memory is born shareable unless
  /// fakecuda.shareable_memory is off; only then does this copy (and back) every page.
  Result<Allocation> make_shareable(const void* base);
  /// Maps another process's shareable range (IPC); the result is registered as kIpcMapped.
  Result<void*> open_shared(int pid, int fd, size_t mapped_size, size_t offset, int device);

  /// Copies n bytes. Registered ranges are copied directly; an unregistered (pageable host) pointer is
  /// copied through process_vm_readv so a bad pointer yields kInvalidArgument instead of a crash.
  Status copy(void* dst, const void* src, size_t n) const;

 private:
  // On a cache line of its own (the registry is 64-byte aligned): every collective call takes it for reading on the
  // enqueuing thread, and what sat next to it in the runtime (the timeline's core pointer, which stream workers read
  // per op) cost both threads a miss per call (docs/BENCHMARKS.md).
  alignas(64) mutable std::shared_mutex mu_;
  std::map<uintptr_t, Allocation> ranges_;
};

}  // namespace genie::fakecuda
