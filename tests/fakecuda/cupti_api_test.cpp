// SPDX-License-Identifier: Apache-2.0
// Tests of libcupti.so.13 (fakecuda/src/cupti) driven through our libcudart.so.13: activity records of kernels,
// copies, memsets and runtime calls with their names, correlations and virtual times; external correlation; the
// callback API; the time base with a timestamp callback; graph replays; bad arguments.
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <gtest/gtest.h>
#include <time.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "genie/fakecuda/cost_model.hpp"
#include "genie/fakecuda/runtime.hpp"


namespace {

using genie::fakecuda::Runtime;

constexpr char kPtx[] = R"(.version 9.0
.target sm_90
.visible .entry cupti_test_kernel(.param .u64 p0) { ret; }
)";

// Every record handed to the client, copied out of the buffers.
struct Collected {
  std::vector<std::vector<uint8_t>> records;
  int buffers_completed = 0;
};
Collected g_collected;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 64 * 1024;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  ++g_collected.buffers_completed;
  CUpti_Activity* r = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
    const auto* p = reinterpret_cast<const uint8_t*>(r);
    g_collected.records.emplace_back(p, p + 256);  // the largest record (Kernel10) is smaller
  }
  std::free(buffer);
}

template <class T>
std::vector<T> of_kind(CUpti_ActivityKind k) {
  std::vector<T> out;
  for (const auto& r : g_collected.records) {
    if (reinterpret_cast<const CUpti_Activity*>(r.data())->kind != k) continue;
    T t;
    std::memcpy(&t, r.data(), sizeof(T));
    out.push_back(t);
  }
  return out;
}

class Cupti : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("GENIE_HOST_CPU_SCALE", "0", 1);  // host time is the modelled call costs only: exact comparisons
    setenv("GENIE_GPUS", "1", 1);
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    cudaLibrary_t lib = nullptr;
    ASSERT_EQ(cudaLibraryLoadData(&lib, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0), cudaSuccess);
    ASSERT_EQ(cudaLibraryGetKernel(&kernel_, lib, "cupti_test_kernel"), cudaSuccess);
    ASSERT_EQ(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), CUPTI_SUCCESS);
  }
  void SetUp() override { g_collected = {}; }
  void TearDown() override {
    for (CUpti_ActivityKind k : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                 CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
                                 CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION})
      EXPECT_EQ(cuptiActivityDisable(k), CUPTI_SUCCESS);
    EXPECT_EQ(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS);
  }
  static void enable_all() {
    for (CUpti_ActivityKind k : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                 CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
                                 CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION})
      ASSERT_EQ(cuptiActivityEnable(k), CUPTI_SUCCESS);
  }
  static cudaError_t launch(cudaStream_t s, dim3 grid, dim3 block) {
    void* arg = nullptr;
    void* args[] = {&arg};
    return cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), grid, block, args, 0, s);
  }
  static inline cudaKernel_t kernel_ = nullptr;
};

