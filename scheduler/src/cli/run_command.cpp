// SPDX-License-Identifier: Apache-2.0
// `genie run`: launches the ranks of a job on Genie's libraries (torchrun-style environment).
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/fabric_summary.hpp"
#include "genie/sched/launcher.hpp"
#include "genie/sched/testbed.hpp"

namespace genie::sched {

void register_run_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "run",
      "Run N ranks of a program on Genie's CUDA runtime and NCCL, with the environment torchrun sets (RANK, "
      "WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT) and GENIE_NODE per "
      "emulated node. Output lines are prefixed with [rankN]:. The exit code is the first failing rank's.");
  static LaunchSpec spec;
  static std::string device, topology, clock, engine, fabric, testbed, compare;
  static double grace_s = 10;
  static double dilation = 0;
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
  cmd->add_option("--fabric", fabric,
                  "sim[:TOPOLOGY] (shared memory, timed by netsim; the default) or real[:PROVIDER] (libfabric tcp, "
                  "shm, verbs, efa; implies --clock realtime)");
  cmd->add_option("--testbed", testbed, "Run rank i in host i mod H of the testbed that is up (genie testbed up); "
                                        "implies --fabric real and its topology")
      ->expected(0, 1)
      ->default_str("genie");
  cmd->add_option("--dilation", dilation,
                  "Time dilation D (realtime): modelled durations last D times longer, measured times read D times "
                  "shorter, so a fabric D times slower stands in for the modelled one")
      ->check(CLI::Range(1.0, 1e6));
  cmd->add_option("--compare", compare, "sim: also time every collective's Schedule in netsim and print real vs sim")
      ->check(CLI::IsMember({"sim"}));
  cmd->add_option("command", spec.command, "Program and its arguments (after --)")->required()->expected(-1);
  cmd->callback([exit_code, cmd] {
    if (!device.empty()) spec.extra_env["GENIE_DEVICE"] = device;
    if (!topology.empty()) spec.extra_env["GENIE_TOPOLOGY"] = topology;
    if (!clock.empty()) spec.extra_env["GENIE_CLOCK"] = clock;
    if (!engine.empty()) spec.extra_env["GENIE_ENGINE"] = engine;
    auto fail = [&](const std::string& m) {
      std::cerr << "genie run: " << m << "\n";
      *exit_code = 2;
    };
    bool real = false;
    Testbed tb;
    if (cmd->count("--testbed") > 0) {
      auto t = testbed_load(testbed.empty() ? "genie" : testbed);
      if (!t.is_ok()) return fail(t.status().message() + " (genie testbed up --hosts H first)");
      tb = *t;
      for (int i = 0; i < tb.hosts; ++i)
        spec.hosts.push_back({"/run/netns/" + tb.namespaces[static_cast<size_t>(i)],
                              tb.namespaces[static_cast<size_t>(i)], tb.addresses[static_cast<size_t>(i)]});
      if (fabric.empty()) fabric = "real";
      if (topology.empty()) spec.extra_env["GENIE_TOPOLOGY"] = tb.topology_file;
    }
    if (!fabric.empty()) {
      if (fabric == "sim" || fabric.rfind("sim:", 0) == 0) {
        if (!spec.hosts.empty()) return fail("--testbed runs ranks on different hosts: it needs --fabric real");
        if (fabric.size() > 4) spec.extra_env["GENIE_TOPOLOGY"] = fabric.substr(4);
        spec.extra_env["GENIE_FABRIC"] = "sim";
      } else if (fabric == "real" || (fabric.rfind("real:", 0) == 0 && fabric.size() > 5)) {
        real = true;
        spec.extra_env["GENIE_FABRIC"] = fabric;
      } else {
        return fail("--fabric '" + fabric + "' is not sim, sim:TOPOLOGY, real or real:PROVIDER");
      }
    }
    if (real) {
      if (clock == "virtual") return fail("--fabric real measures wall-clock time: it needs --clock realtime");
      spec.extra_env["GENIE_CLOCK"] = "realtime";
    }
    if (dilation > 0) {
      if (spec.extra_env.count("GENIE_CLOCK") == 0 || spec.extra_env["GENIE_CLOCK"] != "realtime")
        return fail("--dilation applies to realtime runs (--clock realtime or --fabric real)");
      spec.extra_env["GENIE_DILATION"] = std::to_string(dilation);
    }
    std::string report_dir;
    if (!compare.empty()) {
      if (!real) return fail("--compare sim compares the real fabric with netsim: it needs --fabric real");
      const char* d = std::getenv("GENIE_REPORT_DIR");
      report_dir = d && *d ? d : std::filesystem::absolute("genie-report").string();
      spec.extra_env["GENIE_COMPARE"] = "sim";
      spec.extra_env["GENIE_REPORT_DIR"] = report_dir;
      if (Status s = clear_fabric_records(report_dir); !s.is_ok()) return fail(s.message());
    }
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
    if (!spec.hosts.empty() && r->exit_code != 0) {
      // Name the links that are down and the ranks behind them.
      auto states = testbed_link_states(tb);
      for (size_t h = 0; h < states.size(); ++h) {
        if (states[h] == "up") continue;
        std::string ranks;
        for (int k = static_cast<int>(h); k < spec.nranks; k += tb.hosts) ranks += (ranks.empty() ? "" : ", ") + std::to_string(k);
        std::cerr << "genie run: testbed link of host " << h << " (" << tb.namespaces[h] << " eth0 <-> bridge port "
                  << tb.bridge_ports[h] << ") is down; ranks on that host: " << ranks << "\n";
      }
    }
    if (!report_dir.empty()) {
      auto n = print_fabric_summary(report_dir);
      if (!n.is_ok()) std::cerr << "genie run: " << n.status().message() << "\n";
    }
  });
}

}  // namespace genie::sched
