// SPDX-License-Identifier: Apache-2.0
// Example: how long collectives take on the GPUs' clock. For each size, ncclGroupSimulateEnd predicts one
// AllReduce across all local devices; then `iters` such AllReduces run back to back between two CUDA events on
// every device, as nccl-tests times them (after one warm-up call). Sizes start at 8 MiB, where a call takes longer
// than the host needs to issue it to every device (NCCL's ~5 us per launch). On a real GPU the measured time per call approaches NCCL's estimate
// for large messages; on Genie both come from the same network model, so they agree closely.
//   collective_timing [ndev=4] [tolerance=0.02]
#include <cmath>
#include <vector>

#include "nccl_check.cuh"

int main(int argc, char** argv) {
  const int ndev = argc > 1 ? std::atoi(argv[1]) : 4;
  const double tolerance = argc > 2 ? std::atof(argv[2]) : 0.02;
  const int iters = 10;
  int have = 0;
  CHECK_CUDA(cudaGetDeviceCount(&have));
  if (ndev < 2 || have < ndev) {
    std::printf("collective_timing needs 2..%d devices\n", have);
    return finish_ranks("collective_timing", 1);
  }
  std::vector<int> devs(ndev);
  for (int i = 0; i < ndev; ++i) devs[i] = i;
  std::vector<ncclComm_t> comms(ndev);
  CHECK_NCCL(ncclCommInitAll(comms.data(), ndev, devs.data()));

  const size_t max_count = size_t(1) << 24;  // 64 MiB of floats
  std::vector<cudaStream_t> streams(ndev);
  std::vector<cudaEvent_t> start(ndev), stop(ndev);
  std::vector<float*> buf(ndev);
  for (int i = 0; i < ndev; ++i) {
    CHECK_CUDA(cudaSetDevice(i));
    CHECK_CUDA(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
    CHECK_CUDA(cudaEventCreate(&start[i]));
    CHECK_CUDA(cudaEventCreate(&stop[i]));
    CHECK_CUDA(cudaMalloc(&buf[i], max_count * sizeof(float)));
    CHECK_CUDA(cudaMemset(buf[i], 0, max_count * sizeof(float)));
  }
  double previous_ms = 0;
  for (size_t count = size_t(1) << 21; count <= max_count; count <<= 3) {
    ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
    CHECK_NCCL(ncclGroupStart());
    for (int i = 0; i < ndev; ++i) CHECK_NCCL(ncclAllReduce(buf[i], buf[i], count, ncclFloat, ncclSum, comms[i], streams[i]));
    CHECK_NCCL(ncclGroupSimulateEnd(&sim));

    // One warm-up call; the start events then mark its end, so the timed calls run back to back.
    CHECK_NCCL(ncclGroupStart());
    for (int i = 0; i < ndev; ++i) CHECK_NCCL(ncclAllReduce(buf[i], buf[i], count, ncclFloat, ncclSum, comms[i], streams[i]));
    CHECK_NCCL(ncclGroupEnd());
    for (int i = 0; i < ndev; ++i) {
      CHECK_CUDA(cudaSetDevice(i));
      CHECK_CUDA(cudaEventRecord(start[i], streams[i]));
    }
    for (int it = 0; it < iters; ++it) {
      CHECK_NCCL(ncclGroupStart());
      for (int i = 0; i < ndev; ++i) CHECK_NCCL(ncclAllReduce(buf[i], buf[i], count, ncclFloat, ncclSum, comms[i], streams[i]));
      CHECK_NCCL(ncclGroupEnd());
    }
    // Stop events on every device before waiting for any: what the host does after a wait would delay them.
    for (int i = 0; i < ndev; ++i) {
      CHECK_CUDA(cudaSetDevice(i));
      CHECK_CUDA(cudaEventRecord(stop[i], streams[i]));
    }
    double worst_ms = 0;
    for (int i = 0; i < ndev; ++i) {
      CHECK_CUDA(cudaEventSynchronize(stop[i]));
      float ms = 0;
      CHECK_CUDA(cudaEventElapsedTime(&ms, start[i], stop[i]));
      worst_ms = std::max(worst_ms, double(ms) / iters);
    }
    const double predicted_ms = sim.estimatedTime / 1e3;
    char what[160];
    std::snprintf(what, sizeof(what), "AllReduce %zu bytes on %d GPUs: ms per call (events) vs ncclGroupSimulateEnd",
                  count * sizeof(float), ndev);
    EXPECT_NEAR_DBL(what, predicted_ms, worst_ms, predicted_ms * tolerance);
    std::snprintf(what, sizeof(what), "AllReduce %zu bytes takes longer than the previous size (1 = yes)",
                  count * sizeof(float));
    EXPECT_EQ_INT(what, 1, worst_ms > previous_ms ? 1 : 0);
    previous_ms = worst_ms;
  }
  for (int i = 0; i < ndev; ++i) CHECK_NCCL(ncclCommDestroy(comms[i]));
  return finish_ranks("collective_timing", failures_so_far());
}
