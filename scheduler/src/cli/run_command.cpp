// SPDX-License-Identifier: Apache-2.0
// `genie run`: launches the ranks of a job (torchrun-style environment) around a coordinator that times
// every collective on one global clock, then writes the job's report.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "genie/common/config.hpp"
#include "genie/netsim/schedule.hpp"
#include "genie/netsim/simulator.hpp"
#include "genie/sched/coordinator.hpp"
#include "genie/sched/job_topology.hpp"
#include "genie/sched/launcher.hpp"
#include "genie/sched/report.hpp"

namespace genie::sched {
namespace {

std::string env_value(const config::Config::EnvMap& env, const char* name, const std::string& fallback) {
  auto it = env.find(name);
  return it != env.end() && !it->second.empty() ? it->second : fallback;
}

}  // namespace

void register_run_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "run",
      "Run N ranks of a program on Genie's CUDA runtime and NCCL, with the environment torchrun sets (RANK, "
      "WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT) and GENIE_NODE per "
      "emulated node. A coordinator times every collective on one global virtual clock (collectives of "
      "different communicators contend for links) and the job's report is written at the end. Output lines are "
      "prefixed with [rankN]:. The exit code is the first failing rank's.");
  static LaunchSpec spec;
  static std::string device, topology, clock, engine, fabric, report_dir = "genie-report";
  static double grace_s = 10, stall_s = 2;
  static bool no_prefix = false, no_report = false, no_coordinator = false;
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
  cmd->add_option("--report", report_dir, "Directory for genie-report.json and trace.json (default ./genie-report)");
  cmd->add_flag("--no-report", no_report, "Write no report files (the summary is still printed)");
  cmd->add_flag("--no-coordinator", no_coordinator,
                "Time each communicator's calls alone, without the global clock (no contention, no report)");
  cmd->add_option("--stall-grace", stall_s,
                  "Seconds the global clock may wait on a rank that promises nothing before it is assumed idle")
      ->check(CLI::Range(0.01, 3600.0));
  cmd->add_flag("--no-prefix", no_prefix, "Do not prefix output lines with [rankN]:");
  cmd->add_option("command", spec.command, "Program and its arguments (after --)")->required()->expected(-1);
  cmd->callback([exit_code] {
    const auto env = config::process_environment();
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
    const std::string dev = device.empty() ? env_value(env, "GENIE_DEVICE", "h200") : device;
    const std::string topo_name = topology.empty() ? env_value(env, "GENIE_TOPOLOGY", "") : topology;
    const std::string eng = engine.empty() ? env_value(env, "GENIE_ENGINE", "flow") : engine;
    const std::string clk = clock.empty() ? env_value(env, "GENIE_CLOCK", "virtual") : clock;
    const int nodes = spec.nodes > 0 ? spec.nodes : (spec.nranks + spec.gpus_per_node - 1) / spec.gpus_per_node;

    std::unique_ptr<CoordinatorServer> server;
    JobTopology jt;
    const bool coordinate = !no_coordinator && clk == "virtual";
    if (coordinate) {
      auto t = job_topology(topo_name, dev, nodes, env_value(env, "GENIE_TOPOLOGY_FABRIC", "rail"));
      if (!t.is_ok()) {
        std::cerr << "genie run: " << t.status().message() << "\n";
        *exit_code = 2;
        return;
      }
      jt = std::move(t).value();
      auto secret = random_secret();
      auto kind = netsim::parse_engine(eng);
      if (!secret.is_ok() || !kind.is_ok()) {
        std::cerr << "genie run: " << (!secret.is_ok() ? secret.status() : kind.status()).message() << "\n";
        *exit_code = 2;
        return;
      }
      CoordinatorServer::Options o;
      o.core.topology = jt.topology;
      o.core.topology_name = jt.name;
      o.core.engine = kind.value();
      o.core.nccl_env = netsim::NcclEnv::from_config(config::global());
      o.core.gpus_per_node = jt.gpus_per_node;
      o.core.expected_processes = spec.nranks;
      o.secret = secret.value();
      o.stall_grace = std::chrono::milliseconds(static_cast<int64_t>(stall_s * 1000));
      o.show_progress = ::isatty(2) != 0;
      auto s = CoordinatorServer::start(std::move(o));
      if (!s.is_ok()) {
        std::cerr << "genie run: " << s.status().message() << "\n";
        *exit_code = 2;
        return;
      }
      server = std::move(s).value();
      spec.extra_env["GENIE_COORDINATOR"] = server->address();
      spec.extra_env["GENIE_JOB_SECRET"] = secret_to_hex(secret.value());
      if (!no_report) spec.extra_env["GENIE_FAKECUDA_TRACE"] = "1";
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto r = launch(spec);
    if (!r.is_ok()) {
      std::cerr << "genie run: " << r.status().message() << "\n";
      *exit_code = 2;
      return;
    }
    *exit_code = r->exit_code;
    if (!server) return;
    JobRecord job = server->finish();
    ReportInput in;
    in.job = &job;
    in.topology = jt.topology;
    in.topology_name = jt.name;
    in.device = dev;
    in.engine = eng;
    in.clock = clk;
    in.command = spec.command;
    in.nranks = spec.nranks;
    in.nodes = nodes;
    in.gpus_per_node = spec.gpus_per_node;
    in.result = r.value();
    in.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cerr << summary_text(in);
    if (!no_report) {
      Status st = write_report(report_dir, in);
      if (st.is_ok())
        std::cerr << "[genie]   report: " << report_dir << "/genie-report.json, " << report_dir << "/trace.json\n";
      else
        std::cerr << "genie run: the report could not be written: " << st.message() << "\n";
    }
  });
}

void register_report_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "report", "Render a job's report directory (genie-report.json) as one self-contained HTML page.");
  static std::string dir, out = "report.html";
  cmd->add_option("dir", dir, "Report directory written by genie run (or a genie-report.json file)")->required();
  cmd->add_option("-o,--output", out, "HTML file to write (default report.html)");
  cmd->callback([exit_code] {
    std::string path = dir;
    if (std::filesystem::is_directory(path)) path += "/genie-report.json";
    Status st = render_html(path, out);
    if (!st.is_ok()) {
      std::cerr << "genie report: " << st.message() << "\n";
      *exit_code = 2;
      return;
    }
    std::cout << out << "\n";
  });
}

}  // namespace genie::sched
