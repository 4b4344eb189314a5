// SPDX-License-Identifier: Apache-2.0
// `genie run`: launches the ranks of a job on Genie's libraries (torchrun-style environment).
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "genie/sched/launcher.hpp"

namespace genie::sched {

void register_run_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "run",
      "Run N ranks of a program on Genie's CUDA runtime and NCCL, with the environment torchrun sets (RANK, "
      "WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT) and GENIE_NODE per "
      "emulated node. Output lines are prefixed with [rankN]:. The exit code is the first failing rank's.");
  static LaunchSpec spec;
  static std::string device, topology, clock, engine;
  static double grace_s = 10;
  static bool no_prefix = false;
  cmd->add_option("-n,--nranks", spec.nranks, "Number of ranks (processes)")->required()->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--nodes", spec.nodes, "Emulated nodes; ranks fill them in order (default: ceil(N / gpus-per-node))")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--gpus-per-node", spec.gpus_per_node, "GPUs per node: the devices each rank's process sees")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--device", device, "Device preset or JSON file (GENIE_DEVICE)");
  cmd->add_option("--topology", topology, "Topology preset or file NCCL calls are timed on (GENIE_TOPOLOGY)");
  cmd->add_option("--clock", clock, "virtual or realtime (GENIE_CLOCK)")->check(CLI::IsMember({"virtual", "realtime"}));
  cmd->add_option("--engine", engine, "Network model: flow or analytical (GENIE_ENGINE)")
      ->check(CLI::IsMember({"flow", "analytical"}));
  cmd->add_option("--grace", grace_s, "Seconds the other ranks get after one fails, before they are stopped")
      ->check(CLI::Range(0.0, 86400.0));
  cmd->add_flag("--no-prefix", no_prefix, "Do not prefix output lines with [rankN]:");
  cmd->add_option("command", spec.command, "Program and its arguments (after --)")->required()->expected(-1);
  cmd->callback([exit_code] {
    if (!device.empty()) spec.extra_env["GENIE_DEVICE"] = device;
    if (!topology.empty()) spec.extra_env["GENIE_TOPOLOGY"] = topology;
    if (!clock.empty()) spec.extra_env["GENIE_CLOCK"] = clock;
    if (!engine.empty()) spec.extra_env["GENIE_ENGINE"] = engine;
    spec.grace = std::chrono::milliseconds(static_cast<int64_t>(grace_s * 1000));
    spec.prefix_output = !no_prefix;
    spec.lib_dir = library_dir();
    if (!std::filesystem::exists(spec.lib_dir + "/libnccl.so.2")) {
      std::cerr << "genie run: " << spec.lib_dir << "/libnccl.so.2 not found (build the nccl2 target)\n";
      *exit_code = 2;
      return;
    }
    auto r = launch(spec);
    if (!r.is_ok()) {
      std::cerr << "genie run: " << r.status().message() << "\n";
      *exit_code = 2;
      return;
    }
    *exit_code = r->exit_code;
  });
}

}  // namespace genie::sched
