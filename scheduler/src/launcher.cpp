// SPDX-License-Identifier: Apache-2.0
// Launcher: fork/exec of the ranks, one poll loop over their pipes and a signalfd, failure handling.
#include "genie/sched/launcher.hpp"

#include "genie/sched/job_dir.hpp"
#include "genie/sched/testbed.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "genie/common/config.hpp"
#include "genie/common/sanitizer.hpp"
#include "genie/common/thread_util.hpp"

namespace genie::sched {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Time the ranks get between SIGTERM and SIGKILL.
constexpr auto kTermToKill = std::chrono::seconds(5);
// How long output of processes a rank left behind is still forwarded after the last rank exited.
constexpr auto kDrainAfterExit = std::chrono::milliseconds(500);

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 29500;  // torchrun's default
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(sa);
  int port = 29500;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) == 0)
    port = ntohs(sa.sin_port);
  ::close(fd);
  return port;
}

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t w = ::write(fd, s.data() + done, s.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    done += static_cast<size_t>(w);
  }
}

// One output stream of one rank: bytes are forwarded line by line with the rank prefix.
struct Stream {
  int fd = -1;
  int out_fd = 1;
  std::string partial;
};

struct Child {
  pid_t pid = -1;
  bool running = true;
  Stream out, err;
};

void flush_lines(Stream& s, const std::string& prefix, bool final) {
  size_t start = 0;
  for (;;) {
    size_t nl = s.partial.find('\n', start);
    if (nl == std::string::npos) break;
    write_all(s.out_fd, prefix + s.partial.substr(start, nl - start + 1));
    start = nl + 1;
  }
  s.partial.erase(0, start);
  if (final && !s.partial.empty()) {
    write_all(s.out_fd, prefix + s.partial + "\n");
    s.partial.clear();
  }
}

}  // namespace

Result<std::vector<int>> rank_cpus(int nranks, const std::string& policy, bool realtime) {
  if (policy != "auto" && policy != "core" && policy != "none")
    return invalid_argument("--bind-to '" + policy + "' is not auto, core or none");
  if (policy == "none" || nranks < 1) return std::vector<int>{};
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.empty()) return system_error("cannot read the CPUs this process may run on (sched_getaffinity)");
  if (policy == "auto" && (!realtime || static_cast<size_t>(nranks) > cpus.size())) return std::vector<int>{};
  std::vector<int> out(static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r) out[static_cast<size_t>(r)] = cpus[static_cast<size_t>(r) % cpus.size()];
  return out;
}

Result<std::vector<RankPlacement>> place_ranks(int nranks, int nodes, int gpus_per_node) {
  if (nranks < 1) return invalid_argument("-n must be at least 1, not " + std::to_string(nranks));
  if (gpus_per_node < 1) return invalid_argument("--gpus-per-node must be at least 1");
  if (nodes < 0) return invalid_argument("--nodes must not be negative");
  if (nodes == 0) nodes = (nranks + gpus_per_node - 1) / gpus_per_node;
  if (nodes > nranks)
    return invalid_argument("--nodes " + std::to_string(nodes) + " is more than the " + std::to_string(nranks) +
                            " ranks");
  const int per_node = (nranks + nodes - 1) / nodes;
  if (per_node > gpus_per_node)
    return invalid_argument(std::to_string(nranks) + " ranks on " + std::to_string(nodes) + " nodes need " +
                            std::to_string(per_node) + " ranks per node, more than --gpus-per-node " +
                            std::to_string(gpus_per_node));
  std::vector<RankPlacement> out;
  for (int r = 0; r < nranks; ++r) {
    RankPlacement p;
    p.node = r / per_node;
    p.local_rank = r % per_node;
    p.local_world_size = std::min(per_node, nranks - p.node * per_node);
    out.push_back(p);
  }
  return out;
}

#if GENIE_ASAN
#define GENIE_SANITIZER_SYMBOL __asan_init
#elif GENIE_TSAN
#define GENIE_SANITIZER_SYMBOL __tsan_init
#endif
#ifdef GENIE_SANITIZER_SYMBOL
extern "C" void GENIE_SANITIZER_SYMBOL();
#endif

