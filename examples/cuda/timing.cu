// SPDX-License-Identifier: Apache-2.0
// Example: kernel timing from the cost model. With tests/e2e/data/spin_table.json, `spin` takes 20 ms.
// Usage: timing <tolerance_ms> [expected_wall_ms | realtime].
//   Virtual clock: elapsed is exact and nothing sleeps; expected_wall_ms checks the program's own wall clock when it
//   reads the virtual clock (GENIE_APP_CLOCK=virtual).
//   realtime (GENIE_CLOCK=realtime): the host really waits for the modelled work. The checks cannot depend on how
//   loaded the machine is: the order of events, and lower bounds (a realtime kernel never ends before its modelled
//   duration has passed on the wall clock), never an upper bound on wall time. bench/fakecuda/realtime_overshoot.sh
//   measures how much later than modelled the wall clock sees the work end.
#include <chrono>
#include <cstring>

#include "check.cuh"

__global__ void spin() {}

namespace {

constexpr double kKernelMs = 20.0;  // spin() in tests/e2e/data/spin_table.json
constexpr int kKernels = 4;         // one that keeps the stream busy, then three between the events
// Rounding of the event times (ns) to float milliseconds; both clocks are CLOCK_MONOTONIC at ns resolution.
constexpr double kClockEpsMs = 0.01;

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// A lower bound: prints one golden line like the other checks.
void expect_at_least(const char* what, double lower, double actual) {
  const bool ok = actual >= lower;
  std::printf("%s %s: Expectation >= %.6f / Actual %.6f\n", ok ? "ok  " : "FAIL", what, lower, actual);
  if (!ok) ++g_failures;
}

}  // namespace

int main(int argc, char** argv) {
  double tol = argc > 1 ? std::atof(argv[1]) : 0.0;
  const bool realtime = argc > 2 && std::strcmp(argv[2], "realtime") == 0;
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t t0, t1;
  CHECK_CUDA(cudaEventCreate(&t0));
  CHECK_CUDA(cudaEventCreate(&t1));
  auto wall0 = std::chrono::steady_clock::now();
  spin<<<1, 1, 0, s>>>();  // keeps the stream busy so the timed kernels start back to back
  CHECK_CUDA(cudaEventRecord(t0, s));
  for (int i = 0; i < kKernels - 1; ++i) spin<<<1, 1, 0, s>>>();
  CHECK_CUDA(cudaEventRecord(t1, s));
  const double enqueued_ms = ms_since(wall0);
  CHECK_CUDA(cudaGetLastError());
  const cudaError_t query = cudaEventQuery(t1);
  const double query_ms = ms_since(wall0);
  if (!realtime) {
    EXPECT_ERR("query before completion", cudaErrorNotReady, query);  // Genie only: the table's 20 ms
  } else {
    // Order of events: t1 follows four kernels of 20 ms, so it cannot be complete before 80 ms of wall time have
    // passed since the first launch. A host stalled that long may find it complete; earlier, never.
    const bool ok =
        query == cudaErrorNotReady || (query == cudaSuccess && query_ms >= kKernels * kKernelMs - kClockEpsMs);
    std::printf(
        "%s query before completion: Expectation not ready, or complete at >= %.1f ms / Actual %s at "
        "%.3f ms\n",
        ok ? "ok  " : "FAIL", kKernels * kKernelMs, cudaGetErrorName(query), query_ms);
    if (!ok) ++g_failures;
  }
  CHECK_CUDA(cudaEventSynchronize(t1));
  double wall_ms = ms_since(wall0);
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, t0, t1));
  std::printf("wall_ms %.3f enqueued_ms %.3f\n", wall_ms, enqueued_ms);
  const double elapsed_ms = (kKernels - 1) * kKernelMs;  // 60 ms between the events
  if (!realtime) {
    EXPECT_NEAR_DBL("3 kernels of 20 ms (event elapsed)", elapsed_ms, ms, tol);
  } else {
    // Lower bounds: three kernels lie between the events, four before the host sees t1 complete.
    expect_at_least("3 kernels of 20 ms (event elapsed), never less", elapsed_ms - kClockEpsMs, ms);
    expect_at_least("wall time of 4 kernels of 20 ms, never less", kKernels * kKernelMs - kClockEpsMs, wall_ms);
    // The events carry planned times, not wake-ups: when the host enqueued everything while the first kernel still
    // ran, the three kernels were planned back to back and the elapsed time is exactly theirs, however late the
    // stream's worker woke. A host stalled longer than that leaves only the lower bound (the gap is real).
    if (enqueued_ms + 1.0 < kKernelMs)
      EXPECT_NEAR_DBL("3 kernels of 20 ms back to back (event elapsed)", elapsed_ms, ms, tol);
    else
      std::printf("skip back to back: the host took %.3f ms to enqueue, longer than the first kernel\n", enqueued_ms);
  }
  if (argc > 2 && !realtime) EXPECT_NEAR_DBL("wall time of 4 kernels", std::atof(argv[2]), wall_ms, tol * 4);
  CHECK_CUDA(cudaEventQuery(t1));
  return finish("timing");
}
