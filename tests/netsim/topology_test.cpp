// SPDX-License-Identifier: Apache-2.0
// Tests of topology loading (presets, fabrics, shapes, ASTRA-sim YAML, JSON graph), routing and errors.
#include "genie/netsim/topology.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace genie::netsim {
namespace {

TEST(Topology, HgxH100PresetHasEightNvSwitchedGpus) {
  // hgx-h100: 8 GPUs, 18 x 20.6 GB/s NVLink each into one NVSwitch crossbar, NVLS on.
  auto t = load_topology("hgx-h100", {}).value();
  EXPECT_EQ(t->num_gpus(), 8);
  EXPECT_TRUE(t->nvls);
  EXPECT_NEAR(t->nvlink_bw_bytes_per_s, 18 * 20.6e9, 1e6);
  const Route r = t->route(t->gpu_node(0), t->gpu_node(5)).value();
  ASSERT_EQ(r.channels.size(), 2u);  // GPU -> NVSwitch -> GPU, not the PCIe path
  EXPECT_TRUE(r.via_nvswitch);
  EXPECT_NEAR(r.bottleneck_bytes_per_s, 18 * 20.6e9, 1e6);
  EXPECT_GE(t->nvswitch_of_gpu(3), 0);
}

TEST(Topology, AllPresetsLoad) {
  for (const char* p : {"hgx-h100", "hgx-h200", "dgx-a100", "hgx-b200"}) {
    auto t = load_topology(p, {});
    ASSERT_TRUE(t.is_ok()) << p << ": " << t.status().to_string();
    EXPECT_EQ((*t)->num_gpus(), 8) << p;
  }
  EXPECT_FALSE(load_topology("dgx-a100", {}).value()->nvls);
}

TEST(Topology, MaxNpusBoundsShapesAndAstraFiles) {
  // System: a 64-NPU ring and a 4x4x4 ASTRA-sim network under a limit of 63 NPUs, then of 64.
  // Expectation: over the limit each is refused naming the limit; at it both load with 64 GPUs.
  TopologyOptions opts;
  opts.max_npus = 63;
  auto ring = load_topology("ring:64", opts);
  ASSERT_FALSE(ring.is_ok());
  EXPECT_NE(ring.status().message().find("too many NPUs (more than 63)"), std::string::npos) << ring.status().message();
  const std::string yaml = "topology: [ Ring, Ring, Ring ]\nnpus_count: [4, 4, 4]\nbandwidth: [1, 1, 1]\nlatency: [1, 1, 1]\n";
  auto astra = parse_astra_yaml(yaml, "net.yml", 63);
  ASSERT_FALSE(astra.is_ok());
  EXPECT_NE(astra.status().message().find("more than 63"), std::string::npos) << astra.status().message();
  opts.max_npus = 64;
  EXPECT_EQ(load_topology("ring:64", opts).value()->num_gpus(), 64);
  EXPECT_EQ(parse_astra_yaml(yaml, "net.yml", 64).value()->num_gpus(), 64);
}

TEST(Topology, RailOptimizedMultiNode) {
  // 4 x hgx-h100 on a rail-optimized fabric: 32 GPUs, 8 NICs per server at 400 Gb/s; GPU 0 of server 0 and
  // GPU 0 of server 1 share rail 0: path GPU-PCIe-NIC-leaf-NIC-PCIe-GPU (6 links), bottleneck 50 GB/s.
  TopologyOptions o;
  o.nodes = 4;
  auto t = load_topology("hgx-h100", o).value();
  EXPECT_EQ(t->num_gpus(), 32);
  EXPECT_EQ(t->num_servers, 4);
  const Route r = t->route(t->gpu_node(0), t->gpu_node(8)).value();
  EXPECT_EQ(r.channels.size(), 6u);
  EXPECT_TRUE(r.crosses_net);
  EXPECT_NEAR(r.bottleneck_bytes_per_s, 50e9, 1e6);
  // Deterministic ECMP: same key, same path.
  const Route a = t->route(t->gpu_node(0), t->gpu_node(9), 7).value();
  const Route b = t->route(t->gpu_node(0), t->gpu_node(9), 7).value();
  EXPECT_EQ(a.channels, b.channels);
}

TEST(Topology, ClassicFatTreeWithOversubscriptionAndGpuSubset) {
  // 8 x dgx-a100 with 4 GPUs used per server on a 2:1 fat-tree: 32 GPUs, NICs at 200 Gb/s.
  TopologyOptions o;
  o.nodes = 8;
  o.gpus_per_node = 4;
  o.fabric = "fat-tree";
  o.oversubscription = 2;
  auto t = load_topology("dgx-a100", o).value();
  EXPECT_EQ(t->num_gpus(), 32);
  const Route r = t->route(t->gpu_node(0), t->gpu_node(31)).value();
  EXPECT_TRUE(r.crosses_net);
  EXPECT_NEAR(r.bottleneck_bytes_per_s, 25e9, 1e6);
}

TEST(Topology, TorusShapes) {
  auto ring = load_topology("ring:8", {}).value();
  EXPECT_EQ(ring->num_gpus(), 8);
  EXPECT_EQ(ring->links().size(), 8u);
  auto t2 = load_topology("torus2d:4x4", {}).value();
  EXPECT_EQ(t2->num_gpus(), 16);
  EXPECT_EQ(t2->links().size(), 32u);  // 2 dims x 16 links
  auto t3 = load_topology("torus3d:2x2x2", {}).value();
  EXPECT_EQ(t3->num_gpus(), 8);
  // Opposite corner of a 4x4 torus is 4 hops away.
  EXPECT_EQ(t2->route(t2->gpu_node(0), t2->gpu_node(10)).value().channels.size(), 4u);
}

TEST(Topology, AstraSimYaml) {
  const std::string yaml =
      "# ASTRA-sim analytical network\ntopology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]  # 8 NPUs\n"
      "bandwidth: [ 50.0, 25.0 ]  # GB/s\nlatency: [ 500.0, 1000.0 ]  # ns\n";
  auto t = parse_astra_yaml(yaml, "net.yml").value();
  EXPECT_EQ(t->num_gpus(), 8);
  // NPU 0 -> NPU 4 crosses the Switch dimension: two links of 25 GB/s, 500 ns each.
  const Route r = t->route(t->gpu_node(0), t->gpu_node(4)).value();
  EXPECT_EQ(r.channels.size(), 2u);
  EXPECT_NEAR(r.bottleneck_bytes_per_s, 25e9, 1);
  EXPECT_EQ(r.latency_ns, 1000);
}

TEST(Topology, AstraYamlErrorsNameTheKey) {
  auto r =
      parse_astra_yaml("topology: [ Ring, Torus ]\nnpus_count: [4, 2]\nbandwidth: [1, 1]\nlatency: [1, 1]\n", "x.yml");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("x.yml: $.topology[1]"), std::string::npos) << r.status().message();
  r = parse_astra_yaml("topology: [ Ring ]\nnpus_count: [4, 2]\nbandwidth: [1]\nlatency: [1]\n", "y.yml");
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("$.npus_count"), std::string::npos) << r.status().message();
}

