// SPDX-License-Identifier: Apache-2.0
// GENIE_COORDINATOR=auto[:HOST:PORT]: ranks started by another launcher (torchrun, mpirun, srun) without a
// coordinator of their own. Rank 0 hosts one in its process; every rank connects to it. At rank 0's exit the
// coordinator waits for the other ranks to leave, then writes the job's report.
#include "coord/coord_autohost.hpp"

#include <unistd.h>

#include <iostream>
#include <mutex>

#include "genie/common/config.hpp"
#include "genie/common/log.hpp"
#include "genie/sched/coordinator.hpp"
#include "genie/sched/job_topology.hpp"
#include "genie/sched/report.hpp"

namespace genie::sched {
namespace {

std::string env_of(const config::Config::EnvMap& env, std::initializer_list<const char*> names,
                   const std::string& fallback = {}) {
  for (const char* n : names) {
    auto it = env.find(n);
    if (it != env.end() && !it->second.empty()) return it->second;
  }
  return fallback;
}

struct Hosted {
  std::unique_ptr<CoordinatorServer> server;
  JobTopology topo;
  std::string report_dir;
  std::string device, engine;
  int world = 0;
};
Hosted* g_hosted = nullptr;

void finish_hosted() {
  Hosted* h = g_hosted;
  if (!h) return;
  g_hosted = nullptr;
  // The other ranks may still be running: the coordinator (and the report) lives as long as they do.
  if (!h->server->wait_done(std::chrono::seconds(120)))
    std::cerr << "[genie] rank 0: some ranks were still connected after 120 s; writing the report anyway\n";
  JobRecord job = h->server->finish();
  ReportInput in;
  in.job = &job;
  in.topology = h->topo.topology;
  in.topology_name = h->topo.name;
  in.device = h->device;
  in.engine = h->engine;
  in.clock = "virtual";
  in.nranks = h->world;
  in.nodes = h->topo.topology->num_servers;
  in.gpus_per_node = h->topo.gpus_per_node;
  std::cerr << summary_text(in);
  Status st = write_report(h->report_dir, in);
  if (st.is_ok())
    std::cerr << "[genie]   report: " << h->report_dir << "/genie-report.json\n";
  else
    std::cerr << "[genie] the report could not be written: " << st.message() << "\n";
}

}  // namespace

Result<std::string> resolve_auto_coordinator(const std::string& spec, int32_t process_rank,
                                             const std::array<uint8_t, 16>& secret) {
  const auto env = config::process_environment();
  std::string host = env_of(env, {"MASTER_ADDR"}, "127.0.0.1");
  int port = 0;
  if (spec.size() > 5 && spec.compare(0, 5, "auto:") == 0) {
    const std::string rest = spec.substr(5);
    const auto colon = rest.rfind(':');
    if (colon == std::string::npos) return invalid_argument("GENIE_COORDINATOR='" + spec + "' is not auto:HOST:PORT");
    host = rest.substr(0, colon);
    port = std::atoi(rest.substr(colon + 1).c_str());
  } else {
    // torchrun: the port after the rendezvous port; otherwise a fixed default.
    const std::string mp = env_of(env, {"MASTER_PORT"});
    port = mp.empty() ? 29499 : std::atoi(mp.c_str()) + 1;
  }
  if (port <= 0 || port > 65535) return invalid_argument("GENIE_COORDINATOR='" + spec + "': bad port");
  const std::string addr = host + ":" + std::to_string(port);
  if (process_rank != 0) return addr;
  static std::mutex mu;
  std::lock_guard lk(mu);
  if (g_hosted) return addr;
  auto h = std::make_unique<Hosted>();
  h->world = std::atoi(env_of(env, {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}, "1").c_str());
  h->device = env_of(env, {"GENIE_DEVICE"}, "h200");
  h->engine = env_of(env, {"GENIE_ENGINE"}, "flow");
  h->report_dir = env_of(env, {"GENIE_REPORT_DIR"}, "genie-report");
  // One emulated GPU per rank: as many servers as the world needs.
  GENIE_ASSIGN_OR_RETURN(JobTopology one, job_topology(env_of(env, {"GENIE_TOPOLOGY"}), h->device, 1,
                                                       env_of(env, {"GENIE_TOPOLOGY_FABRIC"}, "rail")));
  const int nodes = std::max(1, (h->world + one.gpus_per_node - 1) / one.gpus_per_node);
  GENIE_ASSIGN_OR_RETURN(h->topo, job_topology(env_of(env, {"GENIE_TOPOLOGY"}), h->device, nodes,
                                               env_of(env, {"GENIE_TOPOLOGY_FABRIC"}, "rail")));
  GENIE_ASSIGN_OR_RETURN(netsim::EngineKind kind, netsim::parse_engine(h->engine));
  CoordinatorServer::Options o;
  o.core.topology = h->topo.topology;
  o.core.topology_name = h->topo.name;
  o.core.engine = kind;
  o.core.nccl_env = netsim::NcclEnv::from_config(config::global());
  o.core.gpus_per_node = h->topo.gpus_per_node;
  o.core.expected_processes = h->world;
  o.secret = secret;
  o.bind_addr = host == "localhost" ? "127.0.0.1" : host;
  o.port = static_cast<uint16_t>(port);
  GENIE_ASSIGN_OR_RETURN(h->server, CoordinatorServer::start(std::move(o)));
  GENIE_LOG_INFO("sched", "rank 0 hosts the coordinator at {} for {} ranks", addr, h->world);
  g_hosted = h.release();
  std::atexit(finish_hosted);  // registered before the client's Bye handler: runs after it
  return addr;
}

}  // namespace genie::sched
