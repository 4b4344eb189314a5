// SPDX-License-Identifier: Apache-2.0
// One rank of an all-reduce sweep over Genie's NCCL, meant for `genie run` (reads RANK, WORLD_SIZE,
// MASTER_PORT): data-correct fp32 sum all-reduce at each size, timed with the wall clock after a warm-up,
// printed by rank 0 as nccl-tests does (size, time, algbw, busbw).
//   fabric_allreduce [-b MiB,MiB,...] [-i iterations] [-c collective] [-t seconds] [-s ms]
//   -c allreduce|allgather; -t: keep running the last size for that long (fault tests), then report;
//   -s: a straggler: rank 0 computes for that much CPU time before each call while the others wait in it, and
//   every rank prints the CPU time its process used per call (what waiting costs the cores the ranks share: a
//   straggler that shares its CPU with ranks that spin takes longer in wall time).
// Exit 0 when every result was right; otherwise the NCCL error string and exit 1.
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

int g_rank = 0;

[[noreturn]] void die(const char* what, const char* why) {
  std::fprintf(stderr, "rank %d: %s failed: %s\n", g_rank, what, why);
  std::fflush(stderr);
  _exit(1);
}
void nccl_ok(ncclResult_t r, const char* what, ncclComm_t comm = nullptr) {
  if (r == ncclSuccess) return;
  std::string why = ncclGetErrorString(r);
  if (comm) why += std::string(" (") + ncclGetLastError(comm) + ")";
  die(what, why.c_str());
}
void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) die(what, cudaGetErrorString(e));
}

// Watches the communicator as PyTorch's watchdog thread does while the main thread blocks in
// cudaStreamSynchronize: an asynchronous NCCL error aborts the communicator (which ends the collective the
// stream waits on) and the program reports it, instead of a hang. The main thread never sleeps on a poll
// interval, so the wall time of a call is not rounded up to one (a 1 ms poll was half of a 1 MiB call on shm).
class Watchdog {
 public:
  explicit Watchdog(ncclComm_t comm) : comm_(comm), thread_([this] { loop(); }) {}
  ~Watchdog() {
    stop_.store(true);
    thread_.join();
  }
  // Dies with the communicator's error if the watchdog saw one.
  void check(const char* what) {
    if (failed_.load()) die(what, why_.c_str());
  }