TEST(Topology, ExplicitJsonGraph) {
  const std::string j = R"({"name": "two", "nodes": [{"name": "a", "kind": "gpu"}, {"name": "b", "kind": "gpu"},
    {"name": "s", "kind": "switch"}], "links": [{"a": "a", "b": "s", "bw_gbytes_per_s": 12.5, "latency_ns": 100},
    {"a": "s", "b": "b", "bw_gbytes_per_s": 12.5, "latency_ns": 100, "class": "pcie"}]})";
  auto t = parse_topology_json(j, "g.json", {}).value();
  EXPECT_EQ(t->num_gpus(), 2);
  EXPECT_EQ(t->route(t->gpu_node(0), t->gpu_node(1)).value().latency_ns, 200);
}

TEST(Topology, BadJsonNamesFilePathAndProblem) {
  struct Case {
    std::string json;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"{", "bad.json: invalid JSON"},
      {R"({"nodes": [{"name": "a", "kind": "gpux"}], "links": []})",
       "bad.json: $.nodes[0].kind: unknown node kind 'gpux'"},
      {R"({"nodes": [{"name": "a", "kind": "gpu"}], "links": [{"a": "a", "b": "zz", "bw_gbytes_per_s": 1}]})",
       "bad.json: $.links[0].b: unknown node 'zz'"},
      {R"({"nodes": [{"name": "a", "kind": "gpu"}], "links": [{"a": "a", "b": "a", "bw_gbytes_per_s": -1}]})",
       "bad.json: $.links[0].bw_gbytes_per_s: value -1 out of range"},
      {R"({"name": "p", "gpus_per_node": 8, "nvlink": {"links_per_gpu": 18}})",
       "bad.json: $.nvlink.link_bw_gbytes_per_s: missing"},
      {R"({"name": "p", "gpus_per_node": 8, "nvlnk": {}})", "bad.json: $.nvlnk: unknown key"},
      {R"({"name": "p", "gpus_per_node": "8"})", "bad.json: $.gpus_per_node: expected a number"},
  };
  for (const auto& c : cases) {
    auto r = parse_topology_json(c.json, "bad.json", {});
    ASSERT_FALSE(r.is_ok()) << c.json;
    EXPECT_NE(r.status().message().find(c.want), std::string::npos) << "got: " << r.status().message();
  }
}

