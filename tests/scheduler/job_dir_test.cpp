// SPDX-License-Identifier: Apache-2.0
// Tests of the job status folders genie run makes and genie smi finds (job.json, running_jobs, removal).
#include "genie/sched/job_dir.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace genie::sched {
namespace {

std::string temp_root() {
  char tmpl[] = "/tmp/genie-jobdir-test-XXXXXX";
  EXPECT_NE(mkdtemp(tmpl), nullptr);
  return tmpl;
}

TEST(JobDir, ARunningJobIsFoundAndADeadOneSkipped) {
  const std::string root = temp_root();
  JobInfo job;
  job.launcher_pid = static_cast<int>(getpid());
  job.command = {"./prog", "--flag", "x y"};
  job.nranks = 2;
  job.nodes = 1;
  job.gpus_per_node = 8;
  job.device = "h100-sxm";
  job.clock = "virtual";
  job.started_unix_ms = 1700000000000;
  Result<std::string> dir = create_job_dir(job, root);
  ASSERT_TRUE(dir.is_ok()) << dir.status().to_string();
  EXPECT_EQ(dir.value(), root + "/job-" + std::to_string(getpid()));
  struct stat st {};
  ASSERT_EQ(stat(dir.value().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u) << "owner-only";
  // A job whose launcher is gone (a killed genie run) stays on disk but is not listed. No pid is this large.
  JobInfo dead = job;
  dead.launcher_pid = 1 << 30;
  ASSERT_TRUE(create_job_dir(dead, root).is_ok());
  ASSERT_EQ(mkdir((root + "/job-garbage").c_str(), 0700), 0);
  std::ofstream(root + "/job-garbage/job.json") << "{not json";

  std::vector<JobInfo> jobs = running_jobs(root);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].launcher_pid, job.launcher_pid);
  EXPECT_EQ(jobs[0].command, job.command);
  EXPECT_EQ(jobs[0].nranks, 2);
  EXPECT_EQ(jobs[0].gpus_per_node, 8);
  EXPECT_EQ(jobs[0].device, "h100-sxm");
  EXPECT_EQ(jobs[0].started_unix_ms, job.started_unix_ms);
  EXPECT_EQ(jobs[0].dir, dir.value());

  std::ofstream(dir.value() + "/proc-1.json") << "{}";
  remove_job_dir(dir.value());
  EXPECT_NE(access(dir.value().c_str(), F_OK), 0) << "removed with the files in it";
  EXPECT_TRUE(running_jobs(root).empty());
  remove_job_dir(root + "/job-" + std::to_string(dead.launcher_pid));
  remove_job_dir(root + "/job-garbage");
  rmdir(root.c_str());
}

TEST(JobDir, ProcessAliveAndJobInfoParsing) {
  EXPECT_TRUE(process_alive(static_cast<int>(getpid())));
  EXPECT_FALSE(process_alive(1 << 30));
  EXPECT_FALSE(process_alive(0));
  EXPECT_FALSE(parse_job_info("{\"launcher_pid\": 3}").is_ok());
}

}  // namespace
}  // namespace genie::sched