// System: on one stream, a 1 MiB host-to-device copy, a 4 KiB memset and a kernel <<<(7,2,1),(128,1,1)>>>, all
// issued while the external id 42 is pushed (Kineto's CPU op), then a stream synchronize.
// Expectations: one record of each, in stream order, the kernel named as its library names it, with its grid and
// block; the kernel's duration is the cost model's and its start no earlier than the host time of its launch; each
// op's correlation id is that of its runtime API record (cudaMemcpyAsync, cudaMemsetAsync, cudaLaunchKernel), and
// every one of those maps to external id 42; the synchronize is a stream synchronization record; cuptiGetTimestamp
// afterwards is the host's time, past the kernel's end.
TEST_F(Cupti, StreamOpsBecomeRecordsWithTheRuntimesTimesAndCorrelations) {
  enable_all();
  void* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, 1 << 20), cudaSuccess);
  std::vector<char> host(1 << 20, 1);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  ASSERT_EQ(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 42), CUPTI_SUCCESS);
  ASSERT_EQ(cudaMemcpyAsync(dev, host.data(), host.size(), cudaMemcpyHostToDevice, s), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(dev, 0, 4096, s), cudaSuccess);
  const int64_t before_launch = Runtime::instance()->clock().peek().count_ns();
  ASSERT_EQ(launch(s, dim3(7, 2, 1), dim3(128, 1, 1)), cudaSuccess);
  uint64_t popped = 0;
  ASSERT_EQ(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &popped), CUPTI_SUCCESS);
  EXPECT_EQ(popped, 42u);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  uint64_t now = 0;
  ASSERT_EQ(cuptiGetTimestamp(&now), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);

  auto kernels = of_kind<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  auto copies = of_kind<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  auto sets = of_kind<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  auto apis = of_kind<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  auto ext = of_kind<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  auto syncs = of_kind<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  ASSERT_EQ(kernels.size(), 1u);
  ASSERT_EQ(copies.size(), 1u);
  ASSERT_EQ(sets.size(), 1u);
  const auto& k = kernels[0];
  EXPECT_STREQ(k.name, "cupti_test_kernel");
  EXPECT_EQ(k.gridX, 7);
  EXPECT_EQ(k.gridY, 2);
  EXPECT_EQ(k.blockX, 128);
  EXPECT_EQ(k.deviceId, 0u);
  genie::fakecuda::KernelShape shape;
  shape.grid[0] = 7;
  shape.grid[1] = 2;
  shape.block[0] = 128;
  EXPECT_EQ(static_cast<int64_t>(k.end - k.start),
            Runtime::instance()->cost_model().kernel("cupti_test_kernel", shape).count_ns());
  EXPECT_GE(static_cast<int64_t>(k.start), before_launch);
  EXPECT_EQ(copies[0].bytes, 1u << 20);
  EXPECT_EQ(copies[0].copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
  EXPECT_EQ(sets[0].bytes, 4096u);
  // Stream order on one stream.
  EXPECT_EQ(copies[0].streamId, k.streamId);
  EXPECT_EQ(sets[0].streamId, k.streamId);
  EXPECT_LE(copies[0].end, sets[0].start);
  EXPECT_LE(sets[0].end, k.start);
  EXPECT_GE(now, k.end);
  // Correlations: op -> runtime API record -> external id.
  std::map<uint32_t, uint32_t> cbid_of;
  for (const auto& a : apis) cbid_of[a.correlationId] = a.cbid;
  EXPECT_EQ(cbid_of[copies[0].correlationId], CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020);
  EXPECT_EQ(cbid_of[sets[0].correlationId], CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020);
  EXPECT_EQ(cbid_of[k.correlationId], CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  std::map<uint32_t, uint64_t> external;
  for (const auto& e : ext) {
    EXPECT_EQ(e.externalKind, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
    external[e.correlationId] = e.externalId;
  }
  for (uint32_t c : {copies[0].correlationId, sets[0].correlationId, k.correlationId}) EXPECT_EQ(external[c], 42u);
  for (const auto& a : apis) {
    EXPECT_LE(a.start, a.end);
    if (a.correlationId == k.correlationId) EXPECT_LE(a.start, k.start);
  }
  ASSERT_EQ(syncs.size(), 1u);
  EXPECT_EQ(syncs[0].type, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE);
  EXPECT_GE(syncs[0].end, k.end) << "the host waits until the kernel has ended";
  EXPECT_EQ(cudaStreamDestroy(s), cudaSuccess);
  EXPECT_EQ(cudaFree(dev), cudaSuccess);
}

// System: records are only made for enabled kinds; a runtime API record switched off by cbid is left out.
TEST_F(Cupti, OnlyEnabledKindsAndCallbackIdsAreRecorded) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 0), CUPTI_SUCCESS);
  ASSERT_EQ(launch(nullptr, dim3(1), dim3(32)), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  EXPECT_TRUE(of_kind<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).empty());
  auto apis = of_kind<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME);
  bool sync = false;
  for (const auto& a : apis) {
    EXPECT_NE(a.cbid, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
    sync = sync || a.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020;
  }
  EXPECT_TRUE(sync);
  ASSERT_EQ(cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1), CUPTI_SUCCESS);
}

