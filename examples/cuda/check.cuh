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

static int finish(const char* name) {
  std::printf("%s: %d failed\n", name, g_failures);
  return g_failures == 0 ? 0 : 1;
}
