// SPDX-License-Identifier: Apache-2.0
// The block pool: per size class, a lock-free list freed blocks are pushed onto (any thread, in batches) and each
// thread's own cache, refilled by taking the whole list at once. Push-only plus take-all has no ABA problem.
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
// Freed blocks a thread gathers before it pushes them onto the shared list as one chain. One push per batch, not per
// block: the thread that allocates takes a batch per miss on the list's line instead of meeting the freeing thread
// there on every block (a stream's worker frees what the enqueuing thread allocates, one op at a time).
constexpr std::size_t kFreeBatch = 32;

struct Node {
  Node* next;
};

struct alignas(64) SharedList {
  std::atomic<Node*> head{nullptr};
  std::atomic<std::size_t> count{0};  // approximate: blocks pushed since the list was last taken
};
SharedList g_lists[kClasses];

// Pushes the chain first..last (n blocks) onto the shared list of class `c`, or deletes it when the list is full.
void push_chain(std::size_t c, Node* first, Node* last, std::size_t n) noexcept {
  SharedList& l = g_lists[c];
  if (l.count.fetch_add(n, std::memory_order_relaxed) >= kMaxShared) {
    while (first != nullptr) {
      Node* next = first->next;
      ::operator delete(first);
      first = next;
    }
    return;
  }
  last->next = l.head.load(std::memory_order_relaxed);
  while (!l.head.compare_exchange_weak(last->next, first, std::memory_order_release, std::memory_order_relaxed)) {
  }
}

// Asks for the lines of the block at `n` (of class `c`) for writing: the next allocation of its class writes it, and
// it was last written by the thread that freed it. PREFETCHW, written out: x86-64's baseline compiles
// __builtin_prefetch(p, 1) to a read prefetch, which leaves the line shared, so the store still waits for the other
// CPU to give it up. Every x86-64 CPU of the last decade has PREFETCHW; older ones take it for a NOP.
inline void prefetch_block(const Node* n, std::size_t c) {
  const char* p = reinterpret_cast<const char*>(n);
  for (std::size_t off = 0; off <= c * kGrain; off += kGrain) asm volatile("prefetchw %0" : : "m"(p[off]));
}

struct ThreadCache {
  Node* head[kClasses] = {};  // blocks this thread allocates from
  // Blocks this thread freed, not yet pushed: a chain per class, its last block and its length.
  Node* freed[kClasses] = {};
  Node* freed_last[kClasses] = {};
  std::size_t freed_count[kClasses] = {};
  bool alive = true;
  ~ThreadCache() {
    alive = false;
    for (std::size_t c = 0; c < kClasses; ++c) {
      if (freed[c] != nullptr) push_chain(c, freed[c], freed_last[c], freed_count[c]);  // others may still use them
      while (Node* n = head[c]) {
        head[c] = n->next;
        ::operator delete(n);
      }
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
  if (h == nullptr && tc.freed[c] != nullptr) {  // what this thread freed and has not pushed yet
    h = tc.freed[c];
    tc.freed[c] = tc.freed_last[c] = nullptr;
    tc.freed_count[c] = 0;
  }
  if (h == nullptr) return ::operator new((c + 1) * kGrain);  // every block of a class has the class's size
  Node* n = h;
  h = n->next;
  if (h != nullptr) prefetch_block(h, c);
  return n;
}

void pool_free(void* p, std::size_t bytes) noexcept {
  if (p == nullptr) return;
  const std::size_t c = size_class(bytes);
  if (!kPoolOn || c >= kClasses) {
    ::operator delete(p);
    return;
  }
  Node* n = static_cast<Node*>(p);
  ThreadCache& tc = t_cache;
  if (!tc.alive) {  // during this thread's exit
    push_chain(c, n, n, 1);
    return;
  }
  n->next = tc.freed[c];
  if (tc.freed[c] == nullptr) tc.freed_last[c] = n;
  tc.freed[c] = n;
  if (++tc.freed_count[c] < kFreeBatch) return;
  push_chain(c, tc.freed[c], tc.freed_last[c], tc.freed_count[c]);
  tc.freed[c] = tc.freed_last[c] = nullptr;
  tc.freed_count[c] = 0;
}

}  // namespace genie
