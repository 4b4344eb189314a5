// SPDX-License-Identifier: Apache-2.0
// Tests of CoordinatorCore: conservative resolution on the global clock, contention between
// communicators exactly as the flow engine predicts, independence from message arrival order, failures.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "genie/sched/coordinator.hpp"
#include "genie/sched/report.hpp"

namespace genie::sched {
namespace {

// Two servers of two GPUs; the servers are joined by one 10 GB/s link, so any two cross-server transfers
// in the same direction share it.
constexpr const char* kTwoServers = R"({
  "name": "two-servers",
  "nodes": [{"name": "g0", "kind": "gpu", "server": 0}, {"name": "g1", "kind": "gpu", "server": 0},
            {"name": "g2", "kind": "gpu", "server": 1}, {"name": "g3", "kind": "gpu", "server": 1},
            {"name": "s0", "kind": "switch"}, {"name": "s1", "kind": "switch"}],
  "links": [{"a": "g0", "b": "s0", "bw_gbytes_per_s": 100, "latency_ns": 500},
            {"a": "g1", "b": "s0", "bw_gbytes_per_s": 100, "latency_ns": 500},
            {"a": "g2", "b": "s1", "bw_gbytes_per_s": 100, "latency_ns": 500},
            {"a": "g3", "b": "s1", "bw_gbytes_per_s": 100, "latency_ns": 500},
            {"a": "s0", "b": "s1", "bw_gbytes_per_s": 10, "latency_ns": 1000}]
})";

std::shared_ptr<const netsim::Topology> two_servers() {
  return netsim::parse_topology_json(kTwoServers, "two-servers", {}).value();
}

CoordinatorOptions options(int processes, netsim::EngineKind engine = netsim::EngineKind::kFlow) {
  CoordinatorOptions o;
  o.topology = two_servers();
  o.topology_name = "two-servers";
  o.engine = engine;
  o.gpus_per_node = 1;  // one process = one emulated node = one GPU: process i sits on GPU i
  o.expected_processes = processes;
  o.record_link_usage = false;
  return o;
}

// A coordinator with `n` processes (process i on node "node<i>", one GPU each) and a mailbox per process.
struct Harness {
  std::map<int, std::deque<coord::Message>> inbox;
  CoordinatorCore core;
  explicit Harness(CoordinatorOptions o)
      : core(std::move(o), [this](int conn, const coord::Message& m) { inbox[conn].push_back(m); }) {}
  void hello(int conn) {
    coord::Hello h;
    h.pid = 1000 + conn;
    h.process_rank = conn;
    h.gpus = 1;
    h.node = "node" + std::to_string(conn);
    core.on_hello(conn, h);
  }
  void send(int conn, coord::Message m) {
    core.on_message(conn, m);
    core.pump();
  }
  std::vector<coord::Resolved> resolved(int conn) {
    std::vector<coord::Resolved> out;
    for (const auto& m : inbox[conn])
      if (auto* r = std::get_if<coord::Resolved>(&m)) out.push_back(*r);
    return out;
  }
};

coord::Coll coll(uint64_t comm, uint64_t seq, int rank, int64_t ready_ns, uint64_t count) {
  coord::Coll c;
  c.comm = comm;
  c.seq = seq;
  c.comm_rank = rank;
  c.ready_ns = ready_ns;
  c.collective = static_cast<uint8_t>(netsim::Collective::kAllReduce);
  c.datatype = static_cast<uint8_t>(netsim::DataType::kFloat32);
  c.count = count;
  return c;
}

// What netsim says for all-reduces of `count` floats on the given GPU pairs, all starting at `start`.
std::vector<netsim::CollectiveTiming> expected(const std::vector<std::vector<int>>& gpus, uint64_t count,
                                               SimTime start) {
  auto topo = two_servers();
  netsim::Simulator sim(topo, {});
  std::vector<int> handles;
  for (const auto& g : gpus) {
    netsim::CollectiveSpec spec;
    spec.count = count;
    spec.nranks = static_cast<int>(g.size());
    spec.rank_to_gpu = g;
    auto plan = netsim::plan_collective(spec, *topo, {});
    handles.push_back(sim.submit(std::make_shared<const netsim::Schedule>(plan.value()), start).value());
  }
  EXPECT_TRUE(sim.run().is_ok());
  std::vector<netsim::CollectiveTiming> out;
  for (int h : handles) out.push_back(sim.timing(h));
  return out;
}

// Processes 0 and 1 join communicator 7 (GPU 0 and GPU 2) and issue its first all-reduce of 1 MiB floats, ready at
// `ready0` and `ready1` ns.
void two_process_all_reduce(Harness& h, int64_t ready0, int64_t ready1) {
  h.hello(0);
  h.hello(1);
  h.send(0, coord::CommJoin{7, 2, 0, 0, 0});
  h.send(1, coord::CommJoin{7, 2, 1, 0, 0});
  h.send(0, coll(7, 1, 0, ready0, 1 << 20));
  h.send(1, coll(7, 1, 1, ready1, 1 << 20));
}

