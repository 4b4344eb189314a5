// SPDX-License-Identifier: Apache-2.0
// Shared helpers for the NCCL examples: CHECK_NCCL, thread-safe per-rank checks, and a launcher that runs
// one body per rank as forked processes, as threads, or as all devices of one thread (ncclCommInitAll).
#pragma once
#include <fcntl.h>
#include <nccl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "check.cuh"

// The enum's name, printed instead of ncclGetErrorString where a test's regex must not match our own output.
static inline const char* nccl_result_name(ncclResult_t r) {
  switch (r) {
    case ncclSuccess:
      return "ncclSuccess";
    case ncclUnhandledCudaError:
      return "ncclUnhandledCudaError";
    case ncclSystemError:
      return "ncclSystemError";
    case ncclInternalError:
      return "ncclInternalError";
    case ncclInvalidArgument:
      return "ncclInvalidArgument";
    case ncclInvalidUsage:
      return "ncclInvalidUsage";
    case ncclRemoteError:
      return "ncclRemoteError";
    case ncclInProgress:
      return "ncclInProgress";
    default:
      return "ncclResult(?)";
  }
}

#define CHECK_NCCL(call)                                                                              \
  do {                                                                                                \
    ncclResult_t r_ = (call);                                                                         \
    if (r_ != ncclSuccess) {                                                                          \
      std::fprintf(stderr, "%s:%d: %s -> %s (%s)\n", __FILE__, __LINE__, #call, nccl_result_name(r_), \
                   ncclGetErrorString(r_));                                                           \
      std::fflush(stdout);                                                                            \
      std::exit(2);                                                                                   \
    }                                                                                                 \
  } while (0)

// ---- checks that may run on several threads at once (check.cuh's counter is a plain int) ----

static inline std::mutex& check_mutex() {
  static std::mutex m;
  return m;
}

static inline std::string rank_prefix(int rank) {
  return rank < 0 ? std::string() : "[rank " + std::to_string(rank) + "] ";
}

// One golden line "ok   [rank r] what: Expectation e / Actual a"; returns whether it held.
static inline bool expect_eq(int rank, const std::string& what, long long expected, long long actual) {
  std::lock_guard<std::mutex> lk(check_mutex());
  const std::string w = rank_prefix(rank) + what;
  EXPECT_EQ_INT(w.c_str(), expected, actual);
  std::fflush(stdout);
  return expected == actual;
}

static inline bool expect_near(int rank, const std::string& what, double expected, double actual, double tol) {
  std::lock_guard<std::mutex> lk(check_mutex());
  const std::string w = rank_prefix(rank) + what;
  EXPECT_NEAR_DBL(w.c_str(), expected, actual, tol);
  std::fflush(stdout);
  return expected - actual <= tol && actual - expected <= tol;
}

// An NCCL result against the expected one, printed by name.
static inline bool expect_result(int rank, const std::string& what, ncclResult_t expected, ncclResult_t actual) {
  std::lock_guard<std::mutex> lk(check_mutex());
  const bool ok = expected == actual;
  std::printf("%s %s%s: Expectation %s / Actual %s\n", ok ? "ok  " : "FAIL", rank_prefix(rank).c_str(), what.c_str(),
              nccl_result_name(expected), nccl_result_name(actual));
  std::fflush(stdout);
  if (!ok) ++g_failures;
  return ok;
}

static inline int failures_so_far() {
  std::lock_guard<std::mutex> lk(check_mutex());
  return g_failures;
}

// Informational line (not a check), serialised with the checks.
template <typename... A>
static inline void note(int rank, const char* fmt, A... args) {
  std::lock_guard<std::mutex> lk(check_mutex());
  std::printf("%s", rank_prefix(rank).c_str());
  std::printf(fmt, args...);
  std::printf("\n");
  std::fflush(stdout);
}

// The program's last line, "<name>: <failed> failed", and its exit code (0 only when nothing failed).
static inline int finish_ranks(const char* name, int failed) {
  g_failures = failed;
  return finish(name);
}

static inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Polls like nccl-tests does: cudaStreamQuery plus ncclCommGetAsyncError, until the asynchronous error is
// neither ncclSuccess nor ncclInProgress, or (when until_done) the stream drained without one, or the time is up.
static inline ncclResult_t poll_async_error(ncclComm_t comm, cudaStream_t stream, double timeout_s, double* waited_s,
                                            bool until_done) {
  const auto t0 = std::chrono::steady_clock::now();
  ncclResult_t err = ncclSuccess;
  for (;;) {
    const cudaError_t q = stream ? cudaStreamQuery(stream) : cudaSuccess;
    if (ncclCommGetAsyncError(comm, &err) != ncclSuccess) break;
    if (err != ncclSuccess && err != ncclInProgress) break;
    if (until_done && q != cudaErrorNotReady && err == ncclSuccess) break;
    if (seconds_since(t0) > timeout_s) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (waited_s) *waited_s = seconds_since(t0);
  return err;
}

// Waits for a stream carrying NCCL work as nccl-tests does: cudaStreamQuery polled together with
// ncclCommGetAsyncError, so a failed communicator ends the program with its error instead of hanging (NCCL leaves
// a failed operation's stream pending), then cudaStreamSynchronize.
static inline void sync_nccl_stream(ncclComm_t comm, cudaStream_t s, int rank) {
  for (int spins = 0;; ++spins) {
    const cudaError_t q = cudaStreamQuery(s);
    if (q == cudaSuccess) break;
    if (q != cudaErrorNotReady) CHECK_CUDA(q);
    ncclResult_t err = ncclSuccess;
    CHECK_NCCL(ncclCommGetAsyncError(comm, &err));
    if (err != ncclSuccess && err != ncclInProgress) {
      std::fprintf(stderr, "%scommunicator failed while its stream was pending: %s (%s)\n", rank_prefix(rank).c_str(),
                   nccl_result_name(err), ncclGetErrorString(err));
      std::fflush(stdout);
      std::exit(3);
    }
    if (spins < 100)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  CHECK_CUDA(cudaStreamSynchronize(s));
}

// ---- launchers ----

// One rank's raw entry point: the current device is already set; ids come from the parent.
using RankFn = std::function<void(int rank, int nranks, const ncclUniqueId& id)>;

// Unique ids for forked ranks, in memory shared by the parent and its children. The parent makes no NCCL call:
// ncclGetUniqueId starts the bootstrap root's thread (in real NCCL too), and forking a process that runs threads is
// unsafe (a lock held by that thread at fork time stays locked in the child). Rank 0 makes the ids; the others wait.
struct SharedIds {
  std::atomic<int> ready{0};
  ncclUniqueId ids[8];
};
static SharedIds* g_shared_ids = nullptr;
// Id k (0: the communicator run_procs passes to every rank; 1..n_ids-1: extra ones a test asked for).
static inline const ncclUniqueId& shared_id(int k) { return g_shared_ids->ids[k]; }

// Forks nranks children; child 0 makes n_ids unique ids, the others wait for them. Child r sets device
// r % deviceCount, runs fn with id 0, prints its failure count and _exits 0 or 1. want_rc[r] (default 0) is the exit
// status rank r must end with (128 + N: killed by signal N). Once any rank has ended, the others get grace_s more before they are killed (a rank
// stuck on a dead or finished peer would otherwise wait forever); anything still running after timeout_s is
// killed. Returns the number of ranks that ended unexpectedly.
static inline int run_procs(int nranks, const RankFn& fn, std::vector<int> want_rc = {}, double timeout_s = 150,
                            double grace_s = 30, int n_ids = 1) {
  want_rc.resize(nranks, 0);
  void* shm = mmap(nullptr, sizeof(SharedIds), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shm == MAP_FAILED) {
    std::perror("mmap");
    std::exit(2);
  }
  g_shared_ids = new (shm) SharedIds();
  if (n_ids < 1 || n_ids > 8) std::exit(2);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = getpid();
  std::vector<pid_t> pids(nranks, -1);
  for (int r = 0; r < nranks; ++r) {
    const pid_t pid = fork();
    if (pid < 0) {
      std::perror("fork");
      std::exit(2);
    }
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(3);
      setvbuf(stdout, nullptr, _IOLBF, 0);  // one write per line: ranks' lines do not interleave
      if (r == 0) {
        for (int k = 0; k < n_ids; ++k) CHECK_NCCL(ncclGetUniqueId(&g_shared_ids->ids[k]));
        g_shared_ids->ready.store(1, std::memory_order_release);
      } else {
        const auto t0 = std::chrono::steady_clock::now();
        while (!g_shared_ids->ready.load(std::memory_order_acquire)) {
          if (seconds_since(t0) > 60) {
            std::printf("[rank %d] rank 0 made no unique id in 60 s\n", r);
            _exit(2);
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      }
      const ncclUniqueId& id = shared_id(0);
      int ndev = 0;
      CHECK_CUDA(cudaGetDeviceCount(&ndev));
      CHECK_CUDA(cudaSetDevice(r % ndev));
      fn(r, nranks, id);
      std::printf("[rank %d] checks failed in this rank: %d\n", r, g_failures);
      std::fflush(stdout);
      std::fflush(stderr);
      _exit(g_failures == 0 ? 0 : 1);
    }
    pids[r] = pid;
  }
  std::vector<int> status(nranks, 0);
  std::vector<bool> done(nranks, false), killed(nranks, false);
  const auto t0 = std::chrono::steady_clock::now();
  double kill_at = timeout_s;
  for (int left = nranks; left > 0;) {
    bool reaped = false;
    for (int r = 0; r < nranks; ++r) {
      if (done[r] || waitpid(pids[r], &status[r], WNOHANG) != pids[r]) continue;
      done[r] = true;
      reaped = true;
      --left;
      if (seconds_since(t0) + grace_s < kill_at) kill_at = seconds_since(t0) + grace_s;
    }
    if (left > 0 && seconds_since(t0) > kill_at) {
      for (int r = 0; r < nranks; ++r) {
        if (done[r]) continue;
        std::printf("[launcher] rank %d still running after %.0f s: killing it\n", r, seconds_since(t0));
        kill(pids[r], SIGKILL);
        killed[r] = true;
      }
      kill_at = 1e30;
    }
    if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  int failed = 0;
  for (int r = 0; r < nranks; ++r) {
    const int st = status[r];
    if (WIFEXITED(st) && WEXITSTATUS(st) == want_rc[r] && !killed[r]) continue;
    if (WIFSIGNALED(st) && 128 + WTERMSIG(st) == want_rc[r] && !killed[r]) continue;  // meant to die by that signal
    ++failed;
    if (WIFEXITED(st))
      std::printf("[launcher] rank %d: exit status %d, expected %d\n", r, WEXITSTATUS(st), want_rc[r]);
    else if (WIFSIGNALED(st))
      std::printf("[launcher] rank %d: killed by signal %d (%s), expected exit status %d\n", r, WTERMSIG(st),
                  strsignal(WTERMSIG(st)), want_rc[r]);
  }
  std::fflush(stdout);
  return failed;
}

// The first of these variables that is set.
static inline const char* first_env(std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (const char* v = std::getenv(n)) return v;
  return nullptr;
}

// This process is one rank of a job started by a launcher: its rank, the world size and its local rank from the
// environment, as genie run and torchrun (RANK, WORLD_SIZE, LOCAL_RANK), Open MPI's mpirun (OMPI_COMM_WORLD_*),
// MPICH/Hydra (PMI_RANK, PMI_SIZE) or Slurm (SLURM_PROCID, ...) set them. Rank 0 makes the unique id and
// publishes it in a file named after MASTER_PORT, or NCCL_EXAMPLE_JOB where no MASTER_PORT is set (MPI: pass it
// with -x), written to a temporary name, then renamed, so readers never see half an id; the others wait
// for it. Rank 0 removes the file once its communicator exists, which implies every rank has read it.
static inline int run_env(const RankFn& fn) {
  const char* rank_s = first_env({"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"});
  const char* size_s = first_env({"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"});
  const char* local_s = first_env({"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"});
  const char* port_s = first_env({"MASTER_PORT", "NCCL_EXAMPLE_JOB"});
  if (!rank_s || !size_s || !port_s) {
    std::fprintf(stderr, "env mode needs RANK, WORLD_SIZE and MASTER_PORT (run it under genie run or torchrun), or "
                         "an MPI launcher's rank variables and NCCL_EXAMPLE_JOB\n");
    std::exit(2);
  }
  const int rank = std::atoi(rank_s), nranks = std::atoi(size_s), local = local_s ? std::atoi(local_s) : rank;
  const char* tmp = std::getenv("TMPDIR");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/nccl-example-id-" + port_s;
  ncclUniqueId id;
  if (rank == 0) {
    CHECK_NCCL(ncclGetUniqueId(&id));
    const std::string part = path + ".part";
    // The id carries the job secret: readable by this user only (other users on the host reach loopback too).
    std::remove(part.c_str());
    const int fd = ::open(part.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    FILE* f = fd >= 0 ? fdopen(fd, "wb") : nullptr;
    if (!f || std::fwrite(&id, sizeof(id), 1, f) != 1 || std::fclose(f) != 0 || std::rename(part.c_str(), path.c_str()) != 0) {
      std::perror(part.c_str());
      std::exit(2);
    }
  } else {
    const auto t0 = std::chrono::steady_clock::now();
    for (;;) {
      FILE* f = std::fopen(path.c_str(), "rb");
      if (f) {
        const bool ok = std::fread(&id, sizeof(id), 1, f) == 1;
        std::fclose(f);
        if (ok) break;
      }
      if (seconds_since(t0) > 60) {
        std::fprintf(stderr, "[rank %d] no unique id from rank 0 in %s after 60 s\n", rank, path.c_str());
        std::exit(2);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  setvbuf(stdout, nullptr, _IOLBF, 0);
  int ndev = 0;
  CHECK_CUDA(cudaGetDeviceCount(&ndev));
  CHECK_CUDA(cudaSetDevice(local % ndev));
  fn(rank, nranks, id);
  if (rank == 0) std::remove(path.c_str());
  return failures_so_far();
}

// One std::thread per rank in this process; thread r sets device r. Returns the failed checks of all ranks.
static inline int run_threads(int nranks, const RankFn& fn) {
  ncclUniqueId id;
  CHECK_NCCL(ncclGetUniqueId(&id));
  std::vector<std::thread> threads;
  for (int r = 0; r < nranks; ++r) {
    threads.emplace_back([&, r] {
      CHECK_CUDA(cudaSetDevice(r));
      fn(r, nranks, id);
    });
  }
  for (auto& t : threads) t.join();
  return failures_so_far();
}

// What a test body drives: every rank this thread (or process) owns, with its communicator and stream.
struct RankCtx {
  int rank = 0;
  int device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
};
using Ranks = std::vector<RankCtx>;
// A body issues each NCCL call for every element of `ranks` inside ncclGroupStart/End, so that the same body
// runs one rank per process/thread or all ranks from one thread.
using BodyFn = std::function<void(Ranks& ranks, int nranks)>;

// Proc: fork nranks children; Threads: a thread per rank; Devices: one thread, ncclCommInitAll; DevicesNull: the
// same on each device's NULL (legacy default) stream, as nccl-tests -y 1 -g N does; Env: this process is rank $RANK
// of $WORLD_SIZE, started by a launcher (genie run, torchrun, a batch system).
enum class Mode { Proc, Threads, Devices, DevicesNull, Env };

static inline bool parse_mode(const char* s, Mode* m) {
  if (std::strcmp(s, "proc") == 0)
    *m = Mode::Proc;
  else if (std::strcmp(s, "threads") == 0)
    *m = Mode::Threads;
  else if (std::strcmp(s, "devices") == 0)
    *m = Mode::Devices;
  else if (std::strcmp(s, "devices-null") == 0)
    *m = Mode::DevicesNull;
  else if (std::strcmp(s, "env") == 0)
    *m = Mode::Env;
  else
    return false;
  return true;
}

static inline void destroy_ranks(Ranks& ranks) {
  for (auto& c : ranks) {
    CHECK_CUDA(cudaSetDevice(c.device));
    sync_nccl_stream(c.comm, c.stream, c.rank);
    if (c.stream != nullptr) CHECK_CUDA(cudaStreamDestroy(c.stream));
  }
  // Finalize is collective across the communicator: group it when one thread owns several ranks.
  CHECK_NCCL(ncclGroupStart());
  for (auto& c : ranks) CHECK_NCCL(ncclCommFinalize(c.comm));
  CHECK_NCCL(ncclGroupEnd());
  for (auto& c : ranks) CHECK_NCCL(ncclCommDestroy(c.comm));
}

// Runs body with communicators made for the mode: proc and threads use ncclCommInitRank (one rank each),
// devices uses ncclCommInitAll over devices 0..nranks-1. Returns failed ranks (proc) or failed checks.
static inline int run_ranks(int nranks, Mode mode, const BodyFn& body) {
  if (mode == Mode::Devices || mode == Mode::DevicesNull) {
    int ndev = 0;
    CHECK_CUDA(cudaGetDeviceCount(&ndev));
    if (ndev < nranks) {
      std::printf("devices mode needs %d devices, found %d\n", nranks, ndev);
      return 1;
    }
    std::vector<int> devs(nranks);
    std::vector<ncclComm_t> comms(nranks);
    for (int d = 0; d < nranks; ++d) devs[d] = d;
    CHECK_NCCL(ncclCommInitAll(comms.data(), nranks, devs.data()));
    Ranks ranks(nranks);
    for (int r = 0; r < nranks; ++r) {
      ranks[r].rank = r;
      ranks[r].device = devs[r];
      ranks[r].comm = comms[r];
      CHECK_CUDA(cudaSetDevice(devs[r]));
      if (mode == Mode::Devices) CHECK_CUDA(cudaStreamCreateWithFlags(&ranks[r].stream, cudaStreamNonBlocking));
    }
    body(ranks, nranks);
    destroy_ranks(ranks);
    return failures_so_far();
  }
  const RankFn one = [&](int rank, int n, const ncclUniqueId& id) {
    Ranks ranks(1);
    ranks[0].rank = rank;
    CHECK_CUDA(cudaGetDevice(&ranks[0].device));
    CHECK_NCCL(ncclCommInitRank(&ranks[0].comm, n, id, rank));
    CHECK_CUDA(cudaStreamCreateWithFlags(&ranks[0].stream, cudaStreamNonBlocking));
    body(ranks, n);
    destroy_ranks(ranks);
  };
  if (mode == Mode::Env) return run_env(one);
  return mode == Mode::Proc ? run_procs(nranks, one) : run_threads(nranks, one);
}

// Issues fn(ctx) for every local rank inside one group (a group of one call is fine with one rank).
template <typename F>
static inline void grouped(Ranks& ranks, F fn) {
  CHECK_NCCL(ncclGroupStart());
  for (auto& c : ranks) fn(c);
  CHECK_NCCL(ncclGroupEnd());
}

// Issues fn(ctx) ungrouped when this thread owns one rank; several ranks of one thread need a group.
template <typename F>
static inline void ungrouped(Ranks& ranks, F fn) {
  if (ranks.size() == 1) {
    fn(ranks[0]);
    return;
  }
  grouped(ranks, fn);
}

static inline void sync_all(Ranks& ranks) {
  for (auto& c : ranks) {
    CHECK_CUDA(cudaSetDevice(c.device));
    sync_nccl_stream(c.comm, c.stream, c.rank);
  }
}
