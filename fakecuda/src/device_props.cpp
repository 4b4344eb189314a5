// SPDX-License-Identifier: Apache-2.0
// Device queries answered from a DeviceSpec: cudaDeviceProp (13.x and 12.x layouts), cudaDeviceGetAttribute, PCI ids.
#include <driver_types.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "abi/cuda12_device_prop.hpp"
#include "genie/fakecuda/device_spec.hpp"

namespace genie::fakecuda {
namespace {

// ---------------------------------------------------------------------------------------------------------------
// Architectural limits that every preset shares (compute capability 8.0, 9.0 and 10.0 have identical values).
// Source: CUDA C++ Programming Guide, "Technical Specifications per Compute Capability" table; they are also what
// deviceQuery prints on A100 / H100 / B200 (e.g. github.com/samridh-dev/votess/issues/10 for A100).
// ---------------------------------------------------------------------------------------------------------------
constexpr int kMaxBlockDimX = 1024;
constexpr int kMaxBlockDimY = 1024;
constexpr int kMaxBlockDimZ = 64;
constexpr int kMaxGridDimX = 2147483647;  // 2^31 - 1
constexpr int kMaxGridDimY = 65535;
constexpr int kMaxGridDimZ = 65535;
constexpr int kTotalConstMemBytes = 65536;
constexpr int kMaxPitchBytes = 2147483647;
constexpr int kTextureAlignmentBytes = 512;
constexpr int kTexturePitchAlignmentBytes = 32;
constexpr int kSurfaceAlignmentBytes = 512;
constexpr int kReservedSharedMemPerBlockBytes = 1024;  // "CUDA reserves 1 KB of shared memory per thread block"
// Texture and surface limits (same table, rows "Maximum width/height/depth for a ... texture/surface").
constexpr int kMaxTexture1D = 131072;
constexpr int kMaxTexture1DMipmap = 32768;
constexpr int kMaxTexture1DLinear = 268435456;  // 2^28 elements (12.x field; attribute 69)
constexpr int kMaxTexture2DWidth = 131072;
constexpr int kMaxTexture2DHeight = 65536;
constexpr int kMaxTexture2DMipmap = 32768;
constexpr int kMaxTexture2DLinearWidth = 131072;
constexpr int kMaxTexture2DLinearHeight = 65000;
constexpr int kMaxTexture2DLinearPitch = 2097120;  // 2^21 - 32 bytes
constexpr int kMaxTexture2DGather = 32768;
constexpr int kMaxTexture3D = 16384;
constexpr int kMaxTexture3DAltWidth = 8192;
constexpr int kMaxTexture3DAltHeight = 8192;
constexpr int kMaxTexture3DAltDepth = 32768;
constexpr int kMaxTextureCubemap = 32768;
constexpr int kMaxLayeredWidth = 32768;
constexpr int kMaxLayers = 2048;
constexpr int kMaxCubemapLayers = 2046;
constexpr int kMaxSurface1D = 32768;
constexpr int kMaxSurface2DWidth = 131072;
constexpr int kMaxSurface2DHeight = 65536;
constexpr int kMaxSurface3D = 16384;
constexpr int kMaxSurfaceCubemap = 32768;

/// cudaDevAttrMaxAccessPolicyWindowSize / accessPolicyMaxWindowSize: 128 MiB - 4 KiB, the value the driver
/// reports on A100 and H100 (CUDA programming guide, "L2 Access Management": num_bytes must be below it).
constexpr int kAccessPolicyMaxWindowBytes = 134213632;
/// Share of L2 that can be set aside for persisting accesses: 30 MB of A100's 40 MB (CUDA C++ Best Practices /
/// Ampere tuning guide, "L2 cache set-aside"); applied to every preset as 3/4 of its L2.
constexpr int kPersistingL2Numerator = 3;
constexpr int kPersistingL2Denominator = 4;
/// Memory synchronisation domains (cudaDevAttrMemSyncDomainCount): Hopper and later have 4, earlier parts 1
/// (CUDA C++ Programming Guide, "Memory Synchronization Domains").
constexpr int kMemSyncDomainsHopper = 4;
constexpr int kMemSyncDomainsPreHopper = 1;
/// Thread block clusters exist from compute capability 9.0 (CUDA C++ Programming Guide, "Thread Block Clusters").
constexpr int kClusterLaunchMinCcMajor = 9;
/// Non-tensor FP32:FP64 throughput is 2:1 on GA100, GH100 and GB100 (datasheets: 19.5/9.7, 67/34, 75/37 TFLOPS).
constexpr int kSingleToDoublePerfRatio = 2;
constexpr unsigned kPciVendorNvidia = 0x10de;
/// Host NUMA is not modelled: report "no NUMA" (-1) as the runtime documents for such systems.
constexpr int kNoNuma = -1;

/// Legacy cudaComputeModeDefault; the enum value is 0 in every CUDA version.
constexpr int kComputeModeDefault = 0;

int pci_bus(const DeviceSpec& spec, int ordinal) {
  // A PCI bus number is 8 bits; wrap rather than overflow for absurd device counts.
  return (spec.pci_bus_base + ordinal * spec.pci_bus_stride) & 0xff;
}

unsigned gpu_pci_device_id(const DeviceSpec& spec) {
  // "The combined 16-bit PCI device ID and 16-bit PCI vendor ID": config-space dword 0, device id in the high half.
  return (static_cast<unsigned>(spec.pci_device_id) << 16) | kPciVendorNvidia;
}

unsigned gpu_pci_subsystem_id(const DeviceSpec& spec) {
  // NVIDIA-built boards carry NVIDIA as subsystem vendor; the subsystem id proper is not modelled (0).
  return kPciVendorNvidia;
}

int persisting_l2_max_bytes(const DeviceSpec& spec) {
  return static_cast<int>(static_cast<int64_t>(spec.l2_cache_bytes) * kPersistingL2Numerator /
                          kPersistingL2Denominator);
}

bool has_clusters(const DeviceSpec& spec) { return spec.cc_major >= kClusterLaunchMinCcMajor; }

/// FNV-1a 64-bit: a stable hash (std::hash is not guaranteed stable across builds).
uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ULL) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

/// Deterministic 16-byte UUID for (device model, ordinal): the same on every run and in every process, different for
/// every ordinal, so tools that key devices by UUID (NCCL's busId/uuid checks, nvml-less torch) behave.
void make_uuid(const DeviceSpec& spec, int ordinal, char out[16]) {
  const std::string key = "genie-fakecuda|" + spec.name + "|" + std::to_string(ordinal);
  uint64_t a = fnv1a(key);
  uint64_t b = fnv1a(key, a ^ 0x9e3779b97f4a7c15ULL);
  std::memcpy(out, &a, 8);
  std::memcpy(out + 8, &b, 8);
  // Mark it as an RFC 4122 version-4 / variant-1 UUID so it never looks like a malformed one.
  out[6] = static_cast<char>((out[6] & 0x0f) | 0x40);
  out[8] = static_cast<char>((out[8] & 0x3f) | 0x80);
}

/// Fields shared by the 12.x and 13.x layouts (same names, same meaning). `P` is cudaDeviceProp or CudaDevicePropV12.
template <class P>
void fill_common(const DeviceSpec& spec, int ordinal, P* p) {
  std::snprintf(p->name, sizeof(p->name), "%s", spec.name.c_str());
  make_uuid(spec, ordinal, reinterpret_cast<char*>(&p->uuid));
  // luid / luidDeviceNodeMask are Windows-only ("undefined on TCC and non-Windows platforms"): left zero.
  p->totalGlobalMem = spec.memory_bytes;
  p->sharedMemPerBlock = static_cast<size_t>(spec.shared_mem_per_block);
  p->regsPerBlock = spec.regs_per_block;
  p->warpSize = spec.warp_size;
  p->memPitch = kMaxPitchBytes;
  p->maxThreadsPerBlock = spec.max_threads_per_block;
  p->maxThreadsDim[0] = kMaxBlockDimX;
  p->maxThreadsDim[1] = kMaxBlockDimY;
  p->maxThreadsDim[2] = kMaxBlockDimZ;
  p->maxGridSize[0] = kMaxGridDimX;
  p->maxGridSize[1] = kMaxGridDimY;
  p->maxGridSize[2] = kMaxGridDimZ;
  p->totalConstMem = kTotalConstMemBytes;
  p->major = spec.cc_major;
  p->minor = spec.cc_minor;
  p->textureAlignment = kTextureAlignmentBytes;
  p->texturePitchAlignment = kTexturePitchAlignmentBytes;
  p->multiProcessorCount = spec.sm_count;
  p->integrated = 0;
  p->canMapHostMemory = 1;
  p->maxTexture1D = kMaxTexture1D;
  p->maxTexture1DMipmap = kMaxTexture1DMipmap;
  p->maxTexture2D[0] = kMaxTexture2DWidth;
  p->maxTexture2D[1] = kMaxTexture2DHeight;
  p->maxTexture2DMipmap[0] = kMaxTexture2DMipmap;
  p->maxTexture2DMipmap[1] = kMaxTexture2DMipmap;
  p->maxTexture2DLinear[0] = kMaxTexture2DLinearWidth;
  p->maxTexture2DLinear[1] = kMaxTexture2DLinearHeight;
  p->maxTexture2DLinear[2] = kMaxTexture2DLinearPitch;
  p->maxTexture2DGather[0] = kMaxTexture2DGather;
  p->maxTexture2DGather[1] = kMaxTexture2DGather;
  p->maxTexture3D[0] = p->maxTexture3D[1] = p->maxTexture3D[2] = kMaxTexture3D;
  p->maxTexture3DAlt[0] = kMaxTexture3DAltWidth;
  p->maxTexture3DAlt[1] = kMaxTexture3DAltHeight;
  p->maxTexture3DAlt[2] = kMaxTexture3DAltDepth;
  p->maxTextureCubemap = kMaxTextureCubemap;
  p->maxTexture1DLayered[0] = kMaxLayeredWidth;
  p->maxTexture1DLayered[1] = kMaxLayers;
  p->maxTexture2DLayered[0] = kMaxLayeredWidth;
  p->maxTexture2DLayered[1] = kMaxLayeredWidth;
  p->maxTexture2DLayered[2] = kMaxLayers;
  p->maxTextureCubemapLayered[0] = kMaxTextureCubemap;
  p->maxTextureCubemapLayered[1] = kMaxCubemapLayers;
  p->maxSurface1D = kMaxSurface1D;
  p->maxSurface2D[0] = kMaxSurface2DWidth;
  p->maxSurface2D[1] = kMaxSurface2DHeight;
  p->maxSurface3D[0] = p->maxSurface3D[1] = p->maxSurface3D[2] = kMaxSurface3D;
  p->maxSurface1DLayered[0] = kMaxLayeredWidth;
  p->maxSurface1DLayered[1] = kMaxLayers;
  p->maxSurface2DLayered[0] = kMaxLayeredWidth;
  p->maxSurface2DLayered[1] = kMaxLayeredWidth;
  p->maxSurface2DLayered[2] = kMaxLayers;
  p->maxSurfaceCubemap = kMaxSurfaceCubemap;
  p->maxSurfaceCubemapLayered[0] = kMaxSurfaceCubemap;
  p->maxSurfaceCubemapLayered[1] = kMaxCubemapLayers;
  p->surfaceAlignment = kSurfaceAlignmentBytes;
  p->concurrentKernels = 1;
  p->ECCEnabled = 1;  // HBM parts ship with ECC on
  p->pciBusID = pci_bus(spec, ordinal);
  p->pciDeviceID = 0;  // PCI "device" (slot) number on the bus, not the product id
  p->pciDomainID = spec.pci_domain;
  p->tccDriver = 0;
  p->asyncEngineCount = spec.async_engine_count;
  p->unifiedAddressing = 1;
  p->memoryBusWidth = spec.mem_bus_width_bits;
  p->l2CacheSize = spec.l2_cache_bytes;
  p->persistingL2CacheMaxSize = persisting_l2_max_bytes(spec);
  p->maxThreadsPerMultiProcessor = spec.max_threads_per_sm;
  p->streamPrioritiesSupported = 1;
  p->globalL1CacheSupported = 1;
  p->localL1CacheSupported = 1;
  p->sharedMemPerMultiprocessor = static_cast<size_t>(spec.shared_mem_per_sm);
  p->regsPerMultiprocessor = spec.regs_per_sm;
  p->managedMemory = 1;
  p->isMultiGpuBoard = 0;                // SXM modules are one GPU per board
  p->multiGpuBoardGroupID = ordinal;     // hence a group of its own
  p->hostNativeAtomicSupported = 0;      // PCIe host link (only NVLink-C2C hosts such as Grace report 1)
  p->pageableMemoryAccess = 0;           // x86 without HMM: pageable memory needs cudaHostRegister
  p->concurrentManagedAccess = 1;
  p->computePreemptionSupported = 1;
  p->canUseHostPointerForRegisteredMem = 1;  // emulated device memory is host memory: same address on both sides
  p->cooperativeLaunch = 1;
  p->sharedMemPerBlockOptin = static_cast<size_t>(spec.shared_mem_per_block_optin);
  p->pageableMemoryAccessUsesHostPageTables = 0;
  p->directManagedMemAccessFromHost = 0;
  p->maxBlocksPerMultiProcessor = spec.max_blocks_per_sm;
  p->accessPolicyMaxWindowSize = kAccessPolicyMaxWindowBytes;
  p->reservedSharedMemPerBlock = kReservedSharedMemPerBlockBytes;
  p->hostRegisterSupported = 1;
  p->sparseCudaArraySupported = 0;  // CUDA arrays are not emulated: do not advertise array features
  p->hostRegisterReadOnlySupported = 1;
  p->timelineSemaphoreInteropSupported = 0;  // no external-semaphore interop in the emulation
  p->memoryPoolsSupported = 1;
  p->gpuDirectRDMASupported = 1;
  p->gpuDirectRDMAFlushWritesOptions = cudaFlushGPUDirectRDMAWritesOptionHost;
  p->gpuDirectRDMAWritesOrdering = cudaGPUDirectRDMAWritesOrderingNone;
  p->memoryPoolSupportedHandleTypes = 0;  // mempool IPC export is not emulated
  p->deferredMappingCudaArraySupported = 0;
  p->ipcEventSupported = 1;
  p->clusterLaunch = has_clusters(spec) ? 1 : 0;
  p->unifiedFunctionPointers = 1;
}

}  // namespace