std::string sanitizer_runtime() {
#ifdef GENIE_SANITIZER_SYMBOL
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&GENIE_SANITIZER_SYMBOL), &info) != 0 && info.dli_fname != nullptr)
    return info.dli_fname;
#endif
  return {};
}

std::string with_sanitizer_runtime(const std::string& preload) {
  const std::string rt = sanitizer_runtime();
  if (rt.empty()) return preload;
  if (preload == rt || preload.rfind(rt + ":", 0) == 0) return preload;
  return preload.empty() ? rt : rt + ":" + preload;
}

std::vector<std::string> preload_libraries(const std::string& lib_dir, int cuda_major) {
  const std::string major = std::to_string(cuda_major);
  std::vector<std::string> out = {lib_dir + "/libcudart.so." + major};
  // libcupti.so.<major>: torch links it (DT_RPATH to its wheel's copy, which wins over LD_LIBRARY_PATH), so it is
  // preloaded like the others (docs/profiler.md).
  for (const std::string& name : {"libcublas.so." + major, "libcublasLt.so." + major, std::string("libcudnn.so.9"),
                                 "libcupti.so." + major, std::string("libnccl.so.2"),
                                 std::string("libnvidia-ml.so.1")}) {
    const std::string path = lib_dir + "/" + name;
    if (access(path.c_str(), R_OK) == 0) out.push_back(path);
  }
  return out;
}

// Read by fakecuda/python/genie_small_values.py in the ranks: Python cannot ask this registry, so genie run and
// genie env pass the resolved values (JSON file < environment) in the environment.
namespace {
const config::Param<bool> kTorchSmallValues{
    "torch.small_values", true,
    "PyTorch programs: ops on small CUDA tensors get their values computed on the CPU when the host reads them, so "
    "control flow that reads them (object collectives, .item() of a reduction, masks) sees real values"};
const config::Param<int64_t> kTorchSmallValueElements{
    "torch.small_value_elements", 65536,
    "PyTorch programs: the most elements a CUDA tensor (and the storage it views) may have for its values to be "
    "kept (torch.small_values)",
    {}, 1, 1 << 24};
const config::Param<int64_t> kTorchControlValueElements{
    "torch.control_value_elements", 16,
    "PyTorch programs: results of at most this many elements that a kernel Genie does not run would have computed "
    "(a norm, a loss, found_inf) read as zero, so NaN/Inf checks and loss scaling behave as with healthy values; 0 "
    "leaves them as the memory held them (torch.small_values)",
    {}, 0, 1 << 16};
}  // namespace

std::map<std::string, std::string> python_environment(const std::string& lib_dir) {
  const std::string dir = lib_dir + "/python";
  if (access((dir + "/sitecustomize.py").c_str(), R_OK) != 0) return {};
  const config::Config& c = config::global();
  return {{"PYTHONPATH", dir},
          {"GENIE_TORCH_SMALL_VALUES", c.get(kTorchSmallValues) ? "1" : "0"},
          {"GENIE_TORCH_SMALL_VALUE_ELEMENTS", std::to_string(c.get(kTorchSmallValueElements))},
          {"GENIE_TORCH_CONTROL_VALUE_ELEMENTS", std::to_string(c.get(kTorchControlValueElements))}};
}

