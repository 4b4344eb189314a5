// SPDX-License-Identifier: Apache-2.0
// Tests of AnalyticalModel through the Simulator: ring all-reduce closed form and congestion-unawareness.
#include "models/analytical_model.hpp"

#include <gtest/gtest.h>

#include "genie/netsim/simulator.hpp"

namespace genie::netsim {
namespace {

constexpr int64_t kStepRoundingTolNs = 100;  // one rounding per step, 2(n-1) steps

std::shared_ptr<const Topology> switch_topology(int n, double bw_gbps, int64_t latency_ns) {
  // ASTRA-sim notation: one Switch dimension; each NPU-switch link gets half the latency, so a path has
  // `latency_ns`.
  const std::string yaml = "topology: [ Switch ]\nnpus_count: [ " + std::to_string(n) + " ]\nbandwidth: [ " +
                           std::to_string(bw_gbps) + " ]\nlatency: [ " + std::to_string(latency_ns) + " ]\n";
  return parse_astra_yaml(yaml, "test.yaml").value();
}

TEST(AnalyticalModel, RingAllReduceMatchesClosedForm) {
  // System: n ranks on a switch, link bandwidth B, path latency alpha; ring all-reduce of S bytes, one
  // channel, one slice, no protocol overheads. Expectation: T = 2(n-1) (alpha + S / (n B)).
  for (int n : {2, 4, 8, 16}) {
    const double bw = 50e9;
    const int64_t alpha = 1000;
    auto topo = switch_topology(n, 50, alpha);
    CollectiveSpec spec;
    spec.count = uint64_t{1} << 26;  // 256 MiB of float
    spec.nranks = n;
    Tuning tune;
    tune.algorithm = Algorithm::kRing;
    tune.protocol = Protocol::kSimple;
    tune.nchannels = 1;
    tune.chunk_bytes = 0;
    Schedule s = build_schedule(spec, *topo, tune).value();
    SimulatorOptions o;
    o.engine = EngineKind::kAnalytical;
    o.protocol_overheads = false;
    const CollectiveTiming t = simulate_schedule(topo, s, o).value();
    const double bytes = static_cast<double>(spec.count * 4);
    const double expected_ns = 2.0 * (n - 1) * (alpha + bytes / (n * bw) * 1e9);
    EXPECT_NEAR(static_cast<double>(t.duration().count_ns()), expected_ns, kStepRoundingTolNs) << "n=" << n;
  }
}

TEST(AnalyticalModel, IgnoresContentionButFlowDoesNot) {
  // System: 4 ranks on a switch, alltoall of S per peer: each uplink carries 3 flows. Expectation: the flow
  // engine takes ~3x the analytical time (analytical divides only by the channel count).
  auto topo = switch_topology(4, 10, 0);
  CollectiveSpec spec;
  spec.collective = Collective::kAllToAll;
  spec.count = 1 << 24;
  spec.nranks = 4;
  Tuning tune;
  tune.algorithm = Algorithm::kDirect;
  tune.nchannels = 1;
  Schedule s = build_schedule(spec, *topo, tune).value();
  SimulatorOptions o;
  o.protocol_overheads = false;
  o.engine = EngineKind::kAnalytical;
  const double ta = simulate_schedule(topo, s, o).value().duration().to_seconds();
  o.engine = EngineKind::kFlow;
  const double tf = simulate_schedule(topo, s, o).value().duration().to_seconds();
  EXPECT_NEAR(tf / ta, 3.0, 0.01);
}

}  // namespace
}  // namespace genie::netsim