void fill_device_prop(const DeviceSpec& spec, int ordinal, cudaDeviceProp* prop) {
  std::memset(prop, 0, sizeof(*prop));
  fill_common(spec, ordinal, prop);
  prop->deviceNumaConfig = cudaDeviceNumaConfigNone;
  prop->deviceNumaId = kNoNuma;
  prop->mpsEnabled = 0;
  prop->hostNumaId = kNoNuma;
  prop->gpuPciDeviceID = gpu_pci_device_id(spec);
  prop->gpuPciSubsystemID = gpu_pci_subsystem_id(spec);
  prop->hostNumaMultinodeIpcSupported = 0;
}

void fill_device_prop_v12(const DeviceSpec& spec, int ordinal, void* prop12) {
  auto* p = static_cast<abi::CudaDevicePropV12*>(prop12);
  std::memset(p, 0, sizeof(*p));
  fill_common(spec, ordinal, p);
  // Fields that only the 12.x layout has.
  p->clockRate = spec.sm_clock_khz;
  p->deviceOverlap = spec.async_engine_count > 0 ? 1 : 0;
  p->kernelExecTimeoutEnabled = 0;
  p->computeMode = kComputeModeDefault;
  p->maxTexture1DLinear = kMaxTexture1DLinear;
  p->memoryClockRate = spec.mem_clock_khz;
  p->singleToDoublePrecisionPerfRatio = kSingleToDoublePerfRatio;
  p->cooperativeMultiDeviceLaunch = 0;  // cudaLaunchCooperativeKernelMultiDevice was removed in CUDA 12
}

