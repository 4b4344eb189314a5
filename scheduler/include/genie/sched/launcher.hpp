// SPDX-License-Identifier: Apache-2.0
// Launcher: starts the ranks of a job as processes with the environment torchrun and MPI programs expect,
// prefixes their output, forwards signals and stops the job when a rank fails (`genie run`).
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "genie/common/status.hpp"

namespace genie::sched {

/// A host of a testbed that ranks run in (genie run --testbed).
struct LaunchHost {
  std::string netns_path;  ///< /run/netns/<name>-h<i>: the rank's network namespace
  std::string hostname;    ///< the rank's hostname (its own UTS namespace)
  std::string address;     ///< the host's IPv4 address (bootstrap, fabric, MASTER_ADDR of host 0)
};

/// What to launch.
struct LaunchSpec {
  int nranks = 1;
  int nodes = 0;                                 ///< emulated nodes (0: ceil(nranks / gpus_per_node))
  int gpus_per_node = 8;                         ///< devices each rank's process sees (GENIE_GPUS)
  std::vector<std::string> command;              ///< program and arguments (PATH is searched)
  std::map<std::string, std::string> extra_env;  ///< set in every rank (GENIE_DEVICE, ...)
  std::string lib_dir;                           ///< where libcudart.so.13 / libnccl.so.2 live ("" : no LD_PRELOAD)
  bool prefix_output = true;                     ///< "[rank3]: " before every line, as torchrun's --tee / log prefix
  std::chrono::milliseconds grace{std::chrono::seconds(10)};  ///< after a failure, before the others are stopped
  std::vector<LaunchHost> hosts;  ///< testbed: rank r runs in hosts[r % hosts.size()] (empty: this host)
  std::vector<int> bind_cpus;     ///< rank r runs on CPU bind_cpus[r] only (empty: where the kernel puts it); rank_cpus
};

/// How each rank ended.
struct RankExit {
  int rank = 0;
  int exit_code = 0;  ///< 0..255, or 128 + signal
  int signal = 0;     ///< terminating signal (0: exited)
};

struct LaunchResult {
  int exit_code = 0;  ///< the first failing rank's exit code (0: all succeeded)
  int first_failed_rank = -1;
  std::vector<RankExit> ranks;  ///< by rank
};

/// Placement of rank `r`: its node (GROUP_RANK), local rank and the number of ranks on its node.
struct RankPlacement {
  int node = 0;
  int local_rank = 0;
  int local_world_size = 1;
};
/// Ranks fill nodes in order, ceil(nranks / nodes) per node. InvalidArgument when a node would need more
/// ranks than it has GPUs, or the numbers are not positive.
Result<std::vector<RankPlacement>> place_ranks(int nranks, int nodes, int gpus_per_node);

/// The CPU each rank is bound to for `policy` (genie run --bind-to), empty for none: "core" puts rank r on the
/// (r mod n)-th of the n CPUs this process may run on (its affinity), as mpirun --bind-to core; "none" binds nothing;
/// "auto" is "core" when wall-clock time is what the job measures (`realtime`) and every rank gets a CPU of its own,
/// else "none" (a virtual-clock job's results do not depend on where its threads run). InvalidArgument for another
/// policy.
Result<std::vector<int>> rank_cpus(int nranks, const std::string& policy, bool realtime);

/// The sanitizer runtime this program was built with (libasan / libtsan, the file loaded in this process), or
/// empty in a normal build. Programs launched on a sanitizer build's libraries must preload it first: the
/// launcher and `genie env` put it at the front of LD_PRELOAD unless it is there already.
std::string sanitizer_runtime();
/// `preload` (a LD_PRELOAD value) with the sanitizer runtime in front, unless it holds it already.
std::string with_sanitizer_runtime(const std::string& preload);

/// The drop-in libraries a program preloads to run on Genie, as paths in `lib_dir`, in preload order: the CUDA runtime
/// of `cuda_major` (12 or 13), cuBLAS and cuBLASLt of that major, cuDNN, NCCL and NVML (libnvidia-ml.so.1). PyTorch's
/// wheels find NVIDIA's cuBLAS/cuDNN/NCCL through DT_RPATH, which LD_LIBRARY_PATH cannot override: only a preloaded
/// soname replaces them. The one list `genie run` (rank_environment) and `genie env` use. Libraries missing from
/// `lib_dir` (a build without cuDNN headers) are left out, except the CUDA runtime.
std::vector<std::string> preload_libraries(const std::string& lib_dir, int cuda_major = 13);

/// PyTorch start-up, for `genie run` (rank_environment) and `genie env`: "PYTHONPATH" = `lib_dir`/python (whose
/// sitecustomize.py installs genie_small_values.py when the program imports torch; docs/pytorch.md "Small values"),
/// to be put before the caller's PYTHONPATH, and the resolved torch.* settings of the config registry
/// (GENIE_TORCH_SMALL_VALUES, GENIE_TORCH_SMALL_VALUE_ELEMENTS), which the Python module reads. Empty when
/// `lib_dir`/python/sitecustomize.py is missing (a build without the genie_python target).
std::map<std::string, std::string> python_environment(const std::string& lib_dir);

/// The environment of rank `r` (only the variables the launcher sets).
std::map<std::string, std::string> rank_environment(const LaunchSpec& spec, const RankPlacement& p, int rank,
                                                    int master_port);

/// Runs the job to completion. Blocks; forwards SIGINT/SIGTERM it receives to the ranks. Errors only for
/// what prevents launching (bad spec, fork/pipe failure); a failing rank is a result, not an error.
Result<LaunchResult> launch(const LaunchSpec& spec);

}  // namespace genie::sched
