// SPDX-License-Identifier: Apache-2.0
// `genie run`: launches the ranks of a job (torchrun-style environment) around a coordinator that times
// every collective on one global clock, then writes the job's report.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "fabric_summary.hpp"
#include "genie/common/config.hpp"
#include "genie/common/shm_names.hpp"
#include "genie/netsim/schedule.hpp"
#include "genie/netsim/simulator.hpp"
#include "genie/sched/chakra_writer.hpp"
#include "genie/sched/coordinator.hpp"
#include "genie/sched/job_topology.hpp"
#include "genie/sched/launcher.hpp"
#include "genie/sched/report.hpp"
#include "genie/sched/testbed.hpp"

namespace genie::cli {

using sched::CoordinatorServer;
using sched::job_topology;
using sched::JobRecord;
using sched::JobTopology;
using sched::launch;
using sched::LaunchSpec;
using sched::random_secret;
using sched::rank_cpus;
using sched::render_html;
using sched::ReportInput;
using sched::secret_to_hex;
using sched::summary_text;
using sched::Testbed;
using sched::testbed_link_states;
using sched::testbed_load;
using sched::write_report;
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
  static std::string device, topology, clock, engine, fabric, testbed, compare, app_clock, data,
      report_dir = "genie-report", bind_to = "auto", chakra_dir;
  static double grace_s = 10, stall_s = 2, dilation = 0;
  static size_t report_max_calls = 1000000;
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
  cmd->add_option("--chakra", chakra_dir,
                  "Also write one Chakra execution trace per rank, DIR/genie.<rank>.et (GENIE_CHAKRA_DIR), for "
                  "genie sim --workload DIR, ASTRA-sim and Chakra's tools (docs/chakra.md)");
  cmd->add_option("--report-max-calls", report_max_calls,
                  "Calls the coordinator keeps in detail for the report (later ones count in its totals only), so a "
                  "long job's memory stays bounded")
      ->check(CLI::Range(size_t{1}, size_t{1} << 40));
  cmd->add_flag("--no-coordinator", no_coordinator,
                "Time each communicator's calls alone, without the global clock (no contention, no report)");
  cmd->add_option("--stall-grace", stall_s,
                  "Seconds the global clock may wait on a rank that promises nothing, while some thread of the job "
                  "runs, before it is assumed idle (a job found asleep as a whole moves on at once)")
      ->check(CLI::Range(0.01, 3600.0));
  cmd->add_flag("--no-prefix", no_prefix, "Do not prefix output lines with [rankN]:");
  cmd->add_option("--bind-to", bind_to,
                  "core: rank i runs on the i-th CPU this process may use (wrapping), as mpirun --bind-to core; "
                  "none: where the kernel puts it; auto (default): core for realtime jobs (--fabric real, --clock "
                  "realtime) when every rank gets a CPU of its own, else none")
      ->check(CLI::IsMember({"auto", "core", "none"}));
  cmd->add_option("--app-clock", app_clock,
                  "What the program's own clock reads return (GENIE_APP_CLOCK): wall, or virtual for programs that time "
                  "their work with the clock, like nccl-tests (not for programs that wait with clock-based timeouts), "
                  "or python: Python's time.time and time.perf_counter read virtual time, every other clock the real "
                  "one (PyTorch and Megatron programs)")
      ->check(CLI::IsMember({"wall", "virtual", "python"}));
  cmd->add_option("--data", data,
                  "copy: copies, memsets and collectives move real bytes (the default); none: a timing-only run "
                  "(GENIE_DATA): they keep their modelled times but move no bytes beyond 512 KiB of control data, so "
                  "a rank of a model larger than this host's memory runs; values read from the GPU are garbage "
                  "(docs/timing-only.md)")
      ->check(CLI::IsMember({"copy", "none"}));
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
    const auto env = config::process_environment();
    if (!device.empty()) spec.extra_env["GENIE_DEVICE"] = device;
    if (!topology.empty()) spec.extra_env["GENIE_TOPOLOGY"] = topology;
    if (!clock.empty()) spec.extra_env["GENIE_CLOCK"] = clock;
    if (!engine.empty()) spec.extra_env["GENIE_ENGINE"] = engine;
    if (!app_clock.empty()) spec.extra_env["GENIE_APP_CLOCK"] = app_clock;
    if (!data.empty()) spec.extra_env["GENIE_DATA"] = data;
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
      const auto d = spec.extra_env.find("GENIE_DATA");
      if ((d != spec.extra_env.end() ? d->second : env_value(env, "GENIE_DATA", "copy")) == "none")
        return fail("--data none (GENIE_DATA=none) does not apply to the real fabric, which moves every byte of its "
                    "buffers: use --fabric sim for a timing-only run");
      spec.extra_env["GENIE_CLOCK"] = "realtime";
    }
    if (dilation > 0) {
      if (spec.extra_env.count("GENIE_CLOCK") == 0 || spec.extra_env["GENIE_CLOCK"] != "realtime")
        return fail("--dilation applies to realtime runs (--clock realtime or --fabric real)");
      spec.extra_env["GENIE_DILATION"] = std::to_string(dilation);
    }
    // The real fabric's per-collective records (--compare) go to the job's report directory.
    const std::string fabric_dir = std::filesystem::absolute(env_value(env, "GENIE_REPORT_DIR", report_dir)).string();
    if (!compare.empty()) {
      if (!real) return fail("--compare sim compares the real fabric with netsim: it needs --fabric real");
      spec.extra_env["GENIE_COMPARE"] = "sim";
      spec.extra_env["GENIE_REPORT_DIR"] = fabric_dir;
      if (Status s = clear_fabric_records(fabric_dir); !s.is_ok()) return fail(s.message());
    }
    spec.grace = std::chrono::milliseconds(static_cast<int64_t>(grace_s * 1000));
    spec.prefix_output = !no_prefix;
    {
      auto it = spec.extra_env.find("GENIE_CLOCK");
      const bool realtime = (it != spec.extra_env.end() ? it->second : env_value(env, "GENIE_CLOCK", "virtual")) == "realtime";
      auto cpus = rank_cpus(spec.nranks, bind_to, realtime);
      if (!cpus.is_ok()) return fail(cpus.status().message());
      spec.bind_cpus = std::move(cpus).value();
      if (!spec.bind_cpus.empty()) {
        std::string list;
        for (size_t r = 0; r < spec.bind_cpus.size() && r < 16; ++r)
          list += (r ? " " : "") + std::to_string(spec.bind_cpus[r]);
        std::cerr << "[genie] ranks bound to CPUs " << list << (spec.bind_cpus.size() > 16 ? " ..." : "")
                  << " (--bind-to " << bind_to << ")\n";
      }
    }
    spec.lib_dir = library_dir();
    if (!std::filesystem::exists(spec.lib_dir + "/libnccl.so.2")) {
      std::cerr << "genie run: " << spec.lib_dir << "/libnccl.so.2 not found (build the nccl2 target)\n";
      *exit_code = 2;
      return;
    }
    // What the ranks will see: the flags above (in extra_env), else this process's environment.
    auto effective = [&](const char* name, const std::string& fallback) {
      auto it = spec.extra_env.find(name);
      return it != spec.extra_env.end() ? it->second : env_value(env, name, fallback);
    };
    const std::string dev = effective("GENIE_DEVICE", "h200");
    const std::string topo_name = effective("GENIE_TOPOLOGY", "");
    const std::string eng = effective("GENIE_ENGINE", "flow");
    const std::string clk = effective("GENIE_CLOCK", "virtual");
    const int nodes = spec.nodes > 0 ? spec.nodes : (spec.nranks + spec.gpus_per_node - 1) / spec.gpus_per_node;
    if (chakra_dir.empty()) chakra_dir = sched::configured_chakra_dir();
    const netsim::NcclEnv job_nccl_env = netsim::NcclEnv::from_config(config::global());

    std::unique_ptr<CoordinatorServer> server;
    JobTopology jt;
    // Realtime jobs get a coordinator too (it gathers the records); testbed ranks live in network namespaces
    // that cannot reach this process's loopback, so they report through the fabric's records only.
    const bool coordinate = !no_coordinator && spec.hosts.empty();
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
      o.core.nccl_env = job_nccl_env;
      o.core.gpus_per_node = jt.gpus_per_node;
      o.core.expected_processes = spec.nranks;
      o.core.max_collective_records = report_max_calls;
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
      spec.extra_env["GENIE_FAKECUDA_TRACE"] = no_report && chakra_dir.empty() ? "0" : "1";
    }
    // One tag in the names of every shared-memory file the ranks create (GENIE_JOB_TAG if the caller set one):
    // what a killed rank could not remove is removed below, once every rank has exited.
    auto tag = shm_names::job_tag();
    if (!tag.is_ok()) return fail(tag.status().message());
    spec.extra_env["GENIE_JOB_TAG"] = *tag;
    const auto t0 = std::chrono::steady_clock::now();
    auto r = launch(spec);
    if (auto removed = shm_names::remove_job_files(*tag); !removed.is_ok())
      std::cerr << "genie run: " << removed.status().message() << "\n";
    else if (*removed > 0)
      std::cerr << "[genie] removed " << *removed << " shared-memory file(s) the job's ranks left in "
                << shm_names::kShmDir << "\n";
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
    if (!compare.empty()) {
      auto n = print_fabric_summary(fabric_dir);
      if (!n.is_ok()) std::cerr << "genie run: " << n.status().message() << "\n";
    }
    if (!server && (no_report || compare.empty()) && chakra_dir.empty()) return;
    JobRecord job = server ? server->finish() : JobRecord{};
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
    if (!compare.empty()) in.fabric_dir = fabric_dir;
    std::cerr << summary_text(in);
    if (!chakra_dir.empty() && server) {
      sched::ChakraJob cj;
      cj.topology = topo_name.empty() ? sched::server_preset_for_device(dev) : topo_name;
      cj.nodes = nodes;
      cj.fabric = env_value(env, "GENIE_TOPOLOGY_FABRIC", "rail");
      cj.device = dev;
      cj.engine = eng;
      cj.nccl_env = job_nccl_env;
      cj.command = spec.command;
      auto w = sched::write_chakra_traces(chakra_dir, sched::kChakraPrefix, job, cj);
      if (!w.is_ok()) {
        std::cerr << "genie run: the Chakra traces could not be written: " << w.status().message() << "\n";
      } else {
        std::cerr << "[genie]   chakra: " << w->ranks << " traces, " << w->nodes << " nodes: " << chakra_dir << "/"
                  << sched::kChakraPrefix << ".<rank>.et (genie sim --workload " << chakra_dir << ")\n";
        if (w->unmatched > 0 || w->dropped_records > 0)
          std::cerr << "[genie]   chakra: " << w->unmatched << " communication op(s) without a resolved call and "
                    << w->dropped_records << " record(s) the coordinator did not keep: the traces replay them as "
                    << "recorded delays or miss them\n";
      }
    } else if (!chakra_dir.empty()) {
      std::cerr << "genie run: --chakra needs the coordinator (not with --no-coordinator or --testbed)\n";
    }
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

}  // namespace genie::cli
