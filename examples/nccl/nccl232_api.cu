// SPDX-License-Identifier: Apache-2.0
// Example: the NCCL 2.29-2.32 API, one process per rank, compiled against Genie's own NCCL 2.32 header
// (shim/include/nccl.h): growing a communicator, windows and one-sided put/signal/wait (data checked against a CPU
// reference), suspend/resume around collectives, memory statistics, per-call configuration, the parameter API,
// encryption settings and the host side of the device API.
// Usage: nccl232_api [nranks=4] (even, >= 2: the first half grows into all of them)
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "nccl_check.cuh"
// The device API's host types (nccl_device.h needs nvcc's device compilation and NCCL's device headers).
#include "../../shim/src/device_api.hpp"

extern "C" {
ncclResult_t ncclCommQueryProperties(ncclComm_t comm, ncclCommProperties_t* props);
ncclResult_t ncclGetPeerDevicePointer(ncclWindow_t window, size_t offset, int peer, void** outPtr);
ncclResult_t ncclGetLsaMultimemDevicePointer(ncclWindow_t window, size_t offset, void** outPtr);
ncclResult_t ncclGetPeerDeviceLeInfo(ncclWindow_t window, size_t offset, int peerWorld, ncclCftLeId* leId,
                                     size_t* leOffset);
}

// The grow id travels from the old root to the new ranks through memory the forked ranks share.
struct GrowShare {
  std::atomic<int> ready{0};
  ncclUniqueId id;
};
static GrowShare* g_grow = nullptr;

static float value_of(int rank, size_t i) { return static_cast<float>(rank * 1000 + static_cast<int>(i % 997)); }

// Modelled time of an AllReduce of `count` floats with `config` (NULL: the plain call), from CUDA events.
static float timed_allreduce(ncclComm_t comm, cudaStream_t s, float* d, size_t count, const ncclCollConfig_t* config) {
  return event_timed_ms(s, [&] { CHECK_NCCL(ncclAllReduceConfig(d, d, count, ncclFloat, ncclSum, comm, s, config)); });
}

static void check_allreduce(int rank, const char* what, ncclComm_t comm, cudaStream_t s, int n) {
  const size_t count = 4096;
  float* d;
  CHECK_CUDA(cudaMalloc(&d, count * sizeof(float)));
  std::vector<float> h(count);
  for (size_t i = 0; i < count; ++i) h[i] = value_of(rank, i);
  CHECK_CUDA(cudaMemcpy(d, h.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_NCCL(ncclAllReduce(d, d, count, ncclFloat, ncclSum, comm, s));
  sync_nccl_stream(comm, s, rank);
  CHECK_CUDA(cudaMemcpy(h.data(), d, count * sizeof(float), cudaMemcpyDeviceToHost));
  long bad = 0;
  for (size_t i = 0; i < count; ++i) {
    float want = 0;
    for (int r = 0; r < n; ++r) want += value_of(r, i);
    bad += h[i] != want;
  }
  expect_eq(rank, what, 0, bad);
  CHECK_CUDA(cudaFree(d));
}

static void grow(int rank, int n, ncclComm_t* grown) {
  const int half = n / 2;
  ncclComm_t small = nullptr;
  if (rank < half) {
    CHECK_NCCL(ncclCommInitRank(&small, half, shared_id(1), rank));
    ncclUniqueId gid;
    if (rank == 0) {
      CHECK_NCCL(ncclCommGetUniqueId(small, &gid));
      ncclUniqueId again;
      expect_result(rank, "a second grow id while the first is unused", ncclInvalidUsage,
                    ncclCommGetUniqueId(small, &again));
      g_grow->id = gid;
      g_grow->ready.store(1, std::memory_order_release);
    }
    expect_result(rank, "existing ranks pass rank -1", ncclInvalidArgument,
                  ncclCommGrow(small, n, rank == 0 ? &gid : nullptr, 0, grown, nullptr));
    CHECK_NCCL(ncclCommGrow(small, n, rank == 0 ? &gid : nullptr, -1, grown, nullptr));
  } else {
    while (!g_grow->ready.load(std::memory_order_acquire)) usleep(1000);
    ncclUniqueId gid = g_grow->id;
    CHECK_NCCL(ncclCommGrow(nullptr, n, &gid, rank, grown, nullptr));
  }
  int count = 0, me = -1;
  CHECK_NCCL(ncclCommCount(*grown, &count));
  CHECK_NCCL(ncclCommUserRank(*grown, &me));
  expect_eq(rank, "grown communicator's size", n, count);
  expect_eq(rank, "rank in the grown communicator", rank, me);
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));
  check_allreduce(rank, "AllReduce on the grown communicator: elements wrong", *grown, s, n);
  if (small) {
    check_allreduce(rank, "AllReduce on the original communicator after the grow: elements wrong", small, s, half);
    CHECK_NCCL(ncclCommDestroy(small));
  }
  CHECK_CUDA(cudaStreamDestroy(s));
}

