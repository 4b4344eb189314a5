// SPDX-License-Identifier: Apache-2.0
// Memory limits and progress of long simulations: build_schedule gives up an explicit DAG that would not fit, the
// Simulator refuses state it cannot hold and stops when the process outgrows the limit, progress reports are
// monotonic and end complete, and none of this changes a single time.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>

#include "engine/sim_budget.hpp"
#include "genie/netsim/schedule.hpp"
#include "genie/netsim/simulator.hpp"
#include "genie/netsim/sweep.hpp"
#include "genie/netsim/topology.hpp"

namespace genie::netsim {
namespace {

std::shared_ptr<const Topology> servers(int nodes) {
  TopologyOptions o;
  o.nodes = nodes;
  return load_topology("hgx-h100", o).value();
}

CollectiveSpec all_reduce(const Topology& t, uint64_t bytes) {
  CollectiveSpec spec;
  spec.collective = Collective::kAllReduce;
  spec.datatype = DataType::kFloat32;
  spec.count = bytes / 4;
  spec.nranks = t.num_gpus();
  return spec;
}

TEST(SimBudget, ExplicitDagThatWouldNotFitIsGivenUpWithTheReason) {
  auto topo = servers(16);  // 128 GPUs: NCCL picks NVLSTree for 1 GiB, an explicit DAG of ~0.8 M ops
  const CollectiveSpec spec = all_reduce(*topo, 1u << 30);
  auto full = plan_collective(spec, *topo, NcclEnv{}, ScheduleForm::kCompact, 0);
  ASSERT_TRUE(full.is_ok()) << full.status().message();
  ASSERT_EQ(full->tuning.algorithm, Algorithm::kNvlsTree);
  ASSERT_FALSE(full->is_compact());
  const uint64_t need = estimate_state_bytes(*full, 0) + full->ops.size() * sizeof(Step) + full->deps.size() * 4;
  auto small = plan_collective(spec, *topo, NcclEnv{}, ScheduleForm::kCompact, need / 4);
  ASSERT_FALSE(small.is_ok());
  EXPECT_EQ(small.status().code(), Errc::kOutOfMemory);
  const std::string m = small.status().message();
  EXPECT_NE(m.find("NVLSTree/Simple"), std::string::npos) << m;
  EXPECT_NE(m.find("128 ranks"), std::string::npos) << m;
  EXPECT_NE(m.find("--engine analytical"), std::string::npos) << m;
  // The projection from the finished channels is close to what the whole DAG has (within 10%).
  const auto at = m.find("about ");
  ASSERT_NE(at, std::string::npos) << m;
  const double projected_mops = std::stod(m.substr(at + 6));
  EXPECT_NEAR(projected_mops * 1e6, static_cast<double>(full->ops.size()), 0.1 * static_cast<double>(full->ops.size()))
      << m;
  // A limit the DAG fits in builds the very same schedule.
  auto roomy = plan_collective(spec, *topo, NcclEnv{}, ScheduleForm::kCompact, need * 4);
  ASSERT_TRUE(roomy.is_ok()) << roomy.status().message();
  EXPECT_EQ(roomy->ops.size(), full->ops.size());
  EXPECT_EQ(roomy->deps, full->deps);
}

TEST(SimBudget, SubmitRefusesStateOverTheLimit) {
  auto topo = servers(2);
  auto s = plan_collective(all_reduce(*topo, 64u << 20), *topo, NcclEnv{}, ScheduleForm::kExplicit).value();
  SimulatorOptions o;
  o.engine = EngineKind::kAnalytical;
  o.max_memory_bytes = resident_bytes() + estimate_state_bytes(s, 0) / 2;
  Simulator sim(topo, o);
  auto h = sim.submit(std::make_shared<const Schedule>(s), SimTime::zero());
  ASSERT_FALSE(h.is_ok());
  EXPECT_EQ(h.status().code(), Errc::kOutOfMemory);
  EXPECT_NE(h.status().message().find("needs about"), std::string::npos) << h.status().message();
}

TEST(SimBudget, RunStopsWhenTheProcessOutgrowsTheLimit) {
  auto topo = servers(2);
  auto s = plan_collective(all_reduce(*topo, 64u << 20), *topo, NcclEnv{}, ScheduleForm::kExplicit).value();
  SimulatorOptions o;
  o.engine = EngineKind::kFlow;
  // Admitted (with room for what building the state and a sanitizer's shadow memory add)...
  constexpr uint64_t kRoom = uint64_t{256} << 20;
  o.max_memory_bytes = resident_bytes() + estimate_state_bytes(s, 0) * 2 + kRoom;
  o.progress_interval_s = 0;                                               // checked at every engine iteration
  o.progress = [](const SimProgress&) {};
  Simulator sim(topo, o);
  ASSERT_TRUE(sim.submit(std::make_shared<const Schedule>(s), SimTime::zero()).is_ok());
  // ...then the process grows: fresh pages (freed heap memory would be reused without growing the resident set).
  const size_t len = static_cast<size_t>(estimate_state_bytes(s, 0) * 4 + 2 * kRoom);
  void* ballast = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(ballast, MAP_FAILED);
  std::memset(ballast, 1, len);
  Status st = sim.run();
  munmap(ballast, len);
  EXPECT_EQ(st.code(), Errc::kOutOfMemory) << st.message();
  EXPECT_NE(st.message().find("over the memory limit"), std::string::npos) << st.message();
}

TEST(SimBudget, ProgressIsMonotonicEndsCompleteAndChangesNoTime) {
  auto topo = servers(2);
  auto s = plan_collective(all_reduce(*topo, 256u << 20), *topo, NcclEnv{}, ScheduleForm::kExplicit).value();
  for (EngineKind e : {EngineKind::kAnalytical, EngineKind::kFlow}) {
    SimulatorOptions plain;
    plain.engine = e;
    const CollectiveTiming ref = simulate_schedule(topo, s, plain).value();
    SimulatorOptions watched = plain;
    std::vector<SimProgress> seen;
    watched.progress_interval_s = 0;
    watched.progress = [&](const SimProgress& p) { seen.push_back(p); };
    watched.max_memory_bytes = uint64_t{1} << 40;
    const CollectiveTiming t = simulate_schedule(topo, s, watched).value();
    ASSERT_EQ(t.ops.size(), ref.ops.size());
    EXPECT_EQ(t.end, ref.end);
    for (size_t i = 0; i < t.ops.size(); ++i) {
      ASSERT_EQ(t.ops[i].start, ref.ops[i].start) << i;
      ASSERT_EQ(t.ops[i].end, ref.ops[i].end) << i;
    }
    ASSERT_GE(seen.size(), 2u) << engine_name(e);
    for (size_t i = 0; i < seen.size(); ++i) {
      EXPECT_EQ(seen[i].total, s.ops.size());
      EXPECT_LE(seen[i].done, seen[i].total);
      if (i > 0) {
        EXPECT_GE(seen[i].done, seen[i - 1].done);
        EXPECT_GE(seen[i].now, seen[i - 1].now);
      }
    }
    EXPECT_GT(seen.back().done, seen.front().done);
  }
}

TEST(SimBudget, SweepNamesNcclsChoicesWhenAsked) {
  SweepOptions o;
  o.topology_options.nodes = 2;
  o.min_bytes = 1024;
  o.max_bytes = 1u << 30;
  o.step_factor = 1024;
  o.show_tuning = true;
  size_t calls = 0;
  o.progress_interval_s = 0;
  o.progress = [&](const SweepProgress& p) {
    EXPECT_EQ(p.rows, 3u);
    EXPECT_LT(p.row, p.rows);
    ++calls;
  };
  auto r = run_sweep(o);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->rows.size(), 3u);
  EXPECT_GT(calls, 0u);
  const std::string out = format_nccl_tests(o, *r);
  for (const SweepRow& row : r->rows) {
    const std::string line = "# NCCL INFO all_reduce " + std::to_string(row.size_bytes) + " bytes: algorithm " +
                             algorithm_name(row.tuning.algorithm) + ", protocol " + protocol_name(row.tuning.protocol);
    EXPECT_NE(out.find(line), std::string::npos) << line << "\n" << out;
  }
  o.show_tuning = false;
  EXPECT_EQ(format_nccl_tests(o, *r).find("NCCL INFO"), std::string::npos);
}

}  // namespace
}  // namespace genie::netsim
