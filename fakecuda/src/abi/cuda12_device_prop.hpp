// SPDX-License-Identifier: Apache-2.0
// CudaDevicePropV12: the CUDA 12.x `struct cudaDeviceProp` layout that libcudart.so.12 clients pass to
// cudaGetDeviceProperties_v2. The CUDA 13 toolkit on the build machine only has the 13.x layout.
//
// Where the layout comes from (the CUDA 12 headers are not installed here):
//  - NVIDIA CUDA 12.1 `include/driver_types.h` (CUDART_VERSION 12010), as vendored verbatim in
//    github.com/argonne-lcf/THAPI, commit 37639035fb2abb943129cdab97da9436731d2fef, cuda/include/driver_types.h,
//    lines 2194-2291. The struct ends `int unifiedFunctionPointers; int reserved2[2]; int reserved[61];`.
//  - NVIDIA cuda-python, cuda_bindings_12/cuda/bindings/cyruntime_types.pxi.in ("automatically generated with
//    version 12.9.0"): the same field list, ending `int unifiedFunctionPointers; int reserved[63]`.
//  Both give 63 trailing ints, so the size never changed within 12.x (the struct became versioned with the
//  `_v2` entry points in 12.0). CUDA 13.0 then removed clockRate, deviceOverlap, kernelExecTimeoutEnabled,
//  computeMode, maxTexture1DLinear, memoryClockRate, singleToDoublePrecisionPerfRatio and
//  cooperativeMultiDeviceLaunch, and named seven of the reserved ints (deviceNumaConfig ... hostNumaMultinodeIpc).
//
// Verification: the offsets below were derived by compiling the genuine 12.1 header above with g++ 12 on x86-64
// (LP64) and printing sizeof/offsetof of every one of its 93 named fields next to this struct's: all matched,
// sizeof 1032 (reserved2 at 780, reserved at 788 in 12.1 = our reserved[0..1] and reserved[2..]). The static_asserts pin
// the result so a typo here cannot silently shift the ABI.
#pragma once

#include <cstddef>

