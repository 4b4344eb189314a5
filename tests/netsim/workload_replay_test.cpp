// SPDX-License-Identifier: Apache-2.0
// Tests of the Chakra workload replay (genie sim --workload): dependencies and compute delays, collectives that start
// when their last member arrives and last as netsim times them alone, messages, ranges, data-parallel rescaling, and
// strict errors for traces that are bad or cannot run together.
#include "genie/netsim/workload.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "genie/netsim/chakra_et.hpp"

namespace genie::netsim {
namespace {

using chakra::Attr;
using chakra::Node;
using chakra::NodeType;
using chakra::Trace;

// A fresh directory per test.
std::string temp_dir(const std::string& name) {
  const std::string d = ::testing::TempDir() + "/workload_" + name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

Node comp(uint64_t id, int64_t ns, std::vector<uint64_t> deps = {}) {
  Node n;
  n.id = id;
  n.name = "k";
  n.type = NodeType::kComp;
  n.duration_micros = static_cast<uint64_t>(ns / 1000);
  n.data_deps = std::move(deps);
  n.attr = {Attr::boolean("is_cpu_op", false), Attr::int64("duration_ns", ns)};
  return n;
}

Node coll(uint64_t id, const char* collective, int64_t count, const char* pg, std::vector<uint64_t> deps) {
  Node n;
  n.id = id;
  n.name = collective;
  n.type = NodeType::kCommColl;
  n.data_deps = std::move(deps);
  n.attr = {Attr::boolean("is_cpu_op", false), Attr::string("collective", collective), Attr::int64("count", count),
            Attr::string("datatype", "float"), Attr::string("pg_name", pg)};
  return n;
}

Node msg(uint64_t id, bool send, int src, int dst, int64_t bytes, std::vector<uint64_t> deps) {
  Node n;
  n.id = id;
  n.type = send ? NodeType::kCommSend : NodeType::kCommRecv;
  n.data_deps = std::move(deps);
  n.attr = {Attr::boolean("is_cpu_op", false), Attr::int32("comm_src", src), Attr::int32("comm_dst", dst),
            Attr::int32("comm_tag", 0), Attr::int64("comm_size", bytes)};
  return n;
}

Node marker(uint64_t id, const char* range, bool begin, int index, std::vector<uint64_t> deps) {
  Node n = comp(id, 0, std::move(deps));
  n.attr.push_back(Attr::string("range", range));
  n.attr.push_back(Attr::string("range_event", begin ? "begin" : "end"));
  n.attr.push_back(Attr::int64("range_index", index));
  return n;
}

Trace trace(int rank, int nranks, std::vector<Node> nodes, const std::string& groups = "") {
  Trace t;
  t.metadata.version = "1.0.0";
  t.metadata.attr = {Attr::int64("rank", rank), Attr::int64("world_size", nranks),
                     Attr::int64("gpu", rank),  Attr::string("topology", "hgx-h100"),
                     Attr::int64("nodes", 1),   Attr::string("engine", "analytical")};
  if (!groups.empty()) t.metadata.attr.push_back(Attr::string("process_groups", groups));
  t.nodes = std::move(nodes);
  return t;
}

void write(const std::string& dir, const std::vector<Trace>& ts) {
  for (size_t r = 0; r < ts.size(); ++r)
    ASSERT_TRUE(chakra::write_trace(dir + "/t." + std::to_string(r) + ".et", ts[r]).is_ok());
}

// What netsim gives a collective alone on hgx-h100 (the replay must add exactly that after the last arrival).
SimTime alone(Collective c, uint64_t count, std::vector<int> gpus, EngineKind e) {
  auto topo = load_topology("hgx-h100", TopologyOptions{});
  EXPECT_TRUE(topo.is_ok());
  CollectiveSpec s;
  s.collective = c;
  s.count = count;
  s.datatype = c == Collective::kSendRecv ? DataType::kUint8 : DataType::kFloat32;
  s.nranks = static_cast<int>(gpus.size());
  s.rank_to_gpu = std::move(gpus);
  auto plan = plan_collective(s, **topo, NcclEnv{});
  EXPECT_TRUE(plan.is_ok()) << plan.status().message();
  auto t = simulate_schedule(*topo, *plan, SimulatorOptions{e, true, false});
  EXPECT_TRUE(t.is_ok());
  return t->duration();
}

TEST(WorkloadReplay, ACollectiveStartsWhenItsLastMemberArrivesAndComputeNodesAreDelays) {
  // System: rank 0 computes 10 us, rank 1 25 us, then both all-reduce 1 Mi floats (the world: no pg_name), then
  // compute 5 us. Expectation: the all-reduce starts at 25 us and lasts what netsim gives it alone (d); both ranks end
  // at 25 us + d + 5 us, under either engine.
  for (EngineKind e : {EngineKind::kAnalytical, EngineKind::kFlow}) {
    const std::string dir = temp_dir(std::string("coll_") + engine_name(e));
    write(dir, {trace(0, 2, {comp(1, 10000), coll(2, "all_reduce", 1 << 20, "", {1}), comp(3, 5000, {2})}),
                trace(1, 2, {comp(1, 25000), coll(2, "all_reduce", 1 << 20, "", {1}), comp(3, 5000, {2})})});
    WorkloadOptions o;
    o.workload = dir;
    o.engine = e;
    auto r = replay_workload(o);
    ASSERT_TRUE(r.is_ok()) << r.status().message();
    const SimTime d = alone(Collective::kAllReduce, 1 << 20, {0, 1}, e);
    ASSERT_EQ(r->ranks.size(), 2u);
    EXPECT_EQ(r->ranks[0].end, SimTime::us(25) + d + SimTime::us(5)) << engine_name(e);
    EXPECT_EQ(r->ranks[1].end, r->ranks[0].end);
    EXPECT_EQ(r->collectives, 1u);
    EXPECT_EQ(r->nodes, 6u);
  }
}

TEST(WorkloadReplay, AMessageStartsWhenBothEndsAreReadyAndRangesAreTimed) {
  // System: rank 0 computes 10 us then sends 1 MiB to rank 1; rank 1 posts the receive at once, then computes 2 us;
  // a range "step" spans rank 1's whole work. Expectation: the message runs from 10 us for what netsim gives a 1 MiB
  // send/recv alone (d); rank 1's step is 10 us + d + 2 us.
  const std::string dir = temp_dir("msg");
  write(dir, {trace(0, 2, {comp(1, 10000), msg(2, true, 0, 1, 1 << 20, {1})}),
              trace(1, 2,
                    {marker(1, "step", true, 0, {}), msg(2, false, 0, 1, 1 << 20, {1}), comp(3, 2000, {2}),
                     marker(4, "step", false, 0, {3})})});
  WorkloadOptions o;
  o.workload = dir;
  auto r = replay_workload(o);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const SimTime d = alone(Collective::kSendRecv, 1 << 20, {0, 1}, EngineKind::kAnalytical);
  EXPECT_EQ(r->messages, 1u);
  ASSERT_EQ(r->ranks[1].ranges.count("step"), 1u);
  ASSERT_EQ(r->ranks[1].ranges["step"].size(), 1u);
  EXPECT_EQ(r->ranks[1].ranges["step"][0], SimTime::us(10) + d + SimTime::us(2));
  EXPECT_EQ(r->ranks[0].end, SimTime::us(10) + d);
}

TEST(WorkloadReplay, OnlyDataDependenciesOrderNodesAndDurationFallsBackToMicroseconds) {
  // System: one rank; node 2 (3 us, no duration_ns: duration_micros) names node 1 (4 us) in ctrl_deps only, node 3
  // (2 us) names node 2 in data_deps. Expectation: ctrl_deps are call-tree parents, not dependencies (Chakra's feeder
  // reads data_deps only; following them in Chakra's own converted traces makes cycles): nodes 1 and 2 start at 0 and
  // the rank ends at max(4, 3 + 2) = 5 us.
  const std::string dir = temp_dir("ctrl");
  Node b = comp(2, 3000);
  b.attr.pop_back();  // no duration_ns
  b.ctrl_deps = {1};
  write(dir, {trace(0, 1, {comp(1, 4000), b, comp(3, 2000, {2})})});
  WorkloadOptions o;
  o.workload = dir;
  auto r = replay_workload(o);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->total, SimTime::us(5));
  ASSERT_FALSE(r->notes.empty());
  EXPECT_NE(r->notes.front().find("ctrl_deps"), std::string::npos);
}

TEST(WorkloadReplay, DataParallelRescaleGrowsTheGroupAndKeepsShardTotals) {
  // System: 2 ranks, one data-parallel group {0,1} (pg "1") that all-gathers 1000 floats per rank and all-reduces
  // 4096 floats. Rescaled to 4 replicas. Expectation: 4 ranks of one replica each; the all-gather keeps its total
  // (500 floats per rank), the all-reduce its size; every rank ends at the two calls' times on 4 GPUs.
  const std::string dir = temp_dir("dp");
  const std::string groups = R"([{"pg_name":"1","ranks":[0,1]}])";
  for (int r = 0; r < 2; ++r)
    ASSERT_TRUE(chakra::write_trace(
                    dir + "/t." + std::to_string(r) + ".et",
                    trace(r, 2, {coll(1, "all_gather", 1000, "1", {}), coll(2, "all_reduce", 4096, "1", {1})}, groups))
                    .is_ok());
  WorkloadOptions o;
  o.workload = dir;
  o.dp = 4;
  auto r = replay_workload(o);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->nranks, 4);
  EXPECT_EQ(r->dp_from, 2);
  EXPECT_EQ(r->dp_to, 4);
  const SimTime ag = alone(Collective::kAllGather, 500, {0, 1, 2, 3}, EngineKind::kAnalytical);
  const SimTime ar = alone(Collective::kAllReduce, 4096, {0, 1, 2, 3}, EngineKind::kAnalytical);
  for (const auto& k : r->ranks) EXPECT_EQ(k.end, ag + ar) << k.rank;
  // As recorded (--dp equal to the recorded degree): two ranks.
  o.dp = 2;
  auto same = replay_workload(o);
  ASSERT_TRUE(same.is_ok());
  EXPECT_EQ(same->nranks, 2);
}

TEST(WorkloadReplay, DataParallelRescaleCopiesModelParallelGroupsPerReplica) {
  // System: 4 ranks as TP 2 x DP 2: tensor-parallel groups {0,1}, {2,3} (pg "1", "2"), data-parallel {0,2}, {1,3}
  // (pg "3", "4"); each rank all-reduces on its TP group then on its DP group. Rescaled to DP 3: 6 ranks.
  // Expectation: the data-parallel family is the strided one (TP stays on neighbours), every call matches, and each
  // rank ends at the TP all-reduce on 2 GPUs plus the DP all-reduce on 3.
  const std::string dir = temp_dir("tpdp");
  const std::string groups =
      R"([{"pg_name":"1","ranks":[0,1]},{"pg_name":"2","ranks":[2,3]},{"pg_name":"3","ranks":[0,2]},)"
      R"({"pg_name":"4","ranks":[1,3]}])";
  for (int r = 0; r < 4; ++r) {
    const std::string tp = r < 2 ? "1" : "2", dp = r % 2 == 0 ? "3" : "4";
    ASSERT_TRUE(
        chakra::write_trace(
            dir + "/t." + std::to_string(r) + ".et",
            trace(r, 4, {coll(1, "all_reduce", 1024, tp.c_str(), {}), coll(2, "all_reduce", 1024, dp.c_str(), {1})},
                  groups))
            .is_ok());
  }
  WorkloadOptions o;
  o.workload = dir;
  o.dp = 3;
  auto r = replay_workload(o);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r->nranks, 6);
  EXPECT_EQ(r->dp_from, 2);
  EXPECT_EQ(r->collectives, 3u + 2u);  // a TP call per replica, a DP call per model-parallel index
  // Replica i holds ranks 2i, 2i+1; data-parallel group m holds ranks m, m+2, m+4.
  const SimTime tp = alone(Collective::kAllReduce, 1024, {0, 1}, EngineKind::kAnalytical);
  const SimTime dp = alone(Collective::kAllReduce, 1024, {0, 2, 4}, EngineKind::kAnalytical);
  for (const auto& k : r->ranks) EXPECT_EQ(k.end, tp + dp) << k.rank;
}

