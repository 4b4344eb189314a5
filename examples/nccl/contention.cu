// SPDX-License-Identifier: Apache-2.0
// Example: two communicators whose traffic shares links. Run as an even number of ranks under a launcher
// (genie run -n 4 -- contention ...): the world is split into pairs {rank, rank + n/2}; first only pair 0
// all-reduces (alone), then every pair at once (together). CUDA events time both phases on each rank. Where
// the pairs' traffic crosses a shared link (tests/e2e/data/two_servers.json), "together" takes about twice as
// long; on an NVSwitch server the pairs do not interfere.
//   contention [count=4194304] [iters=3] [jitter_seed=0]
// A non-zero jitter seed makes each rank sleep a random few milliseconds of wall time before each call: on
// Genie's virtual clock that must change nothing.
#include <random>
#include <thread>

#include "nccl_check.cuh"

namespace {

struct Phase {
  double ms = 0;
};

void barrier(ncclComm_t world, cudaStream_t s, float* flag) {
  CHECK_NCCL(ncclAllReduce(flag, flag, 1, ncclFloat, ncclSum, world, s));
  CHECK_CUDA(cudaStreamSynchronize(s));
}

}  // namespace

int main(int argc, char** argv) {
  const size_t count = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : size_t(1) << 22;
  const int iters = argc > 2 ? std::atoi(argv[2]) : 3;
  const unsigned seed = argc > 3 ? static_cast<unsigned>(std::atoi(argv[3])) : 0;
  return run_env([&](int rank, int nranks, const ncclUniqueId& id) {
    if (nranks % 2 != 0) {
      std::printf("contention needs an even number of ranks\n");
      std::exit(2);
    }
    std::mt19937 rng(seed * 7919u + static_cast<unsigned>(rank));
    auto jitter = [&] {
      if (seed) std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 15));
    };
    ncclComm_t world, pair;
    CHECK_NCCL(ncclCommInitRank(&world, nranks, id, rank));
    const int half = nranks / 2;
    const int color = rank % half;  // pairs {r, r + n/2}
    CHECK_NCCL(ncclCommSplit(world, color, rank, &pair, nullptr));
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    float *buf, *flag;
    CHECK_CUDA(cudaMalloc(&buf, count * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&flag, sizeof(float)));
    CHECK_CUDA(cudaMemset(buf, 0, count * sizeof(float)));
    CHECK_CUDA(cudaMemset(flag, 0, sizeof(float)));
    cudaEvent_t a, b;
    CHECK_CUDA(cudaEventCreate(&a));
    CHECK_CUDA(cudaEventCreate(&b));
    auto timed = [&](bool active) {
      Phase p;
      jitter();
      barrier(world, s, flag);
      if (!active) {
        barrier(world, s, flag);
        return p;
      }
      CHECK_CUDA(cudaEventRecord(a, s));
      for (int i = 0; i < iters; ++i) {
        jitter();
        CHECK_NCCL(ncclAllReduce(buf, buf, count, ncclFloat, ncclSum, pair, s));
      }
      CHECK_CUDA(cudaEventRecord(b, s));
      CHECK_CUDA(cudaEventSynchronize(b));
      float ms = 0;
      CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
      p.ms = ms / iters;
      barrier(world, s, flag);
      return p;
    };
    const Phase alone = timed(color == 0);
    const Phase together = timed(true);
    if (color == 0) {
      std::printf("contention: rank %d alone_ms %.6f together_ms %.6f ratio %.4f\n", rank, alone.ms, together.ms,
                  alone.ms > 0 ? together.ms / alone.ms : 0.0);
      EXPECT_EQ_INT("together is not faster than alone (1 = yes)", 1, together.ms >= alone.ms * 0.999 ? 1 : 0);
    }
    CHECK_CUDA(cudaFree(buf));
    CHECK_CUDA(cudaFree(flag));
    CHECK_CUDA(cudaStreamDestroy(s));
    CHECK_NCCL(ncclCommDestroy(pair));
    CHECK_NCCL(ncclCommDestroy(world));
    std::printf("contention: %d failed\n", failures_so_far());
  });
}