namespace genie::fakecuda::abi {

/// Byte-for-byte the CUDA 12.x `struct cudaDeviceProp` (x86-64 / aarch64 LP64). Field names as NVIDIA spells them.
struct CudaDevicePropV12 {
  char name[256];
  char uuid[16];  // cudaUUID_t
  char luid[8];
  unsigned int luidDeviceNodeMask;
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int clockRate;  // removed in 13.0
  size_t totalConstMem;
  int major;
  int minor;
  size_t textureAlignment;
  size_t texturePitchAlignment;
  int deviceOverlap;  // removed in 13.0
  int multiProcessorCount;
  int kernelExecTimeoutEnabled;  // removed in 13.0
  int integrated;
  int canMapHostMemory;
  int computeMode;  // removed in 13.0
  int maxTexture1D;
  int maxTexture1DMipmap;
  int maxTexture1DLinear;  // removed in 13.0
  int maxTexture2D[2];
  int maxTexture2DMipmap[2];
  int maxTexture2DLinear[3];
  int maxTexture2DGather[2];
  int maxTexture3D[3];
  int maxTexture3DAlt[3];
  int maxTextureCubemap;
  int maxTexture1DLayered[2];
  int maxTexture2DLayered[3];
  int maxTextureCubemapLayered[2];
  int maxSurface1D;
  int maxSurface2D[2];
  int maxSurface3D[3];
  int maxSurface1DLayered[2];
  int maxSurface2DLayered[3];
  int maxSurfaceCubemap;
  int maxSurfaceCubemapLayered[2];
  size_t surfaceAlignment;
  int concurrentKernels;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
  int tccDriver;
  int asyncEngineCount;
  int unifiedAddressing;
  int memoryClockRate;  // removed in 13.0
  int memoryBusWidth;
  int l2CacheSize;
  int persistingL2CacheMaxSize;
  int maxThreadsPerMultiProcessor;
  int streamPrioritiesSupported;
  int globalL1CacheSupported;
  int localL1CacheSupported;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int managedMemory;
  int isMultiGpuBoard;
  int multiGpuBoardGroupID;
  int hostNativeAtomicSupported;
  int singleToDoublePrecisionPerfRatio;  // removed in 13.0
  int pageableMemoryAccess;
  int concurrentManagedAccess;
  int computePreemptionSupported;
  int canUseHostPointerForRegisteredMem;
  int cooperativeLaunch;
  int cooperativeMultiDeviceLaunch;  // removed in 13.0
  size_t sharedMemPerBlockOptin;
  int pageableMemoryAccessUsesHostPageTables;
  int directManagedMemAccessFromHost;
  int maxBlocksPerMultiProcessor;
  int accessPolicyMaxWindowSize;
  size_t reservedSharedMemPerBlock;
  int hostRegisterSupported;
  int sparseCudaArraySupported;
  int hostRegisterReadOnlySupported;
  int timelineSemaphoreInteropSupported;
  int memoryPoolsSupported;
  int gpuDirectRDMASupported;
  unsigned int gpuDirectRDMAFlushWritesOptions;
  int gpuDirectRDMAWritesOrdering;
  unsigned int memoryPoolSupportedHandleTypes;
  int deferredMappingCudaArraySupported;
  int ipcEventSupported;
  int clusterLaunch;
  int unifiedFunctionPointers;
  int reserved[63];  // 12.1: reserved2[2] + reserved[61]; 12.9: reserved[63]. Same bytes.
};

// Derived from the genuine CUDA 12.1 driver_types.h (see the header comment); LP64.
inline constexpr size_t kCudaDevicePropV12Size = 1032;
static_assert(sizeof(void*) == 8, "the 12.x cudaDeviceProp offsets below are for LP64 targets");
static_assert(sizeof(CudaDevicePropV12) == kCudaDevicePropV12Size);
static_assert(offsetof(CudaDevicePropV12, uuid) == 256);
static_assert(offsetof(CudaDevicePropV12, totalGlobalMem) == 288);
static_assert(offsetof(CudaDevicePropV12, regsPerBlock) == 304);
static_assert(offsetof(CudaDevicePropV12, maxThreadsPerBlock) == 320);
static_assert(offsetof(CudaDevicePropV12, clockRate) == 348);
static_assert(offsetof(CudaDevicePropV12, totalConstMem) == 352);
static_assert(offsetof(CudaDevicePropV12, major) == 360);
static_assert(offsetof(CudaDevicePropV12, deviceOverlap) == 384);
static_assert(offsetof(CudaDevicePropV12, multiProcessorCount) == 388);
static_assert(offsetof(CudaDevicePropV12, computeMode) == 404);
static_assert(offsetof(CudaDevicePropV12, maxTexture1DLinear) == 416);
static_assert(offsetof(CudaDevicePropV12, surfaceAlignment) == 568);
static_assert(offsetof(CudaDevicePropV12, pciBusID) == 584);
static_assert(offsetof(CudaDevicePropV12, memoryClockRate) == 608);
static_assert(offsetof(CudaDevicePropV12, l2CacheSize) == 616);
static_assert(offsetof(CudaDevicePropV12, sharedMemPerMultiprocessor) == 640);
static_assert(offsetof(CudaDevicePropV12, singleToDoublePrecisionPerfRatio) == 668);
static_assert(offsetof(CudaDevicePropV12, cooperativeMultiDeviceLaunch) == 692);
static_assert(offsetof(CudaDevicePropV12, sharedMemPerBlockOptin) == 696);
static_assert(offsetof(CudaDevicePropV12, reservedSharedMemPerBlock) == 720);
static_assert(offsetof(CudaDevicePropV12, clusterLaunch) == 772);
static_assert(offsetof(CudaDevicePropV12, unifiedFunctionPointers) == 776);
static_assert(offsetof(CudaDevicePropV12, reserved) == 780);

}  // namespace genie::fakecuda::abi