TEST(CoordinatorCore, ResolvesOnlyWhenEveryProcessPromisedPastTheEnd) {
  // System: 2 processes, one communicator {GPU 0, GPU 2}; rank 0 arrives at 10 us, rank 1 at 20 us.
  // Expectation: nothing is resolved while either process could still inject earlier traffic (promise 0);
  // once both promise "nothing until woken", the call starts at 20 us (the later arrival) and ends where
  // netsim puts a lone all-reduce started at 20 us.
  Harness h(options(2));
  two_process_all_reduce(h, 10000, 20000);
  EXPECT_TRUE(h.resolved(0).empty());
  // The coordinator asked both processes to report.
  bool wanted = false;
  for (const auto& m : h.inbox[0]) wanted |= std::holds_alternative<coord::Want>(m);
  EXPECT_TRUE(wanted);
  h.send(0, coord::Promise{INT64_MAX, 0});
  EXPECT_TRUE(h.resolved(0).empty()) << "process 1 has not promised anything yet";
  h.send(1, coord::Promise{INT64_MAX, 0});
  auto r0 = h.resolved(0), r1 = h.resolved(1);
  ASSERT_EQ(r0.size(), 1u);
  ASSERT_EQ(r1.size(), 1u);
  // The lone call in this topology: both processes sit on different servers, so it crosses s0-s1.
  auto want = expected({{0, 1}}, 1 << 20, SimTime::us(20));
  EXPECT_EQ(r0[0].start_ns, 20000);
  EXPECT_EQ(r0[0].end_ns, want[0].end.count_ns());
  EXPECT_EQ(r1[0].end_ns, r0[0].end_ns);
  EXPECT_EQ(r0[0].epoch, 1u);
}

TEST(CoordinatorCore, ACompleteCallsRanksLearnALowerBoundOfItsEndBeforeItResolves) {
  // System: 2 processes, one communicator {GPU 0, GPU 2}, ready at 10 and 20 us; then a second communicator
  // {GPU 1, GPU 3} whose all-reduce shares the 10 GB/s link with the first, so the first ends later than alone.
  // Expectation: as soon as both ranks of a call have reported it (before any promise lets it resolve), each gets a
  // Bound with the call's start plus netsim::duration_lower_bound; it is later than the start, no later than the end
  // the call resolves at, and comes before that call's Resolved; the report counts it. Each ranks' Bound names its call.
  Harness h(options(4));
  for (int p = 0; p < 4; ++p) h.hello(p);
  h.send(0, coord::CommJoin{7, 2, 0, 0, 0});
  h.send(2, coord::CommJoin{7, 2, 1, 0, 0});
  h.send(1, coord::CommJoin{8, 2, 0, 0, 0});
  h.send(3, coord::CommJoin{8, 2, 1, 0, 0});
  h.send(0, coll(7, 1, 0, 10000, 1 << 20));
  auto bounds = [&](int conn) {
    std::vector<coord::Bound> out;
    for (const auto& m : h.inbox[conn])
      if (auto* b = std::get_if<coord::Bound>(&m)) out.push_back(*b);
    return out;
  };
  EXPECT_TRUE(bounds(0).empty()) << "rank 1 has not reported the call: its start is unknown";
  h.send(2, coll(7, 1, 1, 20000, 1 << 20));
  h.send(1, coll(8, 1, 0, 20000, 1 << 20));
  h.send(3, coll(8, 1, 1, 20000, 1 << 20));
  ASSERT_EQ(bounds(0).size(), 1u);
  ASSERT_EQ(bounds(2).size(), 1u);
  ASSERT_EQ(bounds(1).size(), 1u);
  EXPECT_TRUE(h.resolved(0).empty()) << "no promise yet: nothing resolves";
  const coord::Bound b = bounds(0)[0];
  EXPECT_EQ(b.comm, 7u);
  EXPECT_EQ(b.seq, 1u);
  EXPECT_EQ(b.is_p2p, 0);
  EXPECT_EQ(bounds(2)[0].end_lb_ns, b.end_lb_ns);
  EXPECT_EQ(bounds(1)[0].comm, 8u);
  EXPECT_GT(b.end_lb_ns, 20000);
  EXPECT_EQ(h.core.record().bounds_sent, 2u);
  for (int p = 0; p < 4; ++p) h.send(p, coord::Promise{INT64_MAX, 0});
  auto r0 = h.resolved(0);
  ASSERT_EQ(r0.size(), 1u);
  auto alone = expected({{0, 2}}, 1 << 20, SimTime::us(20));
  EXPECT_GT(r0[0].end_ns, alone[0].end.count_ns()) << "the two calls share the inter-server link";
  EXPECT_LE(b.end_lb_ns, alone[0].end.count_ns());
  EXPECT_LE(b.end_lb_ns, r0[0].end_ns);
  size_t bound_at = 0, resolved_at = 0;
  for (size_t i = 0; i < h.inbox[0].size(); ++i) {
    if (std::holds_alternative<coord::Bound>(h.inbox[0][i])) bound_at = i;
    if (std::holds_alternative<coord::Resolved>(h.inbox[0][i])) resolved_at = i;
  }
  EXPECT_LT(bound_at, resolved_at);
}

