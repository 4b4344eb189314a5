// SPDX-License-Identifier: Apache-2.0
// `genie smi`: nvidia-smi's table for the emulated devices of the running genie run jobs (their ranks' status
// records), or of the local preset when no job runs (docs/nvml.md).
#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <tuple>
#include <string>
#include <vector>

#include "commands.hpp"
#include "genie/fakecuda/device_spec.hpp"
#include "genie/fakecuda/device_status.hpp"
#include "genie/fakecuda/driver.hpp"
#include "genie/fakecuda/runtime.hpp"
#include "genie/sched/job_dir.hpp"

namespace genie::cli {
namespace {

constexpr const char* kRule =
    "+-----------------------------------------+------------------------+----------------------+";
constexpr const char* kWide =
    "+-----------------------------------------------------------------------------------------+";

struct NodeView {
  std::string name;
  int gpus = 0;
  std::map<int, fakecuda::DeviceUsage> devices;  // by index: memory summed, utilization the largest
  struct Proc {
    int index, pid, rank;
    std::string program;
    uint64_t used_bytes;
  };
  std::vector<Proc> procs;
};

uint64_t mib(uint64_t bytes) { return bytes >> 20; }

// `left` and `right` in a cell of `width` columns, spaces between (nvidia-smi's cells: labels left, values right).
std::string cell(const std::string& left, const std::string& right, size_t width) {
  const size_t used = left.size() + right.size();
  return left + std::string(used < width ? width - used : 1, ' ') + right;
}
// Widths of nvidia-smi's three device columns and of its full-width rows (the rules above).
constexpr size_t kCol1 = 41, kCol2 = 24, kCol3 = 22, kFull = kCol1 + kCol2 + kCol3 + 2;

void row(const std::string& a, const std::string& b, const std::string& c) {
  std::printf("|%s|%s|%s|\n", a.c_str(), b.c_str(), c.c_str());
}

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

void print_header() {
  const int v = fakecuda::kDriverVersion;
  std::printf("%s\n", kWide);
  std::printf("|%s|\n",
              cell(format(" GENIE-SMI (emulated devices)     Driver Version: %s", fakecuda::kReportedDriverVersion),
                   format("CUDA Version: %d.%d     ", v / 1000, (v % 1000) / 10), kFull)
                  .c_str());
  std::printf("%s\n", kRule);
  row(cell(" GPU  Name", "Persistence-M ", kCol1), cell(" Bus-Id", "Disp.A ", kCol2),
      cell(" Volatile", "Uncorr. ECC ", kCol3));
  row(cell(" Fan  Temp   Perf", "Pwr:Usage/Cap ", kCol1), cell("", "Memory-Usage ", kCol2),
      cell(" GPU-Util", "Compute M. ", kCol3));
  std::printf("|=========================================+========================+======================|\n");
}

void print_devices(const fakecuda::DeviceSpec& spec, const NodeView& node) {
  print_header();
  for (int i = 0; i < node.gpus; ++i) {
    fakecuda::DeviceUsage u;
    if (auto it = node.devices.find(i); it != node.devices.end()) u = it->second;
    const std::string bus = format("%08X:%02X:00.0", static_cast<unsigned>(spec.pci_domain),
                                   static_cast<unsigned>((spec.pci_bus_base + i * spec.pci_bus_stride) & 0xff));
    row(cell(format(" %3d  %s", i, spec.name.substr(0, 26).c_str()), "On  ", kCol1), cell(" " + bus, "Off ", kCol2),
        cell("", "0 ", kCol3));
    const std::string temp = spec.temperature_c > 0 ? format("%dC", spec.temperature_c) : "N/A";
    const std::string power =
        spec.power_limit_w > 0
            ? format("%uW / %4dW ", fakecuda::nominal_power_mw(spec, u.util_gpu_pct) / 1000, spec.power_limit_w)
            : "N/A ";
    const std::string memory = format("%lluMiB / %lluMiB ", static_cast<unsigned long long>(mib(u.used_bytes)),
                                      static_cast<unsigned long long>(mib(spec.memory_bytes)));
    row(cell(format(" N/A  %4s    P0", temp.c_str()), power, kCol1), cell("", memory, kCol2),
        cell(format("%7d%%", u.util_gpu_pct), "Default ", kCol3));
    std::printf("%s\n", kRule);
  }
  std::printf("\n%s\n", kWide);
  std::printf("|%s|\n", cell(" Processes:", "", kFull).c_str());
  std::printf("|%s|\n", cell("  GPU   GI   CI        PID   Type   Process name", "GPU Memory ", kFull).c_str());
  std::printf("|%s|\n", cell("        ID   ID", "Usage      ", kFull).c_str());
  std::printf("|%s|\n", std::string(kFull, '=').c_str());
  if (node.procs.empty()) std::printf("|%s|\n", cell("  No running processes found", "", kFull).c_str());
  for (const auto& p : node.procs) {
    const std::string label = p.program + (p.rank >= 0 ? " (rank " + std::to_string(p.rank) + ")" : "");
    std::printf("|%s|\n", cell(format("  %3d   N/A  N/A %10d      C   %.40s", p.index, p.pid, label.c_str()),
                               format("%lluMiB ", static_cast<unsigned long long>(mib(p.used_bytes))), kFull)
                              .c_str());
  }
  std::printf("%s\n", kWide);
}

// The nodes of a job as its ranks' records show them; a job whose ranks have not published yet shows the nodes
// genie run names (node0, node1, ...), idle.
std::vector<NodeView> nodes_of(const sched::JobInfo& job, const std::vector<fakecuda::ProcessStatus>& records) {
  std::map<std::string, NodeView> by_name;
  for (const auto& r : records) {
    NodeView& n = by_name[r.node];
    n.name = r.node;
    n.gpus = std::max(n.gpus, r.gpus);
    for (const auto& d : r.devices) {
      fakecuda::DeviceUsage& u = n.devices[d.index];
      u.index = d.index;
      u.used_bytes += d.used_bytes;
      u.util_gpu_pct = std::max(u.util_gpu_pct, d.util_gpu_pct);
      u.util_mem_pct = std::max(u.util_mem_pct, d.util_mem_pct);
      n.procs.push_back({d.index, r.pid, r.rank, r.program, d.used_bytes});
    }
  }
  if (by_name.empty())
    for (int i = 0; i < std::max(job.nodes, 1); ++i)
      by_name["node" + std::to_string(i)].name = "node" + std::to_string(i);
  std::vector<NodeView> out;
  for (auto& [name, n] : by_name) {
    if (n.gpus == 0) n.gpus = job.gpus_per_node;
    std::sort(n.procs.begin(), n.procs.end(), [](const NodeView::Proc& a, const NodeView::Proc& b) {
      return std::tie(a.index, a.pid) < std::tie(b.index, b.pid);
    });
    out.push_back(std::move(n));
  }
  return out;
}

int show_job(const sched::JobInfo& job) {
  const std::vector<fakecuda::ProcessStatus> records = fakecuda::read_status_dir(job.dir);
  std::string preset = job.device;
  if (!records.empty() && !records.front().preset.empty()) preset = records.front().preset;
  if (preset.empty()) preset = "h200";
  Result<fakecuda::DeviceSpec> spec = fakecuda::load_device_spec(preset);
  if (!spec.is_ok()) {
    std::fprintf(stderr, "genie smi: job %d: %s\n", job.launcher_pid, spec.status().message().c_str());
    return 1;
  }
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  std::string command;
  for (const auto& a : job.command) command += (command.empty() ? "" : " ") + a;
  std::printf(
      "Genie job %d (genie run): %d rank%s, %d GPU%s per node, %s clock, running %.0f s, %zu rank process%s "
      "reporting\n  command: %s\n",
      job.launcher_pid, job.nranks, job.nranks == 1 ? "" : "s", job.gpus_per_node, job.gpus_per_node == 1 ? "" : "s",
      job.clock.empty() ? "virtual" : job.clock.c_str(), static_cast<double>(now_ms - job.started_unix_ms) / 1000.0,
      records.size(), records.size() == 1 ? "" : "es", command.c_str());
  for (const NodeView& n : nodes_of(job, records)) {
    std::printf("Node %s\n", n.name.c_str());
    print_devices(spec.value(), n);
  }
  return 0;
}

}  // namespace

void register_smi_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "smi", "nvidia-smi for emulated devices: those of the running genie run jobs, else of the local preset");
  static int job_pid = 0;
  cmd->add_option("--job", job_pid, "Only the job whose genie run process has this pid");
  cmd->callback([exit_code] {
    const std::string root = sched::status_root();
    std::vector<sched::JobInfo> jobs = sched::running_jobs(root);
    if (job_pid != 0) std::erase_if(jobs, [](const sched::JobInfo& j) { return j.launcher_pid != job_pid; });
    if (jobs.empty()) {
      if (job_pid != 0) {
        std::fprintf(stderr, "genie smi: no running job with genie run pid %d in %s\n", job_pid, root.c_str());
        *exit_code = 1;
        return;
      }
      Result<fakecuda::RuntimeOptions> o = fakecuda::options_from_config();
      if (!o.is_ok()) {
        std::fprintf(stderr, "genie smi: %s\n", o.status().message().c_str());
        *exit_code = 2;
        return;
      }
      std::printf("No running Genie job (none in %s): the local preset, GENIE_DEVICE=%s with GENIE_GPUS=%d, idle\n",
                  root.c_str(), o->spec.preset.c_str(), o->physical_device_count);
      NodeView local;
      local.name = fakecuda::local_node_name();
      local.gpus = o->physical_device_count;
      print_devices(o->spec, local);
      *exit_code = 0;
      return;
    }
    int rc = 0;
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (i > 0) std::printf("\n");
      rc |= show_job(jobs[i]);
    }
    *exit_code = rc;
  });
}

}  // namespace genie::cli
