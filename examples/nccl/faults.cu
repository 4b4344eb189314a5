// SPDX-License-Identifier: Apache-2.0
// Example: what a rank observes when its peers misbehave: disagreeing counts, a rank that never joins, a dead rank.
// Usage: faults mismatch|hang|deadpeer|killed [nranks=3] [env]   (hang expects GENIE_HANG_TIMEOUT=2 in the environment;
// killed: rank 2 issues the second AllReduce behind a host function that never returns, then is killed by SIGKILL, so
// its peers are inside that AllReduce waiting for it; env: this process is one rank of a genie run / torchrun job
// instead of forking the ranks itself)
// Each rank polls cudaStreamQuery + ncclCommGetAsyncError as nccl-tests does, then aborts its communicator. Real
// NCCL has no such detection (the collective would hang or compute garbage); Genie reports these errors. This
// program's own output avoids the words the e2e tests look for in Genie's diagnostics.
#include <signal.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "nccl_check.cuh"

enum class Scenario { CountsDisagree, Hang, DeadPeer, Killed };
static Scenario g_scenario;
static const int kOddRank = 2;  // the rank that misbehaves (hang, dead peer)

static void rank_main(int rank, int n, const ncclUniqueId& id) {
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  ncclComm_t comm;
  CHECK_NCCL(ncclCommInitRank(&comm, n, id, rank));
  const size_t count = 1024;
  float* d;
  CHECK_CUDA(cudaMalloc(&d, 2 * count * sizeof(float)));
  std::vector<float> h(2 * count, 1.0f);
  CHECK_CUDA(cudaMemcpy(d, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));

  // A first, well-formed AllReduce: everyone is connected and healthy.
  CHECK_NCCL(ncclAllReduce(d, d, count, ncclFloat, ncclSum, comm, s));
  sync_nccl_stream(comm, s, rank);
  CHECK_CUDA(cudaMemcpy(h.data(), d, count * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (size_t i = 0; i < count; ++i) bad += h[i] != float(n);
  expect_eq(rank, "first AllReduce: elements differing", 0, bad);

  ncclResult_t want = ncclRemoteError;
  double limit_s = 6;
  size_t my_count = count;
  switch (g_scenario) {
    case Scenario::CountsDisagree:
      want = ncclInvalidUsage;
      limit_s = 30;
      if (rank == 1) my_count = 2 * count;
      break;
    case Scenario::Hang:
      if (rank == kOddRank) {
        note(rank, "skipping the second AllReduce: sleeping 8 s, then exiting");
        std::this_thread::sleep_for(std::chrono::seconds(8));
        return;  // exits 0 without touching the communicator again
      }
      break;
    case Scenario::DeadPeer:
      limit_s = 10;
      if (rank == kOddRank) {
        note(rank, "exiting with status 9 before the second AllReduce");
        std::fflush(stdout);
        _exit(9);
      }
      break;
    case Scenario::Killed:
      limit_s = 10;
      if (rank == kOddRank) {
        // The stream is held by a host function that never returns, so this rank's part of the AllReduce cannot
        // finish before the kill (otherwise the peers might complete it, and rightly report success).
        note(rank, "issuing the second AllReduce behind a blocked host function, then SIGKILL");
        CHECK_CUDA(cudaLaunchHostFunc(s, [](void*) { for (;;) std::this_thread::sleep_for(std::chrono::hours(1)); },
                                      nullptr));
        CHECK_NCCL(ncclAllReduce(d, d, count, ncclFloat, ncclSum, comm, s));
        raise(SIGKILL);
      }
      break;
  }

  note(rank, "second AllReduce with count %zu", my_count);
  const ncclResult_t call = ncclAllReduce(d, d, my_count, ncclFloat, ncclSum, comm, s);
  expect_eq(rank, std::string("second AllReduce call returns ncclSuccess or ") + nccl_result_name(want), 1,
            call == ncclSuccess || call == want);
  double waited = 0;
  // Poll a little past the limit so that a late error is reported as late rather than as absent.
  const ncclResult_t async = poll_async_error(comm, s, limit_s + 5, &waited, false);
  note(rank, "ncclCommGetAsyncError -> %s after %.2f s", nccl_result_name(async), waited);
  expect_result(rank, "asynchronous error of the second AllReduce", want, async);
  expect_eq(rank, "asynchronous error arrived within " + std::to_string(int(limit_s)) + " s", 1, waited <= limit_s);
  // Whichever thread found the error, ncclGetLastError tells the application why (not printed: this program's
  // output stays clear of the diagnostics the tests look for).
  const char* why = ncclGetLastError(comm);
  expect_eq(rank, "ncclGetLastError after the error is a message", 1, why != nullptr && std::strlen(why) > 10);
  expect_result(rank, "ncclCommAbort after the error", ncclSuccess, ncclCommAbort(comm));
}

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "";
  if (std::strcmp(what, "mismatch") == 0)
    g_scenario = Scenario::CountsDisagree;
  else if (std::strcmp(what, "hang") == 0)
    g_scenario = Scenario::Hang;
  else if (std::strcmp(what, "deadpeer") == 0)
    g_scenario = Scenario::DeadPeer;
  else if (std::strcmp(what, "killed") == 0)
    g_scenario = Scenario::Killed;
  else {
    std::fprintf(stderr, "usage: %s mismatch|hang|deadpeer|killed [nranks=3] [env]\n", argv[0]);
    return 2;
  }
  if (argc > 3 && std::strcmp(argv[3], "env") == 0) return finish_ranks("faults", run_env(rank_main));
  const int nranks = argc > 2 ? std::atoi(argv[2]) : 3;
  if (nranks < kOddRank + 1 || nranks > 64) {
    std::fprintf(stderr, "nranks must be %d..64\n", kOddRank + 1);
    return 2;
  }
  std::vector<int> want_rc(nranks, 0);
  if (g_scenario == Scenario::DeadPeer) want_rc[kOddRank] = 9;
  if (g_scenario == Scenario::Killed) want_rc[kOddRank] = 128 + SIGKILL;
  return finish_ranks("faults", run_procs(nranks, rank_main, want_rc, 120, 30));
}
