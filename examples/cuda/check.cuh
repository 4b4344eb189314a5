// SPDX-License-Identifier: Apache-2.0
// Tiny self-check helpers for the CUDA examples: each check prints "Expectation ... / Actual ..." and
// failures make the program exit non-zero.
#pragma once
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

static int g_failures = 0;

#define CHECK_CUDA(call)                                                                              \
  do {                                                                                                \
    cudaError_t e_ = (call);                                                                          \
    if (e_ != cudaSuccess) {                                                                          \
      std::fprintf(stderr, "%s:%d: %s -> %s (%s)\n", __FILE__, __LINE__, #call, cudaGetErrorName(e_), \
                   cudaGetErrorString(e_));                                                           \
      std::exit(2);                                                                                   \
    }                                                                                                 \
  } while (0)

// Compares two integers and prints one golden line.
#define EXPECT_EQ_INT(what, expected, actual)                                                          \
  do {                                                                                                 \
    long long ex_ = (long long)(expected), ac_ = (long long)(actual);                                  \
    std::printf("%s %s: Expectation %lld / Actual %lld\n", ex_ == ac_ ? "ok  " : "FAIL", what, ex_, ac_); \
    if (ex_ != ac_) ++g_failures;                                                                      \
  } while (0)

#define EXPECT_NEAR_DBL(what, expected, actual, tol)                                                   \
  do {                                                                                                 \
    double ex_ = (expected), ac_ = (actual);                                                           \
    bool ok_ = (ex_ - ac_ <= (tol)) && (ac_ - ex_ <= (tol));                                           \
    std::printf("%s %s: Expectation %.6f / Actual %.6f\n", ok_ ? "ok  " : "FAIL", what, ex_, ac_);      \
    if (!ok_) ++g_failures;                                                                            \
  } while (0)

#define EXPECT_ERR(what, expected, ...) EXPECT_EQ_INT(what, (int)(expected), (int)(__VA_ARGS__))

// Whether kernels run: on a real GPU this kernel writes 1; on Genie kernels are timed, not run. Checks of Genie's
// own diagnostics (handles used after destroy, which a real GPU leaves undefined) and of its design (kernels do
// not run, the cost table's times) run only on Genie; scripts/real-gpu-check.sh runs the rest on a real GPU.
__global__ void genie_check_probe(int* out) { *out = 1; }
static bool on_genie() {
  static int answer = -1;
  if (answer < 0) {
    int* d = nullptr;
    int h = 0;
    if (cudaMalloc(&d, sizeof(int)) != cudaSuccess) return false;
    cudaMemset(d, 0, sizeof(int));
    genie_check_probe<<<1, 1>>>(d);
    cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(d);
    answer = h == 1 ? 0 : 1;
  }
  return answer == 1;
}
// Says that a check was left out on a real GPU (why: what it would do there).
#define SKIP_ON_REAL_GPU(what, why) std::printf("skip %s: %s\n", what, why)

static int finish(const char* name) {
  std::printf("%s: %d failed\n", name, g_failures);
  return g_failures == 0 ? 0 : 1;
}

// Time of what `body` enqueues on `s`, by events, in ms.
template <class F>
inline float event_timed_ms(cudaStream_t s, F body) {
  cudaEvent_t e0, e1;
  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  CHECK_CUDA(cudaEventRecord(e0, s));
  body();
  CHECK_CUDA(cudaEventRecord(e1, s));
  CHECK_CUDA(cudaEventSynchronize(e1));
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
  CHECK_CUDA(cudaEventDestroy(e0));
  CHECK_CUDA(cudaEventDestroy(e1));
  return ms;
}