TEST(CoordinatorCore, AProcessLearnsWhenTheClockHasComeUpToItsPromise) {
  // System: 2 processes, one communicator {GPU 0, GPU 2}, both ranks ready at 10 us; the all-reduce (1 MiB across
  // the 10 GB/s link) ends past 50 us. Process 0 then promises 15 us (a thread querying the call at 15 us waits
  // there, Timeline::wait_until_known) while process 1 still promises 11 us.
  // Expectation: every Want carries the safe time; a process is told once more, at the same want, when the safe
  // time comes up to its promise (process 0 learns safe = 15 us once process 1 moves past it, and nothing while
  // process 1 holds the clock lower); no Want ever claims a safe time past the end of a call whose Resolved it has
  // not been sent before.
  Harness h(options(2));
  two_process_all_reduce(h, 10000, 10000);
  h.send(0, coord::Promise{11000, 0});
  h.send(1, coord::Promise{11000, 0});
  auto last_want = [&](int conn) -> std::optional<coord::Want> {
    std::optional<coord::Want> w;
    for (const auto& m : h.inbox[conn])
      if (auto* x = std::get_if<coord::Want>(&m)) w = *x;
    return w;
  };
  auto wants = [&](int conn) {
    size_t n = 0;
    for (const auto& m : h.inbox[conn]) n += std::holds_alternative<coord::Want>(m);
    return n;
  };
  const int64_t end = expected({{0, 1}}, 1 << 20, SimTime::us(10))[0].end.count_ns();
  ASSERT_GT(end, 50000);
  ASSERT_TRUE(last_want(0).has_value());
  const int64_t next = last_want(0)->t_ns;  // the flow engine's next event of the call, + 1
  EXPECT_GT(next, 20000);
  EXPECT_LE(next, end + 1);
  EXPECT_EQ(last_want(0)->safe_ns, 11000);
  h.send(0, coord::Promise{15000, 0});
  const size_t before = wants(0);
  h.send(1, coord::Promise{12000, 0});
  EXPECT_EQ(wants(0), before) << "told again although the clock (12 us) is below its promise";
  h.send(1, coord::Promise{20000, 0});
  ASSERT_EQ(wants(0), before + 1) << "not told that the clock came up to its promise";
  EXPECT_EQ(last_want(0)->t_ns, next) << "the same want";
  EXPECT_EQ(last_want(0)->safe_ns, 15000);
  EXPECT_TRUE(h.resolved(0).empty());
  h.send(0, coord::Promise{INT64_MAX, 0});
  EXPECT_EQ(last_want(1)->safe_ns, 20000);
  h.send(1, coord::Promise{INT64_MAX, 0});
  ASSERT_EQ(h.resolved(0).size(), 1u);
  EXPECT_EQ(h.resolved(0)[0].end_ns, end);
  for (int conn : {0, 1}) {
    std::set<int64_t> ends;  // of the calls resolved so far on this connection
    for (const auto& m : h.inbox[conn]) {
      if (auto* r = std::get_if<coord::Resolved>(&m)) ends.insert(r->end_ns);
      if (auto* w = std::get_if<coord::Want>(&m)) {
        EXPECT_TRUE(w->safe_ns <= end || ends.count(end)) << "a Want claimed safe " << w->safe_ns << " before the Resolved";
      }
    }
  }
}

TEST(CoordinatorCore, OverlappingCommunicatorsGetExactlyTheFlowEnginesSlowdown) {
  // System: 4 processes on GPUs 0..3; communicator A = {0, 2}, B = {1, 3}. Both all-reduce 64 MiB at 0.
  // Every byte of both crosses the single 10 GB/s s0-s1 link.
  // Expectation: each ends where netsim puts the two submitted together, and that is about twice the time
  // of either alone (the link is shared equally).
  Harness h(options(4));
  for (int p = 0; p < 4; ++p) h.hello(p);
  const uint64_t a = 0xa, b = 0xb;
  h.send(0, coord::CommJoin{a, 2, 0, 0, 0});
  h.send(2, coord::CommJoin{a, 2, 1, 0, 0});
  h.send(1, coord::CommJoin{b, 2, 0, 0, 0});
  h.send(3, coord::CommJoin{b, 2, 1, 0, 0});
  const uint64_t count = 16u << 20;
  h.send(0, coll(a, 1, 0, 0, count));
  h.send(2, coll(a, 1, 1, 0, count));
  h.send(1, coll(b, 1, 0, 0, count));
  h.send(3, coll(b, 1, 1, 0, count));
  for (int p = 0; p < 4; ++p) h.send(p, coord::Promise{INT64_MAX, 0});
  auto both = expected({{0, 2}, {1, 3}}, count, SimTime::zero());
  auto alone = expected({{0, 2}}, count, SimTime::zero());
  ASSERT_EQ(h.resolved(0).size(), 1u);
  ASSERT_EQ(h.resolved(1).size(), 1u);
  EXPECT_EQ(h.resolved(0)[0].end_ns, both[0].end.count_ns());
  EXPECT_EQ(h.resolved(1)[0].end_ns, both[1].end.count_ns());
  const double slowdown = static_cast<double>(h.resolved(0)[0].end_ns) / alone[0].end.count_ns();
  EXPECT_NEAR(slowdown, 2.0, 0.05);
}

