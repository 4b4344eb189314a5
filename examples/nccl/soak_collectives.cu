// SPDX-License-Identifier: Apache-2.0
// Soak: `calls` small all-reduces on one communicator (virtual mode), with the resident set sampled at every tenth of
// the run. Fails if it grows by more than `bound_mib` from the 10% sample to the last, or if any sampled result is
// wrong. Under `genie run` (env mode) rank 0 also samples its parent, the coordinator, and prints its growth (the
// coordinator keeps a bounded number of records for the report by design; see docs/BENCHMARKS.md).
// Usage: soak_collectives proc|threads|devices|env nranks calls bound_mib [count=4] [sync_every=100] [coord_bound_mib]
// coord_bound_mib: under genie run, also fail if the coordinator grows by more than this from the 10% sample on.
#include <cstdlib>
#include <string>
#include <vector>

#include "nccl_check.cuh"
#include "rss_sampler.cuh"

static long long g_calls = 0;
static double g_bound_mib = 0;
static size_t g_count = 4;
static long long g_sync_every = 100;
static double g_coord_bound_mib = -1;  // < 0: the coordinator's growth is printed, not checked

static void body(Ranks& ranks, int n) {
  struct Bufs {
    float* send = nullptr;
    float* recv = nullptr;
  };
  std::vector<Bufs> bufs(ranks.size());
  for (size_t l = 0; l < ranks.size(); ++l) {
    CHECK_CUDA(cudaSetDevice(ranks[l].device));
    CHECK_CUDA(cudaMalloc(&bufs[l].send, g_count * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&bufs[l].recv, g_count * sizeof(float)));
    std::vector<float> h(g_count, float(ranks[l].rank + 1));
    CHECK_CUDA(cudaMemcpy(bufs[l].send, h.data(), g_count * sizeof(float), cudaMemcpyHostToDevice));
  }
  const float want = float(n) * float(n + 1) / 2;  // sum of rank + 1 over the ranks
  const int first = ranks[0].rank;
  RssSamples rss;
  rss.name = "collectives";
  rss.who = rank_prefix(first);
  rss.total = g_calls;
  // Under genie run the parent process hosts the coordinator: rank 0 watches it too.
  if (first == 0 && comm_of(getppid()) == "genie") rss.watch_pid = getppid();
  long long bad = 0, checked = 0;
  for (long long i = 1; i <= g_calls; ++i) {
    ungrouped(ranks, [&](RankCtx& c) {
      const size_t l = size_t(&c - ranks.data());
      CHECK_NCCL(ncclAllReduce(bufs[l].send, bufs[l].recv, g_count, ncclFloat, ncclSum, c.comm, c.stream));
    });
    const bool sample = rss.due(i);
    if (sample || (g_sync_every > 0 && i % g_sync_every == 0)) sync_all(ranks);
    if (!sample) continue;
    // The result of the latest call, then cleared so that the next tenth must write it again.
    for (size_t l = 0; l < ranks.size(); ++l) {
      std::vector<float> h(g_count, -1.0f);
      CHECK_CUDA(cudaSetDevice(ranks[l].device));
      CHECK_CUDA(cudaMemcpy(h.data(), bufs[l].recv, g_count * sizeof(float), cudaMemcpyDeviceToHost));
      for (float v : h) bad += v != want;
      checked += (long long)g_count;
      CHECK_CUDA(cudaMemsetAsync(bufs[l].recv, 0, g_count * sizeof(float), ranks[l].stream));
    }
    rss.take(i);
  }
  sync_all(ranks);
  expect_eq(first, "sampled AllReduce results differing from the sum over ranks (" + std::to_string(checked) +
                       " elements checked)", 0, bad);
  expect_eq(first, "RSS samples taken", 10, (long long)rss.mib.size());
  std::printf("%ssoak collectives calls %lld rss_growth_mib %.1f (bound %.1f)", rss.who.c_str(), g_calls, rss.growth(),
              g_bound_mib);
  if (rss.watch_pid > 0) std::printf(" coordinator_growth_mib %.1f", rss.watch_growth());
  std::printf("\n");
  expect_eq(first, "RSS growth from the 10% sample to the last within " + std::to_string(int(g_bound_mib)) + " MiB", 1,
            rss.growth() <= g_bound_mib);
  if (first == 0 && g_coord_bound_mib >= 0) {
    expect_eq(first, "the coordinator (parent: genie run) was sampled", 1, rss.watch_pid > 0);
    expect_eq(first, "coordinator RSS growth from the 10% sample to the last within " +
                         std::to_string(int(g_coord_bound_mib)) + " MiB", 1,
              rss.watch_pid > 0 && rss.watch_growth() <= g_coord_bound_mib);
  }
  for (size_t l = 0; l < ranks.size(); ++l) {
    CHECK_CUDA(cudaSetDevice(ranks[l].device));
    CHECK_CUDA(cudaFree(bufs[l].send));
    CHECK_CUDA(cudaFree(bufs[l].recv));
  }
}

int main(int argc, char** argv) {
  Mode mode = Mode::Devices;
  if (argc < 5 || !parse_mode(argv[1], &mode)) {
    std::fprintf(stderr,
                 "usage: %s proc|threads|devices|env nranks calls bound_mib [count=4] [sync_every=100] "
                 "[coord_bound_mib]\n",
                 argv[0]);
    return 2;
  }
  const int nranks = std::atoi(argv[2]);
  g_calls = std::atoll(argv[3]);
  g_bound_mib = std::atof(argv[4]);
  if (argc > 5) g_count = size_t(std::atoll(argv[5]));
  if (argc > 6) g_sync_every = std::atoll(argv[6]);
  if (argc > 7) g_coord_bound_mib = std::atof(argv[7]);
  if (nranks < 1 || nranks > 1024 || g_calls < 10 || g_bound_mib <= 0 || g_count < 1 || g_sync_every < 0) {
    std::fprintf(stderr, "nranks 1..1024, calls >= 10, bound_mib > 0, count >= 1, sync_every >= 0\n");
    return 2;
  }
  return finish_ranks("soak_collectives", run_ranks(nranks, mode, body));
}
