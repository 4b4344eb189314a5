// SPDX-License-Identifier: Apache-2.0
// Job status folders of genie run (job.json) and their discovery by genie smi.
#include "genie/sched/job_dir.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "genie/common/config.hpp"

namespace genie::sched {
namespace {

const config::Param<std::string> kStatusRoot{
    "status_root", "",
    "Folder of the running jobs' status folders: genie run makes one per job there, its ranks publish their devices' "
    "state in it, genie smi reads it (docs/nvml.md). Empty: /tmp/genie-<uid>."};

constexpr const char* kJobFile = "job.json";

Status make_private_dir(const std::string& path) {
  if (mkdir(path.c_str(), 0700) == 0) return Status::ok();
  if (errno != EEXIST) return system_error("cannot create " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return system_error(path + " exists and is not a folder");
  if (st.st_uid != geteuid()) return system_error(path + " belongs to another user");
  return Status::ok();
}

// Whether process `pid` is a genie command (its name starts with "genie"): a job folder left by a killed genie run
// whose pid the system gave to another program since is not a running job.
bool is_genie_process(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/comm");
  std::string comm;
  std::getline(f, comm);
  return comm.rfind("genie", 0) == 0;
}

}  // namespace

std::string status_root() {
  std::string root = config::global().get(kStatusRoot);
  if (root.empty()) root = "/tmp/genie-" + std::to_string(geteuid());
  return root;
}

bool process_alive(int pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

Result<std::string> create_job_dir(const JobInfo& info, const std::string& root) {
  GENIE_TRY(make_private_dir(root));
  const std::string dir = root + "/job-" + std::to_string(info.launcher_pid);
  GENIE_TRY(make_private_dir(dir));
  nlohmann::json j = {{"launcher_pid", info.launcher_pid},
                      {"command", info.command},
                      {"nranks", info.nranks},
                      {"nodes", info.nodes},
                      {"gpus_per_node", info.gpus_per_node},
                      {"device", info.device},
                      {"clock", info.clock},
                      {"started_unix_ms", info.started_unix_ms}};
  const std::string path = dir + "/" + kJobFile;
  std::ofstream f(path, std::ios::trunc);
  // A command line need not be UTF-8: replace what is not rather than throw.
  f << j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  if (!f) return system_error("cannot write " + path);
  return dir;
}

void remove_job_dir(const std::string& dir) {
  if (dir.empty()) return;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") unlink((dir + "/" + name).c_str());
    }
    closedir(d);
  }
  rmdir(dir.c_str());
}

Result<JobInfo> parse_job_info(const std::string& json_text) {
  // nlohmann throws on malformed input: caught here, at the module edge (STYLE.md §3).
  try {
    const nlohmann::json j = nlohmann::json::parse(json_text);
    JobInfo info;
    info.launcher_pid = j.at("launcher_pid").get<int>();
    info.command = j.at("command").get<std::vector<std::string>>();
    info.nranks = j.at("nranks").get<int>();
    info.nodes = j.at("nodes").get<int>();
    info.gpus_per_node = j.at("gpus_per_node").get<int>();
    info.device = j.at("device").get<std::string>();
    info.clock = j.at("clock").get<std::string>();
    info.started_unix_ms = j.at("started_unix_ms").get<int64_t>();
    return info;
  } catch (const std::exception& e) {
    return invalid_argument(std::string("job.json: ") + e.what());
  }
}

std::vector<JobInfo> running_jobs(const std::string& root) {
  std::vector<JobInfo> jobs;
  DIR* d = opendir(root.c_str());
  if (d == nullptr) return jobs;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind("job-", 0) != 0) continue;
    const std::string dir = root + "/" + name;
    std::ifstream f(dir + "/" + kJobFile);
    if (!f) continue;
    std::stringstream ss;
    ss << f.rdbuf();
    Result<JobInfo> info = parse_job_info(ss.str());
    if (!info.is_ok() || !process_alive(info.value().launcher_pid) || !is_genie_process(info.value().launcher_pid))
      continue;
    info.value().dir = dir;
    jobs.push_back(std::move(info.value()));
  }
  closedir(d);
  std::sort(jobs.begin(), jobs.end(), [](const JobInfo& a, const JobInfo& b) {
    return a.started_unix_ms != b.started_unix_ms ? a.started_unix_ms < b.started_unix_ms
                                                  : a.launcher_pid < b.launcher_pid;
  });
  return jobs;
}

}  // namespace genie::sched
