// SPDX-License-Identifier: Apache-2.0
// Tests of the port of NCCL's tuning model (closed forms of tuning.cc for given shapes), of selection of
// PAT and CollNet as NCCL does, and the cross-check of simulated times against NCCL's own predictions on
// shapes without real measurements here (multi-node rings, trees, NVLSTree, PAT, CollNet).
#include <gtest/gtest.h>

#include <cstdio>

#include "algorithms/nccl_tuning.hpp"
#include "genie/netsim/simulator.hpp"

namespace genie::netsim {
namespace {

std::shared_ptr<const Topology> cluster(const char* preset, int nodes, int gpus_per_node = 0) {
  TopologyOptions o;
  o.nodes = nodes;
  o.gpus_per_node = gpus_per_node;
  return load_topology(preset, o).value();
}

CollectiveSpec coll(Collective c, uint64_t total_bytes, int n) {
  CollectiveSpec s;
  s.collective = c;
  s.nranks = n;
  const bool per_rank = c == Collective::kAllGather || c == Collective::kReduceScatter;
  s.count = total_bytes / 4 / (per_rank ? static_cast<uint64_t>(n) : 1);
  return s;
}

const nccl::ModelEntry* entry(const std::vector<nccl::ModelEntry>& t, Algorithm a, Protocol p) {
  for (const auto& e : t)
    if (e.algo == a && e.proto == p) return &e;
  return nullptr;
}

constexpr double kUs = 1e-9;  // float noise on microsecond figures

TEST(NcclTuningModel, MultiNodeRingLatencyCountsNetworkStepsOnly) {
  // NCCL tuning.cc on 4 x hgx-h100 (32 ranks, 8 per node, Intel hosts), ring all-reduce LL:
  // 2(n-1) = 62 steps of which 2(nNodes-1) = 6 cross the network. Intra steps cost max(NVLink LL 0.6 us,
  // net overhead 1 us) = 1 us, network steps hwLat[NET][Ring][LL] = 2.7 us; base 6.6 us:
  // lat = 6.6 + 56 x 1 + 6 x 2.7 = 78.8 us. Bandwidth: min(llMaxBw[Intel][>2 nodes] = 20.4,
  // 0.5 x min(370.8 NVLink, 8 x 50 NIC)) x 32/62 GB/s.
  auto t = cluster("hgx-h100", 4);
  auto table = nccl::tuning_table(coll(Collective::kAllReduce, 1 << 20, 32), *t, {}).value();
  const auto* e = entry(table, Algorithm::kRing, Protocol::kLL);
  ASSERT_NE(e, nullptr);
  EXPECT_NEAR(e->lat_us, 6.6 + 56 * 1.0 + 6 * 2.7, kUs);
  EXPECT_NEAR(e->bw_gbps, 20.4 * 32.0 / 62.0, kUs);
  // Simple: intra steps max(3.4, 3 x 1 us) = 3.4, network 14 us, x 1.4 (ring plateau, >= 64 B per channel
  // and rank): (8.4 + 56 x 3.4 + 6 x 14) x 1.4.
  const auto* s = entry(table, Algorithm::kRing, Protocol::kSimple);
  ASSERT_NE(s, nullptr);
  EXPECT_NEAR(s->lat_us, (8.4 + 56 * 3.4 + 6 * 14.0) * 1.4, kUs);
  // Tree LL: 2 x ((ppn-1) x NVLink Tree LL 0.6 + log2(4) x NET Tree LL 5.0) + base 6.8.
  const auto* tr = entry(table, Algorithm::kTree, Protocol::kLL);
  ASSERT_NE(tr, nullptr);
  EXPECT_NEAR(tr->lat_us, 6.8 + 2 * (7 * 0.6 + 2 * 5.0), kUs);
}

TEST(NcclTuningModel, PatIsChosenForOneGpuPerNodeAtSmallSizes) {
  // 16 nodes x 1 GPU (hgx-h100 NICs): PAT (AG/RS only, Simple, one GPU per node) costs
  // 8 + log2(16) x 14/3.5 + 16 x 2.8 = 68.8 us and 0.75 x 50 GB/s; the ring pays 15 network steps (Simple
  // 8.4 + 15 x 14 us) at 50 x 16/15 GB/s. Expectation: PAT for a 1 MiB all-gather, the ring for 1 GiB;
  // NCCL_PAT_ENABLE=0 removes PAT; with 2 GPUs per node PAT needs NCCL_PAT_ENABLE=1; a reduce-scatter
  // with avg never uses PAT (NCCL: PreMulSum/SumPostDiv unsupported).
  auto t = cluster("hgx-h100", 16, 1);
  auto table = nccl::tuning_table(coll(Collective::kAllGather, 1 << 20, 16), *t, {}).value();
  const auto* pat = entry(table, Algorithm::kPat, Protocol::kSimple);
  ASSERT_NE(pat, nullptr);
  EXPECT_NEAR(pat->lat_us, 8.0 + 4 * 14.0 / 3.5 + 16 * 2.8, kUs);
  EXPECT_NEAR(pat->bw_gbps, 0.75 * 50.0, kUs);
  EXPECT_EQ(select_tuning(coll(Collective::kAllGather, 1 << 20, 16), *t, {}).value().algorithm, Algorithm::kPat);
  EXPECT_EQ(select_tuning(coll(Collective::kReduceScatter, 1 << 20, 16), *t, {}).value().algorithm, Algorithm::kPat);
  EXPECT_EQ(select_tuning(coll(Collective::kAllGather, 1ull << 30, 16), *t, {}).value().algorithm, Algorithm::kRing);
  NcclEnv off;
  off.pat_enable = 0;
  EXPECT_EQ(select_tuning(coll(Collective::kAllGather, 1 << 20, 16), *t, off).value().algorithm, Algorithm::kRing);
  CollectiveSpec avg = coll(Collective::kReduceScatter, 1 << 20, 16);
  avg.redop = RedOp::kAvg;
  EXPECT_EQ(select_tuning(avg, *t, {}).value().algorithm, Algorithm::kRing);
  auto t2 = cluster("hgx-h100", 8, 2);
  EXPECT_NE(select_tuning(coll(Collective::kAllGather, 1 << 20, 16), *t2, {}).value().algorithm, Algorithm::kPat);
  NcclEnv on;
  on.pat_enable = 1;
  on.algo = "PAT";
  EXPECT_EQ(select_tuning(coll(Collective::kAllGather, 1 << 20, 16), *t2, on).value().algorithm, Algorithm::kPat);
}

TEST(NcclTuningModel, CollNetNeedsTheFabricAndNcclCollNetEnable) {
  // CollNet (in-network reduction) is used as NCCL does: only with NCCL_COLLNET_ENABLE=1, on a fabric that
  // declares it, across 2 or more nodes. On 4 x dgx-a100 (SHARP declared, no NVLS) it then wins the middle
  // sizes: CollNetDirect's latency is 2 x (min(1, ppn-1) x NVLink 3.7 + (ppn-1) x 0.4) + NET 31 = 44 us,
  // far below the ring's 62 steps; its bandwidth is NVLink x 0.5 (no GPU/NIC penalty with 8 NICs).
  // On hgx-h100 the multi-node NVLS (CollNet+NVLS) wins instead.
  auto a100 = cluster("dgx-a100", 4);
  ASSERT_TRUE(a100->collnet);
  const CollectiveSpec mid = coll(Collective::kAllReduce, 1 << 24, 32);
  EXPECT_NE(select_tuning(mid, *a100, {}).value().algorithm, Algorithm::kCollNetDirect);
  NcclEnv on;
  on.collnet_enable = 1;
  auto table = nccl::tuning_table(mid, *a100, on).value();
  const auto* d = entry(table, Algorithm::kCollNetDirect, Protocol::kSimple);
  ASSERT_NE(d, nullptr);
  EXPECT_NEAR(d->lat_us, 2 * (3.7 + 7 * 0.4) + 31.0, kUs);
  EXPECT_NEAR(d->bw_gbps, 240.0 * 0.5, kUs);
  EXPECT_EQ(select_tuning(mid, *a100, on).value().algorithm, Algorithm::kCollNetDirect);
  EXPECT_EQ(select_tuning(mid, *cluster("hgx-h100", 4), on).value().algorithm, Algorithm::kNvls);
  // Asked for by NCCL_ALGO without NCCL_COLLNET_ENABLE: nothing can run, as with NCCL.
  NcclEnv chain;
  chain.algo = "CollNetChain";
  auto r = select_tuning(mid, *a100, chain);
  EXPECT_EQ(
      r.status().message(),
      "no enabled algorithm/protocol can run all_reduce on dgx-a100 (NCCL_ALGO=\"CollNetChain\", NCCL_PROTO=\"\")");
  // One node: below NCCL_COLLNET_NODE_THRESHOLD (2).
  EXPECT_NE(select_tuning(coll(Collective::kAllReduce, 1 << 24, 8), *cluster("dgx-a100", 1), on).value().algorithm,
            Algorithm::kCollNetDirect);
}

TEST(NcclTuningModel, AllGatherSizesAreTotals) {
  // NCCL sizes all-gather and reduce-scatter by nRanks x count (ncclFuncMaxSendRecvCount): 8 ranks x 16 KiB
  // = 128 KiB, so the channel reduction keeps as many channels as an all-reduce of 128 KiB.
  auto t = load_topology("hgx-h100", {}).value();
  NcclEnv ring;
  ring.algo = "Ring";
  const Tuning ag = select_tuning(coll(Collective::kAllGather, 128 << 10, 8), *t, ring).value();
  const Tuning ar = select_tuning(coll(Collective::kAllReduce, 128 << 10, 8), *t, ring).value();
  EXPECT_EQ(ag.nchannels, ar.nchannels);
}

/// Simulated time over NCCL's predicted time of the selected (or NCCL_ALGO-forced) algorithm.
double sim_over_model(const std::shared_ptr<const Topology>& t, Collective c, uint64_t bytes, const char* algo,
                      int collnet = -1) {
  NcclEnv env;
  env.algo = algo;
  env.collnet_enable = collnet;
  auto s = plan_collective(coll(c, bytes, t->num_gpus()), *t, env, ScheduleForm::kCompact);
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  if (!s.is_ok()) return 0;
  auto tm = simulate_schedule(t, s.value(), {});
  EXPECT_TRUE(tm.is_ok());
  return tm.is_ok() ? tm.value().duration().to_us() / s.value().tuning.predicted_us : 0;
}

TEST(NcclTuningModel, SimulationAgreesWithNcclsOwnPredictions) {
  // No real multi-node measurements exist here; NCCL's tuning model is the reference these mechanisms are
  // checked against (rail fabrics of hgx-h100 / dgx-a100 servers, flow engine). The two agree within
  // kAgreement where they model the same thing: bandwidth-bound rings and trees, PAT, NVLSTree, CollNet at
  // large sizes, and latency-bound rings, trees, PAT and CollNet at small sizes. Known departures, not
  // asserted (docs/netsim.md): LL trees of 16-64 KB (chunks stored and forwarded at every hop, where LL
  // forwards each line: up to 2x NCCL), medium NVLS/NVLSTree sizes (pipeline fill, up to 2x).
  constexpr double kAgreement = 0.25;
  auto h2 = cluster("hgx-h100", 2);
  auto h4 = cluster("hgx-h100", 4);
  auto h16 = cluster("hgx-h100", 16);
  auto a4 = cluster("dgx-a100", 4);
  auto pat16 = cluster("hgx-h100", 16, 1);
  struct Case {
    std::shared_ptr<const Topology> t;
    Collective c;
    uint64_t bytes;
    const char* algo;
    int collnet;
  };
  const Case cases[] = {
      {h4, Collective::kAllReduce, 1 << 10, "Ring", -1},
      {h4, Collective::kAllReduce, 1 << 20, "Ring", -1},
      {h4, Collective::kAllReduce, 1ull << 28, "Ring", -1},
      {h16, Collective::kAllReduce, 1ull << 28, "Ring", -1},
      {a4, Collective::kAllReduce, 1ull << 28, "Ring", -1},
      {h4, Collective::kAllReduce, 1 << 10, "Tree", -1},
      {h4, Collective::kAllReduce, 1 << 20, "Tree", -1},
      {h4, Collective::kAllReduce, 1ull << 28, "Tree", -1},
      {h16, Collective::kAllReduce, 1ull << 28, "NVLSTree", -1},
      {h4, Collective::kAllReduce, 1ull << 30, "NVLSTree", -1},
      {pat16, Collective::kAllGather, 1 << 16, "PAT", -1},
      {pat16, Collective::kReduceScatter, 1 << 20, "PAT", -1},
      {h4, Collective::kAllReduce, 1 << 16, "CollNetDirect", 1},
      {h2, Collective::kAllReduce, 1ull << 28, "CollNetDirect", 1},
      {h4, Collective::kAllReduce, 1 << 10, "CollNetChain", 1},
      {h4, Collective::kAllReduce, 1ull << 28, "CollNetChain", 1},
      {h4, Collective::kAllGather, 1ull << 28, "Ring", -1},
      {pat16, Collective::kAllGather, 1ull << 28, "Ring", -1},
  };
  for (const Case& k : cases) {
    const double r = sim_over_model(k.t, k.c, k.bytes, k.algo, k.collnet);
    std::printf("%5d GPUs  %-14s %12llu B  %-13s simulated / NCCL model = %.2f\n", k.t->num_gpus(),
                collective_name(k.c), static_cast<unsigned long long>(k.bytes), k.algo, r);
    EXPECT_NEAR(r, 1.0, kAgreement) << k.t->num_gpus() << " GPUs, " << collective_name(k.c) << " " << k.bytes << " B, "
                                    << k.algo;
  }
}

}  // namespace
}  // namespace genie::netsim
