// SPDX-License-Identifier: Apache-2.0
// Example: several devices in one process, one host thread per device (as nccl-tests -t N does): the
// current device is per thread, each device has its own memory and streams, synchronising one device
// does not wait for another, host functions run in stream order, and stream-ordered allocation works.
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "check.cuh"

static void CUDART_CB bump(void* p) { static_cast<std::atomic<int>*>(p)->fetch_add(1); }

int main() {
  int count = 0;
  CHECK_CUDA(cudaGetDeviceCount(&count));
  const int ndev = count < 4 ? count : 4;
  std::vector<int> seen(ndev, -1), ok(ndev, 0);
  std::atomic<int> host_calls{0};
  std::vector<std::thread> threads;
  for (int d = 0; d < ndev; ++d) {
    threads.emplace_back([&, d] {
      if (cudaSetDevice(d) != cudaSuccess) return;
      cudaStream_t s;
      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
      const size_t n = 1 << 20;
      std::vector<int> host(n / sizeof(int), d + 1), back(n / sizeof(int), 0);
      void* buf = nullptr;
      cudaMallocAsync(&buf, n, s);
      cudaMemcpyAsync(buf, host.data(), n, cudaMemcpyHostToDevice, s);
      cudaLaunchHostFunc(s, bump, &host_calls);
      cudaMemcpyAsync(back.data(), buf, n, cudaMemcpyDeviceToHost, s);
      cudaFreeAsync(buf, s);
      cudaStreamSynchronize(s);
      cudaPointerAttributes attr;
      cudaGetDevice(&seen[d]);
      ok[d] = std::memcmp(host.data(), back.data(), n) == 0;
      cudaStreamDestroy(s);
      (void)attr;
    });
  }
  for (auto& t : threads) t.join();
  for (int d = 0; d < ndev; ++d) {
    EXPECT_EQ_INT("thread kept its own current device", d, seen[d]);
    EXPECT_EQ_INT("device data round trip", 1, ok[d]);
  }
  EXPECT_EQ_INT("host functions ran once per device", ndev, host_calls.load());

  // Allocations land on the current device; synchronising device 0 ignores device 1's backlog.
  size_t free0a, free1a, total;
  CHECK_CUDA(cudaSetDevice(1));
  CHECK_CUDA(cudaMemGetInfo(&free1a, &total));
  void* big1;
  CHECK_CUDA(cudaMalloc(&big1, 1u << 30));
  cudaStream_t s1;
  CHECK_CUDA(cudaStreamCreate(&s1));
  for (int i = 0; i < 4; ++i)
    CHECK_CUDA(cudaMemcpyAsync(big1, static_cast<char*>(big1) + (1u << 29), 1u << 29, cudaMemcpyDeviceToDevice, s1));
  cudaEvent_t done1;
  CHECK_CUDA(cudaEventCreate(&done1));
  CHECK_CUDA(cudaEventRecord(done1, s1));
  CHECK_CUDA(cudaSetDevice(0));
  CHECK_CUDA(cudaMemGetInfo(&free0a, &total));
  EXPECT_EQ_INT("device 0 memory untouched by device 1's allocation", total, free0a);
  CHECK_CUDA(cudaDeviceSynchronize());
  EXPECT_ERR("device 1's work still pending after syncing device 0", cudaErrorNotReady, cudaEventQuery(done1));
  CHECK_CUDA(cudaSetDevice(1));
  CHECK_CUDA(cudaDeviceSynchronize());
  EXPECT_ERR("and done after syncing device 1", cudaSuccess, cudaEventQuery(done1));
  return finish("multi_device");
}