// Every rank puts its block into the next rank's window and signals; each waits for the previous rank's put, then a
// second round of bare signals.
static void one_sided(int rank, int n, ncclComm_t comm) {
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));
  const size_t count = 1 << 16;
  const size_t bytes = count * sizeof(float);
  float *win_buf, *src;
  CHECK_CUDA(cudaMalloc(&win_buf, 2 * bytes));
  CHECK_CUDA(cudaMalloc(&src, bytes));
  CHECK_CUDA(cudaMemset(win_buf, 0, 2 * bytes));
  std::vector<float> h(count);
  for (size_t i = 0; i < count; ++i) h[i] = value_of(rank, i) + 0.5f;
  CHECK_CUDA(cudaMemcpy(src, h.data(), bytes, cudaMemcpyHostToDevice));
  expect_result(rank, "ncclSignal before any window", ncclInvalidUsage, ncclSignal((rank + 1) % n, 0, 0, 0, comm, s));
  ncclWindow_t win;
  CHECK_NCCL(ncclCommWindowRegister(comm, win_buf, 2 * bytes, &win, NCCL_WIN_DEFAULT));
  void* user = nullptr;
  CHECK_NCCL(ncclWinGetUserPtr(comm, win, &user));
  expect_eq(rank, "ncclWinGetUserPtr is the registered buffer", 1, user == win_buf);
  const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  expect_result(rank, "sigIdx must be 0", ncclInvalidArgument,
                ncclPutSignal(src, count, ncclFloat, next, win, bytes, 1, 0, 0, comm, s));
  expect_result(rank, "a put past the end of the window", ncclInvalidArgument,
                ncclPutSignal(src, count, ncclFloat, next, win, bytes + 4, 0, 0, 0, comm, s));
  // Into the second half of the next rank's window.
  CHECK_NCCL(ncclPutSignal(src, count, ncclFloat, next, win, bytes, 0, 0, 0, comm, s));
  ncclWaitSignalDesc_t desc = {1, prev, 0, 0};
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  CHECK_CUDA(cudaEventRecord(a, s));
  CHECK_NCCL(ncclWaitSignal(1, &desc, comm, s));
  CHECK_CUDA(cudaEventRecord(b, s));
  sync_nccl_stream(comm, s, rank);
  float wait_ms = -1;
  CHECK_CUDA(cudaEventElapsedTime(&wait_ms, a, b));
  note(rank, "PutSignal of %zu bytes then WaitSignal: the wait took %.3f ms of modelled time", bytes, wait_ms);
  std::vector<float> got(2 * count);
  CHECK_CUDA(cudaMemcpy(got.data(), win_buf, 2 * bytes, cudaMemcpyDeviceToHost));
  long bad = 0;
  for (size_t i = 0; i < count; ++i) bad += got[i] != 0.0f || got[count + i] != value_of(prev, i) + 0.5f;
  expect_eq(rank, "window after the previous rank's put: elements wrong", 0, bad);
  // Three bare signals to every peer, then wait for three from each.
  std::vector<ncclWaitSignalDesc_t> all;
  for (int p = 0; p < n; ++p) {
    if (p == rank) continue;
    for (int k = 0; k < 3; ++k) CHECK_NCCL(ncclSignal(p, 0, 0, 0, comm, s));
    all.push_back({3, p, 0, 0});
  }
  CHECK_NCCL(ncclWaitSignal(static_cast<int>(all.size()), all.data(), comm, s));
  sync_nccl_stream(comm, s, rank);
  expect_eq(rank, "WaitSignal for 3 signals from each peer completed", 1, 1);
  // The previous rank's window, addressed from here (all ranks on one emulated node).
  void* peer = nullptr;
  CHECK_NCCL(ncclGetPeerDevicePointer(win, bytes, next, &peer));
  bool same = peer != nullptr && std::memcmp(peer, h.data(), bytes) == 0;
  expect_eq(rank, "ncclGetPeerDevicePointer addresses the next rank's window, which holds this rank's put", 1, same);
  ncclCftLeId le;
  size_t le_off;
  expect_result(rank, "CFT handles", ncclInvalidUsage, ncclGetPeerDeviceLeInfo(win, 0, next, &le, &le_off));
  void* mc = nullptr;
  ncclResult_t mr = ncclGetLsaMultimemDevicePointer(win, 0, &mc);
  note(rank, "ncclGetLsaMultimemDevicePointer: %s", nccl_result_name(mr));
  expect_eq(rank, "multimem pointer on an NVLS preset is the local replica", 1, mr == ncclSuccess && mc == win_buf);
  CHECK_NCCL(ncclCommWindowDeregister(comm, win));
  CHECK_CUDA(cudaFree(win_buf));
  CHECK_CUDA(cudaFree(src));
  CHECK_CUDA(cudaStreamDestroy(s));
}

