// SPDX-License-Identifier: Apache-2.0
// CommTiming: rank placement on the modelled cluster and netsim durations.
#include "comm_timing.hpp"

#include <gtest/gtest.h>

namespace genie::shim {
namespace {

std::vector<RankPlace> ranks_on(const std::string& node, int n) {
  std::vector<RankPlace> v;
  for (int i = 0; i < n; ++i) v.push_back({node, i});
  return v;
}

TEST(CommTiming, RanksOfOneHostUseTheirCudaDevicesAsLocalGpus) {
  // System: 4 ranks on host "a" using devices 3, 2, 1, 0 of an HGX H200 (8 GPUs per node).
  // Expectation: rank i sits on GPU (3 - i) of node 0.
  std::vector<RankPlace> r{{"a", 3}, {"a", 2}, {"a", 1}, {"a", 0}};
  auto t = CommTiming::create(r, "h200");
  ASSERT_TRUE(t.is_ok()) << t.status().to_string();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(t.value()->gpu_of(i), 3 - i);
  EXPECT_EQ(t.value()->num_nodes(), 1);
}

TEST(CommTiming, SixteenRanksOnOneHostFormTwoEmulatedNodes) {
  // System: 16 ranks on one host, devices 0..15; a node has 8 GPUs.
  // Expectation: ranks 0-7 on node 0, ranks 8-15 on node 1 (GPU = rank).
  auto t = CommTiming::create(ranks_on("a", 16), "h200");
  ASSERT_TRUE(t.is_ok()) << t.status().to_string();
  for (int i = 0; i < 16; ++i) EXPECT_EQ(t.value()->gpu_of(i), i);
  EXPECT_EQ(t.value()->num_nodes(), 2);
}

TEST(CommTiming, NodeNamesSeparateNodesInOrderOfFirstAppearance) {
  // System: ranks alternate between GENIE_NODE "y" and "x", devices 0,0,1,1.
  // Expectation: "y" (seen first) is node 0, "x" node 1: GPUs 0, 8, 1, 9.
  std::vector<RankPlace> r{{"y", 0}, {"x", 0}, {"y", 1}, {"x", 1}};
  auto t = CommTiming::create(r, "h200");
  ASSERT_TRUE(t.is_ok());
  EXPECT_EQ(t.value()->gpu_of(0), 0);
  EXPECT_EQ(t.value()->gpu_of(1), 8);
  EXPECT_EQ(t.value()->gpu_of(2), 1);
  EXPECT_EQ(t.value()->gpu_of(3), 9);
  EXPECT_EQ(t.value()->num_nodes(), 2);
}

TEST(CommTiming, ConfigChannelBoundsClampTheChannelsNcclsModelPicks) {
  // System: 8 ranks of an HGX H200; a 256 MiB all-reduce (NCCL's model uses many channels) and a 1 KiB one (few).
  // Expectation: maxCTAs = 2 caps the first at 2 channels, minCTAs = 12 raises the second to 12; a
  // sub-communicator takes the options it is made with; a minimum over the maximum wins, as in NCCL.
  auto channels = [](const std::shared_ptr<CommTiming>& t, uint64_t count) {
    auto c = t->collective(netsim::Collective::kAllReduce, count, netsim::DataType::kFloat32, 0);
    EXPECT_TRUE(c.is_ok()) << c.status().to_string();
    return c.is_ok() ? c->tuning.nchannels : -1;
  };
  auto plain = CommTiming::create(ranks_on("a", 8), "h200");
  ASSERT_TRUE(plain.is_ok());
  const int big_default = channels(plain.value(), 64 << 20), small_default = channels(plain.value(), 256);
  ASSERT_GT(big_default, 2);
  ASSERT_LT(small_default, 12);
  auto capped = CommTiming::create(ranks_on("a", 8), "h200", TuningOptions{0, 2, -1});
  ASSERT_TRUE(capped.is_ok());
  EXPECT_EQ(channels(capped.value(), 64 << 20), 2);
  auto raised = CommTiming::create(ranks_on("a", 8), "h200", TuningOptions{12, 0, -1});
  ASSERT_TRUE(raised.is_ok());
  EXPECT_EQ(channels(raised.value(), 256), 12);
  EXPECT_EQ(channels(plain.value()->subset({0, 1, 2, 3, 4, 5, 6, 7}, TuningOptions{0, 2, -1}), 64 << 20), 2);
  EXPECT_EQ(channels(capped.value()->subset({0, 1, 2, 3, 4, 5, 6, 7}), 64 << 20), big_default);
  auto crossed = CommTiming::create(ranks_on("a", 8), "h200", TuningOptions{12, 4, -1});
  ASSERT_TRUE(crossed.is_ok());
  EXPECT_EQ(channels(crossed.value(), 256), 12);
}

TEST(CommTiming, LargerAllReducesTakeLongerAndCrossingNodesCostsMore) {
  auto one = CommTiming::create(ranks_on("a", 8), "h200");
  ASSERT_TRUE(one.is_ok());
  auto small = one.value()->collective(netsim::Collective::kAllReduce, 1024, netsim::DataType::kFloat32, 0);
  auto big = one.value()->collective(netsim::Collective::kAllReduce, 64 << 20, netsim::DataType::kFloat32, 0);
  ASSERT_TRUE(small.is_ok() && big.is_ok());
  EXPECT_GT(small->duration, SimTime::zero());
  EXPECT_GT(big->duration, small->duration * 10);
  // The same message between GPUs of one node (NVLink) and of two nodes (400 Gb/s NIC).
  auto two = CommTiming::create(ranks_on("a", 16), "h200");
  ASSERT_TRUE(two.is_ok());
  auto intra = two.value()->p2p(0, 1, 64 << 20);
  auto inter = two.value()->p2p(0, 8, 64 << 20);
  ASSERT_TRUE(intra.is_ok() && inter.is_ok());
  EXPECT_GT(inter.value(), intra.value() * 3) << "NIC 50 GB/s vs NVLink 450 GB/s per direction";
}

TEST(CommTiming, SubsetKeepsTheParentsGpus) {
  auto t = CommTiming::create(ranks_on("a", 8), "h200");
  ASSERT_TRUE(t.is_ok());
  auto sub = t.value()->subset({6, 2});
  EXPECT_EQ(sub->gpu_of(0), 6);
  EXPECT_EQ(sub->gpu_of(1), 2);
}

}  // namespace
}  // namespace genie::shim
