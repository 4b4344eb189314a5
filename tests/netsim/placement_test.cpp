// SPDX-License-Identifier: Apache-2.0
// Rank placement on a cluster topology: one rule for the shim's timing and the coordinator.
#include "genie/netsim/placement.hpp"

#include <gtest/gtest.h>

namespace genie::netsim {
namespace {

TEST(Placement, DevicesBeyondOneServerContinueOnTheNextServers) {
  // System: 8-GPU servers. Expectation: device 3 of a process on server 2 is GPU 19; its device 11 is GPU 27.
  EXPECT_EQ(gpu_index(2, 3, 8), 19);
  EXPECT_EQ(gpu_index(2, 11, 8), 27);
  EXPECT_EQ(gpu_index(0, 0, 8), 0);
}

TEST(Placement, NodeNamesTakeServersInOrderOfFirstAppearanceAndRanksSitByDevice) {
  // System: ranks on y:0, x:0, y:1, x:1 of 8-GPU servers. Expectation: y is server 0, x server 1; each rank on its
  // device: GPUs 0, 8, 1, 9; two servers.
  Placement p = place_by_node({{"y", 0}, {"x", 0}, {"y", 1}, {"x", 1}}, 8);
  EXPECT_EQ(p.gpu, (std::vector<int>{0, 8, 1, 9}));
  EXPECT_EQ(p.nodes, 2);
}

TEST(Placement, RanksSharingADeviceOrOverflowingAServerFillServersInRankOrder) {
  // System: 3 ranks on one node all on device 0 (4-GPU servers), then 6 ranks of another node on devices 0..5.
  // Expectation: the first three fill GPUs 0, 1, 2 of server 0; the next six fill server 1 and half of server 2.
  std::vector<RankSite> r{{"a", 0}, {"a", 0}, {"a", 0}};
  for (int d = 0; d < 6; ++d) r.push_back({"b", d});
  Placement p = place_by_node(r, 4);
  EXPECT_EQ(p.gpu, (std::vector<int>{0, 1, 2, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(p.nodes, 3);
}

TEST(Placement, GpusPerNodeCountsTheFirstServersGpus) {
  // System: two servers of 2 GPUs. Expectation: 2. A topology without servers: all its GPUs.
  Topology t;
  for (int s = 0; s < 2; ++s)
    for (int g = 0; g < 2; ++g) t.add_node(NodeKind::kGpu, "gpu" + std::to_string(s * 2 + g), s);
  EXPECT_EQ(gpus_per_node(t), 2);
  Topology flat;
  for (int g = 0; g < 3; ++g) flat.add_node(NodeKind::kGpu, "g" + std::to_string(g), -1);
  EXPECT_EQ(gpus_per_node(flat), 3);
}

}  // namespace
}  // namespace genie::netsim
