// SPDX-License-Identifier: Apache-2.0
// Host CPU time of one NCCL call in virtual mode, through the real C ABI of our libnccl.so.2: the calling
// thread's CPU time (Google Benchmark's "CPU" column) for ncclAllReduce and ncclSend+ncclRecv enqueues on a
// one-rank communicator, i.e. everything but the data movement, which stream workers do. Reference in the
// same run: an uncontended mutex lock/unlock pair.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace {

struct Setup {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* buf = nullptr;
  Setup() {
    int dev = 0;
    if (ncclCommInitAll(&comm, 1, &dev) != ncclSuccess ||
        cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess ||
        cudaMalloc(reinterpret_cast<void**>(&buf), 4096) != cudaSuccess) {
      std::fprintf(stderr, "set-up failed\n");
      std::exit(1);
    }
  }
};
Setup& setup() {
  static Setup s;
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

// Enqueue cost; the stream is drained every 1024 calls so the queue stays short (the drain is excluded).
void BM_AllReduceCall(benchmark::State& state) {
  Setup& s = setup();
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
BENCHMARK(BM_AllReduceCall);

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
