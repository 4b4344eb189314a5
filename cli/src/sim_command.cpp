// SPDX-License-Identifier: Apache-2.0
// `genie sim` implementation: flags -> netsim::SweepOptions -> table on stdout.
#include "sim_command.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>

#include "genie/common/config.hpp"
#include "genie/netsim/sweep.hpp"

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
};

Status run_sim(const SimFlags& f) {
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
  GENIE_ASSIGN_OR_RETURN(netsim::SweepResult r, netsim::run_sweep(o));
  std::fputs(netsim::format_nccl_tests(o, r).c_str(), stdout);
  std::fflush(stdout);
  return Status::ok();
}
}  // namespace

void register_sim_command(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<SimFlags>();
  CLI::App* sub = app.add_subcommand("sim", "Simulate an nccl-tests sweep on a modelled topology (no program, no GPU)");
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
  sub->callback([flags, exit_code]() {
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