static void suspend_resume(int rank, int n, ncclComm_t comm) {
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));
  uint64_t v = 99;
  CHECK_NCCL(ncclCommMemStats(comm, ncclStatGpuMemSuspended, &v));
  expect_eq(rank, "not suspended", 0, static_cast<long long>(v));
  check_allreduce(rank, "AllReduce before the suspend: elements wrong", comm, s, n);
  CHECK_NCCL(ncclCommSuspend(comm, NCCL_SUSPEND_MEM));
  CHECK_NCCL(ncclCommMemStats(comm, ncclStatGpuMemSuspended, &v));
  expect_eq(rank, "suspended", 1, static_cast<long long>(v));
  float* d;
  CHECK_CUDA(cudaMalloc(&d, 64));
  expect_result(rank, "AllReduce on a suspended communicator", ncclInvalidUsage,
                ncclAllReduce(d, d, 16, ncclFloat, ncclSum, comm, s));
  expect_result(rank, "a second suspend", ncclInvalidUsage, ncclCommSuspend(comm, 0));
  CHECK_NCCL(ncclCommResume(comm));
  expect_result(rank, "resume when not suspended", ncclInvalidUsage, ncclCommResume(comm));
  check_allreduce(rank, "AllReduce after the resume: elements wrong", comm, s, n);
  uint64_t persist = 0, total = 0, susp = 1;
  CHECK_NCCL(ncclCommMemStats(comm, ncclStatGpuMemPersist, &persist));
  CHECK_NCCL(ncclCommMemStats(comm, ncclStatGpuMemTotal, &total));
  CHECK_NCCL(ncclCommMemStats(comm, ncclStatGpuMemSuspend, &susp));
  note(rank, "ncclCommMemStats: persist %llu total %llu suspendable %llu", (unsigned long long)persist,
       (unsigned long long)total, (unsigned long long)susp);
  expect_eq(rank, "persistent memory holds the signal area (one slot per rank)", 1, persist > 0);
  expect_eq(rank, "total = persistent + suspendable", static_cast<long long>(persist + susp),
            static_cast<long long>(total));
  expect_result(rank, "an unknown statistic", ncclInvalidArgument,
                ncclCommMemStats(comm, static_cast<ncclCommMemStat_t>(7), &v));
  CHECK_CUDA(cudaFree(d));
  CHECK_CUDA(cudaStreamDestroy(s));
}

