// SPDX-License-Identifier: Apache-2.0
// Device status of a process (memory, utilization from the timeline), its publisher thread and its records.
#include "genie/fakecuda/device_status.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "genie/common/config.hpp"
#include "genie/common/internal_scope.hpp"
#include "genie/common/log.hpp"
#include "genie/fakecuda/runtime.hpp"
#include "genie/sched/coord_client.hpp"
#include "genie/sched/job_dir.hpp"

namespace genie::fakecuda {
namespace {

// NVML's utilization is "percent of time over the past sample period", a period "between 1 second and 1/6 second
// depending on the product" (nvml.h, nvmlUtilization_t / nvmlDeviceGetUtilizationRates): 1 s by default. At most
// what the timeline keeps (Timeline::kBusyHistory).
const config::Param<int64_t> kWindowMs{
    "fakecuda.nvml_window_ms",
    1000,
    "Window in ms of host time (virtual or realtime) over which NVML and genie smi compute a device's utilization.",
    {},
    10.0,
    static_cast<double>(sched::Timeline::kBusyHistory.count_ns() / 1000000)};
const config::Param<std::string> kStatusDir{
    "fakecuda.status_dir", "",
    "Job status folder where this process publishes its devices' state for genie smi and the job's other processes' "
    "NVML (genie run sets it; empty: nothing is published)."};
const config::Param<int64_t> kStatusIntervalMs{
    "fakecuda.status_interval_ms",
    500,
    "Wall-clock ms between two status records of a process (fakecuda.status_dir).",
    {},
    10.0,
    60000.0};

constexpr const char* kRecordPrefix = "proc-";
constexpr const char* kRecordSuffix = ".json";

int node_ordinal(const RuntimeOptions& o, int device) {
  return device < static_cast<int>(o.visible_ordinals.size()) ? o.visible_ordinals[static_cast<size_t>(device)]
                                                              : device;
}

std::string read_small_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string record_path(const std::string& dir, int pid) {
  return dir + "/" + kRecordPrefix + std::to_string(pid) + kRecordSuffix;
}

}  // namespace

int busy_percent(SimTime busy, SimTime window) {
  if (window <= SimTime::zero()) return 0;
  const double pct = 100.0 * static_cast<double>(busy.count_ns()) / static_cast<double>(window.count_ns());
  return static_cast<int>(std::clamp(std::lround(pct), 0L, 100L));
}

SimTime utilization_window() { return SimTime::ms(config::global().get(kWindowMs)); }

SimTime status_now(Runtime& rt) {
  sched::Clock& c = rt.clock();
  return c.is_virtual() ? c.max_host_time() : c.wall_now();
}

DeviceUsage device_usage(Runtime& rt, int device, SimTime now, SimTime window) {
  DeviceUsage u;
  u.index = node_ordinal(rt.options(), device);
  u.used_bytes = rt.device(device).used_bytes();
  const SimTime from = now - window;
  u.util_gpu_pct = busy_percent(rt.timeline().busy_time(device, sched::BusyClass::kCompute, from, now), window);
  u.util_mem_pct = busy_percent(rt.timeline().busy_time(device, sched::BusyClass::kMemory, from, now), window);
  return u;
}

std::string local_node_name() {
  static const std::string node = [] {
    const config::Config::EnvMap env = config::process_environment();
    auto it = env.find("GENIE_NODE");  // the launcher's placement, as the coordinator client reads it
    if (it != env.end() && !it->second.empty()) return it->second;
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    return std::string(host);
  }();
  return node;
}

ProcessStatus local_status(Runtime& rt) {
  ProcessStatus s;
  s.pid = static_cast<int>(getpid());
  s.rank = sched::process_rank_from_environment();
  s.node = local_node_name();
  s.program = read_small_file("/proc/self/comm");
  while (!s.program.empty() && (s.program.back() == '\n' || s.program.back() == ' ')) s.program.pop_back();
  s.preset = rt.options().spec.preset;
  s.gpus = rt.options().physical_device_count;
  s.clock = rt.clock().is_virtual() ? "virtual" : "realtime";
  const SimTime now = status_now(rt);
  s.host_time_ns = now.count_ns();
  s.updated_unix_ms = unix_ms();
  const SimTime window = utilization_window();
  for (int d = 0; d < rt.device_count(); ++d) {
    if (rt.device(d).used_bytes() == 0 && !rt.timeline().device_ran_ops(d)) continue;
    s.devices.push_back(device_usage(rt, d, now, window));
  }
  std::sort(s.devices.begin(), s.devices.end(),
            [](const DeviceUsage& a, const DeviceUsage& b) { return a.index < b.index; });
  return s;
}

std::string status_to_json(const ProcessStatus& s) {
  nlohmann::json devs = nlohmann::json::array();
  for (const DeviceUsage& d : s.devices)
    devs.push_back({{"index", d.index},
                    {"used_bytes", d.used_bytes},
                    {"util_gpu_pct", d.util_gpu_pct},
                    {"util_mem_pct", d.util_mem_pct}});
  nlohmann::json j = {{"pid", s.pid},
                      {"rank", s.rank},
                      {"node", s.node},
                      {"program", s.program},
                      {"preset", s.preset},
                      {"gpus", s.gpus},
                      {"clock", s.clock},
                      {"host_time_ns", s.host_time_ns},
                      {"updated_unix_ms", s.updated_unix_ms},
                      {"devices", devs}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<ProcessStatus> status_from_json(const std::string& text) {
  // nlohmann throws on malformed input or a wrong type: caught at this edge (STYLE.md §3).
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    ProcessStatus s;
    s.pid = j.at("pid").get<int>();
    s.rank = j.at("rank").get<int>();
    s.node = j.at("node").get<std::string>();
    s.program = j.at("program").get<std::string>();
    s.preset = j.at("preset").get<std::string>();
    s.gpus = j.at("gpus").get<int>();
    s.clock = j.at("clock").get<std::string>();
    s.host_time_ns = j.at("host_time_ns").get<int64_t>();
    s.updated_unix_ms = j.at("updated_unix_ms").get<int64_t>();
    for (const auto& d : j.at("devices")) {
      DeviceUsage u;
      u.index = d.at("index").get<int>();
      u.used_bytes = d.at("used_bytes").get<uint64_t>();
      u.util_gpu_pct = d.at("util_gpu_pct").get<int>();
      u.util_mem_pct = d.at("util_mem_pct").get<int>();
      s.devices.push_back(u);
    }
    return s;
  } catch (const std::exception& e) {
    return invalid_argument(std::string("status record: ") + e.what());
  }
}

std::vector<ProcessStatus> read_status_dir(const std::string& dir, int skip_pid) {
  std::vector<ProcessStatus> out;
  if (dir.empty()) return out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  const std::string prefix = kRecordPrefix, suffix = kRecordSuffix;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    Result<ProcessStatus> s = status_from_json(read_small_file(dir + "/" + name));
    // A record being replaced is renamed into place whole, so a parse error is a file that is not ours: skip it.
    if (!s.is_ok() || s.value().pid == skip_pid || !sched::process_alive(s.value().pid)) continue;
    out.push_back(std::move(s.value()));
  }
  closedir(d);
  std::sort(out.begin(), out.end(), [](const ProcessStatus& a, const ProcessStatus& b) { return a.pid < b.pid; });
  return out;
}

std::string status_dir() { return config::global().get(kStatusDir); }

Status publish_status(Runtime& rt, const std::string& dir) {
  const int pid = static_cast<int>(getpid());
  const std::string text = status_to_json(local_status(rt));
  // Written aside and renamed into place: a reader sees the old record or the new one, never half of one.
  const std::string tmp = dir + "/." + kRecordPrefix + std::to_string(pid) + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return system_error("cannot write " + tmp + ": " + std::strerror(errno));
  size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      ::unlink(tmp.c_str());
      return system_error("cannot write " + tmp + ": " + std::strerror(errno));
    }
    off += static_cast<size_t>(n);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), record_path(dir, pid).c_str()) != 0) {
    ::unlink(tmp.c_str());
    return system_error("cannot rename " + tmp + ": " + std::strerror(errno));
  }
  return Status::ok();
}

