// SPDX-License-Identifier: Apache-2.0
// Example: device memory is enforced at the preset's capacity, reported honestly, and untouched
// allocations cost no host memory (a 100+ GB device on a small host).
#include "check.cuh"

int main() {
  cudaDeviceProp p;
  CHECK_CUDA(cudaGetDeviceProperties(&p, 0));
  void* big = nullptr;
  size_t almost = p.totalGlobalMem - (64u << 20);
  CHECK_CUDA(cudaMalloc(&big, almost));  // fits: pages are not touched, so the host pays nothing
  size_t free_b = 0, total = 0;
  CHECK_CUDA(cudaMemGetInfo(&free_b, &total));
  EXPECT_EQ_INT("free after big allocation", total - almost, free_b);
  void* more = nullptr;
  EXPECT_ERR("allocation past capacity", cudaErrorMemoryAllocation, cudaMalloc(&more, 128u << 20));
  EXPECT_ERR("last error is the OOM", cudaErrorMemoryAllocation, cudaGetLastError());
  EXPECT_ERR("and it was cleared", cudaSuccess, cudaGetLastError());
  CHECK_CUDA(cudaMalloc(&more, 32u << 20));  // still room below the capacity
  CHECK_CUDA(cudaFree(big));
  CHECK_CUDA(cudaMemGetInfo(&free_b, &total));
  EXPECT_EQ_INT("free after release", total - (32u << 20), free_b);
  CHECK_CUDA(cudaFree(more));
  return finish("oom");
}
