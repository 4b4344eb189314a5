// SPDX-License-Identifier: Apache-2.0
// Example: every kind of NCCL transfer on buffers of many GB, one process per rank (genie run -n N). On Genie with
// GENIE_DATA=none (genie run --data none, docs/timing-only.md) they keep their modelled times but move no bytes, so
// the buffers cost the host nothing; control data (a few KiB) still moves, and is checked.
// Compiled against Genie's NCCL 2.32 header (one-sided put and signal).
//
// timing_only_nccl <big MiB> [max peak RSS MiB, 0: unchecked]
// Prints each big transfer's event-timed duration ("op <name>: <ms> ms") and the rank's peak resident set.
#include <fstream>
#include <string>
#include <vector>

#include "nccl_check.cuh"

namespace {

size_t g_big = 0;
double g_max_rss_mib = 0;

double peak_rss_mib() {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return -1;
}

int value_of(int rank, size_t i) { return rank * 100000 + static_cast<int>(i % 9973); }

template <class F>
void timed(int rank, ncclComm_t comm, cudaStream_t s, const char* name, F body) {
  const float ms = event_timed_ms(s, [&] { body(); });
  sync_nccl_stream(comm, s, rank);
  note(rank, "op %s: %.6f ms", name, ms);
}

// Control data (16 KiB and less): all-reduce, send/recv, all-to-all and a put with signal, values checked.
void small_transfers(int rank, int n, ncclComm_t comm, cudaStream_t s) {
  const size_t count = 4096;  // 16 KiB of int32
  int *a, *b;
  CHECK_CUDA(cudaMalloc(&a, count * sizeof(int) * n));
  CHECK_CUDA(cudaMalloc(&b, count * sizeof(int) * n));
  std::vector<int> h(count * n), got(count * n);
  for (size_t i = 0; i < h.size(); ++i) h[i] = value_of(rank, i);
  CHECK_CUDA(cudaMemcpy(a, h.data(), count * sizeof(int) * n, cudaMemcpyHostToDevice));
  CHECK_NCCL(ncclAllReduce(a, b, count, ncclInt32, ncclSum, comm, s));
  sync_nccl_stream(comm, s, rank);
  CHECK_CUDA(cudaMemcpy(got.data(), b, count * sizeof(int), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (size_t i = 0; i < count; ++i) {
    long long want = 0;
    for (int r = 0; r < n; ++r) want += value_of(r, i);
    bad += got[i] != want;
  }
  expect_eq(rank, "16 KiB AllReduce: elements wrong", 0, bad);
  const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  CHECK_NCCL(ncclGroupStart());
  CHECK_NCCL(ncclSend(a, count, ncclInt32, next, comm, s));
  CHECK_NCCL(ncclRecv(b, count, ncclInt32, prev, comm, s));
  CHECK_NCCL(ncclGroupEnd());
  sync_nccl_stream(comm, s, rank);
  CHECK_CUDA(cudaMemcpy(got.data(), b, count * sizeof(int), cudaMemcpyDeviceToHost));
  bad = 0;
  for (size_t i = 0; i < count; ++i) bad += got[i] != value_of(prev, i);
  expect_eq(rank, "16 KiB Send/Recv from the previous rank: elements wrong", 0, bad);
  CHECK_NCCL(ncclAlltoAll(a, b, count, ncclInt32, comm, s));
  sync_nccl_stream(comm, s, rank);
  CHECK_CUDA(cudaMemcpy(got.data(), b, count * sizeof(int) * n, cudaMemcpyDeviceToHost));
  bad = 0;
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < count; ++i) bad += got[r * count + i] != value_of(r, rank * count + i);
  expect_eq(rank, "16 KiB AlltoAll blocks: elements wrong", 0, bad);
  ncclWindow_t win;
  CHECK_NCCL(ncclCommWindowRegister(comm, b, count * sizeof(int), &win, NCCL_WIN_DEFAULT));
  CHECK_NCCL(ncclPutSignal(a, count, ncclInt32, next, win, 0, 0, 0, 0, comm, s));
  ncclWaitSignalDesc_t desc = {1, prev, 0, 0};
  CHECK_NCCL(ncclWaitSignal(1, &desc, comm, s));
  sync_nccl_stream(comm, s, rank);
  CHECK_NCCL(ncclCommWindowDeregister(comm, win));  // collective: every rank's puts have landed
  CHECK_CUDA(cudaMemcpy(got.data(), b, count * sizeof(int), cudaMemcpyDeviceToHost));
  bad = 0;
  for (size_t i = 0; i < count; ++i) bad += got[i] != value_of(prev, i);
  expect_eq(rank, "16 KiB PutSignal into the next rank's window: elements wrong", 0, bad);
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
}

void rank_main(int rank, int n, const ncclUniqueId& id) {
  ncclComm_t comm;
  CHECK_NCCL(ncclCommInitRank(&comm, n, id, rank));
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));
  small_transfers(rank, n, comm, s);