TEST(CoordinatorCore, AnalyticalEngineResolvesAtOnceWithoutPromises) {
  // Expectation: no contention in the analytical model, so a call is resolved as soon as every rank arrived.
  Harness h(options(2, netsim::EngineKind::kAnalytical));
  h.hello(0);
  h.hello(1);
  h.send(0, coord::CommJoin{7, 2, 0, 0, 0});
  h.send(1, coord::CommJoin{7, 2, 1, 0, 0});
  h.send(0, coll(7, 1, 0, 5000, 1 << 16));
  EXPECT_TRUE(h.resolved(0).empty());
  h.send(1, coll(7, 1, 1, 3000, 1 << 16));
  ASSERT_EQ(h.resolved(0).size(), 1u);
  EXPECT_EQ(h.resolved(0)[0].start_ns, 5000);
  EXPECT_GT(h.resolved(0)[0].end_ns, 5000);
}

TEST(CoordinatorCore, CallsBeyondTheRecordLimitAreKeptAsTotals) {
  // System: max_collective_records = 3, ten all-reduces of 2^16 floats on one communicator (flow engine; both
  // processes promise "nothing until woken" after each call), link usage recorded.
  // Expectation: three calls kept in detail, the other seven as one totals entry (7 calls, 7 x 256 KiB); the
  // exit summary still counts all ten; link usage stops with the detailed records (the 4th call's samples, taken
  // when it started, are the last).
  CoordinatorOptions o = options(2);
  o.max_collective_records = 3;
  o.record_link_usage = true;
  Harness h(o);
  h.hello(0);
  h.hello(1);
  h.send(0, coord::CommJoin{7, 2, 0, 0, 0});
  h.send(1, coord::CommJoin{7, 2, 1, 0, 0});
  size_t samples_after_4 = 0;
  for (uint64_t seq = 1; seq <= 10; ++seq) {
    h.send(0, coll(7, seq, 0, static_cast<int64_t>(seq) * 100000, 1 << 16));
    h.send(1, coll(7, seq, 1, static_cast<int64_t>(seq) * 100000, 1 << 16));
    h.send(0, coord::Promise{INT64_MAX, seq - 1});
    h.send(1, coord::Promise{INT64_MAX, seq - 1});
    ASSERT_EQ(h.resolved(0).size(), seq);
    if (seq == 4) samples_after_4 = h.core.record().link_usage.size();
  }
  ASSERT_EQ(h.resolved(0).size(), 10u);
  const JobRecord& job = h.core.record();
  EXPECT_GT(samples_after_4, 0u);
  EXPECT_EQ(job.link_usage.size(), samples_after_4);
  EXPECT_GT(job.link_usage_until, SimTime::zero());
  EXPECT_EQ(job.resolved_calls, 10u);
  EXPECT_EQ(job.collectives.size(), 3u);
  ASSERT_EQ(job.collectives_beyond.size(), 1u);
  const JobRecord::CallTotals& t = job.collectives_beyond.begin()->second;
  EXPECT_EQ(t.calls, 7u);
  EXPECT_EQ(t.bytes, 7u * (1u << 16) * 4u);
  EXPECT_EQ(t.last_end.count_ns(), h.resolved(0).back().end_ns);
  ReportInput in;
  in.job = &job;
  in.nranks = 2;
  const std::string summary = summary_text(in);
  EXPECT_NE(summary.find("AllReduce           10       2621440"), std::string::npos) << summary;
}

TEST(CoordinatorCore, ProcessThatVanishesFailsItsPeersPendingCalls) {
  // System: rank 0 arrives, then rank 1's process disconnects without Bye.
  // Expectation: rank 0 gets a failed resolution naming the dead process, and nothing waits for it.
  Harness h(options(2));
  h.hello(0);
  h.hello(1);
  h.send(0, coord::CommJoin{7, 2, 0, 0, 0});
  h.send(1, coord::CommJoin{7, 2, 1, 0, 0});
  h.send(0, coll(7, 1, 0, 0, 1024));
  h.core.on_disconnect(1);
  h.core.pump();
  auto r = h.resolved(0);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].status, 0);
  EXPECT_NE(r[0].error.find("process 1 (pid 1001) exited"), std::string::npos) << r[0].error;
  EXPECT_FALSE(h.core.has_pending_work());
}

