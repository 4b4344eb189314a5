// SPDX-License-Identifier: Apache-2.0
// Soak: `calls` kernel launches (<<<>>>, i.e. cudaLaunchKernel, timed by the cost model) on one stream, with the
// resident set sampled at every tenth of the run. Fails if it grows by more than `bound_mib` from the 10% sample to
// the last, or if the launches did not advance the stream's (virtual) time at every tenth.
// Usage: soak_launches calls bound_mib [sync_every=1000]
#include <cstdlib>
#include <string>

#include "check.cuh"
#include "rss_sampler.cuh"

__global__ void scale(float* x, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s calls bound_mib [sync_every=1000]\n", argv[0]);
    return 2;
  }
  const long long calls = std::atoll(argv[1]);
  const double bound_mib = std::atof(argv[2]);
  const long long sync_every = argc > 3 ? std::atoll(argv[3]) : 1000;
  if (calls < 10 || bound_mib <= 0 || sync_every < 0) {
    std::fprintf(stderr, "calls >= 10, bound_mib > 0, sync_every >= 0\n");
    return 2;
  }
  const int n = 1 << 18;
  float* x = nullptr;
  CHECK_CUDA(cudaMalloc(&x, n * sizeof(float)));
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t start, mark;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&mark));
  CHECK_CUDA(cudaEventRecord(start, s));
  RssSamples rss;
  rss.name = "launches";
  rss.total = calls;
  int advanced = 0;
  float last_ms = 0;
  for (long long i = 1; i <= calls; ++i) {
    scale<<<n / 256, 256, 0, s>>>(x, 1.0f, n);
    const bool sample = rss.due(i);
    if (sample) CHECK_CUDA(cudaEventRecord(mark, s));
    if (sample || (sync_every > 0 && i % sync_every == 0)) CHECK_CUDA(cudaStreamSynchronize(s));
    if (!sample) continue;
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, mark));
    advanced += ms > last_ms;
    last_ms = ms;
    rss.take(i);
  }
  CHECK_CUDA(cudaGetLastError());
  std::printf("soak launches calls %lld stream_time_ms %.3f modelled_us_per_kernel %.3f rss_growth_mib %.1f (bound %.1f)\n",
              calls, last_ms, last_ms * 1e3 / double(calls), rss.growth(), bound_mib);
  EXPECT_EQ_INT("RSS samples taken", 10, rss.mib.size());
  EXPECT_EQ_INT("tenths of the run that advanced the stream's time", 10, advanced);
  EXPECT_EQ_INT(("RSS growth from the 10% sample to the last within " + std::to_string(int(bound_mib)) + " MiB").c_str(),
                1, rss.growth() <= bound_mib);
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(mark));
  CHECK_CUDA(cudaStreamDestroy(s));
  CHECK_CUDA(cudaFree(x));
  return finish("soak_launches");
}
