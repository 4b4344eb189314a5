// SPDX-License-Identifier: Apache-2.0
// `genie coordinator`: a stand-alone coordinator for ranks started by another launcher (torchrun, mpirun,
// srun). It prints the two variables the ranks need, serves until the job is over, then writes the report.
#include <csignal>
#include <iostream>

#include "commands.hpp"
#include "genie/common/config.hpp"
#include "genie/sched/coordinator.hpp"
#include "genie/sched/job_topology.hpp"
#include "genie/sched/report.hpp"

namespace genie::cli {

using sched::CoordinatorServer;
using sched::job_topology;
using sched::JobRecord;
using sched::random_secret;
using sched::ReportInput;
using sched::secret_to_hex;
using sched::summary_text;
using sched::write_report;

void register_coordinator_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "coordinator",
      "Serve the global clock for N rank processes started by another launcher. Prints GENIE_COORDINATOR and "
      "GENIE_JOB_SECRET as export lines on stdout (give them to every rank), waits until the N processes have "
      "joined and left, then writes the report.");
  static int ranks = 1, nodes = 0, port = 0;
  static double timeout_s = 86400;
  static std::string bind = "127.0.0.1", device = "h200", topology, engine = "flow", fabric = "rail",
                     report_dir = "genie-report";
  cmd->add_option("-n,--ranks", ranks, "Rank processes of the job")->required()->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--bind", bind, "IPv4 address to listen on (default loopback)");
  cmd->add_option("--port", port, "Port (default: any free one)")->check(CLI::Range(0, 65535));
  cmd->add_option("--device", device, "Device preset of the ranks (GENIE_DEVICE)");
  cmd->add_option("--topology", topology, "Topology preset or file (default: the device's server)");
  cmd->add_option("--nodes", nodes, "Servers of the cluster (default: enough for one GPU per rank)")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--engine", engine, "flow or analytical")->check(CLI::IsMember({"flow", "analytical"}));
  cmd->add_option("--report", report_dir, "Report directory (default ./genie-report)");
  cmd->add_option("--timeout", timeout_s, "Give up after this many seconds")->check(CLI::Range(1.0, 1e7));
  cmd->callback([exit_code] {
    auto fail = [&](const Status& s) {
      std::cerr << "genie coordinator: " << s.message() << "\n";
      *exit_code = 2;
    };
    auto one = job_topology(topology, device, 1, fabric);
    if (!one.is_ok()) return fail(one.status());
    const int n = nodes > 0 ? nodes : (ranks + one->gpus_per_node - 1) / one->gpus_per_node;
    auto jt = job_topology(topology, device, n, fabric);
    if (!jt.is_ok()) return fail(jt.status());
    auto secret = random_secret();
    if (!secret.is_ok()) return fail(secret.status());
    auto kind = netsim::parse_engine(engine);
    if (!kind.is_ok()) return fail(kind.status());
    CoordinatorServer::Options o;
    o.core.topology = jt->topology;
    o.core.topology_name = jt->name;
    o.core.engine = kind.value();
    o.core.nccl_env = netsim::NcclEnv::from_config(config::global());
    o.core.gpus_per_node = jt->gpus_per_node;
    o.core.expected_processes = ranks;
    o.secret = secret.value();
    o.bind_addr = bind;
    o.port = static_cast<uint16_t>(port);
    auto s = CoordinatorServer::start(std::move(o));
    if (!s.is_ok()) return fail(s.status());
    std::cout << "export GENIE_COORDINATOR=" << s.value()->address() << "\n"
              << "export GENIE_JOB_SECRET=" << secret_to_hex(secret.value()) << "\n"
              << std::flush;
    const bool done = s.value()->wait_done(std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
    JobRecord job = s.value()->finish();
    ReportInput in;
    in.job = &job;
    in.topology = jt->topology;
    in.topology_name = jt->name;
    in.device = device;
    in.engine = engine;
    in.clock = "virtual";
    in.nranks = ranks;
    in.nodes = n;
    in.gpus_per_node = jt->gpus_per_node;
    std::cerr << summary_text(in);
    Status st = write_report(report_dir, in);
    if (!st.is_ok()) return fail(st);
    std::cerr << "[genie]   report: " << report_dir << "/genie-report.json, " << report_dir << "/trace.json\n";
    if (!done) {
      std::cerr << "genie coordinator: the job did not end within " << timeout_s << " s\n";
      *exit_code = 1;
    }
  });
}

}  // namespace genie::cli
