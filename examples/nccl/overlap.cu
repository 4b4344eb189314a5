// SPDX-License-Identifier: Apache-2.0
// Example: an AllReduce in CUDA stream order on two devices of one thread: H2D copy -> AllReduce -> event, timed,
// and a second stream that waits on the collective's completion event before copying the result back. Then two
// AllReduces of one communicator issued on two streams (as PyTorch's FSDP issues all-gathers and reduce-scatters):
// they run in the order they were issued even when one device's first stream is held back, and do not overlap.
#include <unistd.h>

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

  // Issue order across streams: AllReduce #1 (count) on `compute`, then #2 (count / 2) on `copy_back`. On device
  // 0 a host function holds `compute` back for 200 ms of wall time, so its #2 reaches the head of its stream
  // first; NCCL still matches #1 with #1 (issue order), and the communicator runs #2 after #1 ends.
  cudaEvent_t end1[ndev], end2[ndev];
  for (int i = 0; i < ndev; ++i) {
    PerDev& p = per[i];
    CHECK_CUDA(cudaSetDevice(devs[i]));
    CHECK_CUDA(cudaEventCreate(&end1[i]));
    CHECK_CUDA(cudaEventCreate(&end2[i]));
    CHECK_CUDA(cudaMemcpy(p.send, p.host_in, count * sizeof(float), cudaMemcpyHostToDevice));
    if (i == 0) CHECK_CUDA(cudaLaunchHostFunc(p.compute, [](void*) { usleep(200 * 1000); }, nullptr));
  }
  CHECK_NCCL(ncclGroupStart());
  for (int i = 0; i < ndev; ++i)
    CHECK_NCCL(ncclAllReduce(per[i].send, per[i].recv, count, ncclFloat, ncclSum, comms[i], per[i].compute));
  CHECK_NCCL(ncclGroupEnd());
  for (int i = 0; i < ndev; ++i) CHECK_CUDA(cudaEventRecord(end1[i], per[i].compute));
  CHECK_NCCL(ncclGroupStart());
  for (int i = 0; i < ndev; ++i)
    CHECK_NCCL(ncclAllReduce(per[i].send, per[i].send, count / 2, ncclFloat, ncclSum, comms[i], per[i].copy_back));
  CHECK_NCCL(ncclGroupEnd());
  for (int i = 0; i < ndev; ++i) CHECK_CUDA(cudaEventRecord(end2[i], per[i].copy_back));
  for (int i = 0; i < ndev; ++i) {
    PerDev& p = per[i];
    CHECK_CUDA(cudaSetDevice(devs[i]));
    sync_nccl_stream(comms[i], p.compute, -1);
    sync_nccl_stream(comms[i], p.copy_back, -1);
    ncclResult_t err = ncclSuccess;
    CHECK_NCCL(ncclCommGetAsyncError(comms[i], &err));
    EXPECT_ERR("two streams, one communicator: no mismatch reported", ncclSuccess, err);
    CHECK_CUDA(cudaMemcpy(p.host_out, p.recv, count * sizeof(float), cudaMemcpyDeviceToHost));
    long bad = 0;
    for (size_t j = 0; j < count; ++j) bad += p.host_out[j] != float(3 * (j % 1000));
    EXPECT_EQ_INT("AllReduce #1 on the held-back stream: elements differing", 0, bad);
    CHECK_CUDA(cudaMemcpy(p.host_out, p.send, count / 2 * sizeof(float), cudaMemcpyDeviceToHost));
    bad = 0;
    for (size_t j = 0; j < count / 2; ++j) bad += p.host_out[j] != float(3 * (j % 1000));
    EXPECT_EQ_INT("AllReduce #2 on the other stream: elements differing", 0, bad);
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, end1[i], end2[i]));
    std::printf("device %d: AllReduce #2 ended %.3f ms after #1\n", devs[i], double(ms));
    EXPECT_EQ_INT("AllReduce #2 ends after #1 (a communicator's operations do not overlap)", 1, ms > 0);
    CHECK_CUDA(cudaEventDestroy(end1[i]));
    CHECK_CUDA(cudaEventDestroy(end2[i]));
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