static void per_call_config(int rank, int n, ncclComm_t comm) {
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));
  const size_t count = 64 << 20;  // 256 MiB: bandwidth-bound, so the channel count shows
  float* d;
  CHECK_CUDA(cudaMalloc(&d, count * sizeof(float)));
  // Ring in both (NVLS, NCCL's choice here, does not scale with channels): one channel is far slower.
  ncclCollConfig_t ring = NCCL_COLLCONFIG_INITIALIZER;
  ring.algSelection = "ring";
  const float plain = timed_allreduce(comm, s, d, count, &ring);
  ncclCollConfig_t one = NCCL_COLLCONFIG_INITIALIZER;
  one.algSelection = "ring";
  one.maxCTAs = 1;
  const float narrow = timed_allreduce(comm, s, d, count, &one);
  note(rank, "Ring AllReduce of 256 MiB: %.3f ms as NCCL chooses the channels, %.3f ms with maxCTAs=1", plain, narrow);
  ncclCollConfig_t tree = NCCL_COLLCONFIG_INITIALIZER;
  tree.algSelection = "tree";
  const float t = timed_allreduce(comm, s, d, count, &tree);
  note(rank, "with algSelection=tree: %.3f ms", t);
  // What each call was tuned to is checked on NCCL_DEBUG=INFO's lines (tests/e2e/nccl.cmake).
  ncclCollConfig_t bad = NCCL_COLLCONFIG_INITIALIZER;
  bad.magic = 0;
  expect_result(rank, "a config not made with NCCL_COLLCONFIG_INITIALIZER", ncclInvalidArgument,
                ncclAllReduceConfig(d, d, 16, ncclFloat, ncclSum, comm, s, &bad));
  ncclCollConfig_t minmax = NCCL_COLLCONFIG_INITIALIZER;
  minmax.minCTAs = 8;
  minmax.maxCTAs = 2;
  expect_result(rank, "minCTAs > maxCTAs", ncclInvalidArgument,
                ncclAllGatherConfig(d, d, 16, ncclFloat, comm, s, &minmax));
  ncclCollConfig_t pat = NCCL_COLLCONFIG_INITIALIZER;
  pat.algSelection = "pat";  // PAT has no AllReduce
  expect_result(rank, "a forced selection that leaves AllReduce no algorithm", ncclInvalidArgument,
                ncclAllReduceConfig(d, d, 16, ncclFloat, ncclSum, comm, s, &pat));
  pat.forceAlgSelection = 0;
  CHECK_NCCL(ncclAllReduceConfig(d, d, 16, ncclFloat, ncclSum, comm, s, &pat));  // falls back to NCCL's choice
  // The launch-completion event: recorded where the collective's kernel would start.
  cudaEvent_t launched;
  CHECK_CUDA(cudaEventCreateWithFlags(&launched, cudaEventDisableTiming));
  ncclCollConfig_t ev = NCCL_COLLCONFIG_INITIALIZER;
  ev.launchCompletionEvent = launched;
  CHECK_NCCL(ncclReduceScatterConfig(d, d, 1024, ncclFloat, ncclSum, comm, s, &ev));
  sync_nccl_stream(comm, s, rank);
  expect_result(rank, "the launch-completion event was recorded", ncclSuccess,
                cudaEventQuery(launched) == cudaSuccess ? ncclSuccess : ncclInternalError);
  CHECK_CUDA(cudaEventDestroy(launched));
  CHECK_CUDA(cudaFree(d));
  CHECK_CUDA(cudaStreamDestroy(s));
  (void)n;
}

