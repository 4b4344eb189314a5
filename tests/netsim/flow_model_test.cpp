// SPDX-License-Identifier: Apache-2.0
// Tests of FlowModel driven by SimEngine: sharing, incast, latency phase, agreement with AnalyticalModel.
#include "models/flow_model.hpp"

#include <gtest/gtest.h>

#include <map>

#include "engine/sim_engine.hpp"
#include "models/analytical_model.hpp"

namespace genie::netsim {
namespace {

constexpr double kGBps = 1e9;
constexpr int64_t kRateRoundingTolNs = 2;  // integer-ns rounding of each rate change

/// Star: k hosts each linked to one switch at `bw` with `lat` per link.
Topology star(int k, double bw, int64_t lat) {
  Topology t;
  const int sw = t.add_node(NodeKind::kSwitch, "sw");
  for (int i = 0; i < k; ++i) {
    const int g = t.add_node(NodeKind::kGpu, "g" + std::to_string(i));
    t.add_link(g, sw, bw, lat, LinkClass::kNet);
  }
  return t;
}

/// Runs transfers (src gpu, dst gpu, bytes) starting at t=0 on `model`; returns end time per index.
std::map<uint64_t, SimTime> run(NetworkModel& model, const Topology& t,
                                const std::vector<std::tuple<int, int, double>>& xfers) {
  SimEngine engine;
  engine.add_model(&model);
  std::map<uint64_t, SimTime> ends;
  model.set_completion_callback([&](uint64_t id, SimTime when) { ends[id] = when; });
  std::vector<Route> routes;
  for (const auto& [s, d, b] : xfers) routes.push_back(t.route(t.gpu_node(s), t.gpu_node(d)).value());
  for (size_t i = 0; i < xfers.size(); ++i) {
    TransferRequest req;
    req.channels = routes[i].channels;
    req.wire_bytes = std::get<2>(xfers[i]);
    req.latency = SimTime::ns(routes[i].latency_ns);
    model.start(i, req, SimTime::zero());
  }
  engine.run();
  return ends;
}

TEST(FlowModel, TwoFlowsShareOneBottleneckEqually) {
  // System: g0->g2 and g1->g2 through the switch; g2's downlink (10 GB/s) is the bottleneck.
  // Expectation: each gets 5 GB/s, so 1 GB takes 200 ms after the 2 x 1 us path latency.
  Topology t = star(3, 10 * kGBps, 1000);
  FlowModel m(t, false);
  auto ends = run(m, t, {{0, 2, 1e9}, {1, 2, 1e9}});
  const SimTime expected = SimTime::ns(2000) + SimTime::from_seconds(1e9 / (5 * kGBps));
  EXPECT_NEAR(ends[0].count_ns(), expected.count_ns(), kRateRoundingTolNs);
  EXPECT_NEAR(ends[1].count_ns(), expected.count_ns(), kRateRoundingTolNs);
}

TEST(FlowModel, IncastOfKSendersGetsOneKth) {
  // System: k senders to one receiver, equal sizes. Expectation: each at B/k, all end at lat + k*S/B.
  for (int k : {2, 4, 8}) {
    Topology t = star(k + 1, 10 * kGBps, 500);
    FlowModel m(t, false);
    std::vector<std::tuple<int, int, double>> x;
    for (int i = 0; i < k; ++i) x.emplace_back(i + 1, 0, 1e8);
    auto ends = run(m, t, x);
    const SimTime expected = SimTime::ns(1000) + SimTime::from_seconds(k * 1e8 / (10 * kGBps));
    for (int i = 0; i < k; ++i) EXPECT_NEAR(ends[i].count_ns(), expected.count_ns(), kRateRoundingTolNs) << "k=" << k;
  }
}

TEST(FlowModel, ShortFlowLeavesAndTheOtherSpeedsUp) {
  // System: A (1 GB) and B (0.5 GB) share a 10 GB/s link, no latency. Expectations: both at 5 GB/s until
  // B ends at 100 ms; then A alone at 10 GB/s for its last 0.5 GB: ends at 150 ms.
  Topology t = star(3, 10 * kGBps, 0);
  FlowModel m(t, false);
  auto ends = run(m, t, {{0, 2, 1e9}, {1, 2, 5e8}});
  EXPECT_NEAR(ends[1].count_ns(), SimTime::ms(100).count_ns(), kRateRoundingTolNs);
  EXPECT_NEAR(ends[0].count_ns(), SimTime::ms(150).count_ns(), kRateRoundingTolNs);
}

TEST(FlowModel, LatencyPhaseConsumesNoBandwidth) {
  // System: flow A (no latency link g0) and B starting with a long latency on the same downlink.
  // Build: g0 -sw link latency 0, g1 -sw latency 50 ms; both to g2 (latency 0 on its link).
  // Expectations: A runs alone at 10 GB/s for 50 ms (0.5 GB), then shares at 5 GB/s.
  Topology t;
  const int sw = t.add_node(NodeKind::kSwitch, "sw");
  const int g0 = t.add_node(NodeKind::kGpu, "g0"), g1 = t.add_node(NodeKind::kGpu, "g1"),
            g2 = t.add_node(NodeKind::kGpu, "g2");
  t.add_link(g0, sw, 10 * kGBps, 0, LinkClass::kNet);
  t.add_link(g1, sw, 10 * kGBps, 50'000'000, LinkClass::kNet);
  t.add_link(g2, sw, 10 * kGBps, 0, LinkClass::kNet);
  FlowModel m(t, false);
  auto ends = run(m, t, {{0, 2, 1e9}, {1, 2, 1e9}});
  // A: 0.5 GB alone (50 ms) + 0.5 GB at 5 GB/s (100 ms) = 150 ms. B: 0.5 GB at 5 (100 ms) then 0.5 GB at
  // 10 (50 ms) after A ends: 50 + 100 + 50 = 200 ms.
  EXPECT_NEAR(ends[0].count_ns(), SimTime::ms(150).count_ns(), kRateRoundingTolNs);
  EXPECT_NEAR(ends[1].count_ns(), SimTime::ms(200).count_ns(), kRateRoundingTolNs);
}

TEST(FlowModel, AgreesWithAnalyticalWhenNothingContends) {
  // System: disjoint pairs g0->g1 and g2->g3 on a 4-host star: no shared link. Expectation: the flow and
  // analytical models give exactly the same end times (latency + S/B).
  Topology t = star(4, 25 * kGBps, 700);
  FlowModel f(t, false);
  AnalyticalModel a(t, false);
  const std::vector<std::tuple<int, int, double>> x = {{0, 1, 3e8}, {2, 3, 7e7}};
  auto ef = run(f, t, x);
  auto ea = run(a, t, x);
  for (uint64_t i = 0; i < 2; ++i) EXPECT_NEAR(ef[i].count_ns(), ea[i].count_ns(), kRateRoundingTolNs);
  EXPECT_NEAR(ea[0].count_ns(), (SimTime::ns(1400) + SimTime::from_seconds(3e8 / (25 * kGBps))).count_ns(), 1);
}

TEST(FlowModel, RecordsLinkUsage) {
  Topology t = star(2, 10 * kGBps, 0);
  FlowModel m(t, true);
  run(m, t, {{0, 1, 1e9}});
  ASSERT_FALSE(m.usage().empty());
  for (const auto& u : m.usage()) EXPECT_NEAR(u.bytes_per_s, 10 * kGBps, 1);
}

}  // namespace
}  // namespace genie::netsim
