// SPDX-License-Identifier: Apache-2.0
// `genie sim` implementation: flags -> netsim::SweepOptions -> table on stdout.
#include "sim_command.hpp"

#include <strings.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>

#include "genie/common/config.hpp"
#include "genie/netsim/sweep.hpp"
#include "genie/netsim/workload.hpp"
#include "genie/sched/job_topology.hpp"

namespace genie::cli {

namespace {
struct SimFlags {
  std::string topology = "hgx-h100";
  int nodes = 1;
  int gpus_per_node = 0;
  std::string fabric = "rail";
  double oversubscription = 1.0;
  std::string collective = "all_reduce";
  std::string min_bytes = "32M";
  std::string max_bytes = "32M";
  double step_factor = 1;
  std::string step_bytes = "1M";
  std::string datatype = "float";
  std::string redop = "sum";
  int root = 0;
  std::string engine = "flow";
  int gpus_per_thread = 0;
  // --workload: replay Chakra traces instead of a sweep.
  std::string workload;
  int dp = 0;
  int dp_from = 0;
  std::string device;
  std::string json;
  std::string max_memory = "auto";
  bool topology_given = false, nodes_given = false, engine_given = false, fabric_given = false;
};

// The NCCL_* parameters set in this environment or config file (not left at their defaults): they override the
// traces' recorded choices.
netsim::NcclEnv env_override(const config::Config& cfg) {
  netsim::NcclEnv all = netsim::NcclEnv::from_config(cfg), o;
  auto set = [&](const char* key) { return cfg.source(key) != config::Source::kDefault; };
  if (set("netsim.nccl_algo")) o.algo = all.algo;
  if (set("netsim.nccl_proto")) o.proto = all.proto;
  if (set("netsim.nccl_min_nchannels")) o.min_channels = all.min_channels;
  if (set("netsim.nccl_max_nchannels")) o.max_channels = all.max_channels;
  if (set("netsim.nccl_buffsize")) o.buffsize = all.buffsize;
  if (set("netsim.nccl_nvls_enable")) o.nvls_enable = all.nvls_enable;
  if (set("netsim.nccl_collnet_enable")) o.collnet_enable = all.collnet_enable;
  if (set("netsim.nccl_pat_enable")) o.pat_enable = all.pat_enable;
  return o;
}

Status run_workload(const SimFlags& f) {
  netsim::WorkloadOptions o;
  o.workload = f.workload;
  if (f.topology_given)
    o.topology = f.topology;
  else if (!f.device.empty())
    o.topology = sched::server_preset_for_device(f.device);
  if (f.nodes_given) o.nodes = f.nodes;
  if (f.fabric_given) o.fabric = f.fabric;
  if (f.engine_given) {
    GENIE_ASSIGN_OR_RETURN(netsim::EngineKind e, netsim::parse_engine(f.engine));
    o.engine = e;
  }
  GENIE_ASSIGN_OR_RETURN(config::Config cfg, config::Config::load_from_process());
  o.env_override = env_override(cfg);
  o.dp = f.dp;
  o.dp_from = f.dp_from;
  // Progress on the terminal: one updating line (a line every 30 s when stderr is not a terminal).
  const bool tty = ::isatty(2) != 0;
  o.progress_interval_s = tty ? 1.0 : 30.0;
  bool printed = false;
  o.progress = [&](const netsim::WorkloadProgress& p) {
    const double frac = p.nodes_total ? static_cast<double>(p.nodes_done) / static_cast<double>(p.nodes_total) : 0;
    const double left = frac > 0 ? p.wall_s * (1 - frac) / frac : 0;
    std::fprintf(stderr,
                 "%s[genie] replay: %.1f%% (%llu of %llu nodes), simulated %.3f ms, %.0f s elapsed, ~%.0f s left%s",
                 tty ? "\r" : "", 100 * frac, static_cast<unsigned long long>(p.nodes_done),
                 static_cast<unsigned long long>(p.nodes_total), p.now.to_us() / 1e3, p.wall_s, std::ceil(left),
                 tty ? "  " : "\n");
    printed = true;
  };
  auto r = netsim::replay_workload(o);
  if (printed && tty) std::fputs("\n", stderr);
  if (!r.is_ok()) return r.status();
  if (!f.device.empty())
    r->notes.push_back("--device " + f.device +
                       " picks the cluster preset; compute nodes keep their recorded "
                       "durations (the traces carry no FLOPs to rescale them)");
  std::fputs(netsim::format_workload(*r).c_str(), stdout);
  std::fflush(stdout);
  if (!f.json.empty()) {
    std::ofstream out(f.json);
    out << netsim::workload_json(*r);
    if (!out) return Status(Errc::kSystem, f.json + ": write failed");
  }
  return Status::ok();
}

Status run_sim(const SimFlags& f) {
  if (!f.workload.empty()) return run_workload(f);
  if (f.dp > 0 || f.dp_from > 0 || !f.json.empty() || !f.device.empty())
    return invalid_argument("--dp, --dp-from, --json and --device apply to --workload replays");
  netsim::SweepOptions o;
  o.topology = f.topology;
  o.topology_options.nodes = f.nodes;
  o.topology_options.gpus_per_node = f.gpus_per_node;
  o.topology_options.fabric = f.fabric;
  o.topology_options.oversubscription = f.oversubscription;
  GENIE_ASSIGN_OR_RETURN(o.collective, netsim::parse_collective(f.collective));
  GENIE_ASSIGN_OR_RETURN(o.min_bytes, netsim::parse_size(f.min_bytes));
  GENIE_ASSIGN_OR_RETURN(o.max_bytes, netsim::parse_size(f.max_bytes));
  o.step_factor = f.step_factor;
  GENIE_ASSIGN_OR_RETURN(o.step_bytes, netsim::parse_size(f.step_bytes));
  GENIE_ASSIGN_OR_RETURN(o.datatype, netsim::parse_datatype(f.datatype));
  GENIE_ASSIGN_OR_RETURN(o.redop, netsim::parse_redop(f.redop));
  o.root = f.root;
  GENIE_ASSIGN_OR_RETURN(o.engine, netsim::parse_engine(f.engine));
  o.gpus_per_thread = f.gpus_per_thread;
  // NCCL_ALGO, NCCL_PROTO, NCCL_*_NCHANNELS, NCCL_BUFFSIZE, NCCL_NVLS_ENABLE, NCCL_COLLNET_ENABLE and
  // NCCL_PAT_ENABLE come from the registry.
  GENIE_ASSIGN_OR_RETURN(config::Config cfg, config::Config::load_from_process());
  o.env = netsim::NcclEnv::from_config(cfg);
  if (f.max_memory == "auto") {
    o.max_memory_bytes = netsim::default_memory_limit();
  } else {
    auto m = netsim::parse_size(f.max_memory);
    if (!m.is_ok())
      return invalid_argument("--max-memory: " + m.status().message() +
                              " (a size such as 16G, 0 for no limit, or auto)");
    o.max_memory_bytes = *m;
  }
  // NCCL's choices as # lines, as NCCL itself logs them with NCCL_DEBUG=INFO.
  if (const char* d = std::getenv("NCCL_DEBUG"); d != nullptr && strcasecmp(d, "INFO") == 0) o.show_tuning = true;
  // Progress on the terminal for long simulations: one updating line (a line every 30 s when stderr is not a
  // terminal), from the first second on.
  const bool tty = ::isatty(2) != 0;
  o.progress_interval_s = tty ? 1.0 : 30.0;
  bool printed = false;
  o.progress = [&](const netsim::SweepProgress& p) {
    const double frac = p.sim.total ? static_cast<double>(p.sim.done) / static_cast<double>(p.sim.total) : 0;
    const double left = frac > 0 ? p.sim.wall_s * (1 - frac) / frac : 0;
    std::fprintf(stderr,
                 "%s[genie] sim: size %zu of %zu (%llu bytes): %.1f%% of %llu ops, %.0f s elapsed, ~%.0f s left%s",
                 tty ? "\r" : "", p.row + 1, p.rows, static_cast<unsigned long long>(p.size_bytes), 100 * frac,
                 static_cast<unsigned long long>(p.sim.total), p.sim.wall_s, std::ceil(left), tty ? "  " : "\n");
    printed = true;
  };
  auto sweep = netsim::run_sweep(o);
  if (printed && tty) std::fputs("\n", stderr);
  GENIE_ASSIGN_OR_RETURN(netsim::SweepResult r, std::move(sweep));
  std::fputs(netsim::format_nccl_tests(o, r).c_str(), stdout);
  std::fflush(stdout);
  return Status::ok();
}
}  // namespace

void register_sim_command(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<SimFlags>();
  CLI::App* sub = app.add_subcommand(
      "sim",
      "Simulate an nccl-tests sweep on a modelled topology (no program, no GPU), or replay Chakra execution traces "
      "(--workload DIR: what genie run --chakra DIR records, or Chakra traces of other origin)");
  sub->add_option("--topology", flags->topology,
                  "Preset (hgx-h100, hgx-h200, dgx-a100, hgx-b200), ring:N, torus2d:XxY, torus3d:XxYxZ, or a "
                  ".json/.yaml (ASTRA-sim) file")
      ->capture_default_str();
  sub->add_option("--nodes", flags->nodes, "Servers (multi-node fabric)")->capture_default_str();
  sub->add_option("--gpus-per-node", flags->gpus_per_node, "Use only this many GPUs of each server (0: all)");
  sub->add_option("--fabric", flags->fabric, "Inter-server fabric: rail (rail-optimized fat-tree) or fat-tree")
      ->capture_default_str();
  sub->add_option("--oversubscription", flags->oversubscription, "Classic fat-tree leaf oversubscription (>= 1)")
      ->capture_default_str();
  sub->add_option("--collective", flags->collective,
                  "all_reduce, all_gather, reduce_scatter, alltoall, broadcast, reduce, gather, scatter, sendrecv")
      ->capture_default_str();
  sub->add_option("-b,--minbytes", flags->min_bytes, "Minimum size (K/M/G suffixes)")->capture_default_str();
  sub->add_option("-e,--maxbytes", flags->max_bytes, "Maximum size")->capture_default_str();
  sub->add_option("-f,--stepfactor", flags->step_factor, "Multiply size by this factor each step");
  sub->add_option("-i,--stepbytes", flags->step_bytes, "Add this many bytes each step (when -f is not given)");
  sub->add_option("-d,--datatype", flags->datatype, "Datatype (float, half, bfloat16, double, int32, ...)")
      ->capture_default_str();
  sub->add_option("-o,--op", flags->redop, "Reduction op (sum, prod, max, min, avg)")->capture_default_str();
  sub->add_option("-r,--root", flags->root, "Root rank")->capture_default_str();
  sub->add_option("--engine", flags->engine, "analytical or flow")->capture_default_str();
  sub->add_option("-g,--ngpus", flags->gpus_per_thread, "GPUs launched by one host thread (0: a whole server)");
  sub->add_option("--workload", flags->workload,
                  "Replay the Chakra execution traces DIR/<prefix>.<rank>.et (or DIR/PREFIX) on the topology the job "
                  "ran on, or the one --topology/--nodes/--device give; prints each rank's time and ranges "
                  "(docs/chakra.md)");
  sub->add_option("--dp", flags->dp,
                  "--workload: replay with this many data-parallel replicas (data-parallel groups grow to it, other "
                  "groups are copied per replica)")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--dp-from", flags->dp_from,
                  "--workload: the traces' data-parallel group size, when their groups leave it ambiguous")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--device", flags->device,
                  "--workload: device preset whose server preset is the cluster (h100-sxm: hgx-h100, ...) unless "
                  "--topology is given");
  sub->add_option("--max-memory", flags->max_memory,
                  "Memory one simulated size may use (K/M/G suffixes; 0: no limit; auto: 90% of what the machine "
                  "has available): a bigger one stops with the estimate and what helps, instead of the OOM killer")
      ->capture_default_str();
  sub->add_option("--json", flags->json, "--workload: also write the per-rank results as JSON to this file");
  sub->callback([flags, exit_code, sub]() {
    flags->topology_given = sub->count("--topology") > 0;
    flags->nodes_given = sub->count("--nodes") > 0;
    flags->engine_given = sub->count("--engine") > 0;
    flags->fabric_given = sub->count("--fabric") > 0;
    const Status s = run_sim(*flags);
    if (!s.is_ok()) {
      std::cerr << "genie sim: " << s.message() << "\n";
      *exit_code = 1;
    } else {
      *exit_code = 0;
    }
  });
}

}  // namespace genie::cli
