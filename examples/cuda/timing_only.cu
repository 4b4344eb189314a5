// SPDX-License-Identifier: Apache-2.0
// Example: a GPU filled with buffers that are cleared and copied across, as a large model's rank does. On Genie with
// GENIE_DATA=none (genie run --data none, docs/timing-only.md) the copies and memsets keep their modelled times but
// move no bytes, so tens of GB of device memory cost the host nothing; capacity is enforced as on the real device.
//
// timing_only <chunks> <chunk MiB> [max peak RSS MiB, 0: unchecked]
// Prints the event-timed duration of one op of each kind on a chunk ("op <name>: <ms> ms": equal with and without
// GENIE_DATA=none, whatever the number of chunks), the total of clearing and copying every chunk, and the process's
// peak resident set (VmHWM).
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "check.cuh"

namespace {

// Peak resident set of this process in MiB (VmHWM in /proc/self/status), -1 if unreadable.
double peak_rss_mib() {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <chunks> <chunk MiB> [max peak RSS MiB]\n", argv[0]);
    return 2;
  }
  const int chunks = std::atoi(argv[1]);
  const size_t chunk = size_t(std::atoll(argv[2])) << 20;
  const double max_rss_mib = argc > 3 ? std::atof(argv[3]) : 0;
  const char* data = std::getenv("GENIE_DATA");
  const bool timing_only = data != nullptr && std::strcmp(data, "none") == 0;
  if (chunks < 2 || chunk == 0) return 2;
  std::printf("timing_only: %d chunks of %zu MiB (%.1f GiB), GENIE_DATA=%s\n", chunks, chunk >> 20,
              double(chunks) * double(chunk) / double(1u << 30), data ? data : "(unset)");

  size_t free0 = 0, total = 0;
  CHECK_CUDA(cudaMemGetInfo(&free0, &total));
  std::vector<char*> d(chunks);
  for (int i = 0; i < chunks; ++i) CHECK_CUDA(cudaMalloc(&d[i], chunk));
  size_t free1 = 0;
  CHECK_CUDA(cudaMemGetInfo(&free1, &total));
  const double MiB = 1 << 20;  // a real GPU maps memory in 2 MiB pages
  EXPECT_NEAR_DBL("cudaMemGetInfo: used by the chunks (MiB)", double(chunks) * double(chunk) / MiB,
                  double(free0 - free1) / MiB, 2.0 * chunks);

