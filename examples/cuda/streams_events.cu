// SPDX-License-Identifier: Apache-2.0
// Example: streams, events, kernels, memcpy and a CUDA graph, written against the plain CUDA runtime API.
// Under Genie the kernels do not run; the copies are real and the timing comes from the cost model.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "check.cuh"

#define CHECK(call)                                                                              \
  do {                                                                                           \
    cudaError_t e_ = (call);                                                                     \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d: %s -> %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      return 1;                                                                                  \
    }                                                                                            \
  } while (0)

__global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

int main() {
  int count = 0;
  CHECK(cudaGetDeviceCount(&count));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("devices %d name %s cc %d.%d sms %d mem %zu\n", count, prop.name, prop.major, prop.minor,
              prop.multiProcessorCount, prop.totalGlobalMem);

  // Genie: the kernel does not run, so the data comes back as sent; a real GPU doubles it.
  const float factor = on_genie() ? 1.0f : 2.0f;
  const int n = 1 << 20;
  const size_t bytes = n * sizeof(float);
  std::vector<float> host(n), back(n);
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i);
  std::vector<float> want(n);
  for (int i = 0; i < n; ++i) want[i] = host[i] * factor;
  float* d = nullptr;
  CHECK(cudaMalloc(&d, bytes));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));

  CHECK(cudaEventRecord(start, s));
  CHECK(cudaMemcpyAsync(d, host.data(), bytes, cudaMemcpyHostToDevice, s));
  scale<<<(n + 255) / 256, 256, 0, s>>>(d, 2.0f, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpyAsync(back.data(), d, bytes, cudaMemcpyDeviceToHost, s));
  CHECK(cudaEventRecord(stop, s));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  bool copied = std::memcmp(want.data(), back.data(), bytes) == 0;
  std::printf("roundtrip %s elapsed_ms %.6f\n", copied ? "ok" : "MISMATCH", ms);

  // Capture the same work into a graph and replay it 3 times.
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CHECK(cudaMemcpyAsync(d, host.data(), bytes, cudaMemcpyHostToDevice, s));
  scale<<<(n + 255) / 256, 256, 0, s>>>(d, 2.0f, n);
  CHECK(cudaMemcpyAsync(back.data(), d, bytes, cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamEndCapture(s, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  std::memset(back.data(), 0, bytes);
  CHECK(cudaEventRecord(start, s));
  for (int i = 0; i < 3; ++i) CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaEventRecord(stop, s));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  copied = std::memcmp(want.data(), back.data(), bytes) == 0;
  std::printf("graph %s elapsed_ms %.6f\n", copied ? "ok" : "MISMATCH", ms);

  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(d));
  return copied ? 0 : 1;
}