// The Probe messages process `conn` received, oldest first.
std::vector<coord::Probe> probes(Harness& h, int conn) {
  std::vector<coord::Probe> out;
  for (const auto& m : h.inbox[conn])
    if (auto* p = std::get_if<coord::Probe>(&m)) out.push_back(*p);
  return out;
}

// Processes 0 and 1 all-reduce at 1 us; process 2 (asleep outside Genie at host time 0) holds the clock.
void held_by_process_2(Harness& h) {
  for (int p = 0; p < 3; ++p) h.hello(p);
  h.send(0, coord::CommJoin{7, 2, 0, 0, 0});
  h.send(1, coord::CommJoin{7, 2, 1, 0, 0});
  h.send(0, coll(7, 1, 0, 1000, 1024));
  h.send(1, coll(7, 1, 1, 1000, 1024));
  h.send(0, coord::Promise{INT64_MAX, 0});
  h.send(1, coord::Promise{INT64_MAX, 0});
  h.send(2, coord::Promise{0, 0});
}

TEST(CoordinatorCore, StallRuleAdvancesPastASilentProcess) {
  // System: held_by_process_2 (processes 0 and 1 all-reduce, process 2 promises nothing past 0).
  // Expectation: nothing resolves while process 2's promise is 0; relax_stall() assumes it injects nothing
  // before the clock's next event, the call resolves, and the report counts one relaxed step.
  Harness h(options(3));
  held_by_process_2(h);
  EXPECT_TRUE(h.resolved(0).empty());
  EXPECT_NE(h.core.blockers().find("rank 2"), std::string::npos) << h.core.blockers();
  int guard = 0;
  while (h.resolved(0).empty() && guard++ < 100) ASSERT_TRUE(h.core.relax_stall());
  ASSERT_EQ(h.resolved(0).size(), 1u);
  EXPECT_GE(h.core.record().relaxed_steps, 1u);
}

TEST(CoordinatorCore, AJobAsleepAsAWholeMovesToTheNextEventAndItsHoldersResumeThere) {
  // System: held_by_process_2; the coordinator probes; all three processes answer asleep, each having applied
  // every Resolved and Resume it was sent; repeated until the call resolves.
  // Expectation: every process gets the same round; process 2 (the only holder) is told to resume no earlier than
  // the clock's next event (the first at 1 us, when the call starts), once per step; the call resolves; the report
  // counts asleep steps and no relaxed (guessed) step.
  Harness h(options(3));
  held_by_process_2(h);
  ASSERT_TRUE(h.resolved(0).empty());
  ASSERT_TRUE(h.core.start_probe());
  EXPECT_FALSE(h.core.start_probe()) << "one round at a time";
  std::vector<coord::Probe> p0 = probes(h, 0), p2 = probes(h, 2);
  ASSERT_EQ(p0.size(), 1u);
  ASSERT_EQ(p2.size(), 1u);
  EXPECT_EQ(p0[0].round, p2[0].round);
  int guard = 0;
  while (h.resolved(0).empty() && guard++ < 100) {
    const uint64_t round = probes(h, 2).back().round;
    h.send(0, coord::Quiet{round, 0, 1});
    h.send(1, coord::Quiet{round, 0, 1});
    ASSERT_TRUE(h.resolved(0).empty()) << "process 2 has not answered yet";
    uint64_t epoch2 = 0;
    for (const auto& m : h.inbox[2])
      if (auto* r = std::get_if<coord::Resume>(&m)) epoch2 = r->epoch;
    h.send(2, coord::Quiet{round, epoch2, 1});
    if (h.resolved(0).empty()) {
      ASSERT_TRUE(h.core.start_probe());
    }
  }
  ASSERT_EQ(h.resolved(0).size(), 1u);
  std::vector<coord::Resume> resumes;
  for (const auto& m : h.inbox[2])
    if (auto* r = std::get_if<coord::Resume>(&m)) resumes.push_back(*r);
  ASSERT_FALSE(resumes.empty());
  EXPECT_EQ(resumes.front().t_ns, 1000) << "the clock's next event: the call's start";
  EXPECT_EQ(resumes.back().epoch, resumes.size()) << "a Resume counts in the epoch, as a Resolved does";
  for (const auto& m : h.inbox[0]) EXPECT_FALSE(std::holds_alternative<coord::Resume>(m)) << "process 0 held nothing";
  EXPECT_EQ(h.core.record().asleep_steps, resumes.size());
  EXPECT_EQ(h.core.record().relaxed_steps, 0u);
}

