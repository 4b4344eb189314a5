// SPDX-License-Identifier: Apache-2.0
// Example: a rank that keeps the clock waiting outside Genie, for the coordinator's stall rule
// (docs/coordinator.md). Usage, one rank of a 3-rank genie run job: stall_rule spin|sleep SECONDS
// Every rank makes an AllReduce; then ranks 0 and 2 make one on their own communicator (split off) while rank 1,
// holding the clock back at its earlier time, either computes on its CPU for SECONDS of its own CPU time (spin: the
// clock cannot know when rank 1 will call again, so after the stall grace of CPU time the coordinator assumes it
// injects nothing earlier: a relaxed step) or sleeps SECONDS (sleep: a probe finds the job asleep and the clock
// moves exactly, with no relaxed step); then every rank makes a last AllReduce. Every result is checked.
#include <time.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "nccl_check.cuh"

static bool g_spin = true;
static double g_seconds = 1;

static double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

static void rank_main(int rank, int n, const ncclUniqueId& id) {
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  ncclComm_t comm;
  CHECK_NCCL(ncclCommInitRank(&comm, n, id, rank));
  ncclComm_t pair = nullptr;  // ranks 0 and 2
  CHECK_NCCL(ncclCommSplit(comm, rank == 1 ? NCCL_SPLIT_NOCOLOR : 0, rank, &pair, nullptr));
  const size_t count = 1024;
  float* d;
  CHECK_CUDA(cudaMalloc(&d, count * sizeof(float)));
  auto all_reduce = [&](ncclComm_t c, float mine, float want, const char* what) {
    std::vector<float> h(count, mine);
    CHECK_CUDA(cudaMemcpy(d, h.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_NCCL(ncclAllReduce(d, d, count, ncclFloat, ncclSum, c, s));
    sync_nccl_stream(c, s, rank);
    CHECK_CUDA(cudaMemcpy(h.data(), d, count * sizeof(float), cudaMemcpyDeviceToHost));
    long bad = 0;
    for (float v : h) bad += v != want;
    expect_eq(rank, what, 0, bad);
  };
  for (int round = 0; round < 2; ++round) {
    if (round == 1 && rank != 1) all_reduce(pair, static_cast<float>(rank), 2.0f, "pair AllReduce: elements differing");
    if (round == 1 && rank == 1) {
      if (g_spin) {
        note(rank, "computing on the CPU before the second AllReduce");
        volatile double x = 0;
        for (const double end = cpu_seconds() + g_seconds; cpu_seconds() < end;) {
          for (int i = 0; i < 100000; ++i) x = x + 1e-9 * i;
        }
      } else {
        note(rank, "sleeping before the second AllReduce");
        std::this_thread::sleep_for(std::chrono::duration<double>(g_seconds));
      }
    }
    all_reduce(comm, static_cast<float>(rank + round), static_cast<float>(n * (n - 1) / 2 + n * round),
               "AllReduce: elements differing");
  }
  if (pair != nullptr) CHECK_NCCL(ncclCommDestroy(pair));
  CHECK_NCCL(ncclCommDestroy(comm));
  CHECK_CUDA(cudaFree(d));
}

int main(int argc, char** argv) {
  if (argc < 3 || (std::strcmp(argv[1], "spin") != 0 && std::strcmp(argv[1], "sleep") != 0)) {
    std::fprintf(stderr, "usage: %s spin|sleep SECONDS (one rank of a 3-rank genie run job)\n", argv[0]);
    return 2;
  }
  g_spin = std::strcmp(argv[1], "spin") == 0;
  g_seconds = std::atof(argv[2]);
  return finish_ranks("stall_rule", run_env(rank_main));
}