size_t device_prop_v12_size() { return sizeof(abi::CudaDevicePropV12); }

std::string pci_bus_id(const DeviceSpec& spec, int ordinal) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04x:%02x:00.0", static_cast<unsigned>(spec.pci_domain) & 0xffff,
                static_cast<unsigned>(pci_bus(spec, ordinal)));
  return buf;
}

Result<int> device_attribute(const DeviceSpec& spec, int ordinal, int attr) {
  if (ordinal < 0) return invalid_argument("device_attribute: negative device ordinal " + std::to_string(ordinal));
  // Switch on the int: casting an arbitrary int to the unscoped enum could be outside its value range.
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: return spec.max_threads_per_block;
    case cudaDevAttrMaxBlockDimX: return kMaxBlockDimX;
    case cudaDevAttrMaxBlockDimY: return kMaxBlockDimY;
    case cudaDevAttrMaxBlockDimZ: return kMaxBlockDimZ;
    case cudaDevAttrMaxGridDimX: return kMaxGridDimX;
    case cudaDevAttrMaxGridDimY: return kMaxGridDimY;
    case cudaDevAttrMaxGridDimZ: return kMaxGridDimZ;
    case cudaDevAttrMaxSharedMemoryPerBlock: return spec.shared_mem_per_block;
    case cudaDevAttrTotalConstantMemory: return kTotalConstMemBytes;
    case cudaDevAttrWarpSize: return spec.warp_size;
    case cudaDevAttrMaxPitch: return kMaxPitchBytes;
    case cudaDevAttrMaxRegistersPerBlock: return spec.regs_per_block;
    case cudaDevAttrClockRate: return spec.sm_clock_khz;
    case cudaDevAttrTextureAlignment: return kTextureAlignmentBytes;
    case cudaDevAttrGpuOverlap: return spec.async_engine_count > 0 ? 1 : 0;
    case cudaDevAttrMultiProcessorCount: return spec.sm_count;
    case cudaDevAttrKernelExecTimeout: return 0;
    case cudaDevAttrIntegrated: return 0;
    case cudaDevAttrCanMapHostMemory: return 1;
    case cudaDevAttrComputeMode: return kComputeModeDefault;
    case cudaDevAttrMaxTexture1DWidth: return kMaxTexture1D;
    case cudaDevAttrMaxTexture2DWidth: return kMaxTexture2DWidth;
    case cudaDevAttrMaxTexture2DHeight: return kMaxTexture2DHeight;
    case cudaDevAttrMaxTexture3DWidth: return kMaxTexture3D;
    case cudaDevAttrMaxTexture3DHeight: return kMaxTexture3D;
    case cudaDevAttrMaxTexture3DDepth: return kMaxTexture3D;
    case cudaDevAttrMaxTexture2DLayeredWidth: return kMaxLayeredWidth;
    case cudaDevAttrMaxTexture2DLayeredHeight: return kMaxLayeredWidth;
    case cudaDevAttrMaxTexture2DLayeredLayers: return kMaxLayers;
    case cudaDevAttrSurfaceAlignment: return kSurfaceAlignmentBytes;
    case cudaDevAttrConcurrentKernels: return 1;
    case cudaDevAttrEccEnabled: return 1;
    case cudaDevAttrPciBusId: return pci_bus(spec, ordinal);
    case cudaDevAttrPciDeviceId: return 0;
    case cudaDevAttrTccDriver: return 0;
    case cudaDevAttrMemoryClockRate: return spec.mem_clock_khz;
    case cudaDevAttrGlobalMemoryBusWidth: return spec.mem_bus_width_bits;
    case cudaDevAttrL2CacheSize: return spec.l2_cache_bytes;
    case cudaDevAttrMaxThreadsPerMultiProcessor: return spec.max_threads_per_sm;
    case cudaDevAttrAsyncEngineCount: return spec.async_engine_count;
    case cudaDevAttrUnifiedAddressing: return 1;
    case cudaDevAttrMaxTexture1DLayeredWidth: return kMaxLayeredWidth;
    case cudaDevAttrMaxTexture1DLayeredLayers: return kMaxLayers;
    case cudaDevAttrMaxTexture2DGatherWidth: return kMaxTexture2DGather;
    case cudaDevAttrMaxTexture2DGatherHeight: return kMaxTexture2DGather;
    case cudaDevAttrMaxTexture3DWidthAlt: return kMaxTexture3DAltWidth;
    case cudaDevAttrMaxTexture3DHeightAlt: return kMaxTexture3DAltHeight;
    case cudaDevAttrMaxTexture3DDepthAlt: return kMaxTexture3DAltDepth;
    case cudaDevAttrPciDomainId: return spec.pci_domain;
    case cudaDevAttrTexturePitchAlignment: return kTexturePitchAlignmentBytes;
    case cudaDevAttrMaxTextureCubemapWidth: return kMaxTextureCubemap;
    case cudaDevAttrMaxTextureCubemapLayeredWidth: return kMaxTextureCubemap;
    case cudaDevAttrMaxTextureCubemapLayeredLayers: return kMaxCubemapLayers;
    case cudaDevAttrMaxSurface1DWidth: return kMaxSurface1D;
    case cudaDevAttrMaxSurface2DWidth: return kMaxSurface2DWidth;
    case cudaDevAttrMaxSurface2DHeight: return kMaxSurface2DHeight;
    case cudaDevAttrMaxSurface3DWidth: return kMaxSurface3D;
    case cudaDevAttrMaxSurface3DHeight: return kMaxSurface3D;
    case cudaDevAttrMaxSurface3DDepth: return kMaxSurface3D;
    case cudaDevAttrMaxSurface1DLayeredWidth: return kMaxLayeredWidth;
    case cudaDevAttrMaxSurface1DLayeredLayers: return kMaxLayers;
    case cudaDevAttrMaxSurface2DLayeredWidth: return kMaxLayeredWidth;
    case cudaDevAttrMaxSurface2DLayeredHeight: return kMaxLayeredWidth;
    case cudaDevAttrMaxSurface2DLayeredLayers: return kMaxLayers;
    case cudaDevAttrMaxSurfaceCubemapWidth: return kMaxSurfaceCubemap;
    case cudaDevAttrMaxSurfaceCubemapLayeredWidth: return kMaxSurfaceCubemap;
    case cudaDevAttrMaxSurfaceCubemapLayeredLayers: return kMaxCubemapLayers;
    case cudaDevAttrMaxTexture1DLinearWidth: return kMaxTexture1DLinear;
    case cudaDevAttrMaxTexture2DLinearWidth: return kMaxTexture2DLinearWidth;
    case cudaDevAttrMaxTexture2DLinearHeight: return kMaxTexture2DLinearHeight;
    case cudaDevAttrMaxTexture2DLinearPitch: return kMaxTexture2DLinearPitch;
    case cudaDevAttrMaxTexture2DMipmappedWidth: return kMaxTexture2DMipmap;
    case cudaDevAttrMaxTexture2DMipmappedHeight: return kMaxTexture2DMipmap;
    case cudaDevAttrComputeCapabilityMajor: return spec.cc_major;
    case cudaDevAttrComputeCapabilityMinor: return spec.cc_minor;
    case cudaDevAttrMaxTexture1DMipmappedWidth: return kMaxTexture1DMipmap;
    case cudaDevAttrStreamPrioritiesSupported: return 1;
    case cudaDevAttrGlobalL1CacheSupported: return 1;
    case cudaDevAttrLocalL1CacheSupported: return 1;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: return spec.shared_mem_per_sm;
    case cudaDevAttrMaxRegistersPerMultiprocessor: return spec.regs_per_sm;
    case cudaDevAttrManagedMemory: return 1;
    case cudaDevAttrIsMultiGpuBoard: return 0;
    case cudaDevAttrMultiGpuBoardGroupID: return ordinal;
    case cudaDevAttrHostNativeAtomicSupported: return 0;
    case cudaDevAttrSingleToDoublePrecisionPerfRatio: return kSingleToDoublePerfRatio;
    case cudaDevAttrPageableMemoryAccess: return 0;
    case cudaDevAttrConcurrentManagedAccess: return 1;
    case cudaDevAttrComputePreemptionSupported: return 1;
    case cudaDevAttrCanUseHostPointerForRegisteredMem: return 1;
    // Reserved values still defined in the enum (92-94 were the stream-memop attributes, 96 multi-device
    // cooperative launch): the driver answers them, so do we, with "not supported".
    case cudaDevAttrReserved92: return 0;
    case cudaDevAttrReserved93: return 0;
    case cudaDevAttrReserved94: return 0;
    case cudaDevAttrCooperativeLaunch: return 1;
    case cudaDevAttrReserved96: return 0;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: return spec.shared_mem_per_block_optin;
    case cudaDevAttrCanFlushRemoteWrites: return 0;
    case cudaDevAttrHostRegisterSupported: return 1;
    case cudaDevAttrPageableMemoryAccessUsesHostPageTables: return 0;
    case cudaDevAttrDirectManagedMemAccessFromHost: return 0;
    case cudaDevAttrMaxBlocksPerMultiprocessor: return spec.max_blocks_per_sm;
    case cudaDevAttrMaxPersistingL2CacheSize: return persisting_l2_max_bytes(spec);
    case cudaDevAttrMaxAccessPolicyWindowSize: return kAccessPolicyMaxWindowBytes;
    case cudaDevAttrReservedSharedMemoryPerBlock: return kReservedSharedMemPerBlockBytes;
    case cudaDevAttrSparseCudaArraySupported: return 0;
    case cudaDevAttrHostRegisterReadOnlySupported: return 1;
    case cudaDevAttrTimelineSemaphoreInteropSupported: return 0;
    case cudaDevAttrMemoryPoolsSupported: return 1;
    case cudaDevAttrGPUDirectRDMASupported: return 1;
    case cudaDevAttrGPUDirectRDMAFlushWritesOptions: return cudaFlushGPUDirectRDMAWritesOptionHost;
    case cudaDevAttrGPUDirectRDMAWritesOrdering: return cudaGPUDirectRDMAWritesOrderingNone;
    case cudaDevAttrMemoryPoolSupportedHandleTypes: return 0;
    case cudaDevAttrClusterLaunch: return has_clusters(spec) ? 1 : 0;
    case cudaDevAttrDeferredMappingCudaArraySupported: return 0;
    case cudaDevAttrReserved122: return 0;
    case cudaDevAttrReserved123: return 0;
    case cudaDevAttrReserved124: return 0;
    case cudaDevAttrIpcEventSupport: return 1;
    case cudaDevAttrMemSyncDomainCount: return has_clusters(spec) ? kMemSyncDomainsHopper : kMemSyncDomainsPreHopper;
    case cudaDevAttrReserved127: return 0;
    case cudaDevAttrReserved128: return 0;
    case cudaDevAttrReserved129: return 0;
    case cudaDevAttrNumaConfig: return cudaDeviceNumaConfigNone;
    case cudaDevAttrNumaId: return kNoNuma;
    case cudaDevAttrReserved132: return 0;
    case cudaDevAttrMpsEnabled: return 0;
    case cudaDevAttrHostNumaId: return kNoNuma;
    case cudaDevAttrD3D12CigSupported: return 0;
    case cudaDevAttrVulkanCigSupported: return 0;
    case cudaDevAttrGpuPciDeviceId: return static_cast<int>(gpu_pci_device_id(spec));
    case cudaDevAttrGpuPciSubsystemId: return static_cast<int>(gpu_pci_subsystem_id(spec));
    case cudaDevAttrReserved141: return 0;
    case cudaDevAttrHostNumaMemoryPoolsSupported: return 0;
    case cudaDevAttrHostNumaMultinodeIpcSupported: return 0;
    case cudaDevAttrHostMemoryPoolsSupported: return 0;
    case cudaDevAttrReserved145: return 0;
    case cudaDevAttrOnlyPartialHostNativeAtomicSupported: return 0;
    default: break;
  }
  return invalid_argument("device_attribute: unknown cudaDeviceAttr " + std::to_string(attr));
}

}  // namespace genie::fakecuda