TEST(CoordinatorCore, AJobAsleepWithAQueryWaitingResumesAtTheQuerysTime) {
  // System: held_by_process_2, but process 1 has a thread waiting for the answer to a query at 400 ns: its
  // promise is 400 ns and its Quiet says a query waits there (floor_ns); the clock's next event is at 1 us.
  // Expectation: with every process asleep, the holder (process 2) resumes at 400 ns, not at the next event (the
  // querying thread goes on at 400 ns, and a thread asleep outside Genie may wait for it); the clock comes up to
  // 400 ns and process 1 is told so (a Want with safe 400 ns, so its query answers); nothing resolves. Once the
  // query is answered (process 1 promises nothing more), the next asleep round resumes process 2 at 1 us.
  Harness h(options(3));
  held_by_process_2(h);
  h.send(1, coord::Promise{400, 0});
  ASSERT_TRUE(h.core.start_probe());
  uint64_t round = probes(h, 2).back().round;
  h.send(0, coord::Quiet{round, 0, 1, INT64_MAX});
  h.send(1, coord::Quiet{round, 0, 1, 400});
  h.send(2, coord::Quiet{round, 0, 1, INT64_MAX});
  auto resumes = [&](int conn) {
    std::vector<coord::Resume> v;
    for (const auto& m : h.inbox[conn])
      if (auto* r = std::get_if<coord::Resume>(&m)) v.push_back(*r);
    return v;
  };
  ASSERT_EQ(resumes(2).size(), 1u);
  EXPECT_EQ(resumes(2)[0].t_ns, 400) << "resumed past the waiting query";
  EXPECT_TRUE(resumes(1).empty()) << "process 1 held nothing below its query";
  std::optional<coord::Want> w1;
  for (const auto& m : h.inbox[1])
    if (auto* x = std::get_if<coord::Want>(&m)) w1 = *x;
  ASSERT_TRUE(w1.has_value());
  EXPECT_EQ(w1->safe_ns, 400) << "the querying process was not told the clock reached its query";
  EXPECT_TRUE(h.resolved(0).empty());
  h.send(1, coord::Promise{INT64_MAX, 0});
  ASSERT_TRUE(h.core.start_probe());
  round = probes(h, 2).back().round;
  h.send(0, coord::Quiet{round, 0, 1, INT64_MAX});
  h.send(1, coord::Quiet{round, 0, 1, INT64_MAX});
  h.send(2, coord::Quiet{round, 1, 1, INT64_MAX});
  ASSERT_EQ(resumes(2).size(), 2u);
  EXPECT_EQ(resumes(2)[1].t_ns, 1000) << "the clock's next event";
  EXPECT_EQ(h.core.record().asleep_steps, 2u);
}

TEST(CoordinatorCore, OneProcessAwakeOrBehindOnItsWakeUpsKeepsTheClockWhereItIs) {
  // System: held_by_process_2; three probe rounds. Round 1: process 1 answers awake. Round 2: everyone answers
  // asleep, but process 0 with epoch 5 (it was sent no Resolved: its count is 0, so the answer is not about the
  // state the coordinator knows). Round 3: process 2 answers round 1's number, not round 3's.
  // Expectation: no round moves the clock or sends a Resume; round 3 stays open until restarted.
  Harness h(options(3));
  held_by_process_2(h);
  ASSERT_TRUE(h.core.start_probe());
  uint64_t r = probes(h, 0).back().round;
  h.send(0, coord::Quiet{r, 0, 1});
  h.send(1, coord::Quiet{r, 0, 0});
  h.send(2, coord::Quiet{r, 0, 1});
  ASSERT_TRUE(h.core.start_probe());
  const uint64_t r2 = probes(h, 0).back().round;
  EXPECT_GT(r2, r);
  h.send(0, coord::Quiet{r2, 5, 1});
  h.send(1, coord::Quiet{r2, 0, 1});
  h.send(2, coord::Quiet{r2, 0, 1});
  ASSERT_TRUE(h.core.start_probe());
  const uint64_t r3 = probes(h, 0).back().round;
  h.send(0, coord::Quiet{r3, 0, 1});
  h.send(1, coord::Quiet{r3, 0, 1});
  h.send(2, coord::Quiet{r, 0, 1});  // an answer to round 1
  EXPECT_TRUE(h.resolved(0).empty());
  for (int p = 0; p < 3; ++p)
    for (const auto& m : h.inbox[p]) EXPECT_FALSE(std::holds_alternative<coord::Resume>(m));
  EXPECT_EQ(h.core.record().asleep_steps, 0u);
  EXPECT_FALSE(h.core.start_probe()) << "round 3 is still waiting for process 2's answer";
  EXPECT_TRUE(h.core.start_probe(/*restart=*/true));
}

TEST(CoordinatorCore, AProcessThatJoinsDuringARoundVoidsIt) {
  // System: a job of unknown size (expected 0) held by process 2; a round starts; process 3 joins; the first three
  // answer asleep, process 3 answers that round too.
  // Expectation: the round moves nothing (process 3 was not asked, and its index is past the round's answers).
  CoordinatorOptions o = options(3);
  o.expected_processes = 0;
  Harness h(o);
  held_by_process_2(h);
  ASSERT_TRUE(h.core.start_probe());
  const uint64_t r = probes(h, 0).back().round;
  h.hello(3);
  for (int p = 0; p < 4; ++p) h.send(p, coord::Quiet{r, 0, 1});
  EXPECT_TRUE(h.resolved(0).empty());
  EXPECT_EQ(h.core.record().asleep_steps, 0u);
  EXPECT_TRUE(h.core.start_probe()) << "a new round may start";
}

