// SPDX-License-Identifier: Apache-2.0
// Example: bad input gets the CUDA runtime's error codes and last-error semantics, never a crash.
#include "check.cuh"

int main() {
  const bool genie = on_genie();
  EXPECT_ERR("null count", cudaErrorInvalidValue, cudaGetDeviceCount(nullptr));
  EXPECT_ERR("peek keeps the error", cudaErrorInvalidValue, cudaPeekAtLastError());
  EXPECT_ERR("get returns it", cudaErrorInvalidValue, cudaGetLastError());
  EXPECT_ERR("then it is cleared", cudaSuccess, cudaGetLastError());
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));
  CHECK_CUDA(cudaStreamDestroy(s));
  if (genie)
    EXPECT_ERR("destroyed stream", cudaErrorInvalidResourceHandle, cudaStreamQuery(s));
  else
    SKIP_ON_REAL_GPU("destroyed stream", "a destroyed handle is undefined behaviour (a crash, seen on an H200)");
  cudaEvent_t e;
  CHECK_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  cudaEvent_t e2;
  CHECK_CUDA(cudaEventCreate(&e2));
  CHECK_CUDA(cudaEventRecord(e, 0));
  CHECK_CUDA(cudaEventRecord(e2, 0));
  CHECK_CUDA(cudaEventSynchronize(e2));
  float ms;
  EXPECT_ERR("elapsed with DisableTiming", cudaErrorInvalidResourceHandle, cudaEventElapsedTime(&ms, e, e2));
  CHECK_CUDA(cudaEventDestroy(e));
  if (genie)
    EXPECT_ERR("destroyed event", cudaErrorInvalidResourceHandle, cudaEventQuery(e));
  else
    SKIP_ON_REAL_GPU("destroyed event", "a destroyed handle is undefined behaviour");
  EXPECT_ERR("unrecorded event elapsed", cudaErrorInvalidResourceHandle, [] {
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    float t;
    return cudaEventElapsedTime(&t, a, b);
  }());
  void* p = nullptr;
  EXPECT_ERR("malloc null out", cudaErrorInvalidValue, cudaMalloc(nullptr, 16));
  EXPECT_ERR("free of a stack pointer", cudaErrorInvalidValue, cudaFree(&p));
  EXPECT_ERR("set invalid device", cudaErrorInvalidDevice, cudaSetDevice(-1));
  EXPECT_ERR("attribute of invalid device", cudaErrorInvalidDevice,
             [] { int v; return cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 99); }());
  EXPECT_ERR("unknown attribute", cudaErrorInvalidValue,
             [] { int v; return cudaDeviceGetAttribute(&v, (cudaDeviceAttr)99999, 0); }());
  EXPECT_ERR("errors are not sticky", cudaSuccess, [] { void* q; cudaError_t r = cudaMalloc(&q, 16); cudaFree(q); return r; }());
  // Functions Genie does not emulate exist (the program links and loads) and say so.
  cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  EXPECT_EQ_INT("channel desc is a plain value", 32, desc.x);
  cudaArray_t arr;
  EXPECT_ERR("arrays are not emulated", cudaErrorNotSupported, cudaMallocArray(&arr, &desc, 4, 4));
  EXPECT_ERR("and that is the last error", cudaErrorNotSupported, cudaGetLastError());
  std::printf("error string: %s / %s\n", cudaGetErrorName(cudaErrorMemoryAllocation),
              cudaGetErrorString(cudaErrorMemoryAllocation));
  return finish("errors");
}
