// SPDX-License-Identifier: Apache-2.0
// Recycled small blocks for objects one thread allocates and another frees: a stream op and its closure are
// made by the thread that enqueues and destroyed by the stream's worker. With malloc, every such free lands in
// the allocating thread's arena under its lock, which the enqueuing thread then contends for on its next
// allocation (`malloc` was 15% of the enqueuing thread's perf samples on a 2-vCPU AMD VM, docs/BENCHMARKS.md). Here a freed
// block goes onto a lock-free list of its size class and the next allocation of that class, on any thread,
// takes the whole list into a cache of its own.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace genie {

/// A block of at least `bytes` (aligned as operator new aligns). Blocks of up to kPoolMaxBlock bytes are
/// recycled; larger ones, and all of them in an AddressSanitizer build (so it still sees use after free),
/// come from operator new.
void* pool_allocate(std::size_t bytes);
/// Returns a block from pool_allocate(bytes) (the same `bytes`); any thread may return it.
void pool_free(void* p, std::size_t bytes) noexcept;
inline constexpr std::size_t kPoolMaxBlock = 512;
/// Whether blocks are recycled in this build (not under AddressSanitizer).
bool pool_recycles() noexcept;

/// A standard allocator on the pool (std::allocate_shared puts an object and its reference counts in one block).
template <class T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor): rebinding
  T* allocate(std::size_t n) {
    static_assert(alignof(T) <= alignof(std::max_align_t), "the pool aligns as operator new does");
    return static_cast<T*>(pool_allocate(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { pool_free(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const PoolAllocator<U>&) const noexcept { return true; }
};

/// A callable whose heap copy (std::function keeps one for any closure over 16 bytes) lives in the pool.
template <class F>
struct Pooled {
  F fn;
  template <class... A>
  decltype(auto) operator()(A&&... a) { return fn(std::forward<A>(a)...); }
  static void* operator new(std::size_t n) { return pool_allocate(n); }
  static void operator delete(void* p, std::size_t n) noexcept { pool_free(p, n); }
};
template <class F>
Pooled<std::decay_t<F>> pooled(F&& fn) {
  return Pooled<std::decay_t<F>>{std::forward<F>(fn)};
}

}  // namespace genie