// System: a kernel <<<(3,1,1),(64,1,1)>>> captured into a graph that is then launched twice.
// Expectation: two kernel records, each with the launch shape of the captured kernel and the correlation id of its
// own cudaGraphLaunch; the second starts after the first ends.
TEST_F(Cupti, GraphReplaysReportTheirKernelsUnderTheGraphLaunch) {
  enable_all();
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  ASSERT_EQ(launch(s, dim3(3), dim3(64)), cudaSuccess);
  cudaGraph_t g = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(s, &g), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, g, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  auto kernels = of_kind<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(kernels.size(), 2u);
  std::map<uint32_t, uint32_t> cbid_of;
  for (const auto& a : of_kind<CUpti_ActivityAPI>(CUPTI_ACTIVITY_KIND_RUNTIME)) cbid_of[a.correlationId] = a.cbid;
  for (const auto& k : kernels) {
    EXPECT_EQ(k.gridX, 3);
    EXPECT_EQ(k.blockX, 64);
    EXPECT_EQ(cbid_of[k.correlationId], CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000);
  }
  EXPECT_NE(kernels[0].correlationId, kernels[1].correlationId);
  EXPECT_LE(kernels[0].end, kernels[1].start);
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(g), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(s), cudaSuccess);
}

struct CallbackLog {
  std::vector<std::pair<CUpti_ApiCallbackSite, uint32_t>> calls;  // (site, correlation id)
  std::vector<std::string> names;
};

void CUPTIAPI on_callback(void* user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  auto* log = static_cast<CallbackLog*>(user);
  const auto* d = static_cast<const CUpti_CallbackData*>(data);
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API || cbid != CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020) return;
  log->calls.emplace_back(d->callbackSite, d->correlationId);
  log->names.emplace_back(d->functionName);
}

// System: one subscriber enables the runtime callback of cudaMemsetAsync and makes two calls of it.
// Expectation: an enter and an exit callback per call with one correlation id each; a second subscriber is refused;
// after unsubscribing no callback comes.
TEST_F(Cupti, CallbackApiCallsTheSubscriberAtEnterAndExit) {
  CallbackLog log;
  CUpti_SubscriberHandle sub = nullptr;
  ASSERT_EQ(cuptiSubscribe(&sub, on_callback, &log), CUPTI_SUCCESS);
  CUpti_SubscriberHandle other = nullptr;
  EXPECT_EQ(cuptiSubscribe(&other, on_callback, &log), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  ASSERT_EQ(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020),
            CUPTI_SUCCESS);
  uint32_t on = 0;
  ASSERT_EQ(cuptiGetCallbackState(&on, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
                                  CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020),
            CUPTI_SUCCESS);
  EXPECT_EQ(on, 1u);
  void* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, 256), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(dev, 0, 256, nullptr), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(dev, 1, 256, nullptr), cudaSuccess);
  ASSERT_EQ(log.calls.size(), 4u);
  EXPECT_EQ(log.calls[0].first, CUPTI_API_ENTER);
  EXPECT_EQ(log.calls[1].first, CUPTI_API_EXIT);
  EXPECT_EQ(log.calls[0].second, log.calls[1].second);
  EXPECT_NE(log.calls[0].second, log.calls[2].second);
  EXPECT_EQ(log.names[0], "cudaMemsetAsync");
  const char* name = nullptr;
  ASSERT_EQ(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, &name),
            CUPTI_SUCCESS);
  EXPECT_STREQ(name, "cudaMemsetAsync_v3020");
  ASSERT_EQ(cuptiUnsubscribe(sub), CUPTI_SUCCESS);
  ASSERT_EQ(cudaMemsetAsync(dev, 0, 256, nullptr), cudaSuccess);
  EXPECT_EQ(log.calls.size(), 4u);
  EXPECT_EQ(cuptiUnsubscribe(sub), CUPTI_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaFree(dev), cudaSuccess);
}

uint64_t CUPTIAPI triple_ns_clock() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return 3 * (static_cast<uint64_t>(ts.tv_sec) * 1000000000 + static_cast<uint64_t>(ts.tv_nsec));
}

