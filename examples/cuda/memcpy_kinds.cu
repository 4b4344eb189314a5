// SPDX-License-Identifier: Apache-2.0
// Example: every memcpy and memset flavour moves the right bytes (sync, async, pinned, pageable, peer,
// 2D, symbol, per-thread default stream).
#include <cstring>
#include <vector>

#include "check.cuh"

__device__ int g_symbol[256];

static bool same(const void* a, const void* b, size_t n) { return std::memcmp(a, b, n) == 0; }

int main() {
  const size_t n = 1 << 20;
  std::vector<unsigned char> src(n), dst(n);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<unsigned char>(i * 31 + 7);
  unsigned char *d0, *d1, *pinned;
  CHECK_CUDA(cudaMalloc(&d0, n));
  CHECK_CUDA(cudaMalloc(&d1, n));
  CHECK_CUDA(cudaHostAlloc((void**)&pinned, n, cudaHostAllocDefault));

  CHECK_CUDA(cudaMemcpy(d0, src.data(), n, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d1, d0, n, cudaMemcpyDeviceToDevice));
  CHECK_CUDA(cudaMemcpy(dst.data(), d1, n, cudaMemcpyDeviceToHost));
  EXPECT_EQ_INT("H2D/D2D/D2H sync round trip", 1, same(src.data(), dst.data(), n));

  std::fill(dst.begin(), dst.end(), 0);
  CHECK_CUDA(cudaMemcpy(pinned, src.data(), n, cudaMemcpyHostToHost));
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));
  CHECK_CUDA(cudaMemsetAsync(d0, 0, n, s));
  CHECK_CUDA(cudaMemcpyAsync(d0, pinned, n, cudaMemcpyDefault, s));
  CHECK_CUDA(cudaMemcpyAsync(dst.data(), d0, n, cudaMemcpyDefault, s));
  CHECK_CUDA(cudaStreamSynchronize(s));
  EXPECT_EQ_INT("async pinned/default round trip", 1, same(src.data(), dst.data(), n));

  CHECK_CUDA(cudaMemset(d0, 0xab, 1000));
  CHECK_CUDA(cudaMemcpy(dst.data(), d0, 1001, cudaMemcpyDeviceToHost));
  EXPECT_EQ_INT("memset bytes", 0xab, dst[999]);
  EXPECT_EQ_INT("memset stops at count", src[1000], dst[1000]);

  // 2D: copy a 64x16 tile out of a 256-byte pitched image.
  CHECK_CUDA(cudaMemcpy2D(d1, 64, src.data(), 256, 64, 16, cudaMemcpyHostToDevice));
  std::vector<unsigned char> tile(64 * 16);
  CHECK_CUDA(cudaMemcpy(tile.data(), d1, tile.size(), cudaMemcpyDeviceToHost));
  EXPECT_EQ_INT("2D row 5 byte 3", src[5 * 256 + 3], tile[5 * 64 + 3]);

  // Symbols.
  int values[256];
  for (int i = 0; i < 256; ++i) values[i] = i * i;
  CHECK_CUDA(cudaMemcpyToSymbol(g_symbol, values, sizeof(values)));
  int back[4] = {0};
  CHECK_CUDA(cudaMemcpyFromSymbol(back, g_symbol, sizeof(back), 10 * sizeof(int)));
  EXPECT_EQ_INT("symbol copy", 100, back[0]);

  // Peer copy between devices 0 and 1.
  int devices = 0;
  CHECK_CUDA(cudaGetDeviceCount(&devices));
  if (devices >= 2) {
    unsigned char* p1;
    CHECK_CUDA(cudaSetDevice(1));
    CHECK_CUDA(cudaMalloc(&p1, n));
    CHECK_CUDA(cudaMemcpyPeer(p1, 1, d1, 0, 64 * 16));
    std::vector<unsigned char> peer(64 * 16);
    CHECK_CUDA(cudaMemcpy(peer.data(), p1, peer.size(), cudaMemcpyDeviceToHost));
    EXPECT_EQ_INT("peer copy", 1, same(peer.data(), tile.data(), peer.size()));
    CHECK_CUDA(cudaSetDevice(0));
  } else {
    SKIP_ON_REAL_GPU("peer copy", "one device");
  }

  // Per-thread default stream.
  CHECK_CUDA(cudaMemcpyAsync(d0, src.data(), n, cudaMemcpyHostToDevice, cudaStreamPerThread));
  CHECK_CUDA(cudaStreamSynchronize(cudaStreamPerThread));
  CHECK_CUDA(cudaMemcpy(dst.data(), d0, n, cudaMemcpyDeviceToHost));
  EXPECT_EQ_INT("per-thread stream copy", 1, same(src.data(), dst.data(), n));

  // Bad input: overrun, freed memory, invalid direction.
  // Genie checks every copy against its allocations; a real GPU leaves the first two undefined (the copy may land in
  // a neighbouring allocation or fault).
  const bool genie = on_genie();
  if (genie) {
    EXPECT_ERR("copy past allocation", cudaErrorInvalidValue, cudaMemcpy(d0 + n - 8, src.data(), 16, cudaMemcpyHostToDevice));
    cudaGetLastError();
  } else {
    SKIP_ON_REAL_GPU("copy past allocation", "undefined behaviour on a real GPU");
  }
  CHECK_CUDA(cudaFree(d1));
  if (genie)
    EXPECT_ERR("copy from freed memory", cudaErrorInvalidValue, cudaMemcpy(dst.data(), d1, 16, cudaMemcpyDeviceToHost));
  else
    SKIP_ON_REAL_GPU("copy from freed memory", "undefined behaviour on a real GPU");
  EXPECT_ERR("invalid direction", cudaErrorInvalidMemcpyDirection, cudaMemcpy(d0, src.data(), 16, (cudaMemcpyKind)9));
  EXPECT_ERR("double free", cudaErrorInvalidValue, cudaFree(d1));
  cudaGetLastError();
  CHECK_CUDA(cudaFreeHost(pinned));
  CHECK_CUDA(cudaFree(d0));
  CHECK_CUDA(cudaStreamDestroy(s));
  return finish("memcpy_kinds");
}
