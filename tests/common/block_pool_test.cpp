// SPDX-License-Identifier: Apache-2.0
#include "genie/common/block_pool.hpp"

#include <gtest/gtest.h>
#include <malloc.h>

#include <array>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

namespace genie {
namespace {

const bool kPoolOn = pool_recycles();

// Runs `fn` on a fresh thread whose cache and the shared list of `bytes`'s class are empty: it first takes more
// blocks of that class than the shared list can hold (and frees them after `fn`).
template <class F>
void on_thread_with_empty_class(size_t bytes, F fn) {
  std::thread([&] {
    std::vector<void*> drained;
    for (int i = 0; i < 5000; ++i) drained.push_back(pool_allocate(bytes));
    fn();
    for (void* p : drained) pool_free(p, bytes);
  }).join();
}

// Runs `release` on another thread, then `then` on this one while that thread is still alive.
template <class R, class T>
void free_elsewhere(R release, T then) {
  std::mutex mu;
  std::condition_variable cv;
  int stage = 0;
  std::thread other([&] {
    release();
    std::unique_lock lk(mu);
    stage = 1;
    cv.notify_all();
    cv.wait(lk, [&] { return stage == 2; });
  });
  {
    std::unique_lock lk(mu);
    cv.wait(lk, [&] { return stage == 1; });
  }
  then();
  {
    std::lock_guard lk(mu);
    stage = 2;
  }
  cv.notify_all();
  other.join();
}

// The enqueue/worker pattern the pool is for: blocks freed on another thread are what this thread gets next, once
// that thread has freed a batch of them (it pushes them together).
TEST(BlockPool, BlocksFreedOnAnotherThreadAreReusedByTheAllocatingThread) {
  if (!kPoolOn) GTEST_SKIP() << "the pool is off under AddressSanitizer";
  on_thread_with_empty_class(200, [] {
    std::set<void*> mine;
    for (int i = 0; i < 32; ++i) mine.insert(pool_allocate(200));
    std::vector<void*> again;
    // The freeing thread stays alive until the blocks are allocated again (a thread's exit hands what malloc
    // cached for it back to the arena, where any thread finds it).
    free_elsewhere([&] { for (void* p : mine) pool_free(p, 200); },
                   [&] { for (int i = 0; i < 32; ++i) again.push_back(pool_allocate(200)); });
    EXPECT_EQ(std::set<void*>(again.begin(), again.end()), mine);
    for (void* p : again) pool_free(p, 200);
  });
}

// Fewer than a batch: the freeing thread keeps them until it exits, then any thread gets them.
TEST(BlockPool, APartBatchIsHandedOnWhenItsThreadExits) {
  if (!kPoolOn) GTEST_SKIP() << "the pool is off under AddressSanitizer";
  on_thread_with_empty_class(200, [] {
    void* p = pool_allocate(200);
    void* q = nullptr;
    free_elsewhere([&] { pool_free(p, 200); }, [&] { q = pool_allocate(200); });
    EXPECT_NE(q, p);  // still held by the freeing thread, which has exited since
    pool_free(q, 200);
    std::vector<void*> got;
    bool found = false;
    for (int i = 0; i < 64 && !found; ++i) {
      got.push_back(pool_allocate(200));
      found = got.back() == p;
    }
    EXPECT_TRUE(found);
    for (void* g : got) pool_free(g, 200);
  });
}

// A thread that frees what it allocated reuses it before it takes new memory (nothing to push yet).
TEST(BlockPool, AThreadReusesWhatItFreedBeforeItIsPushed) {
  if (!kPoolOn) GTEST_SKIP() << "the pool is off under AddressSanitizer";
  on_thread_with_empty_class(200, [] {
    void* p = pool_allocate(200);
    pool_free(p, 200);
    void* q = pool_allocate(200);
    EXPECT_EQ(q, p);
    pool_free(q, 200);
  });
}

// A block of a size class is reused for any request of that class, so it must hold the class's largest request:
// 130 bytes and 192 bytes share a class of 192-byte blocks.
TEST(BlockPool, EveryBlockHoldsTheLargestRequestOfItsClass) {
  if (!kPoolOn) GTEST_SKIP() << "the pool is off under AddressSanitizer";
  for (size_t n = 1; n <= kPoolMaxBlock; n += 7) {
    void* p = pool_allocate(n);
    const size_t class_bytes = (n + 63) / 64 * 64;
    EXPECT_GE(malloc_usable_size(p), class_bytes) << "a block for " << n << " bytes";
    pool_free(p, n);
  }
}

// Two live blocks never share memory: blocks of random sizes filled with a pattern on one thread, checked and
// freed on another, while the first goes on allocating (and so reusing what the second freed).
TEST(BlockPool, BlocksHandedBetweenThreadsKeepTheirContents) {
  struct Block {
    unsigned char* p;
    size_t n;
    unsigned char tag;
  };
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Block> q;
  bool done = false;
  size_t bad = 0;
  std::thread consumer([&] {
    for (;;) {
      Block b;
      {
        std::unique_lock lk(mu);
        cv.wait(lk, [&] { return !q.empty() || done; });
        if (q.empty()) return;
        b = q.front();
        q.pop_front();
      }
      for (size_t i = 0; i < b.n; ++i) bad += b.p[i] != b.tag;
      pool_free(b.p, b.n);
    }
  });
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const size_t n = 1 + rng() % kPoolMaxBlock;
    auto* p = static_cast<unsigned char*>(pool_allocate(n));
    const auto tag = static_cast<unsigned char>(i);
    std::memset(p, tag, n);
    std::lock_guard lk(mu);
    q.push_back({p, n, tag});
    cv.notify_one();
  }
  {
    std::lock_guard lk(mu);
    done = true;
  }
  cv.notify_one();
  consumer.join();
  EXPECT_EQ(bad, 0u);
}

TEST(BlockPool, AllocateSharedConstructsAndDestroysOnce) {
  static int live = 0;
  struct Obj {
    std::array<char, 100> pad{};
    Obj() { ++live; }
    ~Obj() { --live; }
  };
  {
    auto a = std::allocate_shared<Obj>(PoolAllocator<Obj>());
    auto b = a;
    EXPECT_EQ(live, 1);
    std::thread([a = std::move(a)]() mutable { a.reset(); }).join();
    EXPECT_EQ(live, 1);
  }
  EXPECT_EQ(live, 0);
}

TEST(BlockPool, PooledClosureInAStdFunctionLivesInThePool) {
  std::array<int, 40> big{};
  big[39] = 5;
  auto lambda = [big](int x) { return big[39] + x; };
  using Target = Pooled<decltype(lambda)>;
  std::function<int(int)> f(pooled(lambda));
  EXPECT_EQ(f(2), 7);
  auto g = f;  // a copy is pooled too
  EXPECT_EQ(g(3), 8);
  if (!kPoolOn) return;
  on_thread_with_empty_class(sizeof(Target), [&] {
    std::function<int(int)> h(pooled(lambda));
    const void* where = h.target<Target>();  // the heap copy std::function made
    ASSERT_NE(where, nullptr);
    void* p = nullptr;
    free_elsewhere([&] { h = nullptr; }, [] {});  // the freeing thread exits: its blocks go to the shared list
    p = pool_allocate(sizeof(Target));
    EXPECT_EQ(p, where);
    pool_free(p, sizeof(Target));
  });
}

}  // namespace
}  // namespace genie
