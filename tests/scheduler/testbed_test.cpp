// SPDX-License-Identifier: Apache-2.0
// Testbed: burst sizing, rate parsing, the topology it writes (loaded back by netsim), the environment of a
// rank on a testbed host, and the dilated realtime clock.
#include "genie/sched/testbed.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <thread>

#include "genie/netsim/schedule.hpp"
#include "genie/netsim/simulator.hpp"
#include "genie/netsim/topology.hpp"
#include "genie/sched/clock.hpp"
#include "genie/sched/launcher.hpp"

namespace genie::sched {
namespace {

TEST(Testbed, BurstIsTheLargerOf64KiBAndOneMillisecondAtTheRate) {
  // DESIGN.md: burst = max(64 KiB, rate x 1 ms). 1 Gbit/s x 1 ms = 125000 B; 100 Mbit/s x 1 ms < 64 KiB.
  EXPECT_EQ(tbf_burst_bytes(1e9), 125000u);
  EXPECT_EQ(tbf_burst_bytes(10e9), 1250000u);
  EXPECT_EQ(tbf_burst_bytes(100e6), 65536u);
}

TEST(Testbed, ParsesRatesAndRejectsNonsense) {
  EXPECT_DOUBLE_EQ(*parse_rate("1gbit"), 1e9);
  EXPECT_DOUBLE_EQ(*parse_rate("2.5G"), 2.5e9);
  EXPECT_DOUBLE_EQ(*parse_rate("500mbit"), 5e8);
  EXPECT_DOUBLE_EQ(*parse_rate("1e9"), 1e9);
  auto bad = parse_rate("fast");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("--link 'fast' is not a rate"), std::string::npos);
  EXPECT_FALSE(parse_rate("1kbit").is_ok());  // below 1 Mbit/s
}

TEST(Testbed, TopologyIsTheMeasuredNetworkAndNetsimTimesARingOnIt) {
  // System: 4 hosts, each NIC on one switch at the measured 0.956 Gbit/s goodput, 20 us one-way latency.
  // Expectation: a 16 MiB ring all-gather moves 3/4 of 16 MiB over each NIC link: about 3/4 x 16 MiB /
  // (0.956e9 / 8) = 105 ms, within 5% (per-step latencies and pipeline fill).
  Testbed tb;
  tb.name = "tt";
  tb.hosts = 4;
  tb.link_bits_per_s = 1e9;
  tb.measured_goodput_bits_per_s = 0.956e9;
  tb.measured_latency_us = 20;
  auto topo = netsim::parse_topology_json(testbed_topology_json(tb), "tt.json", {});
  ASSERT_TRUE(topo.is_ok()) << topo.status().message();
  EXPECT_EQ((*topo)->num_servers, 4);
  EXPECT_EQ((*topo)->num_gpus(), 32);
  netsim::CollectiveSpec spec;
  spec.collective = netsim::Collective::kAllGather;
  spec.count = (16u << 20) / 4 / 4;
  spec.nranks = 4;
  spec.rank_to_gpu = {0, 8, 16, 24};
  netsim::Tuning t;
  t.algorithm = netsim::Algorithm::kRing;
  t.nchannels = 2;
  t.chunk_bytes = 512 * 1024;
  auto sched = netsim::build_schedule(spec, **topo, t);
  ASSERT_TRUE(sched.is_ok()) << sched.status().message();
  auto timing = netsim::simulate_schedule(*topo, *sched, {});
  ASSERT_TRUE(timing.is_ok()) << timing.status().message();
  const double want_s = 0.75 * (16 << 20) / (0.956e9 / 8);
  EXPECT_NEAR(timing->duration().count_ns() / 1e9, want_s, 0.05 * want_s);
}

TEST(Testbed, TheLinkRateIsTheSlowestRingStreamWhenMeasuredElseTheOneStreamElseTbf) {
  // The net links of the topology carry, in order of preference: the ring measurement (every host streaming
  // to the next at once), the single h0 -> h1 stream, TBF's configured rate.
  Testbed tb;
  tb.name = "tr";
  tb.hosts = 3;
  tb.link_bits_per_s = 1e9;
  auto net_gbytes = [&] {
    auto j = nlohmann::json::parse(testbed_topology_json(tb));
    std::vector<double> bw;
    for (const auto& l : j.at("links"))
      if (l.at("class") == "net") bw.push_back(l.at("bw_gbytes_per_s").get<double>());
    EXPECT_EQ(bw.size(), 3u);
    return bw.empty() ? 0.0 : bw[0];
  };
  EXPECT_DOUBLE_EQ(net_gbytes(), 1e9 / 8 / 1e9);
  tb.measured_goodput_bits_per_s = 0.95e9;
  EXPECT_DOUBLE_EQ(net_gbytes(), 0.95e9 / 8 / 1e9);
  tb.measured_ring_goodput_bits_per_s = 0.8e9;
  EXPECT_DOUBLE_EQ(net_gbytes(), 0.8e9 / 8 / 1e9);
}

TEST(Testbed, RanksOnTestbedHostsGetTheHostsAddressesAndPlacement) {
  LaunchSpec spec;
  spec.nranks = 5;
  spec.hosts = {{"/run/netns/g-h0", "g-h0", "10.9.0.1"}, {"/run/netns/g-h1", "g-h1", "10.9.0.2"}};
  auto places = place_ranks(5, 0, 8);
  ASSERT_TRUE(places.is_ok());
  auto env = rank_environment(spec, (*places)[3], 3, 1234);  // rank 3 -> host 1, second rank there
  EXPECT_EQ(env["GENIE_NODE"], "g-h1");
  EXPECT_EQ(env["GENIE_SHIM_BOOTSTRAP_ADDR"], "10.9.0.2");
  EXPECT_EQ(env["MASTER_ADDR"], "10.9.0.1");
  EXPECT_EQ(env["LOCAL_RANK"], "1");
  EXPECT_EQ(env["LOCAL_WORLD_SIZE"], "2");  // ranks 1 and 3
  EXPECT_EQ(env["GROUP_RANK"], "1");
  auto env0 = rank_environment(spec, (*places)[4], 4, 1234);  // host 0 holds ranks 0, 2, 4
  EXPECT_EQ(env0["LOCAL_WORLD_SIZE"], "3");
}

TEST(DilatedClock, MeasuredTimeReadsDTimesShorterAndSleepsLastDTimesLonger) {
  // System: realtime clock with dilation 10. Expectation: sleep_until(now + 2 ms) takes >= 20 ms of wall
  // time; 20 ms of wall time reads as about 2 ms on the clock.
  ClockOptions o;
  o.mode = ClockMode::kRealtime;
  o.dilation = 10;
  Clock c(o);
  const auto w0 = std::chrono::steady_clock::now();
  const SimTime t0 = c.wall_now();
  c.sleep_until(t0 + SimTime::ms(2));
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - w0).count();
  const double clock_ms = (c.wall_now() - t0).count_ns() / 1e6;
  EXPECT_GE(wall_ms, 20.0);
  EXPECT_GE(clock_ms, 2.0);
  EXPECT_NEAR(clock_ms, wall_ms / 10, 0.5);
}

}  // namespace
}  // namespace genie::sched
