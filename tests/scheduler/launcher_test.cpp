// SPDX-License-Identifier: Apache-2.0
// Launcher: rank placement, the environment of each rank, output prefixes, exit codes and failure handling.
#include "genie/sched/launcher.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "genie/common/thread_util.hpp"

namespace genie::sched {
namespace {

TEST(Launcher, RanksFillNodesInOrder) {
  // System: 6 ranks on 2 nodes of 8 GPUs. Expectation: 3 per node; rank 4 is local rank 1 of node 1.
  auto p = place_ranks(6, 2, 8);
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  EXPECT_EQ((*p)[4].node, 1);
  EXPECT_EQ((*p)[4].local_rank, 1);
  EXPECT_EQ((*p)[4].local_world_size, 3);
  // Default node count: 16 ranks, 8 GPUs per node -> 2 nodes of 8.
  auto q = place_ranks(16, 0, 8);
  ASSERT_TRUE(q.is_ok());
  EXPECT_EQ((*q)[15].node, 1);
  EXPECT_EQ((*q)[15].local_rank, 7);
}

TEST(Launcher, TooManyRanksPerNodeIsAnErrorNamingTheFlag) {
  auto p = place_ranks(10, 1, 8);
  ASSERT_FALSE(p.is_ok());
  EXPECT_EQ(p.status().code(), Errc::kInvalidArgument);
  EXPECT_NE(p.status().message().find("--gpus-per-node 8"), std::string::npos) << p.status().message();
}

TEST(Launcher, EachRankGetsTorchrunVariablesAndItsEmulatedNode) {
  LaunchSpec spec;
  spec.nranks = 4;
  spec.nodes = 2;
  spec.extra_env["GENIE_DEVICE"] = "h100-sxm";
  auto p = place_ranks(4, 2, 8);
  ASSERT_TRUE(p.is_ok());
  auto env = rank_environment(spec, (*p)[3], 3, 12345);
  EXPECT_EQ(env["RANK"], "3");
  EXPECT_EQ(env["WORLD_SIZE"], "4");
  EXPECT_EQ(env["LOCAL_RANK"], "1");
  EXPECT_EQ(env["LOCAL_WORLD_SIZE"], "2");
  EXPECT_EQ(env["GROUP_RANK"], "1");
  EXPECT_EQ(env["MASTER_ADDR"], "127.0.0.1");
  EXPECT_EQ(env["MASTER_PORT"], "12345");
  EXPECT_EQ(env["GENIE_NODE"], "node1");
  EXPECT_EQ(env["GENIE_DEVICE"], "h100-sxm");
  EXPECT_EQ(env.count("LD_PRELOAD"), 0u) << "no library directory given";
}

TEST(Launcher, PreloadListHasEveryDropInThatIsBuiltNvmlLast) {
  char tmpl[] = "/tmp/genie-preload-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  // System: a library folder with the CUDA 13 runtime, NCCL and NVML only (no cuBLAS, no cuDNN).
  // Expectation: those three, in preload order; for CUDA 12 the 12 runtime, which is listed even when absent.
  for (const char* f : {"libcudart.so.13", "libnccl.so.2", "libnvidia-ml.so.1"}) std::ofstream(dir + "/" + f) << "";
  EXPECT_EQ(preload_libraries(dir),
            (std::vector<std::string>{dir + "/libcudart.so.13", dir + "/libnccl.so.2", dir + "/libnvidia-ml.so.1"}));
  EXPECT_EQ(preload_libraries(dir, 12).front(), dir + "/libcudart.so.12");
  LaunchSpec spec;
  spec.lib_dir = dir;
  auto p = place_ranks(1, 1, 8);
  ASSERT_TRUE(p.is_ok());
  const std::string preload = rank_environment(spec, (*p)[0], 0, 1)["LD_PRELOAD"];
  EXPECT_NE(preload.find(dir + "/libnvidia-ml.so.1"), std::string::npos) << preload;
  for (const char* f : {"libcudart.so.13", "libnccl.so.2", "libnvidia-ml.so.1"}) std::remove((dir + "/" + f).c_str());
  rmdir(dir.c_str());
}

// Runs `spec` with its output captured in a temporary file; returns (result, output).
std::pair<LaunchResult, std::string> run_captured(LaunchSpec spec) {
  char path[] = "/tmp/genie-launcher-XXXXXX";
  int fd = mkstemp(path);
  fflush(stdout);
  fflush(stderr);
  int saved_out = dup(1), saved_err = dup(2);
  dup2(fd, 1);
  dup2(fd, 2);
  auto r = launch(spec);
  dup2(saved_out, 1);
  dup2(saved_err, 2);
  close(saved_out);
  close(saved_err);
  close(fd);
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  unlink(path);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return {r.is_ok() ? r.value() : LaunchResult{}, ss.str()};
}

TEST(Launcher, OutputLinesArePrefixedWithTheirRank) {
  LaunchSpec spec;
  spec.nranks = 3;
  spec.command = {"sh", "-c", "echo hello from $RANK of $WORLD_SIZE; echo to stderr >&2"};
  auto [r, out] = run_captured(spec);
  EXPECT_EQ(r.exit_code, 0);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NE(out.find("[rank" + std::to_string(i) + "]: hello from " + std::to_string(i) + " of 3\n"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("[rank" + std::to_string(i) + "]: to stderr\n"), std::string::npos) << out;
  }
}

TEST(Launcher, TheFirstFailingRanksCodeIsTheJobsAndTheOthersAreStopped) {
  // System: rank 1 exits 7 at once; the others would sleep 60 s. Grace 0.2 s.
  // Expectation: exit code 7, rank 1 first to fail, the sleepers ended by SIGTERM well before 60 s.
  LaunchSpec spec;
  spec.nranks = 3;
  spec.grace = std::chrono::milliseconds(200);
  spec.command = {"sh", "-c", "if [ $RANK = 1 ]; then exit 7; fi; exec sleep 60"};
  auto t0 = std::chrono::steady_clock::now();
  auto [r, out] = run_captured(spec);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_EQ(r.first_failed_rank, 1);
  ASSERT_EQ(r.ranks.size(), 3u);
  EXPECT_EQ(r.ranks[0].signal, SIGTERM);
  EXPECT_NE(out.find("rank 1 exited with code 7"), std::string::npos) << out;
}

TEST(Launcher, BindingPolicyGivesEachRankACpuAsMpirunDoes) {
  const std::vector<int> cpus = allowed_cpus();
  ASSERT_FALSE(cpus.empty());
  const int n = static_cast<int>(cpus.size());
  // core: rank r on the (r mod n)-th allowed CPU, wrapping when ranks outnumber CPUs.
  auto core = rank_cpus(n + 1, "core", false);
  ASSERT_TRUE(core.is_ok()) << core.status().message();
  ASSERT_EQ(core->size(), static_cast<size_t>(n + 1));
  for (int r = 0; r <= n; ++r) EXPECT_EQ((*core)[static_cast<size_t>(r)], cpus[static_cast<size_t>(r % n)]);
  // auto: only for wall-clock jobs in which every rank gets a CPU of its own.
  auto rt = rank_cpus(n, "auto", true);
  ASSERT_TRUE(rt.is_ok());
  EXPECT_EQ(*rt, cpus);
  EXPECT_TRUE(rank_cpus(n + 1, "auto", true)->empty());
  EXPECT_TRUE(rank_cpus(n, "auto", false)->empty());
  EXPECT_TRUE(rank_cpus(1, "none", true)->empty());
  auto bad = rank_cpus(2, "socket", true);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("--bind-to 'socket' is not auto, core or none"), std::string::npos);
}

TEST(Launcher, BoundRanksRunOnlyOnTheirCpu) {
  // System: 2 ranks bound to the first allowed CPU (so the test holds on a one-CPU machine too); each prints the CPU
  // list of its affinity. Expectation: both print exactly that CPU.
  const std::vector<int> cpus = allowed_cpus();
  ASSERT_FALSE(cpus.empty());
  LaunchSpec spec;
  spec.nranks = 2;
  spec.bind_cpus = {cpus[0], cpus[0]};
  spec.command = {"sh", "-c", "echo cpus $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)"};
  auto [r, out] = run_captured(spec);
  EXPECT_EQ(r.exit_code, 0);
  for (int i = 0; i < 2; ++i)
    EXPECT_NE(out.find("[rank" + std::to_string(i) + "]: cpus " + std::to_string(cpus[0]) + "\n"), std::string::npos)
        << out;
}

TEST(Launcher, AProgramThatCannotBeExecutedFailsWith127) {
  LaunchSpec spec;
  spec.nranks = 2;
  spec.command = {"/nonexistent/program"};
  auto [r, out] = run_captured(spec);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(out.find("cannot execute /nonexistent/program"), std::string::npos) << out;
}

}  // namespace
}  // namespace genie::sched