  // Pageable host memory of one chunk: the program's own, never touched by it except its first bytes.
  auto* host = static_cast<unsigned char*>(std::malloc(chunk));
  host[0] = 0x11;
  char* peer = nullptr;
  int devices = 0;
  CHECK_CUDA(cudaGetDeviceCount(&devices));
  if (devices > 1) {
    CHECK_CUDA(cudaSetDevice(1));
    CHECK_CUDA(cudaMalloc(&peer, chunk));
    CHECK_CUDA(cudaSetDevice(0));
  }
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));

  // One op of each kind on one chunk, event-timed: the modelled durations.
  std::printf("op memset: %.6f ms\n", event_timed_ms(s, [&] { CHECK_CUDA(cudaMemsetAsync(d[0], 0x5a, chunk, s)); }));
  std::printf("op d2d: %.6f ms\n", event_timed_ms(s, [&] {
                CHECK_CUDA(cudaMemcpyAsync(d[1], d[0], chunk, cudaMemcpyDeviceToDevice, s));
              }));
  std::printf("op d2h: %.6f ms\n", event_timed_ms(s, [&] {
                CHECK_CUDA(cudaMemcpyAsync(host, d[1], chunk, cudaMemcpyDeviceToHost, s));
              }));
  std::printf("op h2d: %.6f ms\n", event_timed_ms(s, [&] {
                CHECK_CUDA(cudaMemcpyAsync(d[0], host, chunk, cudaMemcpyHostToDevice, s));
              }));
  std::printf("op memcpy2d: %.6f ms\n", event_timed_ms(s, [&] {
                CHECK_CUDA(cudaMemcpy2DAsync(d[1], 1 << 20, d[0], 1 << 20, 1 << 19, chunk >> 20,
                                             cudaMemcpyDeviceToDevice, s));
              }));
  if (peer != nullptr)
    std::printf("op peer: %.6f ms\n",
                event_timed_ms(s, [&] { CHECK_CUDA(cudaMemcpyPeerAsync(peer, 1, d[0], 0, chunk, s)); }));
  // A captured graph of a memset and a copy, replayed.
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CHECK_CUDA(cudaMemsetAsync(d[1], 0x33, chunk, s));
  CHECK_CUDA(cudaMemcpyAsync(d[0], d[1], chunk, cudaMemcpyDeviceToDevice, s));
  CHECK_CUDA(cudaStreamEndCapture(s, &g));
  CHECK_CUDA(cudaGraphInstantiate(&ge, g, 0));
  std::printf("op graph: %.6f ms\n", event_timed_ms(s, [&] { CHECK_CUDA(cudaGraphLaunch(ge, s)); }));
  CHECK_CUDA(cudaGraphExecDestroy(ge));
  CHECK_CUDA(cudaGraphDestroy(g));
  if (timing_only)
    EXPECT_EQ_INT("GENIE_DATA=none: the D2H copy left the host buffer as it was", 0x11, host[0]);
  else
    EXPECT_EQ_INT("the D2H copy brought the memset's bytes", 0x5a, host[0]);

  // Control data still moves in a timing-only run: a count written and read back.
  int* count = nullptr;
  CHECK_CUDA(cudaMalloc(&count, sizeof(int)));
  const int sent = 12345;
  int got = 0;
  CHECK_CUDA(cudaMemcpy(count, &sent, sizeof(int), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(&got, count, sizeof(int), cudaMemcpyDeviceToHost));
  EXPECT_EQ_INT("a 4-byte round trip", sent, got);

  // Every chunk cleared and copied onto the next one (a nonzero value: nothing can give pages back).
  const float all_ms = event_timed_ms(s, [&] {
    for (int i = 0; i < chunks; ++i) {
      CHECK_CUDA(cudaMemsetAsync(d[i], 0x7f, chunk, s));
      CHECK_CUDA(cudaMemcpyAsync(d[(i + 1) % chunks], d[i], chunk, cudaMemcpyDeviceToDevice, s));
    }
  });
  std::printf("all chunks: memset + d2d: %.3f ms\n", all_ms);

  // Past the capacity: what is left, plus 64 MiB, does not fit.
  size_t free2 = 0;
  CHECK_CUDA(cudaMemGetInfo(&free2, &total));
  void* more = nullptr;
  EXPECT_ERR("allocation past the capacity", cudaErrorMemoryAllocation, cudaMalloc(&more, free2 + (64u << 20)));
  EXPECT_ERR("the OOM is the last error", cudaErrorMemoryAllocation, cudaGetLastError());
  EXPECT_ERR("stream-ordered allocation past the capacity", cudaErrorMemoryAllocation,
             cudaMallocAsync(&more, free2 + (64u << 20), s));
  cudaGetLastError();
  size_t free3 = 0;
  CHECK_CUDA(cudaMemGetInfo(&free3, &total));
  EXPECT_EQ_INT("failed allocations take nothing", free2, free3);

  const double rss = peak_rss_mib();
  std::printf("peak rss: %.1f MiB\n", rss);
  if (max_rss_mib > 0) {
    const bool ok = rss > 0 && rss <= max_rss_mib;
    std::printf("%s peak RSS (MiB): Expectation <= %.0f / Actual %.1f\n", ok ? "ok  " : "FAIL", max_rss_mib, rss);
    if (!ok) ++g_failures;
  }

  CHECK_CUDA(cudaStreamDestroy(s));
  for (char* p : d) CHECK_CUDA(cudaFree(p));
  if (peer != nullptr) CHECK_CUDA(cudaFree(peer));
  CHECK_CUDA(cudaFree(count));
  std::free(host);
  return finish("timing_only");
}
