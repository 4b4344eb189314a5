// SPDX-License-Identifier: Apache-2.0
// Example: device memory is enforced at the preset's capacity, reported honestly, and untouched
// allocations cost no host memory (a 100+ GB device on a small host).
#include "check.cuh"

int main() {
  size_t free0 = 0, total = 0;
  CHECK_CUDA(cudaMemGetInfo(&free0, &total));
  std::printf("cudaMemGetInfo at start: free %zu total %zu\n", free0, total);
  void* big = nullptr;
  // All but 64 MiB of what is free (a real GPU's context holds some of the total). It fits: pages are not touched,
  // so on Genie the host pays nothing.
  size_t almost = free0 - (64u << 20);
  CHECK_CUDA(cudaMalloc(&big, almost));
  size_t free_b = 0;
  CHECK_CUDA(cudaMemGetInfo(&free_b, &total));
  const double MiB = 1 << 20;  // a real GPU maps memory in 2 MiB pages
  EXPECT_NEAR_DBL("free after big allocation (MiB)", (free0 - almost) / MiB, free_b / MiB, 2.0);
  void* more = nullptr;
  EXPECT_ERR("allocation past capacity", cudaErrorMemoryAllocation, cudaMalloc(&more, 128u << 20));
  EXPECT_ERR("last error is the OOM", cudaErrorMemoryAllocation, cudaGetLastError());
  EXPECT_ERR("and it was cleared", cudaSuccess, cudaGetLastError());
  CHECK_CUDA(cudaMalloc(&more, 32u << 20));  // still room below the capacity
  CHECK_CUDA(cudaFree(big));
  CHECK_CUDA(cudaMemGetInfo(&free_b, &total));
  EXPECT_NEAR_DBL("free after release (MiB)", (free0 - (32u << 20)) / MiB, free_b / MiB, 2.0);
  CHECK_CUDA(cudaFree(more));
  return finish("oom");
}
