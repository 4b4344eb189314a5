// SPDX-License-Identifier: Apache-2.0
// Tests of the `genie sim` sweep: sizes, counts, busbw factors and the exact nccl-tests table format.
#include "genie/netsim/sweep.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace genie::netsim {
namespace {

TEST(Sweep, ParsesSizes) {
  EXPECT_EQ(parse_size("1K").value(), 1024u);
  EXPECT_EQ(parse_size("8G").value(), 8ull << 30);
  EXPECT_EQ(parse_size("512").value(), 512u);
  EXPECT_FALSE(parse_size("12Q").is_ok());
  EXPECT_FALSE(parse_size("abc").is_ok());
}

TEST(Sweep, FloatFormattingMatchesNcclTests) {
  // getFloatStr: %.2f while it fits, then %.1f, %.0f, %.1e.
  EXPECT_EQ(nccl_tests_float(36.22, 7), "  36.22");
  EXPECT_EQ(nccl_tests_float(40848.8, 7), "40848.8");
  EXPECT_EQ(nccl_tests_float(5206.02, 7), "5206.02");
  EXPECT_EQ(nccl_tests_float(0.001, 6), "  0.00");
  EXPECT_EQ(nccl_tests_float(479.16, 6), "479.16");
}

TEST(Sweep, BusBandwidthFactors) {
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kAllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::kBroadcast, 8), 1.0);
}

TEST(Sweep, TableHasNcclTestsShape) {
  // 1K..8K x2 all_reduce on hgx-h100: 4 rows; algbw = size/time; busbw = algbw x 2(n-1)/n.
  SweepOptions o;
  o.collective = Collective::kAllReduce;
  o.min_bytes = 1024;
  o.max_bytes = 8192;
  o.step_factor = 2;
  SweepResult r = run_sweep(o).value();
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_EQ(r.nranks, 8);
  for (const auto& row : r.rows) {
    EXPECT_NEAR(row.algbw_gbps, row.size_bytes / 1e3 / row.time_us, 1e-9);
    EXPECT_NEAR(row.busbw_gbps, row.algbw_gbps * 1.75, 1e-9);
  }
  const std::string out = format_nccl_tests(o, r);
  EXPECT_NE(out.find("#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   "
                     "algbw   busbw  #wrong \n"),
            std::string::npos);
  EXPECT_NE(out.find("# Collective test starting: all_reduce_perf\n"), std::string::npos);
  EXPECT_NE(out.find("        1024           256     float     sum      -1"), std::string::npos) << out;
  EXPECT_NE(out.find("# Avg bus bandwidth    : "), std::string::npos);
}

TEST(Sweep, PerRankCountsForAllGatherAndRooted) {
  // all_gather prints count = per-rank elements and size = count x 4 x n; broadcast prints root 0 and
  // redop none.
  SweepOptions o;
  o.collective = Collective::kAllGather;
  o.min_bytes = o.max_bytes = 1 << 20;
  SweepResult r = run_sweep(o).value();
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].count, (1u << 20) / 4 / 8);
  EXPECT_EQ(r.rows[0].size_bytes, 1u << 20);
  o.collective = Collective::kBroadcast;
  const std::string out = format_nccl_tests(o, run_sweep(o).value());
  EXPECT_NE(out.find("     float    none       0"), std::string::npos) << out;
}

TEST(Sweep, EveryCollectiveRunsOnEveryEngine) {
  for (Collective c : {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
                       Collective::kAllToAll, Collective::kBroadcast, Collective::kReduce, Collective::kGather,
                       Collective::kScatter, Collective::kSendRecv}) {
    for (EngineKind e : {EngineKind::kAnalytical, EngineKind::kFlow}) {
      SweepOptions o;
      o.collective = c;
      o.engine = e;
      o.min_bytes = 1024;
      o.max_bytes = 64 << 20;
      o.step_factor = 64;
      auto r = run_sweep(o);
      ASSERT_TRUE(r.is_ok()) << collective_name(c) << ": " << r.status().to_string();
      for (const auto& row : r->rows) EXPECT_GT(row.time_us, 0) << collective_name(c);
    }
  }
}

TEST(Sweep, MultiNodeIsBoundByNicBandwidth) {
  // 2 x hgx-h100, 8 x 400 Gb/s NICs per server (400 GB/s per server and direction), 1 GiB all-reduce S.
  // Ring (NCCL_ALGO=Ring): every byte crosses the ring's server boundary 2(n-1)/n times:
  //   t_ring >= 2(n-1)/n x S / 400 GB/s, and with channels spread over all 8 rails it stays close to it.
  // Any algorithm (default picks NVLSTree): each server must receive the other's reduced data at least
  //   once: t >= S / 400 GB/s. One server (NVLink only) is faster than two.
  SweepOptions one;
  one.min_bytes = one.max_bytes = 1ull << 30;
  SweepOptions two = one;
  two.topology_options.nodes = 2;
  const double s_bytes = static_cast<double>(1ull << 30);
  const double t1 = run_sweep(one).value().rows[0].time_us;
  const SweepResult r2 = run_sweep(two).value();
  EXPECT_EQ(r2.nranks, 16);
  const double t2 = r2.rows[0].time_us;
  EXPECT_GT(t2, s_bytes / 400e9 * 1e6);
  EXPECT_GT(t2, t1);
  SweepOptions ring = two;
  ring.env.algo = "Ring";
  const double t_ring = run_sweep(ring).value().rows[0].time_us;
  const double ring_bound_us = 2.0 * 15 / 16 * s_bytes / 400e9 * 1e6;
  EXPECT_GT(t_ring, ring_bound_us);
  EXPECT_LT(t_ring, 1.5 * ring_bound_us);
}

TEST(Sweep, BadInputIsAnError) {
  // `genie sim` input errors, with the exact message the CLI prints after "genie sim: ".
  SweepOptions o;
  o.topology = "no-such-preset";
  EXPECT_EQ(run_sweep(o).status().message(),
            "unknown topology 'no-such-preset' (presets: dgx-a100, hgx-b200, hgx-h100, hgx-h200, ring:N, torus2d:XxY, "
            "torus3d:XxYxZ; or a .json/.yaml file)");
  o = {};
  o.min_bytes = 100;
  o.max_bytes = 10;
  EXPECT_EQ(run_sweep(o).status().message(), "min bytes (-b 100) exceeds max bytes (-e 10)");
  o = {};
  o.step_factor = 1;
  o.step_bytes = 0;
  EXPECT_EQ(run_sweep(o).status().message(), "step factor must be > 1 or step bytes > 0");
  o = {};
  o.env.algo = "Bogus";
  EXPECT_EQ(
      run_sweep(o).status().message(),
      "NCCL_ALGO=\"Bogus\": unknown value 'Bogus' (valid: Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, "
      "PAT, Direct, HalvingDoubling)");
  o = {};
  o.collective = Collective::kBroadcast;
  o.root = 8;
  EXPECT_EQ(run_sweep(o).status().message(), "root 8 is not a rank of a 8-rank communicator");
  EXPECT_EQ(parse_size("12Q").status().message(), "bad size suffix in '12Q' (expected K, M, G or T)");
  EXPECT_EQ(parse_size("abc").status().message(), "bad size 'abc' (expected e.g. 1K, 8M, 8G)");
}

}  // namespace
}  // namespace genie::netsim