TEST(Topology, UnknownPresetAndBadOptions) {
  // Each bad name or option is refused with a message that says which and why (exact text).
  const std::pair<TopologyOptions, std::pair<std::string, std::string>> cases[] = {
      {{},
       {"hgx-h900",
        "unknown topology 'hgx-h900' (presets: dgx-a100, hgx-b200, hgx-h100, hgx-h200, ring:N, "
        "torus2d:XxY, torus3d:XxYxZ; or a .json/.yaml file)"}},
      {{1, 9, "rail", 1.0}, {"hgx-h100", "--gpus-per-node 9 is not in [1, 8] for preset hgx-h100"}},
      {{2, 0, "dragonfly", 1.0}, {"hgx-h100", "unknown fabric 'dragonfly' (expected rail or fat-tree)"}},
      {{0, 0, "rail", 1.0}, {"hgx-h100", "--nodes must be >= 1 (got 0)"}},
      {{2, 0, "fat-tree", 0.5}, {"hgx-h100", "oversubscription must be >= 1"}},
      {{}, {"/nonexistent/x.json", "cannot open topology file '/nonexistent/x.json'"}},
      {{}, {"torus2d:4", "topology 'torus2d:4': torus2d needs 2 dimension(s)"}},
      {{}, {"ring:x", "topology 'ring:x': bad dimensions 'x' (expected e.g. torus2d:4x4)"}},
      {{}, {"torus2d:4x0", "topology 'torus2d:4x0': bad dimensions '4x0' (expected e.g. torus2d:4x4)"}},
  };
  for (const auto& [opts, c] : cases) {
    auto r = load_topology(c.first, opts);
    ASSERT_FALSE(r.is_ok()) << c.first;
    EXPECT_EQ(r.status().message(), c.second);
  }
  // A preset's new declarative keys are checked like the others.
  auto bad = parse_topology_json(R"({"name": "p", "gpus_per_node": 2, "pcie": {"bw_gbytes_per_s": 32},
      "collnet": {"in_network": true}})",
                                 "p.json", {});
  EXPECT_EQ(bad.status().message(), "p.json: $.collnet.in_network: unknown key");
  bad = parse_topology_json(R"({"name": "p", "gpus_per_node": 2, "pcie": {"bw_gbytes_per_s": 32},
      "host": {"cpu_vendor": "via"}})",
                            "p.json", {});
  EXPECT_EQ(bad.status().message(), "p.json: $.host.cpu_vendor: unknown CPU vendor 'via' (expected intel, amd or arm)");
}

TEST(Topology, PresetsDeclareInNetworkReductionOnlyAcrossServers) {
  // The presets' fabrics have SHARP switches (collnet.in_network_reduction), which only exist with --nodes > 1;
  // every GPU then reaches its leaf switch through its own NIC.
  EXPECT_FALSE(load_topology("hgx-h100", {}).value()->collnet);
  TopologyOptions o;
  o.nodes = 2;
  auto t = load_topology("hgx-h100", o).value();
  ASSERT_TRUE(t->collnet);
  EXPECT_EQ(t->cpu_vendor, "intel");
  for (int g = 0; g < t->num_gpus(); ++g) {
    const int sw = t->collnet_switch_of_gpu(g);
    ASSERT_GE(sw, 0);
    EXPECT_EQ(t->nodes()[static_cast<size_t>(sw)].kind, NodeKind::kLeafSwitch);
    auto r = t->route(t->gpu_node(g), sw).value();
    ASSERT_GE(r.channels.size(), 2u);
    EXPECT_EQ(t->channel_dst(r.channels[r.channels.size() - 2]), t->nic_of_gpu(g));  // last hop: its NIC -> leaf
  }
}

}  // namespace
}  // namespace genie::netsim
