// SPDX-License-Identifier: Apache-2.0
// Tests of compact (circulant) Schedules: their expansion is exactly the explicit DAG, and the closed forms
// (steps, bytes per rank) hold on the compact form at sizes the explicit form cannot reach.
#include <gtest/gtest.h>

#include "genie/netsim/schedule.hpp"
#include "genie/netsim/topology.hpp"

namespace genie::netsim {
namespace {

Result<Schedule> build_form(const Topology& t, Collective c, Algorithm a, uint64_t count, int n, int nch, Protocol p,
                            uint64_t chunk, ScheduleForm form) {
  CollectiveSpec spec;
  spec.collective = c;
  spec.count = count;
  spec.nranks = n;
  Tuning tune;
  tune.algorithm = a;
  tune.protocol = p;
  tune.nchannels = nch;
  tune.chunk_bytes = chunk;
  return build_schedule(spec, t, tune, form);
}

void expect_same_dag(const Schedule& a, const Schedule& b) {
  ASSERT_EQ(a.ops.size(), b.ops.size());
  ASSERT_EQ(a.deps.size(), b.deps.size());
  for (size_t i = 0; i < a.ops.size(); ++i) {
    const Step& x = a.ops[i];
    const Step& y = b.ops[i];
    ASSERT_EQ(x.kind, y.kind) << i;
    ASSERT_EQ(x.src, y.src) << i;
    ASSERT_EQ(x.dst, y.dst) << i;
    ASSERT_EQ(x.bytes, y.bytes) << i;
    ASSERT_EQ(x.channel, y.channel) << i;
    ASSERT_EQ(x.step, y.step) << i;
    ASSERT_EQ(x.slice, y.slice) << i;
    ASSERT_EQ(x.reduce, y.reduce) << i;
    ASSERT_EQ(x.fused, y.fused) << i;
    const auto dx = a.deps_of(i), dy = b.deps_of(i);
    ASSERT_EQ(std::vector<uint32_t>(dx.begin(), dx.end()), std::vector<uint32_t>(dy.begin(), dy.end())) << i;
  }
  EXPECT_EQ(a.base_latency_ns, b.base_latency_ns);
}

TEST(CompactSchedule, ExpansionEqualsTheExplicitDag) {
  // For every circulant algorithm and collective, on one server and on rail-aligned multi-server rings,
  // with pipeline slices and counts that do not divide evenly (so blocks differ by a byte): the compact
  // form expands to exactly the explicit DAG (same ops in the same order, same dependency lists).
  auto h100 = load_topology("hgx-h100", {}).value();
  TopologyOptions four;
  four.nodes = 4;
  auto multi = load_topology("hgx-h100", four).value();
  struct Case {
    const Topology* t;
    Collective c;
    Algorithm a;
    uint64_t count;
    int n, nch;
    Protocol p;
    uint64_t chunk;
  };
  const Case cases[] = {
      {h100.get(), Collective::kAllReduce, Algorithm::kRing, 3 * 1024 * 1024 + 7, 8, 4, Protocol::kSimple, 1 << 19},
      {h100.get(), Collective::kAllReduce, Algorithm::kRing, 1000, 5, 2, Protocol::kLL, 0},
      {h100.get(), Collective::kAllGather, Algorithm::kRing, 4097, 8, 3, Protocol::kLL128, 1 << 16},
      {h100.get(), Collective::kReduceScatter, Algorithm::kRing, 12345, 6, 2, Protocol::kSimple, 1 << 12},
      {multi.get(), Collective::kAllReduce, Algorithm::kRing, 1 << 22, 32, 8, Protocol::kSimple, 1 << 18},
      {multi.get(), Collective::kAllGather, Algorithm::kRing, 999, 32, 2, Protocol::kSimple, 0},
      {h100.get(), Collective::kAllToAll, Algorithm::kDirect, 1001, 8, 4, Protocol::kSimple, 0},
      {h100.get(), Collective::kSendRecv, Algorithm::kDirect, 77, 8, 1, Protocol::kSimple, 0},
      {h100.get(), Collective::kAllReduce, Algorithm::kDirect, 1003, 8, 2, Protocol::kSimple, 0},
      {h100.get(), Collective::kReduceScatter, Algorithm::kDirect, 100, 7, 2, Protocol::kSimple, 0},
      {h100.get(), Collective::kAllGather, Algorithm::kDirect, 100, 7, 2, Protocol::kSimple, 0},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(std::string(collective_name(k.c)) + "/" + algorithm_name(k.a) + " n=" + std::to_string(k.n));
    auto ex = build_form(*k.t, k.c, k.a, k.count, k.n, k.nch, k.p, k.chunk, ScheduleForm::kExplicit);
    auto co = build_form(*k.t, k.c, k.a, k.count, k.n, k.nch, k.p, k.chunk, ScheduleForm::kCompact);
    ASSERT_TRUE(ex.is_ok()) << ex.status().to_string();
    ASSERT_TRUE(co.is_ok()) << co.status().to_string();
    EXPECT_FALSE(ex.value().is_compact());
    ASSERT_TRUE(co.value().is_compact());
    EXPECT_TRUE(co.value().ops.empty());
    EXPECT_EQ(co.value().num_ops(), ex.value().ops.size());
    EXPECT_EQ(co.value().num_steps(), ex.value().num_steps());
    for (int r = 0; r < k.n; ++r) EXPECT_EQ(co.value().bytes_sent_by(r), ex.value().bytes_sent_by(r)) << "rank " << r;
    expect_same_dag(expand_schedule(co.value()), ex.value());
  }
}

TEST(CompactSchedule, RootedCollectivesStayExplicit) {
  // Broadcast and reduce chains start at a root, gather/scatter converge on one: not circulant, so the
  // compact request returns the explicit DAG.
  auto t = load_topology("hgx-h100", {}).value();
  for (Collective c : {Collective::kBroadcast, Collective::kReduce}) {
    auto s = build_form(*t, c, Algorithm::kRing, 4096, 8, 2, Protocol::kSimple, 0, ScheduleForm::kCompact);
    ASSERT_TRUE(s.is_ok());
    EXPECT_FALSE(s.value().is_compact());
    EXPECT_FALSE(s.value().ops.empty());
  }
  auto g =
      build_form(*t, Collective::kGather, Algorithm::kDirect, 4096, 8, 2, Protocol::kSimple, 0, ScheduleForm::kCompact);
  ASSERT_TRUE(g.is_ok());
  EXPECT_FALSE(g.value().is_compact());
}

TEST(CompactSchedule, FlatRingClosedFormsAt16384Ranks) {
  // Ring all-reduce of S = 1 GiB on n = 16384 ranks (2048 servers of 8 on a rail-optimized fat-tree), one
  // channel and one slice: 2(n-1) steps, each rank sends 2(n-1)/n x S, 2(n-1) x n transfers in all. The
  // compact form holds one op per step (ranks implicit), so it exists where the explicit DAG (537 M ops)
  // would not fit in memory.
  TopologyOptions o;
  o.nodes = 2048;
  auto t = load_topology("hgx-h100", o).value();
  const int n = 16384;
  const uint64_t size = uint64_t{1} << 30;
  auto s = build_form(*t, Collective::kAllReduce, Algorithm::kRing, size / 4, n, 1, Protocol::kSimple, 0,
                      ScheduleForm::kCompact);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  const Schedule& sc = s.value();
  ASSERT_TRUE(sc.is_compact());
  EXPECT_EQ(sc.compact->ops.size(), static_cast<size_t>(2 * (n - 1)));
  EXPECT_EQ(sc.num_ops(), static_cast<size_t>(2 * (n - 1)) * n);
  EXPECT_EQ(sc.num_steps(), static_cast<uint32_t>(2 * (n - 1)));
  for (int r : {0, 1, 7, 8, n / 2, n - 1}) EXPECT_EQ(sc.bytes_sent_by(r), 2 * (n - 1) * (size / n)) << r;
}

}  // namespace
}  // namespace genie::netsim
