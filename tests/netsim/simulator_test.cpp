// SPDX-License-Identifier: Apache-2.0
// Tests of Simulator: DAG release order, contention between collectives, per-op times and link usage.
#include "genie/netsim/simulator.hpp"

#include <gtest/gtest.h>

namespace genie::netsim {
namespace {

std::shared_ptr<const Schedule> ring_all_reduce(const Topology& t, uint64_t bytes, std::vector<int> gpus) {
  CollectiveSpec spec;
  spec.count = bytes / 4;
  spec.nranks = static_cast<int>(gpus.size());
  spec.rank_to_gpu = std::move(gpus);
  Tuning tune;
  tune.nchannels = 2;
  return std::make_shared<const Schedule>(build_schedule(spec, t, tune).value());
}

TEST(Simulator, TwoCollectivesOnTheSameLinksContend) {
  // System: hgx-h100, two 1 GiB ring all-reduces on the same 8 GPUs, submitted together.
  // Expectation (flow engine): each takes ~2x as long as alone, because every NVLink carries both.
  // Expectation (analytical engine): congestion-unaware, each takes the same time as alone.
  auto topo = load_topology("hgx-h100", {}).value();
  auto s = ring_all_reduce(*topo, 1ull << 30, {0, 1, 2, 3, 4, 5, 6, 7});
  for (EngineKind e : {EngineKind::kFlow, EngineKind::kAnalytical}) {
    SimulatorOptions o;
    o.engine = e;
    Simulator alone(topo, o);
    const int h = alone.submit(s, SimTime::zero()).value();
    ASSERT_TRUE(alone.run().is_ok());
    const double t_alone = alone.timing(h).duration().to_seconds();
    Simulator both(topo, o);
    const int a = both.submit(s, SimTime::zero()).value();
    const int b = both.submit(s, SimTime::zero()).value();
    ASSERT_TRUE(both.run().is_ok());
    const double ratio = e == EngineKind::kFlow ? 2.0 : 1.0;
    EXPECT_NEAR(both.timing(a).duration().to_seconds() / t_alone, ratio, 0.02) << engine_name(e);
    EXPECT_NEAR(both.timing(b).duration().to_seconds() / t_alone, ratio, 0.02) << engine_name(e);
  }
}

TEST(Simulator, DisjointCollectivesDoNotContend) {
  // System: two 4-GPU all-reduces on disjoint GPU sets of one NVSwitch server (non-blocking crossbar).
  // Expectation: each takes the same time as alone.
  auto topo = load_topology("hgx-h100", {}).value();
  auto s1 = ring_all_reduce(*topo, 1ull << 28, {0, 1, 2, 3});
  auto s2 = ring_all_reduce(*topo, 1ull << 28, {4, 5, 6, 7});
  Simulator alone(topo, {});
  const int h = alone.submit(s1, SimTime::zero()).value();
  ASSERT_TRUE(alone.run().is_ok());
  Simulator both(topo, {});
  const int a = both.submit(s1, SimTime::zero()).value();
  const int b = both.submit(s2, SimTime::us(10)).value();
  ASSERT_TRUE(both.run().is_ok());
  EXPECT_EQ(both.timing(a).duration(), alone.timing(h).duration());
  EXPECT_EQ(both.timing(b).duration(), alone.timing(h).duration());
  EXPECT_EQ(both.timing(b).start, SimTime::us(10));
}

TEST(Simulator, OpsStartAfterTheirDependenciesAndUsageIsRecorded) {
  auto topo = load_topology("hgx-h100", {}).value();
  auto s = ring_all_reduce(*topo, 1 << 24, {0, 1, 2, 3, 4, 5, 6, 7});
  SimulatorOptions o;
  o.record_link_usage = true;
  Simulator sim(topo, o);
  const int h = sim.submit(s, SimTime::zero()).value();
  ASSERT_TRUE(sim.run().is_ok());
  const CollectiveTiming& t = sim.timing(h);
  for (size_t i = 0; i < s->ops.size(); ++i) {
    EXPECT_LE(t.ops[i].start, t.ops[i].end);
    for (uint32_t d : s->deps_of(i)) EXPECT_LE(t.ops[d].end, t.ops[i].start);
  }
  ASSERT_FALSE(sim.link_usage().empty());
  for (const auto& u : sim.link_usage()) {
    EXPECT_LE(u.bytes_per_s, topo->channel_link(u.channel).bw_bytes_per_s * (1 + 1e-9));
  }
}

TEST(Simulator, IncrementalRunUntilMatchesOneRun) {
  // System: hgx-h100, collective A (1 GiB ring, 8 GPUs) at t=0 and B (same) at t=1 ms, flow engine.
  // One simulator gets both up front and runs to the end; the other is driven as the coordinator drives
  // it: run_until() in small windows, B submitted only once the clock has reached its start.
  // Expectation: identical start/end times for both; the finish callback fires once per collective, in
  // end order, and never for a collective still running at the window's limit.
  auto topo = load_topology("hgx-h100", {}).value();
  auto s = ring_all_reduce(*topo, 1ull << 30, {0, 1, 2, 3, 4, 5, 6, 7});
  Simulator ref(topo, {});
  const int ra = ref.submit(s, SimTime::zero()).value();
  const int rb = ref.submit(s, SimTime::ms(1)).value();
  ASSERT_TRUE(ref.run().is_ok());

  Simulator inc(topo, {});
  std::vector<std::pair<int, SimTime>> finished;
  inc.set_finish_callback([&](int h, SimTime end) { finished.emplace_back(h, end); });
  const int a = inc.submit(s, SimTime::zero()).value();
  ASSERT_TRUE(inc.run_until(SimTime::us(999)).is_ok());
  EXPECT_LE(inc.now(), SimTime::us(999));
  EXPECT_TRUE(finished.empty());
  const int b = inc.submit(s, SimTime::ms(1)).value();
  SimTime limit = SimTime::ms(1);
  while (finished.size() < 2) {
    ASSERT_TRUE(inc.run_until(limit).is_ok());
    for (const auto& f : finished) EXPECT_LE(f.second, limit);
    limit += SimTime::us(250);
    ASSERT_LT(limit, SimTime::ms(100)) << "never finished";
  }
  EXPECT_EQ(inc.timing(a).end, ref.timing(ra).end);
  EXPECT_EQ(inc.timing(b).end, ref.timing(rb).end);
  ASSERT_EQ(finished.size(), 2u);
  EXPECT_EQ(finished[0].first, a);
  EXPECT_EQ(finished[0].second, ref.timing(ra).end);
  EXPECT_FALSE(inc.next_event_time().has_value());
}

TEST(Simulator, ReleasedHandlesAreReusedAndMemoryStaysFlat) {
  // 1000 small collectives one after another, each released when it finishes: the simulator hands out
  // the same handle again and again.
  auto topo = load_topology("hgx-h100", {}).value();
  auto s = ring_all_reduce(*topo, 1 << 20, {0, 1, 2, 3});
  Simulator sim(topo, {});
  std::vector<int> done;
  sim.set_finish_callback([&](int h, SimTime) { done.push_back(h); });
  SimTime t = SimTime::zero();
  int max_handle = -1;
  for (int i = 0; i < 1000; ++i) {
    const int h = sim.submit(s, t).value();
    max_handle = std::max(max_handle, h);
    ASSERT_TRUE(sim.run_until(SimTime::max()).is_ok());
    ASSERT_TRUE(sim.finished(h));
    t = sim.timing(h).end;
    ASSERT_TRUE(sim.release(h).is_ok());
    EXPECT_FALSE(sim.release(h).is_ok());
  }
  EXPECT_EQ(done.size(), 1000u);
  EXPECT_EQ(max_handle, 0);
}

TEST(Simulator, StepLatencyOverlapsTheSendersPreviousStep) {
  // System: 4 GPUs in a ring (explicit graph), links of 0.5 us except GPU3 -> GPU0 (10 us), ring
  // all-reduce of 0 bytes without protocol costs: 6 steps, op (p, s) waits for the data of (p-1, s-1) and,
  // in issue order, for the same position's step s-1 (Step::issue_dep) -- whose end bounds its data phase
  // but not its latency, which overlaps (NCCL's NCCL_STEPS slots let a sender run ahead).
  // Expectation: end(p, s) = max(end(p-1, s-1) + lat(p), end(p, s-1)); the slowest block crosses the slow
  // link twice: 2 x 10 + 4 x 0.5 = 22 us (strict FIFO order would make it about 6 x 10 us).
  const char* graph =
      R"({"nodes": [{"name": "g0", "kind": "gpu", "server": 0}, {"name": "g1", "kind": "gpu", "server": 0},
      {"name": "g2", "kind": "gpu", "server": 0}, {"name": "g3", "kind": "gpu", "server": 0}],
    "links": [{"a": "g0", "b": "g1", "bw_gbytes_per_s": 50, "latency_ns": 500},
      {"a": "g1", "b": "g2", "bw_gbytes_per_s": 50, "latency_ns": 500},
      {"a": "g2", "b": "g3", "bw_gbytes_per_s": 50, "latency_ns": 500},
      {"a": "g3", "b": "g0", "bw_gbytes_per_s": 50, "latency_ns": 10000}], "gpus_forward": true})";
  auto topo = parse_topology_json(graph, "slow-link.json", {}).value();
  CollectiveSpec spec;
  spec.count = 0;
  spec.nranks = 4;
  Tuning tune;
  tune.nchannels = 1;
  for (ScheduleForm f : {ScheduleForm::kExplicit, ScheduleForm::kCompact}) {
    for (EngineKind e : {EngineKind::kAnalytical, EngineKind::kFlow}) {
      SimulatorOptions o;
      o.engine = e;
      o.protocol_overheads = false;
      const Schedule s = build_schedule(spec, *topo, tune, f).value();
      EXPECT_EQ(simulate_schedule(topo, s, o).value().duration(), SimTime::ns(2 * 10000 + 4 * 500)) << engine_name(e);
    }
  }
}