TEST(CoordinatorCore, NoProbeWhileNothingHoldsTheClockOrProcessesAreMissing) {
  // System: a job of 3 expected processes, 2 registered; then all 3 with nothing pending.
  // Expectation: start_probe() sends nothing either time.
  Harness h(options(3));
  h.hello(0);
  h.hello(1);
  EXPECT_FALSE(h.core.start_probe());
  h.hello(2);
  EXPECT_FALSE(h.core.start_probe());
  for (int p = 0; p < 3; ++p) EXPECT_TRUE(probes(h, p).empty());
}

TEST(CoordinatorCore, BadMessagesAreDroppedAndCounted) {
  Harness h(options(2));
  h.hello(0);
  h.hello(1);
  h.send(0, coord::CommJoin{7, 0, 0, 0, 0});          // nranks 0
  h.send(0, coord::CommJoin{7, 2, 5, 0, 0});          // rank out of range
  h.send(0, coll(99, 1, 0, 0, 16));                   // unknown communicator
  h.send(0, coord::CommJoin{7, 2, 0, 0, 0});
  h.send(1, coord::CommJoin{7, 2, 0, 0, 0});          // rank 0 taken by another process
  h.send(1, coll(7, 1, 0, 0, 16));                    // process 1 is not rank 0
  h.send(0, coord::Message{coord::Welcome{}});        // ranks do not send Welcome
  EXPECT_EQ(h.core.record().protocol_errors, 6u);
}

TEST(CoordinatorCore, PointToPointKeepsTheSendersCountAndDatatype) {
  // System: rank 0 sends 1024 floats (4096 bytes) to rank 1; a second report claims 1000 floats in 4096 bytes.
  // Expectation: the message is planned and recorded as 1024 float32 (what the sender called), the
  // inconsistent one is dropped as a protocol error.
  Harness h(options(2));
  h.hello(0);
  h.hello(1);
  h.send(0, coord::CommJoin{7, 2, 0, 0, 0});
  h.send(1, coord::CommJoin{7, 2, 1, 0, 0});
  auto msg = [](int32_t comm_rank, bool send, uint64_t count) {
    coord::P2p m;
    m.comm = 7;
    m.src = 0;
    m.dst = 1;
    m.index = 1;
    m.bytes = 4096;
    m.count = count;
    m.datatype = static_cast<uint8_t>(netsim::DataType::kFloat32);
    m.is_send = send ? 1 : 0;
    m.comm_rank = comm_rank;
    m.ready_ns = 1000;
    return m;
  };
  h.send(0, msg(0, true, 1000));
  EXPECT_EQ(h.core.record().protocol_errors, 1u);
  h.send(0, msg(0, true, 1024));
  h.send(1, msg(1, false, 1024));
  for (int p = 0; p < 2; ++p) h.send(p, coord::Promise{INT64_MAX, 0});
  ASSERT_EQ(h.resolved(0).size(), 1u);
  ASSERT_EQ(h.core.record().collectives.size(), 1u);
  const CollectiveRecord& r = h.core.record().collectives[0];
  EXPECT_TRUE(r.p2p);
  EXPECT_EQ(r.count, 1024u);
  EXPECT_EQ(r.datatype, netsim::DataType::kFloat32);
  EXPECT_EQ(r.bytes, 4096u);
  EXPECT_GT(h.resolved(0)[0].end_ns, 1000);
}

// --- order independence ------------------------------------------------------------------------------

// A rank process as the client behaves, reduced to what the coordinator sees: it runs its calls in order,
// each after its host reaches the call's host time and its previous call ended (plus a compute gap), and
// blocks on each call until it is resolved (promise "nothing until woken"). While running it promises its
// next call's ready time; epochs count the resolutions it applied.
struct Call {
  uint64_t comm;
  uint64_t seq;
  int rank;
  int64_t host_ns;
  int64_t gap_ns;
  uint64_t count;
};
struct FakeProcess {
  std::vector<Call> calls;
  size_t next = 0;
  bool blocked = false;
  int64_t last_end = 0;
  uint64_t applied = 0;
  size_t read = 0;  // messages of the inbox consumed
  int64_t ready() const { return std::max(calls[next].host_ns, last_end + calls[next].gap_ns); }
};

