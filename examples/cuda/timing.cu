// SPDX-License-Identifier: Apache-2.0
// Example: kernel timing from the cost model. With tests/e2e/data/spin_table.json, `spin` takes 20 ms.
// Usage: timing <tolerance_ms> [expected_wall_ms]. Virtual clock: elapsed is exact and nothing sleeps;
// realtime: the host really waits for the modelled work (4 kernels: ~80 ms of wall time).
#include <chrono>

#include "check.cuh"

__global__ void spin() {}

int main(int argc, char** argv) {
  double tol = argc > 1 ? std::atof(argv[1]) : 0.0;
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t t0, t1;
  CHECK_CUDA(cudaEventCreate(&t0));
  CHECK_CUDA(cudaEventCreate(&t1));
  auto wall0 = std::chrono::steady_clock::now();
  spin<<<1, 1, 0, s>>>();  // keeps the stream busy so the timed kernels start back to back
  CHECK_CUDA(cudaEventRecord(t0, s));
  for (int i = 0; i < 3; ++i) spin<<<1, 1, 0, s>>>();
  CHECK_CUDA(cudaEventRecord(t1, s));
  CHECK_CUDA(cudaGetLastError());
  EXPECT_ERR("query before completion", cudaErrorNotReady, cudaEventQuery(t1));  // Genie only: the table's 20 ms
  CHECK_CUDA(cudaEventSynchronize(t1));
  double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall0).count();
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, t0, t1));
  EXPECT_NEAR_DBL("3 kernels of 20 ms (event elapsed)", 60.0, ms, tol);
  std::printf("wall_ms %.3f\n", wall_ms);
  if (argc > 2) EXPECT_NEAR_DBL("wall time of 4 kernels", std::atof(argv[2]), wall_ms, tol * 4);
  CHECK_CUDA(cudaEventQuery(t1));
  return finish("timing");
}
