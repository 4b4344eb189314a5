// SPDX-License-Identifier: Apache-2.0
// Tests of timing compact schedules by symmetry (engine/quotient_plan): the periods found, and equality of
// every op's start and end with the explicit DAG in both engines, alone and under contention.
#include "engine/quotient_plan.hpp"

#include <gtest/gtest.h>

#include "genie/netsim/simulator.hpp"

namespace genie::netsim {
namespace {

struct Built {
  std::shared_ptr<const Schedule> compact;
  std::shared_ptr<const Schedule> expl;
};

Built ring(const Topology& t, Collective c, uint64_t count, int n, int nch, Protocol p, uint64_t chunk = 0,
           std::vector<int> gpus = {}) {
  CollectiveSpec spec;
  spec.collective = c;
  spec.count = count;
  spec.nranks = n;
  spec.rank_to_gpu = std::move(gpus);
  Tuning tune;
  tune.algorithm = Algorithm::kRing;
  tune.protocol = p;
  tune.nchannels = nch;
  tune.chunk_bytes = chunk;
  Built b;
  b.compact = std::make_shared<const Schedule>(build_schedule(spec, t, tune, ScheduleForm::kCompact).value());
  b.expl = std::make_shared<const Schedule>(build_schedule(spec, t, tune, ScheduleForm::kExplicit).value());
  return b;
}

uint32_t period_of(const Topology& t, const Schedule& s, bool flow, bool overheads = true) {
  RouteCache routes(t);
  auto plan = plan_quotient(s, t, flow, overheads, routes);
  EXPECT_TRUE(plan.is_ok()) << plan.status().to_string();
  return plan.is_ok() ? plan.value().period : 0;
}

/// Times both forms alone from t = 0 and compares every op. Returns the symmetry period used.
uint32_t expect_equal_timing(std::shared_ptr<const Topology> t, const Built& b, EngineKind e, bool overheads = true) {
  SimulatorOptions o;
  o.engine = e;
  o.protocol_overheads = overheads;
  auto te = simulate_schedule(t, *b.expl, o);
  auto tc = simulate_schedule(t, *b.compact, o);
  EXPECT_TRUE(te.is_ok() && tc.is_ok());
  if (!te.is_ok() || !tc.is_ok()) return 0;
  const CollectiveTiming& x = te.value();
  const CollectiveTiming& y = tc.value();
  EXPECT_EQ(y.num_ops(), x.ops.size());
  EXPECT_EQ(y.end, x.end) << engine_name(e);
  size_t bad = 0;
  for (size_t i = 0; i < x.ops.size() && bad < 5; ++i) {
    if (y.op(i).start != x.ops[i].start || y.op(i).end != x.ops[i].end) {
      ++bad;
      ADD_FAILURE() << engine_name(e) << " op " << i << ": symmetric [" << y.op(i).start.count_ns() << ", "
                    << y.op(i).end.count_ns() << "] explicit [" << x.ops[i].start.count_ns() << ", "
                    << x.ops[i].end.count_ns() << "]";
    }
  }
  return y.period;
}

TEST(QuotientPlan, OneServerRingHasPeriodOne) {
  // System: hgx-h100 (8 GPUs on one NVSwitch crossbar), ring all-reduce, 32 channels, all in rank order.
  // Every GPU's NVLink up and down link is shared by the 32 channel flows; rotating all positions by one maps
  // GPU g's links onto GPU g+1's. Expectation: period 1 in both engines (one transfer per step and channel).
  auto t = load_topology("hgx-h100", {}).value();
  Built b = ring(*t, Collective::kAllReduce, 1 << 24, 8, 32, Protocol::kSimple, 1 << 19);
  EXPECT_EQ(period_of(*t, *b.compact, true), 1u);
  EXPECT_EQ(period_of(*t, *b.compact, false), 1u);
}

TEST(QuotientPlan, RailRingHasThePeriodOfAServer) {
  // System: 8 hgx-h100 servers on a rail-optimized fat-tree, flat ring (1 channel): 7 NVLink hops and one
  // rail hop per server, every link crossed by one position only (so each becomes a rate bound), and the
  // rail hops between leaves (via a spine) cost the same as within a leaf once NCCL's 14 us NET step
  // latency is charged. Expectation: period 8 (one server). Without protocol costs the transfers' path
  // latencies are what differ, still with period 8 here (all 8 servers share one leaf per rail).
  TopologyOptions o;
  o.nodes = 8;
  auto t = load_topology("hgx-h100", o).value();
  Built b = ring(*t, Collective::kAllReduce, 1 << 26, 64, 1, Protocol::kSimple);
  EXPECT_EQ(period_of(*t, *b.compact, true), 8u);
  EXPECT_EQ(period_of(*t, *b.compact, false), 8u);
  EXPECT_EQ(period_of(*t, *b.compact, true, false), 8u);
}

TEST(QuotientPlan, UnevenBlocksHaveNoSymmetry) {
  // A count that does not divide into n blocks gives some members one byte more, rotating with the step:
  // no rotation maps the schedule onto itself. Expectation: period n (each class is one member).
  auto t = load_topology("hgx-h100", {}).value();
  Built b = ring(*t, Collective::kAllReduce, 1001, 8, 2, Protocol::kSimple);
  EXPECT_EQ(period_of(*t, *b.compact, true), 8u);
}

TEST(QuotientPlan, SymmetricTimingEqualsExplicitOnOneServer) {
  // System: hgx-h100, ring all-reduce / all-gather / reduce-scatter across protocols, channel counts and
  // pipeline slices (NCCL chunking), and a count with uneven blocks. Expectation: every op's start and end
  // equal the explicit DAG's, in both engines.
  auto t = load_topology("hgx-h100", {}).value();
  const Built cases[] = {
      ring(*t, Collective::kAllReduce, 1 << 18, 8, 32, Protocol::kLL, 16384),
      ring(*t, Collective::kAllReduce, 1 << 22, 8, 32, Protocol::kLL128, 1 << 17),
      ring(*t, Collective::kAllReduce, 1 << 24, 8, 32, Protocol::kSimple, 1 << 19),
      ring(*t, Collective::kAllGather, 1 << 20, 8, 16, Protocol::kSimple, 1 << 19),
      ring(*t, Collective::kReduceScatter, 1 << 20, 8, 8, Protocol::kLL128, 1 << 17),
      ring(*t, Collective::kAllReduce, 1001, 8, 2, Protocol::kSimple),
      ring(*t, Collective::kAllReduce, 1 << 20, 5, 4, Protocol::kSimple, 0, {3, 0, 6, 1, 4}),
  };
  for (const Built& b : cases) {
    for (EngineKind e : {EngineKind::kAnalytical, EngineKind::kFlow}) expect_equal_timing(t, b, e);
  }
}

TEST(QuotientPlan, SymmetricTimingEqualsExplicitAcrossServers) {
  // System: hgx-h100 servers on rail (flat ring, 8 and 64 servers, the latter on two leaves per rail so the
  // ring crosses spines; 32-channel ring on 4 servers whose NIC
  // and leaf links are shared by several channels) and on a 2:1 oversubscribed fat-tree with ECMP over
  // the spines. Expectation: equal op times in both engines; the flat rings are timed with one class per
  // server position (period 8).
  TopologyOptions rail8;
  rail8.nodes = 8;
  TopologyOptions rail64;
  rail64.nodes = 64;
  TopologyOptions rail4;
  rail4.nodes = 4;
  TopologyOptions ft;
  ft.nodes = 8;
  ft.fabric = "fat-tree";
  ft.oversubscription = 2;
  auto t8 = load_topology("hgx-h100", rail8).value();
  auto t64 = load_topology("hgx-h100", rail64).value();
  auto t4 = load_topology("hgx-h100", rail4).value();
  auto tf = load_topology("dgx-a100", ft).value();
  for (EngineKind e : {EngineKind::kAnalytical, EngineKind::kFlow}) {
    EXPECT_EQ(expect_equal_timing(t8, ring(*t8, Collective::kAllReduce, 1 << 26, 64, 1, Protocol::kSimple), e), 8u);
    EXPECT_EQ(expect_equal_timing(t64, ring(*t64, Collective::kAllReduce, 1 << 26, 512, 1, Protocol::kSimple), e), 8u);
    expect_equal_timing(t4, ring(*t4, Collective::kAllReduce, 1 << 24, 32, 32, Protocol::kSimple, 1 << 19), e);
    expect_equal_timing(tf, ring(*tf, Collective::kAllReduce, 1 << 24, 64, 16, Protocol::kSimple, 1 << 19), e);
    expect_equal_timing(t8, ring(*t8, Collective::kAllReduce, 1 << 26, 64, 1, Protocol::kSimple), e, false);
  }
}

TEST(QuotientPlan, SymmetricTimingEqualsExplicitForDirectAndPat) {
  // System: hgx-h100, direct all-to-all (every GPU's links carry n-1 flows), sendrecv and ASTRA-sim's direct
  // all-reduce; PAT all-gather / reduce-scatter on 16 servers x 1 GPU (one lane per peer distance, several
  // slices). Expectation: equal op times in both engines.
  auto t = load_topology("hgx-h100", {}).value();
  TopologyOptions o16;
  o16.nodes = 16;
  o16.gpus_per_node = 1;
  auto t16 = load_topology("hgx-h100", o16).value();
  auto direct = [&](Collective c, uint64_t count, Algorithm a = Algorithm::kDirect, int n = 8) {
    const Topology& tt = a == Algorithm::kPat ? *t16 : *t;
    CollectiveSpec spec;
    spec.collective = c;
    spec.count = count;
    spec.nranks = n;
    Tuning tune;
    tune.algorithm = a;
    tune.nchannels = a == Algorithm::kPat ? 2 : 4;
    tune.chunk_bytes = a == Algorithm::kPat ? 65536 : 0;
    Built b;
    b.compact = std::make_shared<const Schedule>(build_schedule(spec, tt, tune, ScheduleForm::kCompact).value());
    b.expl = std::make_shared<const Schedule>(build_schedule(spec, tt, tune).value());
    return b;
  };
  for (EngineKind e : {EngineKind::kAnalytical, EngineKind::kFlow}) {
    EXPECT_EQ(expect_equal_timing(t, direct(Collective::kAllToAll, 1 << 20), e), 1u);
    expect_equal_timing(t, direct(Collective::kSendRecv, 1 << 20), e);
    expect_equal_timing(t, direct(Collective::kAllReduce, 1 << 20), e);
    expect_equal_timing(t16, direct(Collective::kAllGather, 1 << 18, Algorithm::kPat, 16), e);
    expect_equal_timing(t16, direct(Collective::kReduceScatter, 1 << 18, Algorithm::kPat, 12), e);
  }
}

/// Submits `a` at 0 and `b` at `tb` to one flow simulator; returns both timings.
std::pair<CollectiveTiming, CollectiveTiming> run_pair(std::shared_ptr<const Topology> t,
                                                       std::shared_ptr<const Schedule> a,
                                                       std::shared_ptr<const Schedule> b, SimTime tb) {
  Simulator sim(t, {});
  const int ha = sim.submit(a, SimTime::zero()).value();
  const int hb = sim.submit(b, tb).value();
  EXPECT_TRUE(sim.run().is_ok());
  return {sim.timing(ha), sim.timing(hb)};
}

void expect_same_ops(const CollectiveTiming& x, const CollectiveTiming& y) {
  ASSERT_EQ(x.num_ops(), y.num_ops());
  EXPECT_EQ(x.start, y.start);
  EXPECT_EQ(x.end, y.end);
  size_t bad = 0;
  for (size_t i = 0; i < x.num_ops() && bad < 5; ++i) {
    if (x.op(i).start != y.op(i).start || x.op(i).end != y.op(i).end) {
      ++bad;
      ADD_FAILURE() << "op " << i << ": [" << x.op(i).start.count_ns() << ", " << x.op(i).end.count_ns() << "] vs ["
                    << y.op(i).start.count_ns() << ", " << y.op(i).end.count_ns() << "]";
    }
  }
}

TEST(QuotientPlan, ContentionExpandsAndStaysExact) {
  // System: flow engine, hgx-h100. Collective A is a compact 64 MiB ring all-reduce on the 8 GPUs; B is a
  // second all-reduce on the same GPUs, submitted at the same time, or 100 us later (A's classes are then
  // in flight and are split into their members mid-transfer). Expectation: A and B get exactly the times
  // they get when both are explicit; A ends up timed per op (period 0) once B shares its links.
  auto t = load_topology("hgx-h100", {}).value();
  Built a = ring(*t, Collective::kAllReduce, 1 << 24, 8, 4, Protocol::kSimple, 1 << 19);
  Built b = ring(*t, Collective::kAllGather, 1 << 20, 8, 2, Protocol::kSimple, 1 << 19);
  for (SimTime tb : {SimTime::zero(), SimTime::us(100)}) {
    const auto ref = run_pair(t, a.expl, b.expl, tb);
    for (auto bb : {b.expl, b.compact}) {
      const auto got = run_pair(t, a.compact, bb, tb);
      EXPECT_EQ(got.first.period, 0u);
      expect_same_ops(got.first, ref.first);
      expect_same_ops(got.second, ref.second);
    }
  }
}

TEST(QuotientPlan, DisjointCollectivesKeepTheirSymmetry) {
  // System: flow engine, hgx-h100; two compact 4-GPU ring all-reduces on disjoint GPU sets (the crossbar
  // is non-blocking, so they share no link). Expectation: both stay timed by symmetry (period 1) and take
  // exactly as long as each alone.
  auto t = load_topology("hgx-h100", {}).value();
  Built a = ring(*t, Collective::kAllReduce, 1 << 24, 4, 2, Protocol::kSimple, 0, {0, 1, 2, 3});
  Built b = ring(*t, Collective::kAllReduce, 1 << 24, 4, 2, Protocol::kSimple, 0, {4, 5, 6, 7});
  const CollectiveTiming alone = simulate_schedule(t, *a.expl, {}).value();
  const auto got = run_pair(t, a.compact, b.compact, SimTime::us(10));
  EXPECT_EQ(got.first.period, 1u);
  EXPECT_EQ(got.second.period, 1u);
  EXPECT_EQ(got.first.duration(), alone.duration());
  EXPECT_EQ(got.second.duration(), alone.duration());
}

TEST(QuotientPlan, IncrementalRunUntilWithCompactSchedules) {
  // System: flow engine, hgx-h100; compact ring all-reduces A at t=0 and B (same GPUs) at 1 ms, driven as
  // the coordinator drives the simulator (run_until in 200 us windows, B submitted once the clock reached
  // its start). Expectation: the same end times as one explicit run of both.
  auto t = load_topology("hgx-h100", {}).value();
  Built a = ring(*t, Collective::kAllReduce, 1 << 26, 8, 8, Protocol::kSimple, 1 << 19);
  const auto ref = run_pair(t, a.expl, a.expl, SimTime::ms(1));
  Simulator inc(t, {});
  int finished = 0;
  inc.set_finish_callback([&](int, SimTime) { ++finished; });
  const int ha = inc.submit(a.compact, SimTime::zero()).value();
  ASSERT_TRUE(inc.run_until(SimTime::us(999)).is_ok());
  const int hb = inc.submit(a.compact, SimTime::ms(1)).value();
  for (SimTime limit = SimTime::ms(1); finished < 2; limit += SimTime::us(200)) {
    ASSERT_TRUE(inc.run_until(limit).is_ok());
    ASSERT_LT(limit, SimTime::ms(100));
  }
  expect_same_ops(inc.timing(ha), ref.first);
  expect_same_ops(inc.timing(hb), ref.second);
}

TEST(QuotientPlan, RejectsMalformedCompactSchedules) {
  // A hand-built compact schedule whose lane is not chained, or whose order is not a permutation, is
  // refused at submit with the reason.
  auto t = load_topology("hgx-h100", {}).value();
  Built b = ring(*t, Collective::kAllGather, 4096, 4, 1, Protocol::kSimple);
  auto cs = std::make_shared<CompactSchedule>(*b.compact->compact);
  cs->deps.clear();
  for (auto& op : cs->ops) op.dep_begin = op.dep_count = 0;
  Schedule s = *b.compact;
  s.compact = cs;
  Simulator sim(t, {});
  auto r = sim.submit(std::make_shared<const Schedule>(s), SimTime::zero());
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("does not wait for the lane's previous op"), std::string::npos)
      << r.status().message();
  auto cs2 = std::make_shared<CompactSchedule>(*b.compact->compact);
  cs2->orders[0] = {0, 1, 1, 3};
  s.compact = cs2;
  r = sim.submit(std::make_shared<const Schedule>(s), SimTime::zero());
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("is not a permutation"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace genie::netsim
