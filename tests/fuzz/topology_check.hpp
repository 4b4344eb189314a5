// SPDX-License-Identifier: Apache-2.0
// Invariants of a parsed topology, shared by the topology_json and astra_yaml targets: it re-serialises as an
// explicit JSON graph that parses back to the same nodes and links, its routes are connected channel chains,
// and the tuning model and schedule builder accept it or return an error (never crash).
#pragma once

#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"
#include "genie/netsim/schedule.hpp"
#include "genie/netsim/topology.hpp"

namespace genie::fuzz {

/// Largest topology whose routes and schedules the targets check (a few routes and one plan each), and
/// largest that is round-tripped through its JSON graph (a few hundred bytes per node): bigger ones are only
/// loaded, so that the checks do not dominate the loader's own time.
constexpr size_t kCheckRoutesMaxNodes = 512;
constexpr size_t kRoundTripMaxNodes = 1 << 16;

inline const char* link_class_name(netsim::LinkClass c) {
  switch (c) {
    case netsim::LinkClass::kNvLink: return "nvlink";
    case netsim::LinkClass::kPcie: return "pcie";
    case netsim::LinkClass::kNet: return "net";
  }
  return "?";
}

/// The topology in the explicit-graph JSON format of parse_topology_json (docs/netsim.md).
inline std::string graph_json(const netsim::Topology& t) {
  using nlohmann::json;
  json j = json::object();
  j["name"] = t.name;
  j["gpu_arch"] = {{"name", t.arch.name}, {"compute_capability", t.arch.compute_capability}};
  j["nvls"] = t.nvls;
  j["nvls_efficiency"] = t.nvls_efficiency;
  j["collnet"] = t.collnet;
  j["cpu_vendor"] = t.cpu_vendor;
  j["gpus_forward"] = t.gpus_forward;
  j["host_launch_per_gpu_ns"] = t.host_launch_per_gpu_ns;
  j["host_launch_per_gpu_channel_ns"] = t.host_launch_per_gpu_channel_ns;
  j["hbm_bw_gbytes_per_s"] = t.hbm_bw_bytes_per_s / 1e9;
  json nodes = json::array();
  for (const auto& n : t.nodes()) {
    json o = {{"name", n.name}, {"kind", netsim::node_kind_name(n.kind)}};
    if (n.server >= 0) o["server"] = n.server;
    nodes.push_back(std::move(o));
  }
  json links = json::array();
  for (const auto& l : t.links()) {
    links.push_back({{"a", t.nodes()[static_cast<size_t>(l.a)].name},
                     {"b", t.nodes()[static_cast<size_t>(l.b)].name},
                     {"bw_gbytes_per_s", l.bw_bytes_per_s / 1e9},
                     {"latency_ns", l.latency_ns},
                     {"class", link_class_name(l.link_class)}});
  }
  j["nodes"] = std::move(nodes);
  j["links"] = std::move(links);
  return j.dump();
}

/// `b` (re-parsed from graph_json(a)) has a's nodes, links and tuning facts.
inline void check_same_graph(const netsim::Topology& a, const netsim::Topology& b) {
  GENIE_FUZZ_CHECK(a.nodes().size() == b.nodes().size(), "node count changed in the round trip");
  GENIE_FUZZ_CHECK(a.links().size() == b.links().size(), "link count changed in the round trip");
  GENIE_FUZZ_CHECK(a.num_gpus() == b.num_gpus(), "GPU count changed in the round trip");
  for (size_t i = 0; i < a.nodes().size(); ++i) {
    const auto &x = a.nodes()[i], &y = b.nodes()[i];
    GENIE_FUZZ_CHECK(x.kind == y.kind && x.name == y.name && x.gpu == y.gpu, "node " + x.name + " changed");
    GENIE_FUZZ_CHECK(x.server == y.server || (x.server < 0 && y.server < 0), "server of node " + x.name + " changed");
  }
  for (size_t i = 0; i < a.links().size(); ++i) {
    const auto &x = a.links()[i], &y = b.links()[i];
    GENIE_FUZZ_CHECK(x.a == y.a && x.b == y.b && x.link_class == y.link_class, "link ends or class changed");
    GENIE_FUZZ_CHECK(near(x.bw_bytes_per_s, y.bw_bytes_per_s), "link bandwidth changed in the round trip");
    GENIE_FUZZ_CHECK(x.latency_ns == y.latency_ns, "link latency changed in the round trip");
  }
  GENIE_FUZZ_CHECK(a.nvls == b.nvls && a.collnet == b.collnet && a.gpus_forward == b.gpus_forward &&
                       a.cpu_vendor == b.cpu_vendor && a.arch.name == b.arch.name &&
                       a.arch.compute_capability == b.arch.compute_capability,
                   "topology facts changed in the round trip");
  GENIE_FUZZ_CHECK(a.num_servers == b.num_servers && a.gpus_per_server == b.gpus_per_server,
                   "server count changed in the round trip");
}

/// A route is a chain of channels from src to dst whose latency is the sum and bottleneck the minimum.
inline void check_route(const netsim::Topology& t, int src, int dst, uint64_t key) {
  auto r = t.route(src, dst, key);
  if (!r.is_ok()) return;  // unreachable: an error, not a crash
  const netsim::Route& route = r.value();
  int at = src;
  int64_t latency = 0;
  double bottleneck = std::numeric_limits<double>::infinity();
  for (uint32_t ch : route.channels) {
    GENIE_FUZZ_CHECK(ch < t.num_channels(), "route names a channel that does not exist");
    GENIE_FUZZ_CHECK(t.channel_src(static_cast<uint32_t>(ch)) == at, "route channels do not form a chain");
    at = t.channel_dst(ch);
    latency += t.channel_link(ch).latency_ns;
    bottleneck = std::min(bottleneck, t.channel_link(ch).bw_bytes_per_s);
  }
  GENIE_FUZZ_CHECK(at == dst, "route does not end at its destination");
  GENIE_FUZZ_CHECK(route.latency_ns == latency, "route latency is not the sum of its links");
  if (!route.channels.empty()) GENIE_FUZZ_CHECK(near(route.bottleneck_bytes_per_s, bottleneck), "route bottleneck");
}

/// Every invariant above, on a topology a loader returned.
inline void check_topology(const netsim::Topology& t) {
  GENIE_FUZZ_CHECK(t.num_gpus() > 0, "a loaded topology has no GPU");
  for (const auto& l : t.links()) {
    GENIE_FUZZ_CHECK(l.bw_bytes_per_s > 0 && std::isfinite(l.bw_bytes_per_s), "link bandwidth not positive");
    GENIE_FUZZ_CHECK(l.latency_ns >= 0, "negative link latency");
  }
  if (t.nodes().size() > kRoundTripMaxNodes) return;
  auto again = netsim::parse_topology_json(graph_json(t), "round trip", {});
  GENIE_FUZZ_CHECK(again.is_ok(), "its graph form does not parse: " + again.status().message());
  check_same_graph(t, *again.value());
  if (t.nodes().size() > kCheckRoutesMaxNodes) return;
  const int n = t.num_gpus();
  for (int g = 0; g < n; ++g) {
    const int nic = t.nic_of_gpu(g), nvs = t.nvswitch_of_gpu(g), sw = t.collnet_switch_of_gpu(g);
    const int nodes = static_cast<int>(t.nodes().size());
    GENIE_FUZZ_CHECK(nic >= -1 && nic < nodes && nvs >= -1 && nvs < nodes && sw >= -1 && sw < nodes,
                     "a GPU's NIC, NVSwitch or CollNet switch is not a node");
  }
  check_route(t, t.gpu_node(0), t.gpu_node(n - 1), 0);
  check_route(t, t.gpu_node(n - 1), t.gpu_node(0), 7);
  check_route(t, t.gpu_node(0), t.gpu_node(n / 2), 3);
  check_route(t, t.gpu_node(0), static_cast<int>(t.nodes().size()) - 1, 1);
  // What loads is usable: one all-reduce and one all-gather over every GPU plan, or fail with a Status.
  for (auto c : {netsim::Collective::kAllReduce, netsim::Collective::kAllGather}) {
    netsim::CollectiveSpec spec;
    spec.collective = c;
    spec.count = 1 << 12;
    spec.nranks = n;
    (void)netsim::plan_collective(spec, t, netsim::NcclEnv{}, netsim::ScheduleForm::kCompact);
  }
}

}  // namespace genie::fuzz
