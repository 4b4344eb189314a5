// SPDX-License-Identifier: Apache-2.0
// Benchmark: wall time and peak memory of a 1 GB ring all-reduce on 8..16384 GPUs (servers of 8 hgx-h100
// on a rail-optimized fat-tree), in the analytical and the flow engine, with the compact Schedule timed by
// symmetry and, as the reference measured in the same build, with the explicit per-transfer DAG.
//
// Peak memory (ru_maxrss) is per process and only grows, so run one configuration per process:
//   netsim_ring_bench --benchmark_filter='RingAllReduce1G/4096/1/1$'   # /<gpus>/<engine>/<form>
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include "genie/netsim/schedule.hpp"
#include "genie/netsim/simulator.hpp"
#include "genie/netsim/topology.hpp"

namespace {

using namespace genie::netsim;

/// 1 GiB of float, as in the performance table.
constexpr uint64_t kAllReduceBytes = uint64_t{1} << 30;
/// GPUs per server in the benchmark fabric (hgx-h100).
constexpr int kGpusPerServer = 8;
/// The explicit DAG costs ~85 bytes per transfer (Step + dependencies + timing); beyond this many transfers
/// a run would exceed the 23 GB of the benchmark machine, so it is skipped with a message.
constexpr double kMaxExplicitTransfers = 150e6;

void RingAllReduce1G(benchmark::State& state) {
  const int gpus = static_cast<int>(state.range(0));
  const EngineKind engine = state.range(1) == 0 ? EngineKind::kAnalytical : EngineKind::kFlow;
  const ScheduleForm form = state.range(2) == 0 ? ScheduleForm::kExplicit : ScheduleForm::kCompact;
  double sim_us = 0;
  size_t ops = 0;
  uint32_t period = 0;
  const double want = 2.0 * (gpus - 1) * gpus;
  if (form == ScheduleForm::kExplicit && want > kMaxExplicitTransfers) {
    state.SkipWithError(
        ("needs " + std::to_string(static_cast<int64_t>(want)) + " transfers; over the memory cap").c_str());
    for (auto _ : state) {
    }
    return;
  }
  for (auto _ : state) {
    TopologyOptions to;
    to.nodes = std::max(1, gpus / kGpusPerServer);
    to.gpus_per_node = std::min(gpus, kGpusPerServer);
    auto topo = load_topology("hgx-h100", to).value();
    CollectiveSpec spec;
    spec.count = kAllReduceBytes / 4;
    spec.nranks = gpus;
    Tuning tune;  // one channel, Simple, one slice: the flat NCCL ring, 2(n-1) steps of n transfers
    tune.algorithm = Algorithm::kRing;
    tune.protocol = Protocol::kSimple;
    tune.nchannels = 1;
    auto sched = std::make_shared<const Schedule>(build_schedule(spec, *topo, tune, form).value());
    ops = sched->num_ops();
    SimulatorOptions so;
    so.engine = engine;
    Simulator sim(topo, so);
    const int h = sim.submit(sched, genie::SimTime::zero()).value();
    if (!sim.run().is_ok()) state.SkipWithError("simulation failed");
    sim_us = sim.timing(h).duration().to_us();
    period = sim.timing(h).period;
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  state.counters["gpus"] = gpus;
  state.counters["transfers"] = static_cast<double>(ops);
  state.counters["simulated_us"] = sim_us;
  state.counters["peak_rss_MiB"] = static_cast<double>(ru.ru_maxrss) / 1024.0;
  state.counters["period"] = period;
  state.SetLabel(std::string(engine_name(engine)) + (form == ScheduleForm::kCompact ? " compact" : " explicit"));
}

BENCHMARK(RingAllReduce1G)
    ->ArgsProduct({{8, 64, 512, 4096, 16384}, {0, 1}, {0, 1}})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
