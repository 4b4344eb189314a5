// SPDX-License-Identifier: Apache-2.0
// Example: communicator management (split, shrink, non-blocking and scalable init, registration, custom ops,
// simulation, finalize/destroy/abort) and the argument errors NCCL reports, one process per rank.
// Usage: comm_ops [nranks=4]   (nranks 1 runs on a single real GPU too: scripts/real-gpu-check.sh)
// nccl_device.h (the device API's host declarations) has unused parameters in its inline helpers.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <nccl_device.h>
#pragma GCC diagnostic pop

#include <dirent.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "nccl_check.cuh"

// Extra communicators' ids (made by rank 0, see run_procs): non-blocking init, scalable init, abort, bad rank,
// destroy with work queued, a config of an older NCCL.
enum { kIdNonblocking = 1, kIdScalable, kIdAbort, kIdBadRank, kIdQueued, kIdOldConfig, kIds };

// AllReduce(sum) of `count` floats, each rank contributing `mine` everywhere; every element must come back as
// `want`. Returns the elements that differ.
static long allreduce_check(ncclComm_t comm, cudaStream_t s, float mine, float want, ncclRedOp_t op = ncclSum,
                            size_t count = 1024, void* buf = nullptr) {
  float* d = static_cast<float*>(buf);
  if (!d) CHECK_CUDA(cudaMalloc(&d, count * sizeof(float)));
  std::vector<float> h(count, mine);
  CHECK_CUDA(cudaMemcpy(d, h.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_NCCL(ncclAllReduce(d, d, count, ncclFloat, op, comm, s));
  sync_nccl_stream(comm, s, -1);
  CHECK_CUDA(cudaMemcpy(h.data(), d, count * sizeof(float), cudaMemcpyDeviceToHost));
  if (!buf) CHECK_CUDA(cudaFree(d));
  long bad = 0;
  for (float v : h) bad += v != want;
  return bad;
}

// Waits for a non-blocking communicator to leave ncclInProgress; returns its state.
static ncclResult_t wait_ready(ncclComm_t comm, double timeout_s = 60) {
  return poll_async_error(comm, nullptr, timeout_s, nullptr, true);
}

// Open file descriptors of this process whose target's name contains `what` (-1 when /proc cannot be read).
static int open_fds(const char* what) {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) {
    char target[512];
    const std::string path = std::string("/proc/self/fd/") + e->d_name;
    const ssize_t len = readlink(path.c_str(), target, sizeof(target) - 1);
    if (len <= 0) continue;
    target[len] = 0;
    n += std::strstr(target, what) != nullptr;
  }
  closedir(d);
  return n;
}

static float sum_of_rank_plus_one(const std::vector<int>& ranks) {
  float s = 0;
  for (int r : ranks) s += float(r + 1);
  return s;
}

static void rank_main(int rank, int n, const ncclUniqueId& id) {
  int dev = -1;
  CHECK_CUDA(cudaGetDevice(&dev));
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::vector<int> all;
  for (int r = 0; r < n; ++r) all.push_back(r);

  int version = 0;
  CHECK_NCCL(ncclGetVersion(&version));
  // A library may be newer than the header the program was built with (NCCL keeps its ABI backwards compatible).
  expect_eq(rank, "ncclGetVersion is at least the header's NCCL_VERSION_CODE", 1, version >= NCCL_VERSION_CODE);

  ncclComm_t comm;
  CHECK_NCCL(ncclCommInitRank(&comm, n, id, rank));
  int count = -1, user_rank = -1, cu_dev = -1;
  CHECK_NCCL(ncclCommCount(comm, &count));
  CHECK_NCCL(ncclCommUserRank(comm, &user_rank));
  CHECK_NCCL(ncclCommCuDevice(comm, &cu_dev));
  expect_eq(rank, "ncclCommCount", n, count);
  expect_eq(rank, "ncclCommUserRank", rank, user_rank);
  expect_eq(rank, "ncclCommCuDevice is the current device", dev, cu_dev);
  expect_eq(rank, "AllReduce on the world communicator: elements differing", 0,
            allreduce_check(comm, s, float(rank + 1), sum_of_rank_plus_one(all)));

  // Split by parity; key = -rank orders each half by descending parent rank.
  ncclComm_t half;
  CHECK_NCCL(ncclCommSplit(comm, rank % 2, -rank, &half, nullptr));
  std::vector<int> mates;
  int higher = 0;
  for (int r = 0; r < n; ++r) {
    if (r % 2 != rank % 2) continue;
    mates.push_back(r);
    higher += r > rank;
  }
  CHECK_NCCL(ncclCommCount(half, &count));
  CHECK_NCCL(ncclCommUserRank(half, &user_rank));
  expect_eq(rank, "split by parity: ncclCommCount", long(mates.size()), count);
  expect_eq(rank, "split with key -rank: new rank counts the higher parent ranks of the same color", higher, user_rank);
  expect_eq(rank, "AllReduce on the split communicator: elements differing", 0,
            allreduce_check(half, s, float(rank + 1), sum_of_rank_plus_one(mates)));

  // The last rank opts out with NCCL_SPLIT_NOCOLOR and gets no communicator.
  ncclComm_t rest = reinterpret_cast<ncclComm_t>(&rest);
  CHECK_NCCL(ncclCommSplit(comm, rank == n - 1 ? NCCL_SPLIT_NOCOLOR : 0, rank, &rest, nullptr));
  std::vector<int> first(all.begin(), all.end() - 1);
  if (rank == n - 1) {
    expect_eq(rank, "NCCL_SPLIT_NOCOLOR returns a NULL communicator", 1, rest == nullptr);
    rest = nullptr;
  } else {
    CHECK_NCCL(ncclCommCount(rest, &count));
    CHECK_NCCL(ncclCommUserRank(rest, &user_rank));
    expect_eq(rank, "split without the last rank: ncclCommCount", n - 1, count);
    expect_eq(rank, "split without the last rank: ncclCommUserRank (key = rank)", rank, user_rank);
    expect_eq(rank, "AllReduce without the last rank: elements differing", 0,
              allreduce_check(rest, s, float(rank + 1), sum_of_rank_plus_one(first)));
  }

  // Shrink: the excluded rank does not call.
  ncclComm_t shrunk = nullptr;
  if (rank != n - 1) {
    int exclude[1] = {n - 1};
    CHECK_NCCL(ncclCommShrink(comm, exclude, 1, &shrunk, nullptr, NCCL_SHRINK_DEFAULT));
    CHECK_NCCL(ncclCommCount(shrunk, &count));
    CHECK_NCCL(ncclCommUserRank(shrunk, &user_rank));
    expect_eq(rank, "ncclCommShrink without the last rank: ncclCommCount", n - 1, count);
    expect_eq(rank, "ncclCommShrink: ranks keep their order", rank, user_rank);
    expect_eq(rank, "AllReduce on the shrunk communicator: elements differing", 0,
              allreduce_check(shrunk, s, float(rank + 1), sum_of_rank_plus_one(first)));
  }

  // Config attributes NCCL 2.28.9 refuses (init.cc parseCommConfig), before any rendezvous: each init fails at once.
  {
    struct Bad {
      const char* what;
      void (*set)(ncclConfig_t&);
    };
    const Bad bad[] = {
        {"magic not set by NCCL_CONFIG_INITIALIZER", [](ncclConfig_t& c) { c.magic = 0; }},
        {"blocking = 2", [](ncclConfig_t& c) { c.blocking = 2; }},
        {"cgaClusterSize = -1", [](ncclConfig_t& c) { c.cgaClusterSize = -1; }},
        {"minCTAs = 0", [](ncclConfig_t& c) { c.minCTAs = 0, c.maxCTAs = 4; }},
        {"minCTAs 8 over maxCTAs 4", [](ncclConfig_t& c) { c.minCTAs = 8, c.maxCTAs = 4; }},
        {"minCTAs without maxCTAs (NCCL compares it with the unset INT_MIN)", [](ncclConfig_t& c) { c.minCTAs = 4; }},
        {"splitShare = 2", [](ncclConfig_t& c) { c.splitShare = 2; }},
        {"collnetEnable = 2", [](ncclConfig_t& c) { c.collnetEnable = 2; }},
        {"CTAPolicy = 3", [](ncclConfig_t& c) { c.CTAPolicy = 3; }},
        {"nvlsCTAs = 0", [](ncclConfig_t& c) { c.nvlsCTAs = 0; }},
        {"nChannelsPerNetPeer = 65", [](ncclConfig_t& c) { c.nChannelsPerNetPeer = 65; }},
    };
    ncclUniqueId unused{};
    for (const Bad& b : bad) {
      ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
      b.set(cfg);
      ncclComm_t never = nullptr;
      expect_result(rank, std::string("ncclCommInitRankConfig with ") + b.what, ncclInvalidArgument,
                    ncclCommInitRankConfig(&never, n, unused, rank, &cfg));
    }
    // A config of an older NCCL (version 2.16): attributes it did not have yet are ignored, not checked.
    ncclConfig_t old_cfg = NCCL_CONFIG_INITIALIZER;
    old_cfg.version = NCCL_VERSION(2, 16, 0);
    old_cfg.minCTAs = 0;
    old_cfg.nvlsCTAs = 0;
    ncclComm_t old_comm = nullptr;
    expect_result(rank, "ncclCommInitRankConfig of version 2.16 ignores minCTAs and nvlsCTAs", ncclSuccess,
                  ncclCommInitRankConfig(&old_comm, n, shared_id(kIdOldConfig), rank, &old_cfg));
    if (old_comm != nullptr) CHECK_NCCL(ncclCommDestroy(old_comm));
  }

  // Non-blocking init: ncclSuccess or ncclInProgress, then poll until ready.
  {
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    ncclComm_t nb = nullptr;
    const ncclResult_t r0 = ncclCommInitRankConfig(&nb, n, shared_id(kIdNonblocking), rank, &cfg);
    expect_eq(rank, "non-blocking ncclCommInitRankConfig returns ncclSuccess or ncclInProgress", 1,
              r0 == ncclSuccess || r0 == ncclInProgress);
    expect_result(rank, "non-blocking communicator becomes ready", ncclSuccess, wait_ready(nb));
    float* d;
    CHECK_CUDA(cudaMalloc(&d, 256 * sizeof(float)));
    std::vector<float> h(256, float(rank + 1));
    CHECK_CUDA(cudaMemcpy(d, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
    const ncclResult_t r1 = ncclAllReduce(d, d, h.size(), ncclFloat, ncclSum, nb, s);
    expect_eq(rank, "AllReduce on the non-blocking communicator returns ncclSuccess or ncclInProgress", 1,
              r1 == ncclSuccess || r1 == ncclInProgress);
    expect_result(rank, "non-blocking AllReduce enqueued", ncclSuccess, wait_ready(nb));
    sync_nccl_stream(nb, s, rank);
    CHECK_CUDA(cudaMemcpy(h.data(), d, h.size() * sizeof(float), cudaMemcpyDeviceToHost));
    long bad = 0;
    for (float v : h) bad += v != sum_of_rank_plus_one(all);
    expect_eq(rank, "AllReduce on the non-blocking communicator: elements differing", 0, bad);
    CHECK_CUDA(cudaFree(d));
    const ncclResult_t r2 = ncclCommFinalize(nb);
    expect_eq(rank, "non-blocking ncclCommFinalize returns ncclSuccess or ncclInProgress", 1,
              r2 == ncclSuccess || r2 == ncclInProgress);
    expect_result(rank, "non-blocking communicator finalized", ncclSuccess, wait_ready(nb));
    CHECK_NCCL(ncclCommDestroy(nb));
  }

  // Scalable init with a single id.
  ncclComm_t scalable;
  {
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    CHECK_NCCL(ncclCommInitRankScalable(&scalable, n, rank, 1, const_cast<ncclUniqueId*>(&shared_id(kIdScalable)), &cfg));
    CHECK_NCCL(ncclCommCount(scalable, &count));
    CHECK_NCCL(ncclCommUserRank(scalable, &user_rank));
    expect_eq(rank, "ncclCommInitRankScalable: ncclCommCount", n, count);
    expect_eq(rank, "ncclCommInitRankScalable: ncclCommUserRank", rank, user_rank);
    expect_eq(rank, "AllReduce on the scalable-init communicator: elements differing", 0,
              allreduce_check(scalable, s, float(rank + 1), sum_of_rank_plus_one(all)));
  }

  // ncclMemAlloc memory, registered for the communicator, then as a window, around an AllReduce each.
  {
    const size_t bytes = 1 << 20;
    void* buf = nullptr;
    CHECK_NCCL(ncclMemAlloc(&buf, bytes));
    expect_eq(rank, "ncclMemAlloc returns memory", 1, buf != nullptr);
    void* none = buf;
    expect_result(rank, "ncclMemAlloc of 0 bytes (cudaMalloc's answer)", ncclSuccess, ncclMemAlloc(&none, 0));
    expect_eq(rank, "ncclMemAlloc of 0 bytes gives NULL", 1, none == nullptr);
    expect_result(rank, "ncclMemFree(NULL)", ncclSuccess, ncclMemFree(nullptr));
    void* handle = nullptr;
    CHECK_NCCL(ncclCommRegister(comm, buf, bytes, &handle));
    expect_eq(rank, "AllReduce on ncclCommRegister'ed memory: elements differing", 0,
              allreduce_check(comm, s, float(rank + 1), sum_of_rank_plus_one(all), ncclSum, bytes / 4, buf));
    CHECK_NCCL(ncclCommDeregister(comm, handle));
    ncclWindow_t win = nullptr;
    CHECK_NCCL(ncclCommWindowRegister(comm, buf, bytes, &win, NCCL_WIN_DEFAULT));
    expect_eq(rank, "AllReduce on a registered window: elements differing", 0,
              allreduce_check(comm, s, float(2 * rank), float(n * (n - 1)), ncclSum, bytes / 4, buf));
    CHECK_NCCL(ncclCommWindowDeregister(comm, win));
    CHECK_NCCL(ncclMemFree(buf));
  }

  // A PreMulSum operator with a host scalar.
  {
    float two = 2;
    ncclRedOp_t op;
    CHECK_NCCL(ncclRedOpCreatePreMulSum(&op, &two, ncclFloat, ncclScalarHostImmediate, comm));
    expect_eq(rank, "ncclRedOpCreatePreMulSum returns a dynamic operator (>= ncclNumOps)", 1, op >= ncclNumOps);
    expect_eq(rank, "AllReduce with PreMulSum(2): elements differing", 0,
              allreduce_check(comm, s, float(rank + 1), 2 * sum_of_rank_plus_one(all), op));
    CHECK_NCCL(ncclRedOpDestroy(op, comm));
  }

  // ncclGroupSimulateEnd estimates a 1 MiB AllReduce without running it.
  {
    float* d;
    CHECK_CUDA(cudaMalloc(&d, 1 << 20));
    ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
    CHECK_NCCL(ncclGroupStart());
    CHECK_NCCL(ncclAllReduce(d, d, (1 << 20) / sizeof(float), ncclFloat, ncclSum, comm, s));
    expect_result(rank, "ncclGroupSimulateEnd", ncclSuccess, ncclGroupSimulateEnd(&sim));
    if (n > 1)
      expect_eq(rank, "simulated 1 MiB AllReduce has estimatedTime > 0", 1, sim.estimatedTime > 0);
    else  // one rank: a local copy NCCL does not plan; the initializer's NCCL_UNDEF_FLOAT (-1) stays
      expect_eq(rank, "simulated 1 MiB AllReduce on one rank leaves estimatedTime at -1", 1, sim.estimatedTime == -1.0f);
    note(rank, "simulated 1 MiB AllReduce: estimatedTime %.3f us", double(sim.estimatedTime));
    CHECK_CUDA(cudaStreamSynchronize(s));
    CHECK_CUDA(cudaFree(d));
  }

  // Argument errors, each reported by the call itself; the communicator stays usable.
  {
    float* d;
    CHECK_CUDA(cudaMalloc(&d, 64 * sizeof(float)));
    expect_result(rank, "ncclAllReduce with a NULL comm", ncclInvalidArgument,
                  ncclAllReduce(d, d, 16, ncclFloat, ncclSum, nullptr, s));
    expect_result(rank, "ncclAllReduce with datatype 99", ncclInvalidArgument,
                  ncclAllReduce(d, d, 16, static_cast<ncclDataType_t>(99), ncclSum, comm, s));
    expect_result(rank, "ncclAllReduce with op 99", ncclInvalidArgument,
                  ncclAllReduce(d, d, 16, ncclFloat, static_cast<ncclRedOp_t>(99), comm, s));
    expect_result(rank, "ncclBroadcast with root = nranks", ncclInvalidArgument,
                  ncclBroadcast(d, d, 16, ncclFloat, n, comm, s));
    expect_result(rank, "ncclSend to peer = nranks", ncclInvalidArgument, ncclSend(d, 16, ncclFloat, n, comm, s));
    // Real NCCL checks pointers only with NCCL_CHECK_POINTERS=1, which main() sets.
    expect_result(rank, "ncclAllReduce with a NULL sendbuff and count 16", ncclInvalidArgument,
                  ncclAllReduce(nullptr, d, 16, ncclFloat, ncclSum, comm, s));
    ncclComm_t bad = nullptr;
    expect_result(rank, "ncclCommInitRank with rank = nranks", ncclInvalidArgument,
                  ncclCommInitRank(&bad, n, shared_id(kIdBadRank), n));
    // Inside a group a failed call fails the group: ncclGroupEnd returns its error and none of the group's work
    // runs (NCCL's ncclGroupErrCheck), so the valid AllReduce queued before it leaves the buffer as it was.
    {
      std::vector<float> h(16, float(rank + 1));
      CHECK_CUDA(cudaMemcpy(d, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
      CHECK_NCCL(ncclGroupStart());
      CHECK_NCCL(ncclAllReduce(d, d, 16, ncclFloat, ncclSum, comm, s));
      expect_result(rank, "ncclAllReduce with datatype 99 inside a group", ncclInvalidArgument,
                    ncclAllReduce(d, d, 16, static_cast<ncclDataType_t>(99), ncclSum, comm, s));
      expect_result(rank, "ncclGroupEnd after a failed call returns its error", ncclInvalidArgument, ncclGroupEnd());
      CHECK_CUDA(cudaStreamSynchronize(s));
      CHECK_CUDA(cudaMemcpy(h.data(), d, h.size() * sizeof(float), cudaMemcpyDeviceToHost));
      long changed = 0;
      for (float v : h) changed += v != float(rank + 1);
      expect_eq(rank, "the failed group's valid AllReduce did not run: elements changed", 0, changed);
    }
    const char* msg = ncclGetErrorString(ncclInvalidUsage);
    expect_eq(rank, "ncclGetErrorString(ncclInvalidUsage) is not empty", 1, msg != nullptr && msg[0] != 0);
    CHECK_CUDA(cudaStreamSynchronize(s));
    CHECK_CUDA(cudaFree(d));
    expect_eq(rank, "AllReduce after the argument errors: elements differing", 0,
              allreduce_check(comm, s, float(rank + 1), sum_of_rank_plus_one(all)));
  }

  // The device API needs symmetric memory: NCCL answers ncclInvalidUsage without it (as Genie always does).
  {
    ncclDevCommRequirements reqs = {};
    ncclDevComm dev_comm;
    std::memset(static_cast<void*>(&dev_comm), 0, sizeof(dev_comm));
    const ncclResult_t r = ncclDevCommCreate(comm, &reqs, &dev_comm);
    note(rank, "ncclDevCommCreate -> %s", nccl_result_name(r));
    expect_eq(rank, "ncclDevCommCreate returns ncclInvalidUsage (no symmetric memory) or ncclSuccess", 1,
              r == ncclInvalidUsage || r == ncclSuccess);
    if (r == ncclSuccess) CHECK_NCCL(ncclDevCommDestroy(comm, &dev_comm));
  }

  // Teardown in the same order on every rank: each Finalize waits only for that communicator's members.
  std::vector<ncclComm_t> comms = {half};
  if (rest) comms.push_back(rest);
  if (shrunk) comms.push_back(shrunk);
  comms.push_back(scalable);
  comms.push_back(comm);
  for (ncclComm_t c : comms) {
    CHECK_NCCL(ncclCommFinalize(c));
    CHECK_NCCL(ncclCommDestroy(c));
  }

  ncclComm_t doomed;
  CHECK_NCCL(ncclCommInitRank(&doomed, n, shared_id(kIdAbort), rank));
  expect_eq(rank, "AllReduce on a communicator about to be aborted: elements differing", 0,
            allreduce_check(doomed, s, 1.0f, float(n)));
  expect_result(rank, "ncclCommAbort", ncclSuccess, ncclCommAbort(doomed));

  // ncclCommDestroy with calls still queued on the stream: NCCL flushes them first (ncclCommFinalize); every result
  // must arrive, and once the stream has drained the communicator is gone. On Genie a communicator's control segment
  // is a memfd named genie-nccl-comm (real NCCL has none: the count stays as it was there too).
  {
    const size_t count = 4096;
    const int calls = 64;
    float *in, *out;
    CHECK_CUDA(cudaMalloc(&in, count * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&out, calls * count * sizeof(float)));
    std::vector<float> h(calls * count, float(rank + 1));
    CHECK_CUDA(cudaMemcpy(in, h.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemset(out, 0, calls * count * sizeof(float)));
    CHECK_CUDA(cudaStreamSynchronize(s));
    const int fds_before = open_fds("genie-nccl-comm");
    ncclComm_t q;
    CHECK_NCCL(ncclCommInitRank(&q, n, shared_id(kIdQueued), rank));
    for (int i = 0; i < calls; ++i) CHECK_NCCL(ncclAllReduce(in, out + i * count, count, ncclFloat, ncclSum, q, s));
    CHECK_NCCL(ncclCommDestroy(q));
    CHECK_CUDA(cudaStreamSynchronize(s));
    CHECK_CUDA(cudaMemcpy(h.data(), out, calls * count * sizeof(float), cudaMemcpyDeviceToHost));
    long bad = 0;
    for (float v : h) bad += v != sum_of_rank_plus_one(all);
    expect_eq(rank, "AllReduces queued before ncclCommDestroy: elements differing", 0, bad);
    expect_eq(rank, "communicator segments open after the destroyed communicator's queued calls ran, less before", 0,
              open_fds("genie-nccl-comm") - fds_before);
    CHECK_CUDA(cudaFree(in));
    CHECK_CUDA(cudaFree(out));
  }
  CHECK_CUDA(cudaStreamDestroy(s));
}

int main(int argc, char** argv) {
  const int nranks = argc > 1 ? std::atoi(argv[1]) : 4;
  if (nranks < 1 || nranks > 64) {
    std::fprintf(stderr, "usage: %s [nranks=4] (1..64)\n", argv[0]);
    return 2;
  }
  setenv("NCCL_CHECK_POINTERS", "1", 0);  // so real NCCL validates buffer pointers too
  return finish_ranks("comm_ops", run_procs(nranks, rank_main, {}, 150, 30, kIds));
}
