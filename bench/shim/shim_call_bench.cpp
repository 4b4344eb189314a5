// SPDX-License-Identifier: Apache-2.0
// Host CPU time of one NCCL call in virtual mode, through the real C ABI of our libnccl.so.2: the calling
// thread's CPU time (Google Benchmark's "CPU" column) for ncclAllReduce and ncclSend+ncclRecv enqueues on a
// one-rank communicator, i.e. everything but the data movement, which stream workers do. Reference in the
// same run: an uncontended mutex lock/unlock pair. The *SameCpu and *CrossCpu variants pin the calling thread to one
// CPU and every thread the library started (the stream's worker) to the same or another one: the two placements an
// unpinned run gets by the scheduler's choice (docs/BENCHMARKS.md: 0.3-0.4 us on one CPU, 0.4-1.2 us on two, with
// the cost of a cache line's round trip between the two CPUs, BM_CacheLineRoundTripCrossCpu, as the reference).
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>
#include <dirent.h>
#include <nccl.h>
#include <sched.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace {

std::set<long> thread_ids() {
  std::set<long> ids;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ids.insert(std::stol(e->d_name));
    closedir(d);
  }
  return ids;
}

// The calling thread's CPUs (into *allowed) and the first two of them; false when it may run on fewer than two.
bool two_cpus(cpu_set_t* allowed, int cpus[2]) {
  if (sched_getaffinity(0, sizeof(*allowed), allowed) != 0 || CPU_COUNT(allowed) < 2) return false;
  int n = 0;
  for (int c = 0; c < CPU_SETSIZE && n < 2; ++c)
    if (CPU_ISSET(c, allowed)) cpus[n++] = c;
  return true;
}

cpu_set_t only(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return set;
}

struct Setup {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* buf = nullptr;
  bool pinned = false;  // the library's threads on one CPU, `caller_cpu` free for the caller
  cpu_set_t allowed{};
  cpu_set_t caller_cpu{};
  // library_cpu: -1 leaves every thread where the scheduler puts it; 0 or 1 pins the library's threads to the same
  // CPU as the caller or to another one.
  explicit Setup(int library_cpu) {
    const std::set<long> before = thread_ids();
    int dev = 0;
    if (ncclCommInitAll(&comm, 1, &dev) != ncclSuccess ||
        cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess ||
        cudaMalloc(reinterpret_cast<void**>(&buf), 4096) != cudaSuccess ||
        ncclAllReduce(buf, buf, 256, ncclFloat, ncclSum, comm, stream) != ncclSuccess ||
        cudaStreamSynchronize(stream) != cudaSuccess) {
      std::fprintf(stderr, "set-up failed\n");
      std::exit(1);
    }
    int cpus[2];
    if (library_cpu < 0 || !two_cpus(&allowed, cpus)) return;
    const cpu_set_t library = only(cpus[library_cpu]);
    for (long tid : thread_ids())
      if (!before.count(tid)) sched_setaffinity(static_cast<pid_t>(tid), sizeof(library), &library);
    caller_cpu = only(cpus[0]);
    pinned = true;
  }
};
Setup& setup() {
  static Setup s(-1);
  return s;
}

void BM_MutexReference(benchmark::State& state) {
  std::mutex mu;
  for (auto _ : state) {
    mu.lock();
    mu.unlock();
  }
}
BENCHMARK(BM_MutexReference);

// The other reference for the *CrossCpu variants: one round trip of a cache line between the two CPUs they use (this
// thread writes a counter, a thread pinned to the other CPU answers by writing it back). How much one cross-CPU miss
// costs moves with where the hypervisor puts the VM's CPUs, by up to 4x on the development VM (docs/BENCHMARKS.md).
void BM_CacheLineRoundTripCrossCpu(benchmark::State& state) {
  cpu_set_t allowed;
  int cpus[2];
  if (!two_cpus(&allowed, cpus)) {
    state.SkipWithError("needs two CPUs to pin to");
    return;
  }
  alignas(64) std::atomic<uint64_t> line{0};
  std::atomic<bool> stop{false};
  std::thread echo([&] {
    const cpu_set_t one = only(cpus[1]);
    sched_setaffinity(0, sizeof(one), &one);
    uint64_t seen = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      const uint64_t v = line.load(std::memory_order_acquire);
      if (v != seen && (v & 1) == 1) {
        seen = v + 1;
        line.store(seen, std::memory_order_release);
      }
    }
  });
  const cpu_set_t one = only(cpus[0]);
  sched_setaffinity(0, sizeof(one), &one);
  uint64_t v = 0;
  for (auto _ : state) {
    line.store(++v, std::memory_order_release);  // odd: the echo thread answers with the next even number
    while (line.load(std::memory_order_acquire) != v + 1) {
    }
    ++v;
  }
  stop.store(true);
  echo.join();
  sched_setaffinity(0, sizeof(allowed), &allowed);
}
BENCHMARK(BM_CacheLineRoundTripCrossCpu);

// Enqueue cost; the stream is drained every 1024 calls so the queue stays short (the drain is excluded).
void all_reduce_calls(benchmark::State& state, Setup& s) {
  int n = 0;
  for (auto _ : state) {
    ncclAllReduce(s.buf, s.buf, 256, ncclFloat, ncclSum, s.comm, s.stream);
    if (++n % 1024 == 0) {
      state.PauseTiming();
      cudaStreamSynchronize(s.stream);
      state.ResumeTiming();
    }
  }
  cudaStreamSynchronize(s.stream);
}
void BM_AllReduceCall(benchmark::State& state) { all_reduce_calls(state, setup()); }
BENCHMARK(BM_AllReduceCall);
void pinned_all_reduce_calls(benchmark::State& state, Setup& s) {
  if (!s.pinned || sched_setaffinity(0, sizeof(s.caller_cpu), &s.caller_cpu) != 0) {
    state.SkipWithError("needs two CPUs to pin to");
    return;
  }
  all_reduce_calls(state, s);
  sched_setaffinity(0, sizeof(s.allowed), &s.allowed);
}
void BM_AllReduceCallSameCpu(benchmark::State& state) {
  static Setup s(0);
  pinned_all_reduce_calls(state, s);
}
BENCHMARK(BM_AllReduceCallSameCpu);
void BM_AllReduceCallCrossCpu(benchmark::State& state) {
  static Setup s(1);
  pinned_all_reduce_calls(state, s);
}
BENCHMARK(BM_AllReduceCallCrossCpu);

// The same call with count 0: argument checks and buffer lookups only (NCCL returns before enqueueing).
void BM_AllReduceCallValidationOnly(benchmark::State& state) {
  Setup& s = setup();
  for (auto _ : state) ncclAllReduce(s.buf, s.buf, 0, ncclFloat, ncclSum, s.comm, s.stream);
}
BENCHMARK(BM_AllReduceCallValidationOnly);

void BM_SendRecvGroupCall(benchmark::State& state) {
  Setup& s = setup();
  int n = 0;
  for (auto _ : state) {
    ncclGroupStart();
    ncclSend(s.buf, 256, ncclFloat, 0, s.comm, s.stream);
    ncclRecv(s.buf + 512, 256, ncclFloat, 0, s.comm, s.stream);
    ncclGroupEnd();
    if (++n % 1024 == 0) {
      state.PauseTiming();
      cudaStreamSynchronize(s.stream);
      state.ResumeTiming();
    }
  }
  cudaStreamSynchronize(s.stream);
}
BENCHMARK(BM_SendRecvGroupCall);

}  // namespace

BENCHMARK_MAIN();