std::map<std::string, std::string> rank_environment(const LaunchSpec& spec, const RankPlacement& p, int rank,
                                                    int master_port) {
  std::map<std::string, std::string> env = spec.extra_env;
  // torchrun's variables (torch.distributed's env:// init reads these) ...
  env["RANK"] = std::to_string(rank);
  env["WORLD_SIZE"] = std::to_string(spec.nranks);
  env["LOCAL_RANK"] = std::to_string(p.local_rank);
  env["LOCAL_WORLD_SIZE"] = std::to_string(p.local_world_size);
  env["GROUP_RANK"] = std::to_string(p.node);
  env["ROLE_RANK"] = std::to_string(rank);
  env["ROLE_WORLD_SIZE"] = std::to_string(spec.nranks);
  env["MASTER_ADDR"] = "127.0.0.1";
  env["MASTER_PORT"] = std::to_string(master_port);
  // ... and Genie's: the emulated node of this rank and the devices its process sees.
  env["GENIE_NODE"] = "node" + std::to_string(p.node);
  env["GENIE_GPUS"] = std::to_string(spec.gpus_per_node);
  if (!spec.hosts.empty()) {
    // Testbed: rank r on host r mod H; that host is its node, its addresses are the host's.
    const int h = static_cast<int>(spec.hosts.size());
    const LaunchHost& host = spec.hosts[static_cast<size_t>(rank % h)];
    env["LOCAL_RANK"] = std::to_string(rank / h);
    env["LOCAL_WORLD_SIZE"] = std::to_string(spec.nranks / h + (rank % h < spec.nranks % h ? 1 : 0));
    env["GROUP_RANK"] = std::to_string(rank % h);
    env["MASTER_ADDR"] = spec.hosts[0].address;
    env["GENIE_NODE"] = host.hostname;
    env["GENIE_SHIM_BOOTSTRAP_ADDR"] = host.address;
  }
  if (!spec.lib_dir.empty()) {
    const char* old_preload = std::getenv("LD_PRELOAD");
    const char* old_path = std::getenv("LD_LIBRARY_PATH");
    // The caller's preloads stay first (a sanitizer runtime must be the first library loaded).
    std::string preload = old_preload && *old_preload ? std::string(old_preload) + ":" : std::string();
    const std::vector<std::string> libs = preload_libraries(spec.lib_dir);
    for (size_t i = 0; i < libs.size(); ++i) preload += (i > 0 ? ":" : "") + libs[i];
    env["LD_PRELOAD"] = with_sanitizer_runtime(preload);
    // Genie's cuDNN has no engines: PyTorch's SDPA must not put cuDNN attention first (it does on sm90/sm100
    // with cuDNN > 9.15 unless this is set; docs/costmodel.md "cuDNN"). A value the user set is kept.
    if (std::getenv("TORCH_CUDNN_SDPA_DEPRIORITIZED") == nullptr) env["TORCH_CUDNN_SDPA_DEPRIORITIZED"] = "1";
    env["LD_LIBRARY_PATH"] = spec.lib_dir + (old_path && *old_path ? std::string(":") + old_path : "");
    // NVTX ranges (torch.cuda.nvtx, Megatron's, the program's own) go to Genie's injection library, which
    // records them on the rank's timeline for the report's per-range breakdown. A tool the user set is kept.
    // PyTorch: Genie's sitecustomize first on PYTHONPATH (it runs the one it hides), the small-value settings.
    for (auto& [k, v] : python_environment(spec.lib_dir)) {
      const char* old = std::getenv(k.c_str());
      if (k == "PYTHONPATH") env[k] = v + (old && *old ? std::string(":") + old : "");
      else if (env.count(k) == 0) env[k] = v;
    }
    const std::string nvtx = spec.lib_dir + "/libgenie_nvtx.so";
    if (std::getenv("NVTX_INJECTION64_PATH") == nullptr && access(nvtx.c_str(), R_OK) == 0)
      env["NVTX_INJECTION64_PATH"] = nvtx;
  }
  return env;
}

