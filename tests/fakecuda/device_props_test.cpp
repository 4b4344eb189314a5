// SPDX-License-Identifier: Apache-2.0
// Tests of cudaDeviceProp (CUDA 13 and 12.x layouts), cudaDeviceGetAttribute and PCI ids answered from presets.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "abi/cuda12_device_prop.hpp"
#include "genie/fakecuda/device_spec.hpp"

namespace genie::fakecuda {
namespace {

using abi::CudaDevicePropV12;

// The CUDA 12.x layout, pinned independently of the header's own asserts (values derived from NVIDIA's 12.1
// driver_types.h; see fakecuda/src/abi/cuda12_device_prop.hpp).
static_assert(sizeof(CudaDevicePropV12) == 1032);
static_assert(offsetof(CudaDevicePropV12, totalGlobalMem) == 288);
static_assert(offsetof(CudaDevicePropV12, clockRate) == 348);
static_assert(offsetof(CudaDevicePropV12, multiProcessorCount) == 388);
static_assert(offsetof(CudaDevicePropV12, memoryClockRate) == 608);
static_assert(offsetof(CudaDevicePropV12, unifiedFunctionPointers) == 776);
// The 13.x layout comes from the toolkit; these pin what the 12.x/13.x difference was derived against.
static_assert(sizeof(cudaDeviceProp) == 1008);
static_assert(offsetof(cudaDeviceProp, totalGlobalMem) == offsetof(CudaDevicePropV12, totalGlobalMem));
static_assert(offsetof(cudaDeviceProp, maxGridSize) == offsetof(CudaDevicePropV12, maxGridSize));
static_assert(offsetof(cudaDeviceProp, totalConstMem) == offsetof(CudaDevicePropV12, clockRate) + 4);

constexpr int kOrdinals = 8;  // GENIE_GPUS default

DeviceSpec load(const std::string& name) {
  auto r = load_device_spec(name);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.value();
}

int attr(const DeviceSpec& s, int ordinal, cudaDeviceAttr a) {
  auto r = device_attribute(s, ordinal, a);
  EXPECT_TRUE(r.is_ok()) << "attribute " << a << ": " << r.status().to_string();
  return r.is_ok() ? r.value() : -12345;
}

TEST(DeviceProps, V12SizeIsTheCuda12Struct) { EXPECT_EQ(device_prop_v12_size(), 1032u); }

TEST(DeviceProps, H200PropertiesMatchTheMeasuredDevice) {
  const DeviceSpec s = load("h200");
  cudaDeviceProp p;
  fill_device_prop(s, 0, &p);
  EXPECT_STREQ(p.name, "NVIDIA H200");
  EXPECT_EQ(p.totalGlobalMem, 150109880320u);
  EXPECT_EQ(p.major, 9);
  EXPECT_EQ(p.minor, 0);
  EXPECT_EQ(p.multiProcessorCount, 132);
  EXPECT_EQ(attr(s, 0, cudaDevAttrClockRate), 1980000);
  EXPECT_EQ(attr(s, 0, cudaDevAttrMemoryClockRate), 3201000);
  EXPECT_EQ(p.gpuPciDeviceID, (0x2335u << 16) | 0x10deu);
}

/// Every quantity that both cudaDeviceProp and cudaDeviceGetAttribute report must agree.
TEST(DeviceProps, PropertiesAgreeWithAttributesForEveryPresetAndOrdinal) {
  for (const std::string& name : device_preset_names()) {
    const DeviceSpec s = load(name);
    for (int ord = 0; ord < kOrdinals; ++ord) {
      SCOPED_TRACE(name + " ordinal " + std::to_string(ord));
      cudaDeviceProp p;
      fill_device_prop(s, ord, &p);
      const std::vector<std::pair<cudaDeviceAttr, long long>> pairs = {
          {cudaDevAttrMaxThreadsPerBlock, p.maxThreadsPerBlock},
          {cudaDevAttrMaxBlockDimX, p.maxThreadsDim[0]},
          {cudaDevAttrMaxBlockDimY, p.maxThreadsDim[1]},
          {cudaDevAttrMaxBlockDimZ, p.maxThreadsDim[2]},
          {cudaDevAttrMaxGridDimX, p.maxGridSize[0]},
          {cudaDevAttrMaxGridDimY, p.maxGridSize[1]},
          {cudaDevAttrMaxGridDimZ, p.maxGridSize[2]},
          {cudaDevAttrMaxSharedMemoryPerBlock, static_cast<long long>(p.sharedMemPerBlock)},
          {cudaDevAttrTotalConstantMemory, static_cast<long long>(p.totalConstMem)},
          {cudaDevAttrWarpSize, p.warpSize},
          {cudaDevAttrMaxPitch, static_cast<long long>(p.memPitch)},
          {cudaDevAttrMaxRegistersPerBlock, p.regsPerBlock},
          {cudaDevAttrTextureAlignment, static_cast<long long>(p.textureAlignment)},
          {cudaDevAttrMultiProcessorCount, p.multiProcessorCount},
          {cudaDevAttrIntegrated, p.integrated},
          {cudaDevAttrCanMapHostMemory, p.canMapHostMemory},
          {cudaDevAttrMaxTexture1DWidth, p.maxTexture1D},
          {cudaDevAttrMaxTexture2DWidth, p.maxTexture2D[0]},
          {cudaDevAttrMaxTexture2DHeight, p.maxTexture2D[1]},
          {cudaDevAttrMaxTexture3DWidth, p.maxTexture3D[0]},
          {cudaDevAttrMaxTexture3DHeight, p.maxTexture3D[1]},
          {cudaDevAttrMaxTexture3DDepth, p.maxTexture3D[2]},
          {cudaDevAttrMaxTexture2DLayeredWidth, p.maxTexture2DLayered[0]},
          {cudaDevAttrMaxTexture2DLayeredHeight, p.maxTexture2DLayered[1]},
          {cudaDevAttrMaxTexture2DLayeredLayers, p.maxTexture2DLayered[2]},
          {cudaDevAttrSurfaceAlignment, static_cast<long long>(p.surfaceAlignment)},
          {cudaDevAttrConcurrentKernels, p.concurrentKernels},
          {cudaDevAttrEccEnabled, p.ECCEnabled},
          {cudaDevAttrPciBusId, p.pciBusID},
          {cudaDevAttrPciDeviceId, p.pciDeviceID},
          {cudaDevAttrTccDriver, p.tccDriver},
          {cudaDevAttrGlobalMemoryBusWidth, p.memoryBusWidth},
          {cudaDevAttrL2CacheSize, p.l2CacheSize},
          {cudaDevAttrMaxThreadsPerMultiProcessor, p.maxThreadsPerMultiProcessor},
          {cudaDevAttrAsyncEngineCount, p.asyncEngineCount},
          {cudaDevAttrUnifiedAddressing, p.unifiedAddressing},
          {cudaDevAttrMaxTexture1DLayeredWidth, p.maxTexture1DLayered[0]},
          {cudaDevAttrMaxTexture1DLayeredLayers, p.maxTexture1DLayered[1]},
          {cudaDevAttrMaxTexture2DGatherWidth, p.maxTexture2DGather[0]},
          {cudaDevAttrMaxTexture2DGatherHeight, p.maxTexture2DGather[1]},
          {cudaDevAttrMaxTexture3DWidthAlt, p.maxTexture3DAlt[0]},
          {cudaDevAttrMaxTexture3DHeightAlt, p.maxTexture3DAlt[1]},
          {cudaDevAttrMaxTexture3DDepthAlt, p.maxTexture3DAlt[2]},
          {cudaDevAttrPciDomainId, p.pciDomainID},
          {cudaDevAttrTexturePitchAlignment, static_cast<long long>(p.texturePitchAlignment)},
          {cudaDevAttrMaxTextureCubemapWidth, p.maxTextureCubemap},
          {cudaDevAttrMaxTextureCubemapLayeredWidth, p.maxTextureCubemapLayered[0]},
          {cudaDevAttrMaxTextureCubemapLayeredLayers, p.maxTextureCubemapLayered[1]},
          {cudaDevAttrMaxSurface1DWidth, p.maxSurface1D},
          {cudaDevAttrMaxSurface2DWidth, p.maxSurface2D[0]},
          {cudaDevAttrMaxSurface2DHeight, p.maxSurface2D[1]},
          {cudaDevAttrMaxSurface3DWidth, p.maxSurface3D[0]},
          {cudaDevAttrMaxSurface3DHeight, p.maxSurface3D[1]},
          {cudaDevAttrMaxSurface3DDepth, p.maxSurface3D[2]},
          {cudaDevAttrMaxSurface1DLayeredWidth, p.maxSurface1DLayered[0]},
          {cudaDevAttrMaxSurface1DLayeredLayers, p.maxSurface1DLayered[1]},
          {cudaDevAttrMaxSurface2DLayeredWidth, p.maxSurface2DLayered[0]},
          {cudaDevAttrMaxSurface2DLayeredHeight, p.maxSurface2DLayered[1]},
          {cudaDevAttrMaxSurface2DLayeredLayers, p.maxSurface2DLayered[2]},
          {cudaDevAttrMaxSurfaceCubemapWidth, p.maxSurfaceCubemap},
          {cudaDevAttrMaxSurfaceCubemapLayeredWidth, p.maxSurfaceCubemapLayered[0]},
          {cudaDevAttrMaxSurfaceCubemapLayeredLayers, p.maxSurfaceCubemapLayered[1]},
          {cudaDevAttrMaxTexture2DLinearWidth, p.maxTexture2DLinear[0]},
          {cudaDevAttrMaxTexture2DLinearHeight, p.maxTexture2DLinear[1]},
          {cudaDevAttrMaxTexture2DLinearPitch, p.maxTexture2DLinear[2]},
          {cudaDevAttrMaxTexture2DMipmappedWidth, p.maxTexture2DMipmap[0]},
          {cudaDevAttrMaxTexture2DMipmappedHeight, p.maxTexture2DMipmap[1]},
          {cudaDevAttrComputeCapabilityMajor, p.major},
          {cudaDevAttrComputeCapabilityMinor, p.minor},
          {cudaDevAttrMaxTexture1DMipmappedWidth, p.maxTexture1DMipmap},
          {cudaDevAttrStreamPrioritiesSupported, p.streamPrioritiesSupported},
          {cudaDevAttrGlobalL1CacheSupported, p.globalL1CacheSupported},
          {cudaDevAttrLocalL1CacheSupported, p.localL1CacheSupported},
          {cudaDevAttrMaxSharedMemoryPerMultiprocessor, static_cast<long long>(p.sharedMemPerMultiprocessor)},
          {cudaDevAttrMaxRegistersPerMultiprocessor, p.regsPerMultiprocessor},
          {cudaDevAttrManagedMemory, p.managedMemory},
          {cudaDevAttrIsMultiGpuBoard, p.isMultiGpuBoard},
          {cudaDevAttrMultiGpuBoardGroupID, p.multiGpuBoardGroupID},
          {cudaDevAttrHostNativeAtomicSupported, p.hostNativeAtomicSupported},
          {cudaDevAttrPageableMemoryAccess, p.pageableMemoryAccess},
          {cudaDevAttrConcurrentManagedAccess, p.concurrentManagedAccess},
          {cudaDevAttrComputePreemptionSupported, p.computePreemptionSupported},
          {cudaDevAttrCanUseHostPointerForRegisteredMem, p.canUseHostPointerForRegisteredMem},
          {cudaDevAttrCooperativeLaunch, p.cooperativeLaunch},
          {cudaDevAttrMaxSharedMemoryPerBlockOptin, static_cast<long long>(p.sharedMemPerBlockOptin)},
          {cudaDevAttrPageableMemoryAccessUsesHostPageTables, p.pageableMemoryAccessUsesHostPageTables},
          {cudaDevAttrDirectManagedMemAccessFromHost, p.directManagedMemAccessFromHost},
          {cudaDevAttrMaxBlocksPerMultiprocessor, p.maxBlocksPerMultiProcessor},
          {cudaDevAttrMaxPersistingL2CacheSize, p.persistingL2CacheMaxSize},
          {cudaDevAttrMaxAccessPolicyWindowSize, p.accessPolicyMaxWindowSize},
          {cudaDevAttrReservedSharedMemoryPerBlock, static_cast<long long>(p.reservedSharedMemPerBlock)},
          {cudaDevAttrSparseCudaArraySupported, p.sparseCudaArraySupported},
          {cudaDevAttrHostRegisterSupported, p.hostRegisterSupported},
          {cudaDevAttrHostRegisterReadOnlySupported, p.hostRegisterReadOnlySupported},
          {cudaDevAttrTimelineSemaphoreInteropSupported, p.timelineSemaphoreInteropSupported},
          {cudaDevAttrMemoryPoolsSupported, p.memoryPoolsSupported},
          {cudaDevAttrGPUDirectRDMASupported, p.gpuDirectRDMASupported},
          {cudaDevAttrGPUDirectRDMAFlushWritesOptions, p.gpuDirectRDMAFlushWritesOptions},
          {cudaDevAttrGPUDirectRDMAWritesOrdering, p.gpuDirectRDMAWritesOrdering},
          {cudaDevAttrMemoryPoolSupportedHandleTypes, p.memoryPoolSupportedHandleTypes},
          {cudaDevAttrClusterLaunch, p.clusterLaunch},
          {cudaDevAttrDeferredMappingCudaArraySupported, p.deferredMappingCudaArraySupported},
          {cudaDevAttrIpcEventSupport, p.ipcEventSupported},
          {cudaDevAttrNumaConfig, p.deviceNumaConfig},
          {cudaDevAttrNumaId, p.deviceNumaId},
          {cudaDevAttrMpsEnabled, p.mpsEnabled},
          {cudaDevAttrHostNumaId, p.hostNumaId},
          {cudaDevAttrGpuPciDeviceId, static_cast<int>(p.gpuPciDeviceID)},
          {cudaDevAttrGpuPciSubsystemId, static_cast<int>(p.gpuPciSubsystemID)},
          {cudaDevAttrHostNumaMultinodeIpcSupported, p.hostNumaMultinodeIpcSupported},
      };
      for (const auto& [a, v] : pairs) EXPECT_EQ(attr(s, ord, a), v) << "attribute " << a;
      // Values from the spec itself.
      EXPECT_EQ(p.totalGlobalMem, s.memory_bytes);
      EXPECT_EQ(attr(s, ord, cudaDevAttrClockRate), s.sm_clock_khz);
      EXPECT_EQ(attr(s, ord, cudaDevAttrMemoryClockRate), s.mem_clock_khz);
      EXPECT_EQ(p.multiProcessorCount, s.sm_count);
      EXPECT_EQ(p.major, s.cc_major);
      // Reserved words are zero.
      for (int r : p.reserved) EXPECT_EQ(r, 0);
    }
  }
}

TEST(DeviceProps, V12LayoutAgreesWithV13AndAttributes) {
  for (const std::string& name : device_preset_names()) {
    SCOPED_TRACE(name);
    const DeviceSpec s = load(name);
    for (int ord = 0; ord < kOrdinals; ++ord) {
      cudaDeviceProp p13;
      fill_device_prop(s, ord, &p13);
      // Guard bytes after the 12.x struct catch any write past its end.
      std::vector<unsigned char> buf(device_prop_v12_size() + 64, 0xab);
      fill_device_prop_v12(s, ord, buf.data());
      for (size_t i = device_prop_v12_size(); i < buf.size(); ++i) ASSERT_EQ(buf[i], 0xab) << "overrun at " << i;
      CudaDevicePropV12 p12;
      std::memcpy(&p12, buf.data(), sizeof(p12));
      EXPECT_STREQ(p12.name, p13.name);
      EXPECT_EQ(std::memcmp(p12.uuid, &p13.uuid, 16), 0);
      EXPECT_EQ(p12.totalGlobalMem, p13.totalGlobalMem);
      EXPECT_EQ(p12.sharedMemPerBlock, p13.sharedMemPerBlock);
      EXPECT_EQ(p12.multiProcessorCount, p13.multiProcessorCount);
      EXPECT_EQ(p12.major, p13.major);
      EXPECT_EQ(p12.minor, p13.minor);
      EXPECT_EQ(p12.pciBusID, p13.pciBusID);
      EXPECT_EQ(p12.l2CacheSize, p13.l2CacheSize);
      EXPECT_EQ(p12.memoryBusWidth, p13.memoryBusWidth);
      EXPECT_EQ(p12.sharedMemPerMultiprocessor, p13.sharedMemPerMultiprocessor);
      EXPECT_EQ(p12.sharedMemPerBlockOptin, p13.sharedMemPerBlockOptin);
      EXPECT_EQ(p12.maxBlocksPerMultiProcessor, p13.maxBlocksPerMultiProcessor);
      EXPECT_EQ(p12.clusterLaunch, p13.clusterLaunch);
      EXPECT_EQ(p12.unifiedFunctionPointers, p13.unifiedFunctionPointers);
      // The fields only 12.x has are answered like their attributes.
      EXPECT_EQ(p12.clockRate, attr(s, ord, cudaDevAttrClockRate));
      EXPECT_EQ(p12.memoryClockRate, attr(s, ord, cudaDevAttrMemoryClockRate));
      EXPECT_EQ(p12.deviceOverlap, attr(s, ord, cudaDevAttrGpuOverlap));
      EXPECT_EQ(p12.kernelExecTimeoutEnabled, attr(s, ord, cudaDevAttrKernelExecTimeout));
      EXPECT_EQ(p12.computeMode, attr(s, ord, cudaDevAttrComputeMode));
      EXPECT_EQ(p12.maxTexture1DLinear, attr(s, ord, cudaDevAttrMaxTexture1DLinearWidth));
      EXPECT_EQ(p12.singleToDoublePrecisionPerfRatio, attr(s, ord, cudaDevAttrSingleToDoublePrecisionPerfRatio));
      for (int r : p12.reserved) EXPECT_EQ(r, 0);
    }
  }
}

TEST(DeviceProps, UuidIsDeterministicAndUniquePerOrdinal) {
  const DeviceSpec s = load("h100-sxm");
  std::set<std::string> seen;
  for (int ord = 0; ord < kOrdinals; ++ord) {
    cudaDeviceProp a, b;
    fill_device_prop(s, ord, &a);
    fill_device_prop(s, ord, &b);
    EXPECT_EQ(std::memcmp(&a.uuid, &b.uuid, sizeof(a.uuid)), 0);
    seen.insert(std::string(a.uuid.bytes, sizeof(a.uuid.bytes)));
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kOrdinals));
}

TEST(DeviceProps, PciBusIdFollowsBaseAndStride) {
  const DeviceSpec s = load("h200");
  EXPECT_EQ(pci_bus_id(s, 0), "0000:18:00.0");
  EXPECT_EQ(pci_bus_id(s, 1), "0000:28:00.0");
  EXPECT_EQ(pci_bus_id(s, 7), "0000:88:00.0");
  std::set<std::string> ids;
  for (int ord = 0; ord < kOrdinals; ++ord) {
    const std::string id = pci_bus_id(s, ord);
    ids.insert(id);
    char expected[32];
    std::snprintf(expected, sizeof(expected), "%04x:%02x:00.0", attr(s, ord, cudaDevAttrPciDomainId),
                  attr(s, ord, cudaDevAttrPciBusId));
    EXPECT_EQ(id, expected);
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(kOrdinals));
}

TEST(DeviceProps, ClusterAndSyncDomainsFollowComputeCapability) {
  EXPECT_EQ(attr(load("a100-sxm4-80gb"), 0, cudaDevAttrClusterLaunch), 0);
  EXPECT_EQ(attr(load("a100-sxm4-80gb"), 0, cudaDevAttrMemSyncDomainCount), 1);
  EXPECT_EQ(attr(load("h100-sxm"), 0, cudaDevAttrClusterLaunch), 1);
  EXPECT_EQ(attr(load("b200"), 0, cudaDevAttrMemSyncDomainCount), 4);
}

TEST(DeviceProps, EveryCuda13AttributeIsAnsweredAndOthersAreRejected) {
  // The holes in the CUDA 13.0 cudaDeviceAttr enum (driver_types.h); every other value in [1, 147] is an
  // enumerator (reserved ones included) and must be answered.
  const std::set<int> holes = {44, 102, 103, 104, 105, 107, 110, 136, 137, 146};
  const DeviceSpec s = load("h200");
  for (int a = 1; a <= cudaDevAttrOnlyPartialHostNativeAtomicSupported; ++a) {
    auto r = device_attribute(s, 0, a);
    if (holes.count(a)) {
      ASSERT_FALSE(r.is_ok()) << "hole " << a << " answered";
      EXPECT_EQ(r.status().code(), Errc::kInvalidArgument);
    } else {
      EXPECT_TRUE(r.is_ok()) << "attribute " << a << ": " << r.status().to_string();
    }
  }
  for (int bad : {0, -1, static_cast<int>(cudaDevAttrMax), 1000, 1 << 30}) {
    auto r = device_attribute(s, 0, bad);
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_EQ(r.status().code(), Errc::kInvalidArgument);
    EXPECT_NE(r.status().message().find(std::to_string(bad)), std::string::npos);
  }
  EXPECT_FALSE(device_attribute(s, -1, cudaDevAttrWarpSize).is_ok());
}

TEST(DeviceProps, FillZeroesEverythingItDoesNotSet) {
  const DeviceSpec s = load("b200");
  cudaDeviceProp p;
  std::memset(&p, 0xab, sizeof(p));
  fill_device_prop(s, 3, &p);
  EXPECT_EQ(p.luidDeviceNodeMask, 0u);
  for (char c : p.luid) EXPECT_EQ(c, 0);
  for (int r : p.reserved) EXPECT_EQ(r, 0);
  EXPECT_EQ(p.multiGpuBoardGroupID, 3);
}

}  // namespace
}  // namespace genie::fakecuda
