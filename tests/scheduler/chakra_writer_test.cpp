// SPDX-License-Identifier: Apache-2.0
// Tests of the Chakra writer: a job's records (two ranks, a kernel, an all-reduce waiting on it from another stream, a
// blocking host wait, a second kernel, an NVTX range) become per-rank traces whose nodes, attributes and dependencies
// are what docs/chakra.md says, and whose replay reproduces the recorded times exactly.
#include "genie/sched/chakra_writer.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "genie/netsim/workload.hpp"
#include "genie/sched/timeline.hpp"

namespace genie::sched {
namespace {

using netsim::chakra::Node;
using netsim::chakra::NodeType;

constexpr int64_t kUs = 1000;

// What netsim gives a 1024-float all-reduce on GPUs 0 and 1 of an HGX H100 alone (analytical engine).
SimTime all_reduce_time() {
  auto topo = netsim::load_topology("hgx-h100", netsim::TopologyOptions{});
  EXPECT_TRUE(topo.is_ok());
  netsim::CollectiveSpec s;
  s.count = 1024;
  s.nranks = 2;
  s.rank_to_gpu = {0, 1};
  auto plan = netsim::plan_collective(s, **topo, netsim::NcclEnv{});
  EXPECT_TRUE(plan.is_ok());
  auto t =
      netsim::simulate_schedule(*topo, *plan, netsim::SimulatorOptions{netsim::EngineKind::kAnalytical, true, false});
  EXPECT_TRUE(t.is_ok());
  return t->duration();
}

coord::OpRecord op(OpKind kind, int device, uint32_t stream, uint32_t label, int64_t start, int64_t end,
                   int64_t submit = 0, int64_t deps_end = 0) {
  coord::OpRecord o;
  o.kind = static_cast<uint8_t>(kind);
  o.device = device;
  o.stream = stream;
  o.label = label;
  o.start_ns = start;
  o.end_ns = end;
  o.submit_ns = submit;
  o.deps_end_ns = deps_end;
  o.flags = kRecordSubmitted;
  return o;
}

// Rank r computes `k1` us on stream 1; the all-reduce on stream 2 waits for it (an event) and is submitted at 1 us; the
// host blocks from 2 us until the all-reduce ends (E) and submits a 10 us kernel 1 us later; a range "step" runs from
// 0 to 1 us after that kernel. The all-reduce starts when the slower rank (25 us of compute) is ready.
JobRecord job(SimTime d) {
  JobRecord j;
  const int64_t start = 25 * kUs, e = start + d.count_ns();
  for (int p = 0; p < 2; ++p) {
    ProcessInfo pi;
    pi.index = p;
    pi.process_rank = p;
    pi.node = "node0";
    j.processes.push_back(pi);
    j.labels.push_back({"k1", "AllReduce", "k2", "wait", "step"});
    const int64_t k1 = (p == 0 ? 10 : 25) * kUs;
    const uint32_t host = Timeline::kHostStreamBase;
    coord::OpRecord ar = op(OpKind::kCollective, p, 2, 1, k1, e, 1 * kUs, k1);
    ar.comm = 7;
    ar.seq = 1;
    ar.bytes = 4096;
    j.op_records.push_back({op(OpKind::kKernel, p, 1, 0, 0, k1), ar,
                            op(OpKind::kHostWait, -1, host, 3, 2 * kUs, e + 500),
                            op(OpKind::kKernel, p, 1, 2, e + kUs, e + 11 * kUs, e + kUs),
                            op(OpKind::kRange, p, host, 4, 0, e + 12 * kUs)});
    j.op_records.back()[2].flags = 0;
    j.op_records.back()[4].flags = 0;
  }
  CommInfo c;
  c.key = 7;
  c.nranks = 2;
  c.process = {0, 1};
  c.cuda_dev = {0, 1};
  c.gpu = {0, 1};
  c.joined = 2;
  j.comms[7] = c;
  CollectiveRecord r;
  r.comm = 7;
  r.seq = 1;
  r.count = 1024;
  r.nranks = 2;
  r.bytes = 4096;
  r.start = SimTime::ns(start);
  r.end = SimTime::ns(e);
  r.ready_ns = {10 * kUs, 25 * kUs};
  j.collectives.push_back(r);
  return j;
}

ChakraJob info() {
  ChakraJob i;
  i.topology = "hgx-h100";
  i.nodes = 1;
  i.device = "h100-sxm";
  i.engine = "analytical";
  return i;
}

const Node* named(const std::vector<Node>& nodes, const std::string& name) {
  for (const Node& n : nodes)
    if (n.name == name) return &n;
  return nullptr;
}
const Node* by_id(const std::vector<Node>& nodes, uint64_t id) {
  for (const Node& n : nodes)
    if (n.id == id) return &n;
  return nullptr;
}
bool depends(const Node& n, const Node& on) {
  return std::find(n.data_deps.begin(), n.data_deps.end(), on.id) != n.data_deps.end();
}

TEST(ChakraWriter, NodesAttributesAndDependenciesOfARank) {
  const SimTime d = all_reduce_time();
  ChakraSummary sum;
  auto ts = build_chakra_traces(job(d), info(), &sum);
  ASSERT_TRUE(ts.is_ok()) << ts.status().message();
  ASSERT_EQ(ts->size(), 2u);
  EXPECT_EQ(sum.collectives, 2u);  // one call, seen by both ranks
  EXPECT_EQ(sum.unmatched, 0u);
  EXPECT_EQ(sum.unmatched_waits, 0u);
  const auto& t = (*ts)[0];
  EXPECT_EQ(t.metadata.version, "1.0.0");
  EXPECT_EQ(t.metadata.find("rank")->as_int(), 0);
  EXPECT_EQ(t.metadata.find("world_size")->as_int(), 2);
  EXPECT_EQ(t.metadata.find("gpu")->as_int(), 0);
  EXPECT_NE(t.metadata.find("process_groups")->s.find("\"ranks\":[0,1]"), std::string::npos);
  // Node 0: the process groups as PyTorch's trace gives them.
  ASSERT_FALSE(t.nodes.empty());
  EXPECT_EQ(t.nodes[0].id, 0u);
  EXPECT_EQ(t.nodes[0].type, NodeType::kMetadata);
  EXPECT_EQ(t.nodes[0].inputs.values.substr(0, 3), "['[");
  const Node* k1 = named(t.nodes, "k1");
  const Node* k2 = named(t.nodes, "k2");
  const Node* ar = named(t.nodes, "nccl:all_reduce");
  ASSERT_TRUE(k1 && k2 && ar);
  EXPECT_EQ(k1->type, NodeType::kComp);
  EXPECT_EQ(k1->find("is_cpu_op")->as_int(), 0);
  EXPECT_EQ(k1->find("duration_ns")->as_int(), 10 * kUs);
  EXPECT_EQ(k1->duration_micros, 10u);
  EXPECT_EQ(ar->type, NodeType::kCommColl);
  EXPECT_EQ(ar->find("comm_type")->as_int(), 0);  // ALL_REDUCE
  EXPECT_EQ(ar->find("comm_size")->as_int(), 4096);
  EXPECT_EQ(ar->find("pg_name")->s, "0");
  EXPECT_EQ(ar->find("count")->as_int(), 1024);
  EXPECT_EQ(ar->find("datatype")->s, "float");
  // The all-reduce waits for k1 (another stream: an event) and for the host node that launched it at 1 us.
  EXPECT_TRUE(depends(*ar, *k1));
  const Node* launch = nullptr;
  for (uint64_t dep : ar->data_deps)
    if (by_id(t.nodes, dep)->name == "host") launch = by_id(t.nodes, dep);
  ASSERT_NE(launch, nullptr);
  EXPECT_EQ(launch->find("is_cpu_op")->as_int(), 1);
  EXPECT_EQ(launch->find("duration_ns")->as_int(), 1 * kUs);
  // k2 follows k1 on its stream and is launched by the host node after the wait, which waits for the all-reduce and
  // holds the 1 us between the wait's end and the launch.
  EXPECT_TRUE(depends(*k2, *k1));
  const Node* after = nullptr;
  for (uint64_t dep : k2->data_deps)
    if (by_id(t.nodes, dep)->name == "host") after = by_id(t.nodes, dep);
  ASSERT_NE(after, nullptr);
  EXPECT_TRUE(depends(*after, *ar));
  EXPECT_EQ(after->find("duration_ns")->as_int(), 1 * kUs);
  // The range's markers.
  int markers = 0;
  for (const Node& n : t.nodes)
    if (n.find("range")) ++markers;
  EXPECT_EQ(markers, 2);
  // Ids follow a topological order.
  for (const Node& n : t.nodes)
    for (uint64_t dep : n.data_deps) EXPECT_LT(dep, n.id);
}

TEST(ChakraWriter, ItsTracesReplayToTheRecordedTimes) {
  // The records are consistent with netsim's time for the all-reduce (d): the replay must give back every recorded
  // time: each rank's device work ends at E + 11 us (k2) and its step range lasts until E + 12 us.
  const SimTime d = all_reduce_time();
  const std::string dir = ::testing::TempDir() + "/chakra_writer_replay";
  std::filesystem::remove_all(dir);
  auto w = write_chakra_traces(dir, kChakraPrefix, job(d), info());
  ASSERT_TRUE(w.is_ok()) << w.status().message();
  EXPECT_EQ(w->files.size(), 3u);  // two traces and the communicator groups
  netsim::WorkloadOptions o;
  o.workload = dir;
  auto r = netsim::replay_workload(o);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const SimTime e = SimTime::us(25) + d;
  for (const auto& k : r->ranks) {
    EXPECT_EQ(k.end, e + SimTime::us(11)) << k.rank;
    ASSERT_EQ(k.ranges.count("step"), 1u);
    EXPECT_EQ(k.ranges.at("step").front(), e + SimTime::us(12));
  }
  EXPECT_EQ(r->topology_name, "hgx-h100");
  EXPECT_EQ(r->engine, "analytical");
}

TEST(ChakraWriter, AJobWithoutOpsIsAnError) {
  JobRecord empty;
  EXPECT_FALSE(build_chakra_traces(empty, info(), nullptr).is_ok());
}

}  // namespace
}  // namespace genie::sched