TEST(Simulator, LocalCopiesAndReductionsCostHbmTime) {
  // System: hgx-h100 (HBM 3.35 TB/s per GPU; large copies reach 4254.1/4800 of peak, elementwise reductions
  // 4346.7/4800, measured on an H200: tests/data/calibration/h200/membound.csv). Rank 0 copies 1 GiB, then
  // reduces 1 GiB into a buffer (two reads, one write), then sends 1 MiB to rank 1.
  // Expectation: the copy takes 2 x 2^30 B / (3.35e12 x 4254.1/4800) B/s, the reduction 3 x 2^30 B /
  // (3.35e12 x 4346.7/4800) B/s, and the transfer starts when the reduction ends. Both engines alike. On
  // ring:4 (no HBM data) the local ops are free and the transfer starts at 0.
  auto h100 = load_topology("hgx-h100", {}).value();
  auto ring4 = load_topology("ring:4", {}).value();
  Schedule s;
  s.spec.nranks = 2;
  s.spec.rank_to_gpu = {0, 1};
  s.ops.resize(3);
  s.ops[0].kind = Step::Kind::kCopy;
  s.ops[0].bytes = 1ull << 30;
  s.ops[1].kind = Step::Kind::kReduce;
  s.ops[1].bytes = 1ull << 30;
  s.deps = {0, 1};
  s.ops[1].dep_begin = 0;
  s.ops[1].dep_count = 1;
  s.ops[2].src = 0;
  s.ops[2].dst = 1;
  s.ops[2].bytes = 1 << 20;
  s.ops[2].dep_begin = 1;
  s.ops[2].dep_count = 1;
  const double copy_s = 2.0 * (1ull << 30) / (3.35e12 * 4254.1 / 4800.0);
  const double reduce_s = 3.0 * (1ull << 30) / (3.35e12 * 4346.7 / 4800.0);
  constexpr double kRoundingS = 2e-9;  // each op's end is rounded up to a whole ns
  for (EngineKind e : {EngineKind::kAnalytical, EngineKind::kFlow}) {
    SimulatorOptions o;
    o.engine = e;
    const CollectiveTiming t = simulate_schedule(h100, s, o).value();
    EXPECT_NEAR(t.ops[0].end.to_seconds(), copy_s, kRoundingS) << engine_name(e);
    EXPECT_NEAR((t.ops[1].end - t.ops[1].start).to_seconds(), reduce_s, kRoundingS) << engine_name(e);
    EXPECT_EQ(t.ops[2].start, t.ops[1].end);
    EXPECT_GT(t.ops[2].end, t.ops[2].start);
    const CollectiveTiming free = simulate_schedule(ring4, s, o).value();
    EXPECT_EQ(free.ops[1].end, SimTime::zero());
    EXPECT_EQ(free.ops[2].start, SimTime::zero());
  }
}

