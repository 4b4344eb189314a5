// SPDX-License-Identifier: Apache-2.0
// Example: a training-loop skeleton annotated with NVTX (v3, header-only, as PyTorch and Megatron use it). Each
// step is an nvtxRangePushA("step") ... nvtxRangePop() range holding a "forward" range in the "example" domain
// (nvtxDomainRangePushEx) around two `work` kernels, an AllReduce and a start/end range ("sync") around the stream
// synchronisation. Under genie run (which sets NVTX_INJECTION64_PATH) the report breaks every range down into
// compute, communication and idle time. Usage, one process per rank: nvtx_steps STEPS COUNT
// (with GENIE_FAKECUDA_COST_TABLE giving `work` a duration; tests/e2e/data/nvtx_table.json: 500 us).
#include <nvtx3/nvToolsExt.h>

#include <vector>

#include "nccl_check.cuh"

__global__ void work() {}

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 4;
  const size_t count = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : size_t(1) << 20;
  return run_env([&](int rank, int nranks, const ncclUniqueId& id) {
    ncclComm_t comm;
    CHECK_NCCL(ncclCommInitRank(&comm, nranks, id, rank));
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    float* buf;
    CHECK_CUDA(cudaMalloc(&buf, count * sizeof(float)));
    CHECK_CUDA(cudaMemset(buf, 0, count * sizeof(float)));
    CHECK_CUDA(cudaStreamSynchronize(s));
    nvtxDomainHandle_t domain = nvtxDomainCreateA("example");
    nvtxEventAttributes_t forward = {};
    forward.version = NVTX_VERSION;
    forward.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    forward.messageType = NVTX_MESSAGE_TYPE_ASCII;
    forward.message.ascii = "forward";
    cudaEvent_t a, b;
    CHECK_CUDA(cudaEventCreate(&a));
    CHECK_CUDA(cudaEventCreate(&b));
    for (int step = 0; step < steps; ++step) {
      expect_eq(rank, "nvtxRangePushA level", 0, nvtxRangePushA("step"));
      CHECK_CUDA(cudaEventRecord(a, s));
      nvtxDomainRangePushEx(domain, &forward);
      work<<<1, 1, 0, s>>>();
      work<<<1, 1, 0, s>>>();
      nvtxDomainRangePop(domain);
      CHECK_NCCL(ncclAllReduce(buf, buf, count, ncclFloat, ncclSum, comm, s));
      CHECK_CUDA(cudaEventRecord(b, s));
      const nvtxRangeId_t sync = nvtxRangeStartA("sync");
      CHECK_CUDA(cudaStreamSynchronize(s));
      nvtxRangeEnd(sync);
      expect_eq(rank, "nvtxRangePop level", 0, nvtxRangePop());
      float ms = 0;
      CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
      note(rank, "step %d event_ms %.6f", step, ms);
    }
    expect_eq(rank, "nvtxRangePop without a push", -1, nvtxRangePop());
    CHECK_CUDA(cudaFree(buf));
    CHECK_CUDA(cudaStreamDestroy(s));
    CHECK_NCCL(ncclCommDestroy(comm));
    std::printf("nvtx_steps: %d failed\n", failures_so_far());
  });
}
