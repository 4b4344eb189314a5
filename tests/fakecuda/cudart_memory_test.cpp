// SPDX-License-Identifier: Apache-2.0
// Memory accounting through the drop-in libraries (libcudart.so.13, libcuda.so.1, libnvidia-ml.so.1) in a timing-only
// process (GENIE_DATA=none) on two H100s: cudaMemGetInfo, cuMemGetInfo and NVML agree with what was allocated;
// cudaMalloc, cudaMallocAsync and cuMemCreate past the capacity fail as on the real device; the default memory
// pool's attributes follow cudaMallocAsync / cudaFreeAsync (PyTorch's cudaMallocAsync backend reports its memory
// statistics from them).
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "nvml/nvml.h"

#include "proc_memory.hpp"

namespace {

using genie::fakecuda::testing::resident_pages;

// Before any CUDA call of the process (the runtime reads its configuration at its first use).
const bool kEnv = [] {
  setenv("GENIE_DATA", "none", 1);
  setenv("GENIE_DEVICE", "h100-sxm", 1);
  setenv("GENIE_GPUS", "2", 1);
  return true;
}();

constexpr uint64_t kH100Bytes = 85520809984;  // fakecuda/presets/h100-sxm.json
constexpr size_t kMiB = size_t{1} << 20, kGiB = size_t{1} << 30;

uint64_t nvml_used(unsigned index) {
  nvmlDevice_t d;
  EXPECT_EQ(nvmlDeviceGetHandleByIndex_v2(index, &d), NVML_SUCCESS);
  nvmlMemory_t m{};
  EXPECT_EQ(nvmlDeviceGetMemoryInfo(d, &m), NVML_SUCCESS);
  EXPECT_EQ(m.total, kH100Bytes);
  EXPECT_EQ(m.used + m.free, m.total);
  return m.used;
}

// System: device 0 of two H100s; 60 GiB by cudaMalloc, 10 GiB by cuMemCreate (VMM), then 64 MiB more than is left.
// Expectations: cudaMemGetInfo, cuMemGetInfo and NVML all count exactly 70 GiB used (allocations are multiples of the
// 512-byte accounting step, the VMM granularity is 2 MiB); each API's allocation past the rest fails with its
// out-of-memory code and takes nothing; nothing allocated is resident (GENIE_DATA=none, nothing written);
// device 1 is untouched; after freeing everything, used is 0 again.
TEST(CudartMemory, CapacityIsExactAndEveryApiAgrees) {
  ASSERT_TRUE(kEnv);
  ASSERT_EQ(nvmlInit_v2(), NVML_SUCCESS);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  size_t free0 = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free0, &total), cudaSuccess);
  EXPECT_EQ(total, kH100Bytes);
  const uint64_t used0 = total - free0;
  EXPECT_EQ(nvml_used(0), used0);

  void* big = nullptr;
  ASSERT_EQ(cudaMalloc(&big, 60 * kGiB), cudaSuccess);
  ASSERT_EQ(cudaMemset(big, 0x5a, 60 * kGiB), cudaSuccess);
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CUmemGenericAllocationHandle vmm = 0;
  ASSERT_EQ(cuMemCreate(&vmm, 10 * kGiB, &prop, 0), CUDA_SUCCESS);

  size_t free1 = 0, cu_free = 0, cu_total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free1, &total), cudaSuccess);
  ASSERT_EQ(cuMemGetInfo(&cu_free, &cu_total), CUDA_SUCCESS);
  EXPECT_EQ(free0 - free1, 70 * kGiB);
  EXPECT_EQ(cu_free, free1);
  EXPECT_EQ(cu_total, total);
  EXPECT_EQ(nvml_used(0), used0 + 70 * kGiB);
  EXPECT_EQ(nvml_used(1), 0u);
  EXPECT_EQ(resident_pages(big, 60 * kGiB), 0u);

  void* more = nullptr;
  EXPECT_EQ(cudaMalloc(&more, free1 + 64 * kMiB), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  EXPECT_EQ(cudaMallocAsync(&more, free1 + 64 * kMiB, s), cudaErrorMemoryAllocation);
  cudaGetLastError();
  CUmemGenericAllocationHandle too_much = 0;
  const size_t rest_2m = (free1 / (2 * kMiB) + 1) * (2 * kMiB);
  EXPECT_EQ(cuMemCreate(&too_much, rest_2m, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
  size_t free2 = 0;
  ASSERT_EQ(cudaMemGetInfo(&free2, &total), cudaSuccess);
  EXPECT_EQ(free2, free1);

  ASSERT_EQ(cuMemRelease(vmm), CUDA_SUCCESS);
  ASSERT_EQ(cudaFree(big), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
  ASSERT_EQ(cudaMemGetInfo(&free2, &total), cudaSuccess);
  EXPECT_EQ(free2, free0);
  EXPECT_EQ(nvml_used(0), used0);
  nvmlShutdown();
}

// System: device 0's default pool; cudaMallocAsync of 3 MiB and 5 MiB, then the 3 MiB freed (cudaFreeAsync) and a
// high-water mark reset. Expectations: used and reserved current are what is allocated (8 MiB, then 5 MiB), the high
// marks 8 MiB until reset to 0, which makes them 5 MiB; a nonzero reset and a write of a current value are refused
// (cudaErrorInvalidValue); settable attributes read back; a pointer that is no pool is refused.
TEST(CudartMemory, DefaultPoolAttributesFollowStreamOrderedAllocations) {
  ASSERT_TRUE(kEnv);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  cudaMemPool_t pool = nullptr;
  ASSERT_EQ(cudaDeviceGetDefaultMemPool(&pool, 0), cudaSuccess);
  auto attr = [&](cudaMemPoolAttr a) {
    uint64_t v = 7;
    EXPECT_EQ(cudaMemPoolGetAttribute(pool, a, &v), cudaSuccess);
    return v;
  };
  const uint64_t base = attr(cudaMemPoolAttrUsedMemCurrent);
  EXPECT_EQ(base, 0u);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  void *a = nullptr, *b = nullptr, *plain = nullptr;
  ASSERT_EQ(cudaMallocAsync(&a, 3 * kMiB, s), cudaSuccess);
  ASSERT_EQ(cudaMallocAsync(&b, 5 * kMiB, s), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&plain, 7 * kMiB), cudaSuccess);  // not from the pool
  EXPECT_EQ(attr(cudaMemPoolAttrUsedMemCurrent), 8 * kMiB);
  EXPECT_EQ(attr(cudaMemPoolAttrReservedMemCurrent), 8 * kMiB);
  EXPECT_EQ(attr(cudaMemPoolAttrUsedMemHigh), 8 * kMiB);
  ASSERT_EQ(cudaFreeAsync(a, s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_EQ(attr(cudaMemPoolAttrUsedMemCurrent), 5 * kMiB);
  EXPECT_EQ(attr(cudaMemPoolAttrReservedMemHigh), 8 * kMiB);
  uint64_t zero = 0, seven = 7;
  EXPECT_EQ(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &seven), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &zero), cudaErrorInvalidValue);
  cudaGetLastError();
  ASSERT_EQ(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero), cudaSuccess);
  EXPECT_EQ(attr(cudaMemPoolAttrUsedMemHigh), 5 * kMiB);
  uint64_t threshold = 1ull << 40;
  ASSERT_EQ(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold), cudaSuccess);
  EXPECT_EQ(attr(cudaMemPoolAttrReleaseThreshold), threshold);
  ASSERT_EQ(cudaFree(b), cudaSuccess);  // pool memory freed synchronously leaves the pool too
  EXPECT_EQ(attr(cudaMemPoolAttrUsedMemCurrent), 0u);
  uint64_t v = 0;
  int not_a_pool = 0;
  EXPECT_EQ(cudaMemPoolGetAttribute(reinterpret_cast<cudaMemPool_t>(&not_a_pool), cudaMemPoolAttrUsedMemCurrent, &v),
            cudaErrorInvalidValue);
  cudaGetLastError();
  ASSERT_EQ(cudaFree(plain), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
}

}  // namespace
