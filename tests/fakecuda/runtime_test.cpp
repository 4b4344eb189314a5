// SPDX-License-Identifier: Apache-2.0
// Tests of the emulated runtime at the C++ level: memory capacity, stream semantics, events, graphs.
#include "genie/fakecuda/graph.hpp"
#include "genie/fakecuda/runtime.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "proc_memory.hpp"

namespace genie::fakecuda {
namespace {

using genie::fakecuda::testing::vm_flags_of;
using genie::fakecuda::testing::resident_pages;

RuntimeOptions test_options(int devices = 2) {
  RuntimeOptions o;
  o.spec = load_device_spec("h200").value();
  o.device_count = devices;
  // Sampling thread CPU time rarely keeps these tests independent of machine speed: host time then
  // advances only by modelled API costs and waits.
  o.clock = {sched::ClockMode::kVirtual, SimTime::ms(100000)};
  o.api_overhead = SimTime::ns(500);
  return o;
}

TEST(RuntimeMemory, CapacityIsEnforcedAndReleased) {
  Runtime rt(test_options(1));
  uint64_t cap = rt.device(0).spec().memory_bytes;
  auto big = rt.device_alloc(0, cap - (1 << 20));
  ASSERT_TRUE(big.is_ok()) << big.status().to_string();
  auto too_much = rt.device_alloc(0, 2 << 20);
  ASSERT_FALSE(too_much.is_ok());
  EXPECT_EQ(too_much.status().code(), Errc::kOutOfMemory);
  ASSERT_TRUE(rt.free_memory(big.value(), false).is_ok());
  EXPECT_EQ(rt.device(0).used_bytes(), 0u);
  EXPECT_TRUE(rt.device_alloc(0, 2 << 20).is_ok());
}

TEST(RuntimeMemory, LargeAllocationsAskForHugePagesSharedOrNot) {
  for (bool shareable : {true, false}) {
    RuntimeOptions o = test_options(1);
    o.shareable_memory = shareable;
    Runtime rt(o);
    auto big = rt.device_alloc(0, 8 << 20);
    auto small = rt.device_alloc(0, 64 << 10);
    ASSERT_TRUE(big.is_ok() && small.is_ok());
    // "hg": MADV_HUGEPAGE is set on the mapping, so the kernel may back it with 2 MiB pages.
    EXPECT_NE(vm_flags_of(big.value()).find(" hg"), std::string::npos) << shareable << vm_flags_of(big.value());
    EXPECT_EQ(vm_flags_of(small.value()).find(" hg"), std::string::npos) << shareable << vm_flags_of(small.value());
    EXPECT_NE(vm_flags_of(small.value()), "");
  }
}

TEST(RuntimeMemory, LargeZeroMemsetsReleaseWholePagesSharedOrNot) {
  constexpr size_t kSize = 8 << 20, kHead = 100, kTail = 100;
  for (bool shareable : {true, false}) {
    RuntimeOptions o = test_options(1);
    o.shareable_memory = shareable;
    Runtime rt(o);
    Stream& s = rt.device(0).legacy_stream();
    auto* d = static_cast<unsigned char*>(rt.device_alloc(0, kSize).value());
    ASSERT_TRUE(rt.memset_async(d, 0xab, kSize, s).is_ok());
    ASSERT_TRUE(rt.synchronize(s).is_ok());
    ASSERT_EQ(resident_pages(d, kSize), kSize / 4096) << shareable;
    ASSERT_TRUE(rt.memset_async(d + kHead, 0, kSize - kHead - kTail, s).is_ok());
    ASSERT_TRUE(rt.synchronize(s).is_ok());
    // The whole pages inside the range are given back; the two partial ones at its ends stay, written. Device memory
    // is advised for huge pages (MADV_HUGEPAGE), and khugepaged may collapse the 2 MiB range around each written edge
    // page back into a whole huge page at any moment (max_ptes_none 511: one present page is enough), so those two
    // huge pages may be resident again; every page between them stays released.
    const uintptr_t huge = uintptr_t{2} << 20, page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t lo = (reinterpret_cast<uintptr_t>(d) + kHead + huge - 1) / huge * huge;
    const uintptr_t hi = (reinterpret_cast<uintptr_t>(d) + kSize - kTail) / huge * huge;
    ASSERT_GE(hi - lo, kSize / 2) << shareable;
    EXPECT_EQ(resident_pages(reinterpret_cast<void*>(lo), hi - lo), 0u) << shareable;
    EXPECT_LE(resident_pages(d, kSize), 2 * (huge / page)) << shareable;
    EXPECT_GE(resident_pages(d, kSize), 2u) << shareable;
    size_t wrong = 0;
    for (size_t i = 0; i < kSize; ++i) wrong += d[i] != (i < kHead || i >= kSize - kTail ? 0xab : 0);
    EXPECT_EQ(wrong, 0u) << shareable;
    // Written again, the range is backed again; a small zero memset is written as before.
    ASSERT_TRUE(rt.memset_async(d, 0x11, kSize, s).is_ok());
    ASSERT_TRUE(rt.memset_async(d, 0, 4096 * 3, s).is_ok());
    ASSERT_TRUE(rt.synchronize(s).is_ok());
    EXPECT_EQ(resident_pages(d, kSize), kSize / 4096) << shareable;
    EXPECT_EQ(d[0] + d[4096 * 3 - 1], 0);
    EXPECT_EQ(d[4096 * 3], 0x11);
  }
}

TEST(RuntimeMemory, DoubleFreeAndForeignPointersAreRejected) {
  Runtime rt(test_options(1));
  void* p = rt.device_alloc(0, 4096).value();
  EXPECT_TRUE(rt.free_memory(p, false).is_ok());
  EXPECT_FALSE(rt.free_memory(p, false).is_ok());
  int local = 0;
  EXPECT_FALSE(rt.free_memory(&local, false).is_ok());
  void* h = rt.host_alloc(4096, 0).value();
  EXPECT_FALSE(rt.free_memory(h, false).is_ok());  // pinned host memory is freed with cudaFreeHost
  EXPECT_TRUE(rt.free_memory(h, true).is_ok());
}

TEST(RuntimeMemory, CopiesMoveBytesAndRejectBadRanges) {
  Runtime rt(test_options(1));
  Stream& s = rt.device(0).legacy_stream();
  char* d = static_cast<char*>(rt.device_alloc(0, 1024).value());
  std::vector<char> src(1024), dst(1024, 0);
  for (int i = 0; i < 1024; ++i) src[i] = static_cast<char>(i * 7);
  ASSERT_TRUE(rt.copy_async(d, src.data(), 1024, s, 1).is_ok());
  ASSERT_TRUE(rt.memset_async(d + 1000, 0x5a, 24, s).is_ok());
  ASSERT_TRUE(rt.copy_async(dst.data(), d, 1024, s, 2).is_ok());
  ASSERT_TRUE(rt.synchronize(s).is_ok());
  EXPECT_EQ(std::memcmp(dst.data(), src.data(), 1000), 0);
  EXPECT_EQ(dst[1010], 0x5a);
  // Overrunning a device allocation, or a device-side pointer that is not device memory: invalid.
  EXPECT_FALSE(rt.copy_async(d + 512, src.data(), 1024, s, 1).is_ok());
  EXPECT_FALSE(rt.copy_async(src.data(), dst.data(), 16, s, 3).is_ok());
  // A host pointer that is not mapped at all does not crash: it is an invalid argument.
  EXPECT_FALSE(rt.copy_async(d, reinterpret_cast<void*>(0x10), 16, s, 4).is_ok());
}

TEST(RuntimeStreams, EventElapsedTimeEqualsModelledDurationsExactly) {
  // System: one stream kept busy by a first copy, then event A, a D2D copy of 64 MiB, event B.
  // Expectation: elapsed(A, B) equals the cost model's duration of that copy, to the nanosecond's
  // float rounding, because every op starts when the previous one ends.
  Runtime rt(test_options(1));
  Stream* s = rt.create_stream(0, 0, 0);
  size_t n = 64 << 20;
  char* a = static_cast<char*>(rt.device_alloc(0, n).value());
  char* b = static_cast<char*>(rt.device_alloc(0, n).value());
  ASSERT_TRUE(rt.copy_async(b, a, n, *s, 3).is_ok());  // backlog
  Event* e0 = rt.create_event(0);
  Event* e1 = rt.create_event(0);
  ASSERT_TRUE(rt.record_event(*e0, *s).is_ok());
  ASSERT_TRUE(rt.copy_async(a, b, n, *s, 3).is_ok());
  ASSERT_TRUE(rt.record_event(*e1, *s).is_ok());
  EXPECT_EQ(rt.query_event(*e1).code(), Errc::kNotReady);  // host time is behind the copies
  ASSERT_TRUE(rt.synchronize_event(*e1).is_ok());
  auto ms = rt.elapsed_ms(*e0, *e1);
  ASSERT_TRUE(ms.is_ok());
  double expected_ms = rt.cost_model().copy(CopyKind::kDeviceToDevice, n, true).to_ms();
  EXPECT_NEAR(ms.value(), expected_ms, expected_ms * 1e-6);
}

// Queues on `s` an op that runs on the stream's worker and completes only once `released` is set.
void submit_blocked_op(Runtime& rt, Stream& s, std::atomic<bool>& released) {
  sched::OpSpec spec;
  spec.may_run_inline = false;
  spec.run = [&released](SimTime ready, const sched::ExternalOp&) -> Result<SimTime> {
    while (!released.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return ready;
  };
  ASSERT_TRUE(rt.submit(s, std::move(spec)).is_ok());
}

TEST(RuntimeStreams, OnlyPollsAndInjectorThreadsWaitOnAQueryOfPendingWork) {
  // System: virtual mode, query_wait 5 s; each stream op completes only when another thread releases it, 1.5 s
  // after it was queued. Expectation: a thread that enqueues no collectives (PyTorch's watchdog) gets not-ready at
  // once from its first query; its second query of the same work (a poll) waits until the op completes and is
  // ok; an injector thread's first query, at a host time past the op's start, waits likewise (its answer must come
  // from virtual time) — and one at a host time before the op's start answers not-ready at once (the op cannot
  // have ended by then, whatever the wall clock does).
  RuntimeOptions o = test_options(1);
  o.query_wait = SimTime::ms(5000);
  Runtime rt(o);
  Stream* s = rt.create_stream(0, 0, 0);
  auto blocked_op = [&](std::atomic<bool>& released) { submit_blocked_op(rt, *s, released); };
  auto release_later = [](std::atomic<bool>& released) {
    return std::thread([&released] {
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
      released.store(true);
    });
  };

  std::atomic<bool> first{false};
  blocked_op(first);
  std::thread r1 = release_later(first);
  EXPECT_EQ(rt.query(*s).code(), Errc::kNotReady);
  EXPECT_FALSE(first.load()) << "the first query waited for the op";
  EXPECT_TRUE(rt.query(*s).is_ok()) << "the poll did not wait for the op";
  EXPECT_TRUE(first.load());
  r1.join();

  std::atomic<bool> second{false}, asked{false};
  const SimTime submitted = rt.clock().now();
  blocked_op(second);
  // Released once the injector's first query has answered (so a loaded machine cannot release it first), or
  // after 10 s: a query that waited for the op would see it released (or time out after query_wait).
  std::thread r2([&] {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!asked.load() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    second.store(true);
  });
  std::thread injector([&] {
    rt.timeline().register_injector();
    ASSERT_LT(rt.clock().now() + o.api_overhead, submitted) << "a new thread starts behind the submitting one";
    EXPECT_EQ(rt.query(*s).code(), Errc::kNotReady);
    EXPECT_FALSE(second.load()) << "the injector waited although the op starts after its query";
    asked.store(true);
    rt.clock().wait_until(submitted + SimTime::ms(1));
    EXPECT_TRUE(rt.query(*s).is_ok()) << "the injector's query after the op's start did not wait for the op";
    EXPECT_TRUE(second.load());
  });
  injector.join();
  r2.join();
}

TEST(RuntimeStreams, AThreadPollingSeveralStreamsInTurnWaitsAsOnOne) {
  // System: virtual mode; two streams, each with an op that completes only when another thread releases it, 1 s
  // after it was queued. The thread queries them in turn, as nccl-tests -g N does with one stream per device.
  // Expectation: the first query of each answers not-ready at once; a query again within 20 ms is a poll and waits
  // for its op (ok once released), so the loop ends after a few queries, not after a wall-time-dependent number of them
  // (each query is charged in virtual time: a thread spinning over streams that never waited had its host time
  // run ahead of the work it polled, by how long the machine took to move the bytes).
  RuntimeOptions o = test_options(1);
  o.query_wait = SimTime::ms(5000);
  Runtime rt(o);
  Stream* streams[2] = {rt.create_stream(0, 0, 0), rt.create_stream(0, 0, 0)};
  std::atomic<bool> released{false};
  for (Stream* s : streams) submit_blocked_op(rt, *s, released);
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    released.store(true);
  });
  int queries = 0;
  bool done[2] = {false, false};
  while (!(done[0] && done[1]) && queries < 1000000) {
    for (int i = 0; i < 2; ++i) {
      if (done[i]) continue;
      ++queries;
      Status st = rt.query(*streams[i]);
      if (st.is_ok()) {
        done[i] = true;
      } else {
        ASSERT_EQ(st.code(), Errc::kNotReady);
        if (queries <= 2) {
          EXPECT_FALSE(released.load()) << "a first query waited for its op";
        }
      }
    }
  }
  releaser.join();
  EXPECT_TRUE(done[0] && done[1]);
  // Two first queries, the poll that waits for stream 0's op, and for stream 1 one more that may answer at once
  // (its last query was over 20 ms ago, during the wait) before the poll that waits.
  EXPECT_LE(queries, 5) << "the queries in turn did not wait: the thread spun over the streams";
}

TEST(RuntimeStreams, ElapsedTimeOfAnEventToItselfIsZero) {
  // Regression: elapsed(e, e) locked the event's mutex twice and never returned. CUDA answers 0.
  Runtime rt(test_options(1));
  Stream* s = rt.create_stream(0, 0, 0);
  Event* e = rt.create_event(0);
  ASSERT_TRUE(rt.record_event(*e, *s).is_ok());
  ASSERT_TRUE(rt.synchronize_event(*e).is_ok());
  auto ms = rt.elapsed_ms(*e, *e);
  ASSERT_TRUE(ms.is_ok()) << ms.status().to_string();
  EXPECT_EQ(ms.value(), 0.0f);
}

TEST(RuntimeStreams, LegacyStreamWaitsForBlockingStreamsButNotNonBlocking) {
  // System: a blocking stream and a non-blocking stream each run a copy; then a zero-length
  // event is recorded on the legacy stream. Expectation: the legacy op completes after the blocking
  // stream's copy; the non-blocking stream's copy may still be running.
  Runtime rt(test_options(1));
  Stream* blocking = rt.create_stream(0, 0, 0);
  Stream* nonblocking = rt.create_stream(0, kStreamNonBlocking, 0);
  size_t n = 64 << 20;
  char* a = static_cast<char*>(rt.device_alloc(0, n).value());
  char* b = static_cast<char*>(rt.device_alloc(0, n).value());
  ASSERT_TRUE(rt.copy_async(b, a, n / 4, *blocking, 3).is_ok());
  ASSERT_TRUE(rt.copy_async(b + n / 2, a + n / 2, n / 2, *nonblocking, 3).is_ok());
  Event* legacy_done = rt.create_event(0);
  ASSERT_TRUE(rt.record_event(*legacy_done, rt.device(0).legacy_stream()).is_ok());
  Event* blocking_done = rt.create_event(0);
  Event* nonblocking_done = rt.create_event(0);
  ASSERT_TRUE(rt.record_event(*blocking_done, *blocking).is_ok());
  ASSERT_TRUE(rt.record_event(*nonblocking_done, *nonblocking).is_ok());
  SimTime legacy = legacy_done->point.time();
  EXPECT_GE(legacy, blocking_done->point.time() - SimTime::us(1));
  EXPECT_LT(legacy, nonblocking_done->point.time());
  // And a blocking stream waits for earlier legacy work: a copy on the legacy stream, then an event on
  // the blocking stream.
  ASSERT_TRUE(rt.copy_async(b, a, n, rt.device(0).legacy_stream(), 3).is_ok());
  Event* after = rt.create_event(0);
  ASSERT_TRUE(rt.record_event(*after, *blocking).is_ok());
  EXPECT_GE(after->point.time(), rt.device(0).legacy_stream().lane().tail().time());
}

TEST(RuntimeStreams, StreamWaitEventOrdersAcrossStreams) {
  Runtime rt(test_options(1));
  Stream* s1 = rt.create_stream(0, kStreamNonBlocking, 0);
  Stream* s2 = rt.create_stream(0, kStreamNonBlocking, 0);
  size_t n = 256 << 20;
  char* a = static_cast<char*>(rt.device_alloc(0, n).value());
  char* b = static_cast<char*>(rt.device_alloc(0, n).value());
  ASSERT_TRUE(rt.copy_async(b, a, n, *s1, 3).is_ok());
  Event* e = rt.create_event(0);
  ASSERT_TRUE(rt.record_event(*e, *s1).is_ok());
  ASSERT_TRUE(rt.wait_event(*s2, *e).is_ok());
  Event* e2 = rt.create_event(0);
  ASSERT_TRUE(rt.record_event(*e2, *s2).is_ok());
  EXPECT_GE(e2->point.time(), e->point.time());
}

TEST(RuntimeStreams, PerThreadDefaultStreamsAreDistinctPerThread) {
  Runtime rt(test_options(1));
  Stream* mine = rt.resolve_stream(reinterpret_cast<void*>(2), false);
  Stream* other = nullptr;
  std::thread([&] { other = rt.resolve_stream(nullptr, true); }).join();
  ASSERT_NE(mine, nullptr);
  EXPECT_NE(mine, other);
  EXPECT_EQ(rt.resolve_stream(nullptr, false), &rt.device(0).legacy_stream());
  EXPECT_EQ(rt.resolve_stream(reinterpret_cast<void*>(0x1234), false), nullptr);
}

TEST(RuntimeGraphs, CaptureRecordsWithoutExecutingAndReplayRepeatsTheCopies) {
  Runtime rt(test_options(1));
  Stream* s = rt.create_stream(0, kStreamNonBlocking, 0);
  char* d = static_cast<char*>(rt.device_alloc(0, 64).value());
  std::vector<char> src(64, 'x'), dst(64, 0);
  ASSERT_TRUE(rt.begin_capture(*s, 0).is_ok());
  ASSERT_TRUE(rt.copy_async(d, src.data(), 64, *s, 1).is_ok());
  ASSERT_TRUE(rt.copy_async(dst.data(), d, 64, *s, 2).is_ok());
  EXPECT_EQ(dst[0], 0);  // captured, not executed
  EXPECT_FALSE(rt.synchronize(*s).is_ok());  // synchronising a capturing stream is an error
  auto g = rt.end_capture(*s);
  ASSERT_TRUE(g.is_ok());
  auto exec = rt.instantiate(*g.value());
  ASSERT_TRUE(exec.is_ok());
  for (char v : {'a', 'b'}) {
    std::fill(src.begin(), src.end(), v);
    ASSERT_TRUE(rt.launch_graph(*exec.value(), *s).is_ok());
    ASSERT_TRUE(rt.synchronize(*s).is_ok());
    EXPECT_EQ(dst[63], v);
  }
}

TEST(RuntimeGraphs, ForkJoinCaptureRunsBranchesConcurrently) {
  // System: captured on s1: event fork; s2 waits fork, copies X (10 ms-class); s1 copies Y (same size);
  // event join on s2; s1 waits join. Expectation: the replay takes one copy's time, not two.
  Runtime rt(test_options(1));
  Stream* s1 = rt.create_stream(0, kStreamNonBlocking, 0);
  Stream* s2 = rt.create_stream(0, kStreamNonBlocking, 0);
  size_t n = 32 << 20;
  char* a = static_cast<char*>(rt.device_alloc(0, 2 * n).value());
  char* b = static_cast<char*>(rt.device_alloc(0, 2 * n).value());
  Event* fork = rt.create_event(0);
  Event* join = rt.create_event(0);
  ASSERT_TRUE(rt.begin_capture(*s1, 0).is_ok());
  ASSERT_TRUE(rt.record_event(*fork, *s1).is_ok());
  ASSERT_TRUE(rt.wait_event(*s2, *fork).is_ok());
  ASSERT_TRUE(rt.copy_async(b, a, n, *s2, 3).is_ok());
  ASSERT_TRUE(rt.copy_async(b + n, a + n, n, *s1, 3).is_ok());
  ASSERT_TRUE(rt.record_event(*join, *s2).is_ok());
  ASSERT_TRUE(rt.wait_event(*s1, *join).is_ok());
  auto g = rt.end_capture(*s1);
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  EXPECT_EQ(g.value()->nodes.size(), 2u);
  EXPECT_FALSE(rt.is_capturing(*s2));
  Graph* exec = rt.instantiate(*g.value()).value();
  Event* e0 = rt.create_event(0);
  Event* e1 = rt.create_event(0);
  ASSERT_TRUE(rt.copy_async(a, b, n, *s1, 3).is_ok());  // backlog: the replay starts when this ends
  ASSERT_TRUE(rt.record_event(*e0, *s1).is_ok());
  ASSERT_TRUE(rt.launch_graph(*exec, *s1).is_ok());
  ASSERT_TRUE(rt.record_event(*e1, *s1).is_ok());
  ASSERT_TRUE(rt.synchronize_event(*e1).is_ok());
  double one_copy_ms = rt.cost_model().copy(CopyKind::kDeviceToDevice, n, true).to_ms();
  EXPECT_NEAR(rt.elapsed_ms(*e0, *e1).value(), one_copy_ms, one_copy_ms * 1e-3);
}

// A row-wise kernel whose row length is a parameter: the launch reads it from the argument array, so the same
// launch shape over rows 12x longer takes about 12x longer; without arguments the shape alone decides.
TEST(RuntimeKernels, LaunchReadsTheRowLengthArgumentOfSoftmax) {
  Runtime rt(test_options(1));
  Stream* s = rt.create_stream(0, kStreamNonBlocking, 0);
  Kernel k;
  // void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float,
  //   at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)
  k.name =
      "_ZN2at6native12_GLOBAL__N_119cunn_SoftMaxForwardILi4EfffNS1_25LogSoftMaxForwardEpilogueEEEvPT2_PKT0_i";
  KernelShape shape;
  shape.grid[0] = 8192;
  shape.block[0] = 1024;
  float* out = nullptr;
  const float* in = nullptr;
  char* a = static_cast<char*>(rt.device_alloc(0, 1 << 26).value());
  auto time_with = [&](int classes, bool pass_args) {
    void* args[3] = {&out, &in, &classes};
    Event* e0 = rt.create_event(0);
    Event* e1 = rt.create_event(0);
    // Backlog so the launch starts exactly when the previous op ends (its host launch cost hidden).
    EXPECT_TRUE(rt.copy_async(a + (1 << 25), a, 1 << 25, *s, 3).is_ok());
    EXPECT_TRUE(rt.record_event(*e0, *s).is_ok());
    EXPECT_TRUE(rt.launch_kernel(k, shape, *s, pass_args ? args : nullptr).is_ok());
    EXPECT_TRUE(rt.record_event(*e1, *s).is_ok());
    EXPECT_TRUE(rt.synchronize_event(*e1).is_ok());
    return rt.elapsed_ms(*e0, *e1).value();
  };
  const double short_rows = time_with(4096, true), long_rows = time_with(50304, true);
  const double no_args = time_with(50304, false);
  EXPECT_NEAR(long_rows / short_rows, 50304.0 / 4096, 0.5);
  KernelShape with_row = shape;
  with_row.row_length = 50304;
  EXPECT_NEAR(long_rows, rt.cost_model().kernel(k.name, with_row).to_ms(), 1e-6);
  EXPECT_NEAR(no_args, rt.cost_model().kernel(k.name, shape).to_ms(), 1e-6);
  EXPECT_LT(no_args, long_rows / 5);
}

TEST(RuntimeKernels, LaunchUsesCostModelAndRejectsBadShapes) {
  Runtime rt(test_options(1));
  Stream* s = rt.create_stream(0, kStreamNonBlocking, 0);
  Kernel k;
  k.name = "_Z6kernelPf";
  KernelShape shape;
  shape.grid[0] = 1 << 20;
  shape.block[0] = 256;
  Event* e0 = rt.create_event(0);
  Event* e1 = rt.create_event(0);
  // Backlog so the launch starts exactly when the previous op ends.
  char* a = static_cast<char*>(rt.device_alloc(0, 1 << 26).value());
  ASSERT_TRUE(rt.copy_async(a + (1 << 25), a, 1 << 25, *s, 3).is_ok());
  ASSERT_TRUE(rt.record_event(*e0, *s).is_ok());
  ASSERT_TRUE(rt.launch_kernel(k, shape, *s).is_ok());
  ASSERT_TRUE(rt.record_event(*e1, *s).is_ok());
  ASSERT_TRUE(rt.synchronize_event(*e1).is_ok());
  EXPECT_NEAR(rt.elapsed_ms(*e0, *e1).value(), rt.cost_model().kernel(k.name, shape).to_ms(), 1e-6);
  KernelShape bad = shape;
  bad.block[0] = 2048;
  EXPECT_FALSE(rt.launch_kernel(k, bad, *s).is_ok());
  bad = shape;
  bad.grid[1] = 0;
  EXPECT_FALSE(rt.launch_kernel(k, bad, *s).is_ok());
}

}  // namespace
}  // namespace genie::fakecuda