// System: a timestamp callback that counts 3 ticks per ns (Kineto registers one that reads the TSC); two kernels.
// Expectation: records are in the callback's ticks: each kernel's duration is 3x its virtual duration (to the
// rate's measurement, 0.1%), the gap between the two kernels too, and the first starts near the callback's reading
// at its launch (within the test's own wall time).
TEST_F(Cupti, WithATimestampCallbackRecordsAreInItsTicks) {
  enable_all();
  const uint64_t t0 = triple_ns_clock();
  ASSERT_EQ(cuptiActivityRegisterTimestampCallback(triple_ns_clock), CUPTI_SUCCESS);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  ASSERT_EQ(launch(s, dim3(1024), dim3(256)), cudaSuccess);
  ASSERT_EQ(launch(s, dim3(1), dim3(32)), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  const uint64_t t1 = triple_ns_clock();
  ASSERT_EQ(cuptiActivityRegisterTimestampCallback(nullptr), CUPTI_SUCCESS);
  auto kernels = of_kind<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(kernels.size(), 2u);
  genie::fakecuda::KernelShape a, b;
  a.grid[0] = 1024;
  a.block[0] = 256;
  b.block[0] = 32;
  auto& cm = Runtime::instance()->cost_model();
  const double da = static_cast<double>(cm.kernel("cupti_test_kernel", a).count_ns());
  const double db = static_cast<double>(cm.kernel("cupti_test_kernel", b).count_ns());
  EXPECT_NEAR(static_cast<double>(kernels[0].end - kernels[0].start), 3 * da, 3e-3 * da + 2);
  EXPECT_NEAR(static_cast<double>(kernels[1].end - kernels[1].start), 3 * db, 3e-3 * db + 2);
  EXPECT_LE(kernels[0].end, kernels[1].start + 2);
  EXPECT_GE(kernels[0].start, t0);
  EXPECT_LE(kernels[0].start, t1);
  EXPECT_EQ(cudaStreamDestroy(s), cudaSuccess);
}

// Bad input is a CUPTI error code (and a warning), never a crash; exports that are not emulated say so.
TEST_F(Cupti, BadArgumentsAreErrorCodes) {
  EXPECT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_PC_SAMPLING), CUPTI_ERROR_NOT_COMPATIBLE);
  EXPECT_EQ(cuptiActivityEnable(static_cast<CUpti_ActivityKind>(12345)), CUPTI_ERROR_NOT_COMPATIBLE);
  EXPECT_EQ(cuptiGetLastError(), CUPTI_ERROR_NOT_COMPATIBLE);
  EXPECT_EQ(cuptiGetLastError(), CUPTI_SUCCESS);
  EXPECT_EQ(cuptiActivityRegisterCallbacks(nullptr, buffer_completed), CUPTI_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(cuptiGetTimestamp(nullptr), CUPTI_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(cuptiGetVersion(nullptr), CUPTI_ERROR_INVALID_PARAMETER);
  uint64_t id = 0;
  EXPECT_EQ(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &id),
            CUPTI_ERROR_QUEUE_EMPTY);
  EXPECT_EQ(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_INVALID, 1),
            CUPTI_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(cuptiActivityPushExternalCorrelationId(static_cast<CUpti_ExternalCorrelationKind>(99), 1),
            CUPTI_ERROR_INVALID_PARAMETER);
  CUpti_Activity* rec = nullptr;
  EXPECT_EQ(cuptiActivityGetNextRecord(nullptr, 16, &rec), CUPTI_ERROR_INVALID_PARAMETER);
  uint8_t garbage[64];
  std::memset(garbage, 0xff, sizeof(garbage));
  EXPECT_EQ(cuptiActivityGetNextRecord(garbage, sizeof(garbage), &rec), CUPTI_ERROR_INVALID_KIND);
  EXPECT_EQ(cuptiActivityGetNextRecord(garbage, 0, &rec), CUPTI_ERROR_MAX_LIMIT_REACHED);
  size_t n = 1;
  uint64_t v = 0;
  EXPECT_EQ(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &n, &v),
            CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT);
  EXPECT_EQ(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, nullptr, &v),
            CUPTI_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(cuptiActivityEnableRuntimeApi(0, 1), CUPTI_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_SIZE, 1), CUPTI_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(cuptiEnableCallback(1, nullptr, CUPTI_CB_DOMAIN_RUNTIME_API, 1), CUPTI_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(cuptiSubscribe(nullptr, on_callback, nullptr), CUPTI_ERROR_INVALID_PARAMETER);
  const char* name = nullptr;
  EXPECT_EQ(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, 99999, &name), CUPTI_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(cuptiGetResultString(CUPTI_ERROR_NOT_SUPPORTED, &name), CUPTI_SUCCESS);
  EXPECT_STREQ(name, "CUPTI_ERROR_NOT_SUPPORTED");
  CUpti_EventGroup group = nullptr;
  EXPECT_EQ(cuptiEventGroupCreate(nullptr, &group, 0), CUPTI_ERROR_NOT_SUPPORTED);  // not emulated
  uint32_t version = 0;
  EXPECT_EQ(cuptiGetVersion(&version), CUPTI_SUCCESS);
  EXPECT_EQ(version, static_cast<uint32_t>(CUPTI_API_VERSION));
}

}  // namespace