// Communicators over 4 processes; each process runs its communicators' calls in one global order (as a
// real program does, so blocking calls cannot deadlock).
std::vector<FakeProcess> script() {
  struct Comm {
    uint64_t key;
    std::vector<int> members;
  };
  const std::vector<Comm> comms = {{0x10, {0, 1, 2, 3}}, {0x20, {0, 2}}, {0x30, {1, 3}}, {0x40, {0, 1}}, {0x50, {2, 3}}};
  std::vector<FakeProcess> procs(4);
  std::map<uint64_t, uint64_t> seq;
  std::mt19937 rng(7);
  for (int phase = 0; phase < 6; ++phase) {
    for (const auto& c : comms) {
      if ((phase + c.key) % 3 == 0) continue;  // not every communicator in every phase
      const uint64_t s = ++seq[c.key];
      const uint64_t count = (1u << 14) << ((phase + c.key / 16) % 6);
      for (size_t r = 0; r < c.members.size(); ++r) {
        const int p = c.members[r];
        procs[static_cast<size_t>(p)].calls.push_back(
            {c.key, s, static_cast<int>(r), static_cast<int64_t>(rng() % 50000), static_cast<int64_t>(rng() % 20000),
             count});
      }
    }
  }
  return procs;
}

std::map<std::pair<uint64_t, uint64_t>, std::pair<int64_t, int64_t>> run_interleaving(unsigned seed) {
  Harness h(options(4));
  for (int p = 0; p < 4; ++p) h.hello(p);
  const std::vector<std::pair<uint64_t, std::vector<int>>> comms = {
      {0x10, {0, 1, 2, 3}}, {0x20, {0, 2}}, {0x30, {1, 3}}, {0x40, {0, 1}}, {0x50, {2, 3}}};
  for (const auto& [key, members] : comms)
    for (size_t r = 0; r < members.size(); ++r)
      h.send(members[r], coord::CommJoin{key, static_cast<int32_t>(members.size()), static_cast<int32_t>(r), 0, 0});
  auto procs = script();
  std::mt19937 rng(seed);
  std::map<std::pair<uint64_t, uint64_t>, std::pair<int64_t, int64_t>> out;
  int idle_rounds = 0;
  for (int step = 0; step < 200000; ++step) {
    bool all_done = true;
    for (const auto& p : procs) all_done &= p.next == p.calls.size() && !p.blocked;
    if (all_done) break;
    const int pi = static_cast<int>(rng() % 4);
    FakeProcess& p = procs[static_cast<size_t>(pi)];
    auto& inbox = h.inbox[pi];
    bool acted = false;
    // Apply one resolution, if one arrived.
    while (p.read < inbox.size() && !acted) {
      const coord::Message& m = inbox[p.read++];
      if (auto* r = std::get_if<coord::Resolved>(&m)) {
        EXPECT_EQ(r->status, 0) << r->error;
        out[{r->comm, r->seq}] = {r->start_ns, r->end_ns};
        p.applied = r->epoch;
        p.last_end = std::max(p.last_end, r->end_ns);
        p.blocked = false;
        ++p.next;
        acted = true;
      }
    }
    if (!acted && !p.blocked && p.next < p.calls.size() && rng() % 2 == 0) {
      const Call& c = p.calls[p.next];
      h.send(pi, coll(c.comm, c.seq, c.rank, p.ready(), c.count));
      p.blocked = true;
      acted = true;
    }
    if (!acted) {
      // Report the promise: blocked -> nothing until woken; running -> its next call's ready time.
      const int64_t promise = p.blocked || p.next == p.calls.size() ? INT64_MAX : p.ready();
      h.send(pi, coord::Promise{promise, p.applied});
    }
    idle_rounds = acted ? 0 : idle_rounds + 1;
    if (idle_rounds > 1000) {
      ADD_FAILURE() << "no progress (seed " << seed << "): blockers " << h.core.blockers();
      break;
    }
  }
  EXPECT_EQ(h.core.record().late_arrivals, 0u) << "seed " << seed;
  return out;
}

TEST(CoordinatorCore, ResolutionsDoNotDependOnArrivalOrder) {
  // System: 5 communicators over 4 processes (the world, two cross-server pairs that share the s0-s1 link,
  // two same-server pairs), 6 phases of all-reduces of 64 KiB..2 MiB with random host times and compute
  // gaps; each process blocks on each call. Messages reach the coordinator in 12 different random
  // interleavings (each process's own order kept).
  // Expectation: every interleaving yields exactly the same start and end for every call, and no call
  // ever starts before the time its ranks reported (no late arrivals).
  auto ref = run_interleaving(1);
  std::set<std::pair<uint64_t, uint64_t>> calls;
  for (const auto& p : script())
    for (const auto& c : p.calls) calls.insert({c.comm, c.seq});
  ASSERT_EQ(ref.size(), calls.size());  // every call resolved
  ASSERT_GE(ref.size(), 20u);
  for (unsigned seed = 2; seed <= 12; ++seed) {
    auto got = run_interleaving(seed);
    ASSERT_EQ(got.size(), ref.size()) << "seed " << seed;
    for (const auto& [k, v] : ref) {
      ASSERT_TRUE(got.count(k));
      EXPECT_EQ(got[k], v) << "comm " << k.first << " #" << k.second << " seed " << seed;
    }
  }
}

}  // namespace
}  // namespace genie::sched
