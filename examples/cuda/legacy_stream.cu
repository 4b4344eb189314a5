// SPDX-License-Identifier: Apache-2.0
// Example: the legacy default stream synchronises with blocking streams, not with non-blocking ones
// (CUDA Programming Guide, "Implicit Synchronization"); times are virtual and exact.
#include "check.cuh"

int main() {
  const size_t n = 256u << 20;
  char *a, *b;
  CHECK_CUDA(cudaMalloc(&a, 2 * n));
  CHECK_CUDA(cudaMalloc(&b, 2 * n));
  cudaStream_t blocking, nonblocking;
  CHECK_CUDA(cudaStreamCreate(&blocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking));
  cudaEvent_t t0, t_block, t_nonblock, t_legacy;
  for (cudaEvent_t* e : {&t0, &t_block, &t_nonblock, &t_legacy}) CHECK_CUDA(cudaEventCreate(e));
  CHECK_CUDA(cudaEventRecord(t0, 0));
  CHECK_CUDA(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, blocking));
  CHECK_CUDA(cudaMemcpyAsync(b + n, a + n, 2 * n - n, cudaMemcpyDeviceToDevice, nonblocking));
  CHECK_CUDA(cudaMemcpyAsync(b + n, a + n, 2 * n - n, cudaMemcpyDeviceToDevice, nonblocking));
  CHECK_CUDA(cudaEventRecord(t_block, blocking));
  CHECK_CUDA(cudaEventRecord(t_nonblock, nonblocking));
  CHECK_CUDA(cudaEventRecord(t_legacy, 0));  // waits for `blocking`, not for `nonblocking`
  CHECK_CUDA(cudaDeviceSynchronize());
  float block_ms, nonblock_ms, legacy_ms;
  CHECK_CUDA(cudaEventElapsedTime(&block_ms, t0, t_block));
  CHECK_CUDA(cudaEventElapsedTime(&nonblock_ms, t0, t_nonblock));
  CHECK_CUDA(cudaEventElapsedTime(&legacy_ms, t0, t_legacy));
  std::printf("blocking %.4f ms, non-blocking %.4f ms, legacy %.4f ms\n", block_ms, nonblock_ms, legacy_ms);
  EXPECT_EQ_INT("legacy waited for the blocking stream", 1, legacy_ms >= block_ms);
  EXPECT_EQ_INT("legacy did not wait for the non-blocking stream", 1, legacy_ms < nonblock_ms);
  return finish("legacy_stream");
}