// The error of replaying `ts` (written to a fresh directory), which must fail.
std::string replay_error(const std::string& name, const std::vector<Trace>& ts) {
  const std::string dir = temp_dir(name);
  write(dir, ts);
  WorkloadOptions o;
  o.workload = dir;
  auto r = replay_workload(o);
  EXPECT_FALSE(r.is_ok()) << name;
  return r.is_ok() ? "" : r.status().message();
}

TEST(WorkloadReplay, BadOrIncompatibleTracesAreErrorsThatNameWhatIsWrong) {
  // A dependency on a node the trace lacks.
  std::string e = replay_error("dangling", {trace(0, 1, {comp(1, 1000, {9})})});
  EXPECT_NE(e.find("t.0.et: node #0 (id 1): field 'data_deps': node 9 is not in the trace"), std::string::npos) << e;
  // Two nodes with one id.
  e = replay_error("dup", {trace(0, 1, {comp(4, 1000), comp(4, 1000)})});
  EXPECT_NE(e.find("(id 4): field 'id'"), std::string::npos) << e;
  // A process group nobody defined.
  e = replay_error("nopg", {trace(0, 1, {coll(1, "all_reduce", 8, "7", {})})});
  EXPECT_NE(e.find("field 'pg_name': process group '7' is not defined"), std::string::npos) << e;
  // Ranks that call different collectives at the same place.
  e = replay_error("mismatch",
                   {trace(0, 2, {coll(1, "all_reduce", 8, "", {})}), trace(1, 2, {coll(1, "all_gather", 8, "", {})})});
  EXPECT_NE(e.find("call #0: rank 0 calls all_reduce of 8 float, rank 1"), std::string::npos) << e;
  // A collective one rank never calls.
  e = replay_error("missing", {trace(0, 2, {coll(1, "all_reduce", 8, "", {})}), trace(1, 2, {comp(1, 10)})});
  EXPECT_NE(e.find("rank(s) 1 never call it"), std::string::npos) << e;
  // A send nobody receives, and a send that is not this rank's.
  e = replay_error("unrecv", {trace(0, 2, {msg(1, true, 0, 1, 64, {})}), trace(1, 2, {comp(1, 10)})});
  EXPECT_NE(e.find("1 sent, 0 received"), std::string::npos) << e;
  e = replay_error("notmine", {trace(0, 2, {msg(1, true, 1, 0, 64, {})}), trace(1, 2, {comp(1, 10)})});
  EXPECT_NE(e.find("field 'comm_src' is 1, not this trace's rank 0"), std::string::npos) << e;
  // A cycle (a node depending on itself only is left out of it, as in Chakra's own sample traces).
  e = replay_error("cycle", {trace(0, 1, {comp(1, 10, {2}), comp(2, 10, {1, 2})})});
  EXPECT_NE(e.find("cycle"), std::string::npos) << e;
  // An attribute of the wrong kind.
  Node bad = comp(1, 1000);
  bad.attr.back() = Attr::string("duration_ns", "soon");
  e = replay_error("kind", {trace(0, 1, {bad})});
  EXPECT_NE(e.find("field 'duration_ns' is string_val, expected an integer"), std::string::npos) << e;
}