static void params_and_more(int rank, int n, ncclComm_t comm) {
  ncclParamHandle_t h = nullptr;
  CHECK_NCCL(ncclParamBind(&h, "NCCL_BUFFSIZE"));
  int32_t v32 = 0;
  CHECK_NCCL(ncclParamGetI32(h, &v32));
  expect_eq(rank, "NCCL_BUFFSIZE as set in the environment", 4194304, v32);
  int8_t v8 = 0;
  expect_result(rank, "4194304 as an int8", ncclInvalidArgument, ncclParamGetI8(h, &v8));
  const char* str = nullptr;
  CHECK_NCCL(ncclParamGetStr(h, &str));
  expect_eq(rank, "as a string", 1, str != nullptr && std::string(str) == "4194304");
  int64_t raw = 0;
  int len = 0;
  CHECK_NCCL(ncclParamGet(h, &raw, sizeof(raw), &len));
  expect_eq(rank, "raw value", 4194304, raw);
  expect_eq(rank, "raw length", 8, len);
  ncclParamHandle_t algo = nullptr;
  CHECK_NCCL(ncclParamBind(&algo, "NCCL_ALGO"));
  expect_result(rank, "a string parameter as an integer", ncclInvalidArgument, ncclParamGetI64(algo, &raw));
  ncclParamHandle_t none = nullptr;
  expect_result(rank, "an unknown key", ncclInvalidArgument, ncclParamBind(&none, "NCCL_NO_SUCH_PARAMETER"));
  const char* value = nullptr;
  int value_len = 0;
  CHECK_NCCL(ncclParamGetParameter("GENIE_HANG_TIMEOUT", &value, &value_len));
  note(rank, "GENIE_HANG_TIMEOUT = '%s'", value ? value : "(null)");
  expect_eq(rank, "GENIE_HANG_TIMEOUT through the key-based API", 1, value && std::atof(value) == 120.0);
  const char** keys = nullptr;
  int nkeys = 0;
  CHECK_NCCL(ncclParamGetAllParameterKeys(&keys, &nkeys));
  bool has_algo = false, has_genie = false;
  for (int i = 0; i < nkeys; ++i) {
    has_algo |= std::string(keys[i]) == "NCCL_ALGO";
    has_genie |= std::string(keys[i]) == "GENIE_HANG_TIMEOUT";
  }
  note(rank, "%d parameter keys", nkeys);
  expect_eq(rank, "the key list has NCCL's and Genie's parameters", 1, has_algo && has_genie);
  ncclParamDumpAll();

  ncclEncryptionConfig_t enc = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
  CHECK_NCCL(ncclSetEncryption(&enc));
  enc.mode = NCCL_ENCRYPTION_MODE_PSK;
  expect_result(rank, "PSK mode without a key", ncclInvalidArgument, ncclSetEncryption(&enc));
  enc.psk = "0123456789abcdef";
  CHECK_NCCL(ncclSetEncryption(&enc));  // accepted: every rank is on this host
  enc.mode = NCCL_ENCRYPTION_MODE_NONE;
  CHECK_NCCL(ncclSetEncryption(&enc));

  ncclCommProperties_t props;
  std::memset(&props, 0, sizeof(props));
  props.size = sizeof(props);
  props.magic = NCCL_API_MAGIC;
  props.version = NCCL_VERSION_CODE;
  CHECK_NCCL(ncclCommQueryProperties(comm, &props));
  expect_eq(rank, "properties: rank", rank, props.rank);
  expect_eq(rank, "properties: nRanks", n, props.nRanks);
  expect_eq(rank, "properties: no device API", 0, props.deviceApiSupport);
  expect_eq(rank, "properties: host RMA", 1, props.hostRmaSupport);
  const char* ts = ncclGetErrorString(ncclTimeout);
  expect_eq(rank, "ncclGetErrorString(ncclTimeout)", 1, ts && std::string(ts) == "timeout");
}

static void rank_main(int rank, int n, const ncclUniqueId& id) {
  int version = 0;
  CHECK_NCCL(ncclGetVersion(&version));
  expect_eq(rank, "ncclGetVersion", NCCL_VERSION_CODE, version);
  ncclComm_t comm = nullptr;
  grow(rank, n, &comm);
  one_sided(rank, n, comm);
  suspend_resume(rank, n, comm);
  per_call_config(rank, n, comm);
  params_and_more(rank, n, comm);
  CHECK_NCCL(ncclCommDestroy(comm));
  (void)id;
}

int main(int argc, char** argv) {
  const int nranks = argc > 1 ? std::atoi(argv[1]) : 4;
  if (nranks < 2 || nranks > 8 || nranks % 2 != 0) {
    std::fprintf(stderr, "usage: %s [nranks=4] (even, 2..8)\n", argv[0]);
    return 2;
  }
  setenv("NCCL_BUFFSIZE", "4194304", 1);  // NCCL's default, set explicitly: the parameter API must read it
  setenv("GENIE_HANG_TIMEOUT", "120", 1);
  void* shm = mmap(nullptr, sizeof(GrowShare), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shm == MAP_FAILED) return 2;
  g_grow = new (shm) GrowShare();
  return finish_ranks("nccl232_api", run_procs(nranks, rank_main, {}, 150, 30, 2));
}