namespace {
// The publisher's shared state: never destroyed (the thread may still run while the process exits).
struct Publisher {
  std::string dir;
  std::atomic<bool> stopped{false};
  std::mutex mu;  // one write at a time: the thread's, or the exit handler's removal
};
Publisher* g_publisher = nullptr;

void remove_record_at_exit() {
  Publisher* p = g_publisher;
  if (p == nullptr) return;
  std::lock_guard lk(p->mu);
  p->stopped.store(true);
  ::unlink(record_path(p->dir, static_cast<int>(getpid())).c_str());
}
}  // namespace

void start_status_publisher(Runtime& rt) {
  static std::once_flag once;
  std::call_once(once, [&rt] {
    const std::string dir = status_dir();
    if (dir.empty()) return;
    const auto interval = std::chrono::milliseconds(config::global().get(kStatusIntervalMs));
    g_publisher = new Publisher();  // never freed: see Publisher
    g_publisher->dir = dir;
    Status first = publish_status(rt, dir);  // at once, so the process is listed from its first CUDA call
    if (!first.is_ok()) {
      GENIE_LOG_WARN(log::kFakecuda, "genie smi will not see this process: {}", first.message());
      return;
    }
    std::atexit(remove_record_at_exit);
    std::thread([&rt, interval, p = g_publisher] {
      InternalScope internal;
      bool warned = false;
      while (true) {
        std::this_thread::sleep_for(interval);
        std::lock_guard lk(p->mu);
        if (p->stopped.load()) return;
        Status s = publish_status(rt, p->dir);
        if (!s.is_ok() && !warned) {
          warned = true;
          GENIE_LOG_WARN(log::kFakecuda, "status record not updated: {}", s.message());
        }
      }
    }).detach();
  });
}

unsigned nominal_power_mw(const DeviceSpec& spec, int util_gpu_pct) {
  if (spec.power_limit_w <= 0) return 0;
  const double w =
      spec.idle_power_w + (spec.power_limit_w - spec.idle_power_w) * std::clamp(util_gpu_pct, 0, 100) / 100.0;
  return static_cast<unsigned>(std::lround(w * 1000.0));
}

}  // namespace genie::fakecuda