  const size_t big = g_big, part = big / n;
  char *sbuf, *rbuf, *wbuf;
  CHECK_CUDA(cudaMalloc(&sbuf, big));
  CHECK_CUDA(cudaMalloc(&rbuf, big));
  CHECK_CUDA(cudaMalloc(&wbuf, big));
  const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  timed(rank, comm, s, "allreduce", [&] { CHECK_NCCL(ncclAllReduce(sbuf, rbuf, big / 2, ncclBfloat16, ncclSum, comm, s)); });
  timed(rank, comm, s, "allgather", [&] { CHECK_NCCL(ncclAllGather(sbuf, rbuf, part, ncclInt8, comm, s)); });
  timed(rank, comm, s, "reducescatter",
        [&] { CHECK_NCCL(ncclReduceScatter(sbuf, rbuf, part / 4, ncclFloat, ncclSum, comm, s)); });
  timed(rank, comm, s, "broadcast", [&] { CHECK_NCCL(ncclBroadcast(sbuf, rbuf, big, ncclInt8, 0, comm, s)); });
  timed(rank, comm, s, "alltoall", [&] { CHECK_NCCL(ncclAlltoAll(sbuf, rbuf, part, ncclInt8, comm, s)); });
  timed(rank, comm, s, "sendrecv", [&] {
    CHECK_NCCL(ncclGroupStart());
    CHECK_NCCL(ncclSend(sbuf, big, ncclInt8, next, comm, s));
    CHECK_NCCL(ncclRecv(rbuf, big, ncclInt8, prev, comm, s));
    CHECK_NCCL(ncclGroupEnd());
  });
  ncclWindow_t win;
  CHECK_NCCL(ncclCommWindowRegister(comm, wbuf, big, &win, NCCL_WIN_DEFAULT));
  timed(rank, comm, s, "putsignal", [&] {
    CHECK_NCCL(ncclPutSignal(sbuf, big, ncclInt8, next, win, 0, 0, 0, 0, comm, s));
    ncclWaitSignalDesc_t desc = {1, prev, 0, 0};
    CHECK_NCCL(ncclWaitSignal(1, &desc, comm, s));
  });
  CHECK_NCCL(ncclCommWindowDeregister(comm, win));
  const double rss = peak_rss_mib();
  note(rank, "peak rss %.1f MiB", rss);
  if (g_max_rss_mib > 0) expect_eq(rank, "peak RSS within the bound", 1, rss > 0 && rss <= g_max_rss_mib);
  CHECK_CUDA(cudaFree(sbuf));
  CHECK_CUDA(cudaFree(rbuf));
  CHECK_CUDA(cudaFree(wbuf));
  CHECK_CUDA(cudaStreamDestroy(s));
  CHECK_NCCL(ncclCommDestroy(comm));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <big MiB> [max peak RSS MiB] (under genie run -n N)\n", argv[0]);
    return 2;
  }
  g_big = size_t(std::atoll(argv[1])) << 20;
  g_max_rss_mib = argc > 2 ? std::atof(argv[2]) : 0;
  return finish_ranks("timing_only_nccl", run_env(rank_main));
}