TEST(Simulator, RejectsPlacementOffTheTopology) {
  auto topo = load_topology("hgx-h100", {}).value();
  auto big = load_topology("hgx-h100", TopologyOptions{2, 0, "rail", 1.0}).value();
  auto s = ring_all_reduce(*big, 1024, {0, 15});  // GPU 15 exists only on the 2-server topology
  Simulator sim(topo, {});
  auto r = sim.submit(s, SimTime::zero());
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("GPU 15"), std::string::npos);
}

TEST(Simulator, NoCollectiveEndsBeforeItsDurationLowerBoundWhateverSharesItsLinks) {
  // System: 4 hgx-h100 servers (32 GPUs), NCCL's own choices (plan_collective: compact ring and tree forms,
  // LL/LL128/Simple by size), 8 calls of different collectives, sizes and GPU sets submitted at staggered times, so
  // that they share NVLinks and NICs, under the flow engine.
  // Expectation: each call's duration is at least duration_lower_bound of its schedule, which is positive and no more
  // than its duration alone; for a latency-bound call (4 KiB) the bound is more than half of that, so it is of use.
  auto topo = load_topology("hgx-h100", TopologyOptions{4, 0, "rail", 1.0}).value();
  struct Call {
    Collective c;
    uint64_t bytes;
    std::vector<int> gpus;
    int64_t start_us;
  };
  std::vector<int> all(32), evens, firsts;
  for (int i = 0; i < 32; ++i) {
    all[static_cast<size_t>(i)] = i;
    if (i % 2 == 0) evens.push_back(i);
    if (i % 8 < 2) firsts.push_back(i);
  }
  const std::vector<Call> calls = {{Collective::kAllReduce, 4096, all, 0},
                                   {Collective::kAllReduce, 64ull << 20, all, 0},
                                   {Collective::kAllGather, 16ull << 20, evens, 3},
                                   {Collective::kReduceScatter, 8ull << 20, all, 7},
                                   {Collective::kAllToAll, 4ull << 20, firsts, 1},
                                   {Collective::kBroadcast, 32ull << 20, evens, 20},
                                   {Collective::kAllReduce, 1ull << 20, firsts, 2},
                                   {Collective::kAllReduce, 256ull << 20, evens, 5}};
  Simulator sim(topo, {});
  std::vector<std::pair<int, SimTime>> handles;  // (handle, lower bound)
  for (const auto& k : calls) {
    CollectiveSpec spec;
    spec.collective = k.c;
    spec.count = k.bytes / 4;
    spec.nranks = static_cast<int>(k.gpus.size());
    spec.rank_to_gpu = k.gpus;
    auto s = std::make_shared<const Schedule>(plan_collective(spec, *topo, NcclEnv{}).value());
    const SimTime lb = duration_lower_bound(topo, *s).value();
    const SimTime alone = simulate_schedule(topo, *s, {}).value().duration();
    EXPECT_GT(lb, SimTime::zero()) << k.bytes;
    EXPECT_LE(lb, alone) << k.bytes;
    if (k.bytes == 4096) {
      EXPECT_GT(lb.count_ns() * 2, alone.count_ns());
    }
    handles.emplace_back(sim.submit(s, SimTime::us(k.start_us)).value(), lb);
  }
  ASSERT_TRUE(sim.run().is_ok());
  for (size_t i = 0; i < handles.size(); ++i) {
    const auto& t = sim.timing(handles[i].first);
    EXPECT_GE(t.duration(), handles[i].second) << "call " << i;
  }
}

}  // namespace
}  // namespace genie::netsim
