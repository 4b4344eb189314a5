// SPDX-License-Identifier: Apache-2.0
// Data-path throughput: a data-correct 64 MiB fp32 all-reduce across P processes on this host (wall time,
// out-of-place, after a warm-up), against a single-core 64 MiB memcpy measured in the same run.
//   allreduce_bandwidth [processes=4] [MiB=64] [iterations=10]
// Prints the memcpy bandwidth, the all-reduce's algorithm bandwidth (bytes / time) and bus bandwidth
// (x 2(P-1)/P, nccl-tests' definition), and their ratios to memcpy. Second reference: one memcpy per CPU at once
// (the machine's memory bandwidth with every core copying); the all-reduce reads P inputs and writes P outputs at
// least, P x bytes copied, which the last line puts against it.
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double memcpy_gbps(size_t bytes, int iters) {
  std::vector<char> a(bytes, 1), b(bytes, 2);
  std::memcpy(b.data(), a.data(), bytes);  // fault the pages in
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) {
    std::memcpy(b.data(), a.data(), bytes);
    asm volatile("" ::"r"(b.data()) : "memory");
  }
  return static_cast<double>(bytes) * iters / seconds_since(t0) / 1e9;
}

// `threads` memcpys of `bytes` at once, each on its own buffers: their summed bandwidth.
double parallel_memcpy_gbps(size_t bytes, int iters, int threads) {
  std::vector<double> rate(static_cast<size_t>(threads));
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] { rate[static_cast<size_t>(t)] = memcpy_gbps(bytes, iters); });
  for (auto& t : ts) t.join();
  double sum = 0;
  for (double r : rate) sum += r;
  return sum;
}

#define CHECK(cond, what)                                       \
  do {                                                          \
    if (!(cond)) {                                              \
      std::fprintf(stderr, "rank %d: %s failed\n", rank, what); \
      _exit(2);                                                 \
    }                                                           \
  } while (0)

}  // namespace

int main(int argc, char** argv) {
  const int nproc = argc > 1 ? std::atoi(argv[1]) : 4;
  const size_t mib = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 64;
  const int iters = argc > 3 ? std::atoi(argv[3]) : 10;
  const size_t bytes = mib << 20;
  const size_t count = bytes / sizeof(float);
  const double copy = memcpy_gbps(bytes, iters);
  cpu_set_t allowed;
  const int cpus = sched_getaffinity(0, sizeof(allowed), &allowed) == 0 ? CPU_COUNT(&allowed) : 1;
  const double copy_all = parallel_memcpy_gbps(bytes, iters, cpus);

  // Shared with the ranks: each rank's time, then (after 64 doubles) rank 0's unique id and a ready flag. The
  // parent makes no NCCL call, so it forks without threads running.
  auto* result = static_cast<double*>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  auto* shared_id = reinterpret_cast<ncclUniqueId*>(result + 64);
  auto* id_ready = reinterpret_cast<volatile int*>(shared_id + 1);
  std::vector<pid_t> kids;
  for (int rank = 0; rank < nproc; ++rank) {
    pid_t pid = fork();
    if (pid != 0) {
      kids.push_back(pid);
      continue;
    }
    ncclUniqueId id;
    if (rank == 0) {
      CHECK(ncclGetUniqueId(&id) == ncclSuccess, "ncclGetUniqueId");
      *shared_id = id;
      __atomic_store_n(id_ready, 1, __ATOMIC_RELEASE);
    } else {
      while (!__atomic_load_n(id_ready, __ATOMIC_ACQUIRE)) usleep(1000);
      id = *shared_id;
    }
    CHECK(cudaSetDevice(rank) == cudaSuccess, "cudaSetDevice");
    ncclComm_t comm;
    CHECK(ncclCommInitRank(&comm, nproc, id, rank) == ncclSuccess, "ncclCommInitRank");
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess, "stream");
    float *in, *out;
    CHECK(cudaMalloc(reinterpret_cast<void**>(&in), bytes) == cudaSuccess, "cudaMalloc");
    CHECK(cudaMalloc(reinterpret_cast<void**>(&out), bytes) == cudaSuccess, "cudaMalloc");
    std::vector<float> host(count, static_cast<float>(rank + 1));
    CHECK(cudaMemcpy(in, host.data(), bytes, cudaMemcpyHostToDevice) == cudaSuccess, "H2D");
    CHECK(ncclAllReduce(in, out, count, ncclFloat, ncclSum, comm, s) == ncclSuccess, "warm-up");
    CHECK(cudaStreamSynchronize(s) == cudaSuccess, "sync");
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i)
      CHECK(ncclAllReduce(in, out, count, ncclFloat, ncclSum, comm, s) == ncclSuccess, "allreduce");
    CHECK(cudaStreamSynchronize(s) == cudaSuccess, "sync");
    double t = seconds_since(t0) / iters;
    CHECK(cudaMemcpy(host.data(), out, bytes, cudaMemcpyDeviceToHost) == cudaSuccess, "D2H");
    const float want = static_cast<float>(nproc * (nproc + 1) / 2);
    for (size_t i = 0; i < count; i += 4097) CHECK(host[i] == want, "result check");
    result[rank] = t;
    ncclCommDestroy(comm);
    _exit(0);
  }
  int failed = 0;
  for (pid_t k : kids) {
    int st = 0;
    waitpid(k, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) ++failed;
  }
  if (failed) {
    std::fprintf(stderr, "%d rank(s) failed\n", failed);
    return 1;
  }
  double worst = 0;
  for (int r = 0; r < nproc; ++r) worst = std::max(worst, result[r]);
  const double algbw = static_cast<double>(bytes) / worst / 1e9;
  const double busbw = algbw * 2.0 * (nproc - 1) / nproc;
  std::printf("memcpy %zu MiB, one core: %.2f GB/s\n", mib, copy);
  std::printf(
      "all-reduce %zu MiB fp32, %d processes: %.2f ms, algbw %.2f GB/s (%.0f%% of memcpy), busbw %.2f GB/s (%.0f%% of "
      "memcpy)\n",
      mib, nproc, worst * 1e3, algbw, 100 * algbw / copy, busbw, 100 * busbw / copy);
  const double moved = static_cast<double>(bytes) * nproc / worst / 1e9;
  std::printf("memcpy %zu MiB on all %d CPUs at once: %.2f GB/s; the all-reduce's least traffic (%d inputs read, %d "
              "outputs written) ran at %.2f GB/s of copying, %.0f%% of it\n",
              mib, cpus, copy_all, nproc, nproc, moved, 100 * moved / copy_all);
  return 0;
}