TEST(WorkloadReplay, MissingOrGarbledFilesAreErrorsNotCrashes) {
  // Rank 1 of 3 missing.
  const std::string gap = temp_dir("gap");
  ASSERT_TRUE(chakra::write_trace(gap + "/t.0.et", trace(0, 3, {comp(1, 1)})).is_ok());
  ASSERT_TRUE(chakra::write_trace(gap + "/t.2.et", trace(2, 3, {comp(1, 1)})).is_ok());
  WorkloadOptions o;
  o.workload = gap;
  auto r = replay_workload(o);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("t.1.et is missing"), std::string::npos) << r.status().message();
  // Bytes that are no trace, in every prefix length.
  const std::string dir = temp_dir("garbled");
  std::string good = chakra::encode_trace(trace(0, 1, {comp(1, 1000), comp(2, 1000, {1})}));
  for (size_t cut = 1; cut < good.size(); cut += 3) {
    std::string bytes = good.substr(0, cut);
    bytes.back() = static_cast<char>(bytes.back() ^ 0x5a);
    std::ofstream(dir + "/g.0.et", std::ios::binary) << bytes;
    o.workload = dir;
    (void)replay_workload(o);  // ok or an error, never a crash
  }
  // No trace at all, and an empty directory.
  o.workload = temp_dir("empty");
  EXPECT_FALSE(replay_workload(o).is_ok());
  o.workload = "/nonexistent/dir";
  EXPECT_FALSE(replay_workload(o).is_ok());
}

}  // namespace
}  // namespace genie::netsim
