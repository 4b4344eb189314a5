// SPDX-License-Identifier: Apache-2.0
// The block pool: per size class, a lock-free list freed blocks are pushed onto (any thread) and each thread's
// own cache, refilled by taking the whole list at once. Push-only plus take-all has no ABA problem.
#include "genie/common/block_pool.hpp"

#include <atomic>

#include "genie/common/sanitizer.hpp"

namespace genie {
namespace {

constexpr bool kPoolOn = !GENIE_ASAN;  // ASan must see every use after free

constexpr std::size_t kGrain = 64;
constexpr std::size_t kClasses = kPoolMaxBlock / kGrain;
// Blocks kept per class on the shared list: beyond it a freed block goes back to operator delete, so a burst of
// queued work (a program that enqueues 10^6 ops before it synchronizes) does not stay allocated for good.
constexpr std::size_t kMaxShared = 4096;

struct Node {
  Node* next;
};

struct alignas(64) SharedList {
  std::atomic<Node*> head{nullptr};
  std::atomic<std::size_t> count{0};  // approximate: blocks pushed since the list was last taken
};
SharedList g_lists[kClasses];

struct ThreadCache {
  Node* head[kClasses] = {};
  bool alive = true;
  ~ThreadCache() {
    alive = false;
    for (std::size_t c = 0; c < kClasses; ++c)
      while (Node* n = head[c]) {
        head[c] = n->next;
        ::operator delete(n);
      }
  }
};
thread_local ThreadCache t_cache;

std::size_t size_class(std::size_t bytes) { return bytes == 0 ? 0 : (bytes - 1) / kGrain; }

}  // namespace

bool pool_recycles() noexcept { return kPoolOn; }

void* pool_allocate(std::size_t bytes) {
  const std::size_t c = size_class(bytes);
  if (!kPoolOn || c >= kClasses) return ::operator new(bytes);
  ThreadCache& tc = t_cache;
  if (!tc.alive) return ::operator new((c + 1) * kGrain);
  Node*& h = tc.head[c];
  if (h == nullptr && g_lists[c].head.load(std::memory_order_relaxed) != nullptr) {
    g_lists[c].count.store(0, std::memory_order_relaxed);
    h = g_lists[c].head.exchange(nullptr, std::memory_order_acquire);
  }
  if (h == nullptr) return ::operator new((c + 1) * kGrain);  // every block of a class has the class's size
  Node* n = h;
  h = n->next;
  return n;
}

void pool_free(void* p, std::size_t bytes) noexcept {
  if (p == nullptr) return;
  const std::size_t c = size_class(bytes);
  if (!kPoolOn || c >= kClasses) {
    ::operator delete(p);
    return;
  }
  SharedList& l = g_lists[c];
  if (l.count.fetch_add(1, std::memory_order_relaxed) >= kMaxShared) {
    ::operator delete(p);
    return;
  }
  Node* n = static_cast<Node*>(p);
  n->next = l.head.load(std::memory_order_relaxed);
  while (!l.head.compare_exchange_weak(n->next, n, std::memory_order_release, std::memory_order_relaxed)) {
  }
}

}  // namespace genie
