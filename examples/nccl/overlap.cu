// SPDX-License-Identifier: Apache-2.0
// Example: an AllReduce in CUDA stream order on two devices of one thread: H2D copy -> AllReduce -> event, timed,
// and a second stream that waits on the collective's completion event before copying the result back.
#include <vector>

#include "nccl_check.cuh"

int main() {
  const int ndev = 2;
  int have = 0;
  CHECK_CUDA(cudaGetDeviceCount(&have));
  if (have < ndev) {
    std::printf("overlap needs %d devices, found %d\n", ndev, have);
    return finish_ranks("overlap", 1);
  }
  const int devs[ndev] = {0, 1};
  ncclComm_t comms[ndev];
  CHECK_NCCL(ncclCommInitAll(comms, ndev, devs));

  const size_t count = 1 << 20;  // 4 MiB of floats per device
  struct PerDev {
    cudaStream_t compute, copy_back;
    cudaEvent_t start, done;
    float* send;
    float* recv;
    float* host_in;
    float* host_out;
  } per[ndev];
  for (int i = 0; i < ndev; ++i) {
    PerDev& p = per[i];
    CHECK_CUDA(cudaSetDevice(devs[i]));
    CHECK_CUDA(cudaStreamCreateWithFlags(&p.compute, cudaStreamNonBlocking));
    CHECK_CUDA(cudaStreamCreateWithFlags(&p.copy_back, cudaStreamNonBlocking));
    CHECK_CUDA(cudaEventCreate(&p.start));
    CHECK_CUDA(cudaEventCreate(&p.done));
    CHECK_CUDA(cudaMalloc(&p.send, count * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&p.recv, count * sizeof(float)));
    CHECK_CUDA(cudaMallocHost(&p.host_in, count * sizeof(float)));
    CHECK_CUDA(cudaMallocHost(&p.host_out, count * sizeof(float)));
    for (size_t j = 0; j < count; ++j) {
      p.host_in[j] = float((j % 1000) * (i + 1));  // sum over both devices: 3 * (j % 1000)
      p.host_out[j] = -1;
    }
  }

  // Everything below is asynchronous: the AllReduce sees the copied data only through stream order.
  for (int i = 0; i < ndev; ++i) {
    PerDev& p = per[i];
    CHECK_CUDA(cudaSetDevice(devs[i]));
    CHECK_CUDA(cudaEventRecord(p.start, p.compute));
    CHECK_CUDA(cudaMemcpyAsync(p.send, p.host_in, count * sizeof(float), cudaMemcpyHostToDevice, p.compute));
  }
  CHECK_NCCL(ncclGroupStart());
  for (int i = 0; i < ndev; ++i)
    CHECK_NCCL(ncclAllReduce(per[i].send, per[i].recv, count, ncclFloat, ncclSum, comms[i], per[i].compute));
  CHECK_NCCL(ncclGroupEnd());
  for (int i = 0; i < ndev; ++i) {
    PerDev& p = per[i];
    CHECK_CUDA(cudaSetDevice(devs[i]));
    CHECK_CUDA(cudaEventRecord(p.done, p.compute));
    CHECK_CUDA(cudaStreamWaitEvent(p.copy_back, p.done, 0));
    CHECK_CUDA(cudaMemcpyAsync(p.host_out, p.recv, count * sizeof(float), cudaMemcpyDeviceToHost, p.copy_back));
  }

  for (int i = 0; i < ndev; ++i) {
    PerDev& p = per[i];
    CHECK_CUDA(cudaSetDevice(devs[i]));
    sync_nccl_stream(comms[i], p.copy_back, -1);
    EXPECT_ERR("the collective's event is complete once the waiting stream drained", cudaSuccess,
               cudaEventQuery(p.done));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, p.start, p.done));
    std::printf("device %d: copy + AllReduce took %.3f ms\n", devs[i], double(ms));
    EXPECT_EQ_INT("cudaEventElapsedTime(copy + AllReduce) > 0", 1, ms > 0);
    long bad = 0;
    for (size_t j = 0; j < count; ++j) bad += p.host_out[j] != float(3 * (j % 1000));
    EXPECT_EQ_INT("result copied back on the second stream: elements differing", 0, bad);
  }

  for (int i = 0; i < ndev; ++i) {
    PerDev& p = per[i];
    CHECK_CUDA(cudaSetDevice(devs[i]));
    CHECK_CUDA(cudaEventDestroy(p.start));
    CHECK_CUDA(cudaEventDestroy(p.done));
    CHECK_CUDA(cudaStreamDestroy(p.compute));
    CHECK_CUDA(cudaStreamDestroy(p.copy_back));
    CHECK_CUDA(cudaFree(p.send));
    CHECK_CUDA(cudaFree(p.recv));
    CHECK_CUDA(cudaFreeHost(p.host_in));
    CHECK_CUDA(cudaFreeHost(p.host_out));
  }
  for (int i = 0; i < ndev; ++i) CHECK_NCCL(ncclCommDestroy(comms[i]));
  return finish_ranks("overlap", g_failures);
}