 private:
  void loop() {
    while (!stop_.load()) {
      ncclResult_t a = ncclSuccess;
      ncclCommGetAsyncError(comm_, &a);
      if (a != ncclSuccess && a != ncclInProgress) {
        why_ = std::string(ncclGetErrorString(a)) + " (" + ncclGetLastError(comm_) + ")";
        failed_.store(true);
        ncclCommAbort(comm_);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  ncclComm_t comm_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> failed_{false};
  std::string why_;  // written before failed_ is set
  std::thread thread_;
};

// CPU time of this process (every thread: the caller, the stream worker that runs the collective, libraries').
double process_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// A straggler's compute: `ms` milliseconds of this thread's CPU time, so that the same work takes longer in wall
// time when the thread has to share its CPU with ranks that spin while they wait.
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}
void compute_for(double ms) {
  const double until = thread_cpu_ms() + ms;
  volatile uint64_t x = 1;
  while (thread_cpu_ms() < until)
    for (int i = 0; i < 1000; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
}

void wait_stream(cudaStream_t s, Watchdog& dog, const char* what) {
  const cudaError_t e = cudaStreamSynchronize(s);
  dog.check(what);
  if (e != cudaSuccess) die(what, cudaGetErrorString(e));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<double> sizes_mib = {1, 16, 64};
  int iters = 5;
  double loop_s = 0;
  double straggle_ms = 0;
  std::string coll = "allreduce";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "-b") {
      sizes_mib.clear();
      for (char* p = argv[i + 1]; *p;) {
        sizes_mib.push_back(std::strtod(p, &p));
        if (*p == ',') ++p;
      }
    } else if (a == "-i") {
      iters = std::atoi(argv[i + 1]);
    } else if (a == "-t") {
      loop_s = std::atof(argv[i + 1]);
    } else if (a == "-s") {
      straggle_ms = std::atof(argv[i + 1]);
    } else if (a == "-c") {
      coll = argv[i + 1];
    } else {
      std::fprintf(stderr, "usage: %s [-b MiB,...] [-i iterations] [-c allreduce|allgather] [-t seconds] [-s ms]\n", argv[0]);
      return 2;
    }
  }
  const char* rank_s = std::getenv("RANK");
  const char* size_s = std::getenv("WORLD_SIZE");
  const char* port_s = std::getenv("MASTER_PORT");
  if (!rank_s || !size_s || !port_s) {
    std::fprintf(stderr, "run me under genie run (RANK, WORLD_SIZE, MASTER_PORT)\n");
    return 2;
  }
  g_rank = std::atoi(rank_s);
  const int nranks = std::atoi(size_s);
  const char* tmp = std::getenv("TMPDIR");
  const std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/genie-fabric-bench-" + port_s + ".id";
  ncclUniqueId id;
  if (g_rank == 0) {
    nccl_ok(ncclGetUniqueId(&id), "ncclGetUniqueId");
    const std::string part = path + ".part";
    FILE* f = std::fopen(part.c_str(), "wb");
    if (!f || std::fwrite(&id, sizeof(id), 1, f) != 1 || std::fclose(f) != 0) die("writing the unique id", path.c_str());
    std::rename(part.c_str(), path.c_str());
  } else {
    for (int tries = 0;; ++tries) {
      FILE* f = std::fopen(path.c_str(), "rb");
      if (f && std::fread(&id, sizeof(id), 1, f) == 1) {
        std::fclose(f);
        break;
      }
      if (f) std::fclose(f);
      if (tries > 30000) die("reading the unique id", path.c_str());
      usleep(1000);
    }
  }
  cuda_ok(cudaSetDevice(0), "cudaSetDevice");
  ncclComm_t comm;
  nccl_ok(ncclCommInitRank(&comm, nranks, id, g_rank), "ncclCommInitRank");
  if (g_rank == 0) std::remove(path.c_str());
  cudaStream_t s;
  cuda_ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  const bool ag = coll == "allgather";
  auto dog = std::make_unique<Watchdog>(comm);
  if (g_rank == 0)
    std::printf("# %s, %d ranks, fp32 sum, %d iterations per size (wall time)\n# %14s %12s %12s %12s\n", coll.c_str(),
                nranks, iters, "size(B)", "time(us)", "algbw(GB/s)", "busbw(GB/s)");
  for (size_t k = 0; k < sizes_mib.size(); ++k) {
    const size_t bytes = static_cast<size_t>(sizes_mib[k] * 1048576) / 4 * 4;
    const size_t count = ag ? bytes / 4 / nranks : bytes / 4;
    const size_t in_bytes = ag ? count * 4 : bytes;
    float *in, *out;
    cuda_ok(cudaMalloc(reinterpret_cast<void**>(&in), in_bytes), "cudaMalloc");
    cuda_ok(cudaMalloc(reinterpret_cast<void**>(&out), ag ? count * 4 * nranks : bytes), "cudaMalloc");
    std::vector<float> host(in_bytes / 4);
    for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>((g_rank + 1) + static_cast<int>(i % 5));
    cuda_ok(cudaMemcpy(in, host.data(), in_bytes, cudaMemcpyHostToDevice), "H2D");
    auto run = [&] {
      if (ag)
        nccl_ok(ncclAllGather(in, out, count, ncclFloat, comm, s), "ncclAllGather", comm);
      else
        nccl_ok(ncclAllReduce(in, out, count, ncclFloat, ncclSum, comm, s), "ncclAllReduce", comm);
    };
    run();
    wait_stream(s, *dog, coll.c_str());
    const bool last = k + 1 == sizes_mib.size();
    int n = 0;
    const double cpu0 = process_cpu_s();
    auto t0 = std::chrono::steady_clock::now();
    for (;;) {
      if (g_rank == 0 && straggle_ms > 0) compute_for(straggle_ms);
      run();
      wait_stream(s, *dog, coll.c_str());
      ++n;
      const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (n >= iters && !(last && el < loop_s)) break;
    }
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / n;
    const double cpu_ms = (process_cpu_s() - cpu0) * 1e3 / n;
    std::vector<float> res(ag ? count * nranks : count);
    cuda_ok(cudaMemcpy(res.data(), out, res.size() * 4, cudaMemcpyDeviceToHost), "D2H");
    for (size_t i = 0; i < res.size(); i += 997) {
      float want = 0;
      if (ag)
        want = static_cast<float>(static_cast<int>(i / count) + 1 + static_cast<int>((i % count) % 5));
      else
        want = static_cast<float>(nranks * (nranks + 1) / 2 + nranks * static_cast<int>(i % 5));
      if (res[i] != want) {
        char why[128];
        std::snprintf(why, sizeof(why), "element %zu is %g, expected %g", i, res[i], want);
        die("result check", why);
      }
    }
    const double algbw = static_cast<double>(bytes) / t / 1e9;
    const double busbw = algbw * (ag ? (nranks - 1.0) / nranks : 2.0 * (nranks - 1) / nranks);
    if (g_rank == 0) std::printf("  %14zu %12.1f %12.4f %12.4f\n", bytes, t * 1e6, algbw, busbw);
    if (straggle_ms > 0) std::printf("# rank %d: %.3f ms of CPU per call (all threads)\n", g_rank, cpu_ms);
    std::fflush(stdout);
    cudaFree(in);
    cudaFree(out);
  }
  dog.reset();
  ncclCommDestroy(comm);
  if (g_rank == 0) std::printf("fabric_allreduce: 0 failed\n");
  return 0;
}
