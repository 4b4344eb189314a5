// SPDX-License-Identifier: Apache-2.0
// Host cost of the emulated CUDA runtime in virtual mode, through the real C ABI of libcudart.so.13:
// cudaLaunchKernel, cudaEventRecord, cudaMemcpyAsync (D2D, 4 KiB). References measured in the same run:
// a mutex lock/unlock pair and a 4 KiB memcpy, so results can be compared across machines as ratios.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <cstring>
#include <mutex>
#include <vector>

extern "C" {
void** __cudaRegisterFatBinary(void* fatCubin);
void __cudaRegisterFunction(void** handle, const char* hostFun, char* deviceFun, const char* deviceName, int,
                            uint3*, uint3*, dim3*, dim3*, int*);
}

namespace {

void kernel_stub() {}

struct Setup {
  cudaStream_t stream = nullptr;
  void* a = nullptr;
  void* b = nullptr;
  cudaEvent_t event = nullptr;
  Setup() {
    void** h = __cudaRegisterFatBinary(nullptr);
    static char name[] = "_Z11kernel_stubv";
    __cudaRegisterFunction(h, reinterpret_cast<const char*>(&kernel_stub), name, name, -1, nullptr, nullptr,
                           nullptr, nullptr, nullptr);
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    cudaMalloc(&a, 4096);
    cudaMalloc(&b, 4096);
    cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
  }
};
Setup& setup() {
  static Setup s;
  return s;
}

void BM_cudaLaunchKernel(benchmark::State& state) {
  Setup& s = setup();
  dim3 grid(1024), block(256);
  for (auto _ : state) {
    cudaError_t e = cudaLaunchKernel(reinterpret_cast<const void*>(&kernel_stub), grid, block, nullptr, 0, s.stream);
    benchmark::DoNotOptimize(e);
  }
}
BENCHMARK(BM_cudaLaunchKernel);

void BM_cudaEventRecord(benchmark::State& state) {
  Setup& s = setup();
  for (auto _ : state) benchmark::DoNotOptimize(cudaEventRecord(s.event, s.stream));
}
BENCHMARK(BM_cudaEventRecord);

void BM_cudaMemcpyAsync_D2D_4KiB(benchmark::State& state) {
  Setup& s = setup();
  for (auto _ : state) benchmark::DoNotOptimize(cudaMemcpyAsync(s.b, s.a, 4096, cudaMemcpyDeviceToDevice, s.stream));
}
BENCHMARK(BM_cudaMemcpyAsync_D2D_4KiB);

void BM_Reference_MutexLockUnlock(benchmark::State& state) {
  std::mutex mu;
  for (auto _ : state) {
    mu.lock();
    benchmark::ClobberMemory();
    mu.unlock();
  }
}
BENCHMARK(BM_Reference_MutexLockUnlock);

void BM_Reference_Memcpy_4KiB(benchmark::State& state) {
  std::vector<char> a(4096, 1), b(4096);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), 4096);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_Reference_Memcpy_4KiB);

}  // namespace

BENCHMARK_MAIN();