Result<LaunchResult> launch(const LaunchSpec& spec) {
  if (spec.command.empty()) return invalid_argument("no command to run (genie run -n N -- PROGRAM ARGS...)");
  GENIE_ASSIGN_OR_RETURN(auto places, place_ranks(spec.nranks, spec.nodes, spec.gpus_per_node));
  const int port = free_port();

  // Signals arrive through a signalfd, so the poll loop sees them in order with the ranks' output.
  sigset_t mask, old_mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGHUP);
  if (sigprocmask(SIG_BLOCK, &mask, &old_mask) != 0) return system_error("sigprocmask failed");
  int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) {
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    return system_error(std::string("signalfd: ") + std::strerror(errno));
  }

  // The job's status folder: job.json says which job runs, the ranks publish their devices' state there (genie smi,
  // and NVML's view of the other processes on a node; docs/nvml.md). Removed when the job ends. Without it (a root
  // that cannot be written) the job runs and genie smi does not see it.
  struct JobDir {
    std::string path;
    ~JobDir() { remove_job_dir(path); }
  } job_dir;
  {
    JobInfo job;
    job.launcher_pid = static_cast<int>(getpid());
    job.command = spec.command;
    job.nranks = spec.nranks;
    job.nodes = places.empty() ? 0 : places.back().node + 1;
    if (!spec.hosts.empty()) job.nodes = static_cast<int>(std::min<size_t>(spec.hosts.size(), spec.nranks));
    job.gpus_per_node = spec.gpus_per_node;
    auto from_env = [&](const char* name, const char* key) {
      auto it = spec.extra_env.find(name);
      return it != spec.extra_env.end() ? it->second : config::global().text(key);
    };
    job.device = from_env("GENIE_DEVICE", "device");
    job.clock = from_env("GENIE_CLOCK", "clock");
    job.started_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch()).count();
    Result<std::string> made = create_job_dir(job, status_root());
    if (made.is_ok()) {
      job_dir.path = made.value();
    } else {
      std::fprintf(stderr, "genie run: no status folder for genie smi: %s\n", made.status().message().c_str());
    }
  }

  std::vector<Child> kids(static_cast<size_t>(spec.nranks));
  LaunchResult result;
  result.ranks.resize(static_cast<size_t>(spec.nranks));
  const pid_t parent = getpid();
  for (int r = 0; r < spec.nranks; ++r) {
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) return system_error("pipe failed");
    auto env = rank_environment(spec, places[static_cast<size_t>(r)], r, port);
    if (!job_dir.path.empty() && env.count("GENIE_FAKECUDA_STATUS_DIR") == 0)
      env["GENIE_FAKECUDA_STATUS_DIR"] = job_dir.path;
    pid_t pid = fork();
    if (pid < 0) return system_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      // The rank: its output into our pipes, default signal handling, and it dies with the launcher.
      sigprocmask(SIG_SETMASK, &old_mask, nullptr);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);
      setpgid(0, 0);  // its own process group: stopping a rank also stops what it started
      if (!spec.hosts.empty()) {
        const LaunchHost& h = spec.hosts[static_cast<size_t>(r) % spec.hosts.size()];
        if (int e = testbed_enter_host(h.netns_path.c_str(), h.hostname.c_str()); e != 0) {
          std::fprintf(stderr, "genie run: cannot enter testbed host %s: %s\n", h.hostname.c_str(), std::strerror(e));
          _exit(126);
        }
      }
      if (static_cast<size_t>(r) < spec.bind_cpus.size()) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(spec.bind_cpus[static_cast<size_t>(r)], &one);
        if (sched_setaffinity(0, sizeof(one), &one) != 0) {
          std::fprintf(stderr, "genie run: cannot bind rank %d to CPU %d: %s\n", r, spec.bind_cpus[static_cast<size_t>(r)],
                       std::strerror(errno));
          _exit(126);
        }
      }
      dup2(out[1], 1);
      dup2(err[1], 2);
      for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
      std::vector<char*> argv;
      for (const auto& a : spec.command) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execvp(argv[0], argv.data());
      std::fprintf(stderr, "genie run: cannot execute %s: %s\n", argv[0], std::strerror(errno));
      _exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    setpgid(pid, pid);  // also here, so the group exists before we might signal it
    Child& c = kids[static_cast<size_t>(r)];
    c.pid = pid;
    c.out = {out[0], 1, {}};
    c.err = {err[0], 2, {}};
    result.ranks[static_cast<size_t>(r)].rank = r;
  }

  int running = spec.nranks;
  std::optional<SteadyClock::time_point> stop_at, kill_at;
  auto signal_all = [&](int sig) {
    for (auto& c : kids)
      if (c.running) kill(-c.pid, sig);
  };
  // Once every rank has exited, processes they left behind may still hold the pipes: read what is there
  // for a moment, then stop waiting for them.
  std::optional<SteadyClock::time_point> drain_until;
  while (running > 0 || [&] {
    for (auto& c : kids)
      if (c.out.fd >= 0 || c.err.fd >= 0) return true;
    return false;
  }()) {
    if (running == 0) {
      if (!drain_until) drain_until = SteadyClock::now() + kDrainAfterExit;
      if (SteadyClock::now() >= *drain_until) break;
    }
    std::vector<pollfd> pfds{{sfd, POLLIN, 0}};
    std::vector<std::pair<int, Stream*>> who{{-1, nullptr}};
    for (int r = 0; r < spec.nranks; ++r)
      for (Stream* s : {&kids[static_cast<size_t>(r)].out, &kids[static_cast<size_t>(r)].err})
        if (s->fd >= 0) {
          pfds.push_back({s->fd, POLLIN, 0});
          who.push_back({r, s});
        }
    int timeout_ms = 1000;
    auto now = SteadyClock::now();
    for (auto t : {stop_at, kill_at, drain_until})
      if (t)
        timeout_ms = std::max(
            0, std::min<int>(timeout_ms, static_cast<int>(
                                             std::chrono::duration_cast<std::chrono::milliseconds>(*t - now).count())));
    int pr = ::poll(pfds.data(), pfds.size(), timeout_ms);
    if (pr < 0 && errno != EINTR) break;
    now = SteadyClock::now();
    if (stop_at && now >= *stop_at && running > 0) {
      std::fprintf(stderr, "genie run: stopping the %d remaining rank(s)\n", running);
      signal_all(SIGTERM);
      stop_at.reset();
      kill_at = now + kTermToKill;
    }
    if (kill_at && now >= *kill_at && running > 0) {
      signal_all(SIGKILL);
      kill_at.reset();
    }
    if (pr <= 0) continue;
    for (size_t i = 1; i < pfds.size(); ++i) {
      if (!(pfds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Stream& s = *who[i].second;
      char buf[65536];
      ssize_t n = ::read(s.fd, buf, sizeof(buf));
      const std::string prefix = spec.prefix_output ? "[rank" + std::to_string(who[i].first) + "]: " : "";
      if (n > 0) {
        s.partial.append(buf, static_cast<size_t>(n));
        flush_lines(s, prefix, false);
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        flush_lines(s, prefix, true);
        ::close(s.fd);
        s.fd = -1;
      }
    }
    if (pfds[0].revents & POLLIN) {
      signalfd_siginfo si{};
      while (::read(sfd, &si, sizeof(si)) == static_cast<ssize_t>(sizeof(si))) {
        if (si.ssi_signo != SIGCHLD) {
          // Forward to the ranks; they get the grace period to exit, then SIGKILL.
          signal_all(static_cast<int>(si.ssi_signo));
          if (result.exit_code == 0) result.exit_code = 128 + static_cast<int>(si.ssi_signo);
          if (!kill_at) kill_at = SteadyClock::now() + spec.grace;
        }
      }
      int status = 0;
      pid_t pid;
      while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (int r = 0; r < spec.nranks; ++r) {
          Child& c = kids[static_cast<size_t>(r)];
          if (c.pid != pid || !c.running) continue;
          c.running = false;
          --running;
          RankExit& e = result.ranks[static_cast<size_t>(r)];
          if (WIFSIGNALED(status)) {
            e.signal = WTERMSIG(status);
            e.exit_code = 128 + e.signal;
          } else {
            e.exit_code = WEXITSTATUS(status);
          }
          if (e.exit_code != 0 && result.first_failed_rank < 0) {
            result.first_failed_rank = r;
            if (result.exit_code == 0) result.exit_code = e.exit_code;
            if (e.signal)
              std::fprintf(stderr, "genie run: rank %d was killed by signal %d (%s)\n", r, e.signal,
                           strsignal(e.signal));
            else
              std::fprintf(stderr, "genie run: rank %d exited with code %d\n", r, e.exit_code);
            if (running > 0 && !stop_at && !kill_at) {
              std::fprintf(stderr, "genie run: the other ranks get %.1f s to finish\n",
                           std::chrono::duration<double>(spec.grace).count());
              stop_at = SteadyClock::now() + spec.grace;
            }
          }
        }
      }
    }
  }
  for (auto& c : kids)
    for (Stream* st : {&c.out, &c.err})
      if (st->fd >= 0) {
        flush_lines(*st, spec.prefix_output ? "[rank" + std::to_string(&c - kids.data()) + "]: " : "", true);
        ::close(st->fd);
      }
  ::close(sfd);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  return result;
}

}  // namespace genie::sched
