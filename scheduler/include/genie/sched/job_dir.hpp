// SPDX-License-Identifier: Apache-2.0
// Job status folders: where `genie run` says which job runs, and where its rank processes publish the state of their
// emulated devices for `genie smi` and NVML (docs/nvml.md "How genie smi finds a job").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "genie/common/status.hpp"

namespace genie::sched {

/// What `genie run` writes to <job folder>/job.json when it starts a job.
struct JobInfo {
  int launcher_pid = 0;              ///< the genie run process
  std::vector<std::string> command;  ///< the ranks' command line
  int nranks = 0;
  int nodes = 0;
  int gpus_per_node = 0;
  std::string device;  ///< GENIE_DEVICE of the ranks ("" : the default preset)
  std::string clock;   ///< "virtual" or "realtime"
  int64_t started_unix_ms = 0;
  std::string dir;  ///< the job folder (not stored in job.json: where it was read from)
};

/// The folder that holds one folder per running job: the `status_root` parameter (GENIE_STATUS_ROOT), by default
/// /tmp/genie-<effective uid>.
std::string status_root();

/// Makes <root>/job-<info.launcher_pid> (owner-only, as is root when this makes it), writes job.json into it and
/// returns its path. Errors: kSystem naming the folder or file.
Result<std::string> create_job_dir(const JobInfo& info, const std::string& root);

/// Removes a job folder made by create_job_dir and every file in it (not subfolders: it has none). Best effort.
void remove_job_dir(const std::string& dir);

/// Parses job.json text. Errors: kInvalidArgument naming what is wrong.
Result<JobInfo> parse_job_info(const std::string& json_text);

/// The jobs under `root` whose launcher process is still alive and a genie command (its name starts with "genie"),
/// oldest first. Folders of dead launchers (a killed genie run, its pid maybe reused since) are left alone and skipped.
std::vector<JobInfo> running_jobs(const std::string& root);

/// Whether process `pid` exists (kill(pid, 0) succeeds or fails with EPERM).
bool process_alive(int pid);

}  // namespace genie::sched
