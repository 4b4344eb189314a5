// SPDX-License-Identifier: Apache-2.0
// Driver entry points: the name -> versioned implementation table behind
// cuGetProcAddress and cudaGetDriverEntryPoint(ByVersion).
//
// Each row is one ABI of a name, with the CUDA version that introduced it (the
// `_vNNNNN` suffix of the PFN_ typedefs in cudaTypedefs.h) and, for
// stream-ordered calls, the per-thread-default-stream twin (the PFN's `_v7000`
// variant). A lookup picks the newest row not newer than the client's version,
// as the driver does: cuMemAlloc at 12000 -> cuMemAlloc_v2 (3020). Legacy rows
// whose ABI differs from ours (32-bit CUdeviceptr_v1 before 3020) are absent,
// so such old versions get "version not sufficient".
#include <cstring>

#include "driver_common.hpp"

namespace genie::fakecuda {
namespace {

struct EntryPoint {
  const char* name;
  int version;    ///< first CUDA version with this ABI
  void* fn;       ///< legacy-default-stream implementation
  void* ptds_fn;  ///< per-thread-default-stream implementation (nullptr: same as
                  ///< fn)
};

template <class F>
void* fp(F* f) {
  return reinterpret_cast<void*>(f);
}

#define E(name, version, impl) \
  { #name, version, fp(&drv::impl), nullptr }
#define EP(name, version, impl, ptds) \
  { #name, version, fp(&drv::impl), fp(&drv::ptds) }

// Grouped by name, versions ascending; lookups scan linearly (cuGetProcAddress
// is not on a hot path).
const EntryPoint kEntryPoints[] = {
    E(cuCtxDestroy, 4000, cuCtxDestroy_v2),
    E(cuCtxGetCurrent, 4000, cuCtxGetCurrent),
    E(cuCtxGetDevice, 2000, cuCtxGetDevice),
    E(cuCtxGetDevice, 13000, cuCtxGetDevice_v2),
    E(cuCtxGetFlags, 7000, cuCtxGetFlags),
    E(cuCtxGetStreamPriorityRange, 5050, cuCtxGetStreamPriorityRange),
    E(cuCtxPopCurrent, 4000, cuCtxPopCurrent_v2),
    E(cuCtxPushCurrent, 4000, cuCtxPushCurrent_v2),
    E(cuCtxSetCurrent, 4000, cuCtxSetCurrent),
    E(cuCtxSynchronize, 2000, cuCtxSynchronize),
    E(cuCtxSynchronize, 13000, cuCtxSynchronize_v2),
    E(cuDeviceCanAccessPeer, 4000, cuDeviceCanAccessPeer),
    E(cuDeviceComputeCapability, 2000, cuDeviceComputeCapability),
    E(cuDeviceGet, 2000, cuDeviceGet),
    E(cuDeviceGetAttribute, 2000, cuDeviceGetAttribute),
    E(cuDeviceGetByPCIBusId, 4010, cuDeviceGetByPCIBusId),
    E(cuDeviceGetCount, 2000, cuDeviceGetCount),
    E(cuDeviceGetName, 2000, cuDeviceGetName),
    E(cuDeviceGetPCIBusId, 4010, cuDeviceGetPCIBusId),
    E(cuDeviceGetUuid, 9020,
      cuDeviceGetUuid_v2),  // v1 and v2 share the signature and, here, the
                            // answer
    E(cuDeviceGetUuid, 11040, cuDeviceGetUuid_v2),
    E(cuDevicePrimaryCtxGetState, 7000, cuDevicePrimaryCtxGetState),
    E(cuDevicePrimaryCtxRelease, 7000, cuDevicePrimaryCtxRelease_v2),
    E(cuDevicePrimaryCtxRelease, 11000, cuDevicePrimaryCtxRelease_v2),
    E(cuDevicePrimaryCtxReset, 7000, cuDevicePrimaryCtxReset_v2),
    E(cuDevicePrimaryCtxReset, 11000, cuDevicePrimaryCtxReset_v2),
    E(cuDevicePrimaryCtxRetain, 7000, cuDevicePrimaryCtxRetain),
    E(cuDevicePrimaryCtxSetFlags, 7000, cuDevicePrimaryCtxSetFlags_v2),
    E(cuDevicePrimaryCtxSetFlags, 11000, cuDevicePrimaryCtxSetFlags_v2),
    E(cuDeviceTotalMem, 3020, cuDeviceTotalMem_v2),
    E(cuDriverGetVersion, 2020, cuDriverGetVersion),
    E(cuEventCreate, 2000, cuEventCreate),
    E(cuEventDestroy, 4000, cuEventDestroy_v2),
    E(cuEventElapsedTime, 2000, cuEventElapsedTime_v2),
    E(cuEventElapsedTime, 12080, cuEventElapsedTime_v2),  // same ABI
    E(cuEventQuery, 2000, cuEventQuery),
    EP(cuEventRecord, 2000, cuEventRecord, cuEventRecord_ptsz),
    EP(cuEventRecordWithFlags, 11010, cuEventRecordWithFlags, cuEventRecordWithFlags_ptsz),
    E(cuEventSynchronize, 2000, cuEventSynchronize),
    E(cuFuncGetAttribute, 2020, cuFuncGetAttribute),
    E(cuFuncGetName, 12030, cuFuncGetName),
    E(cuFuncGetParamInfo, 12040, cuFuncGetParamInfo),
    E(cuFuncSetAttribute, 9000, cuFuncSetAttribute),
    E(cuFuncSetCacheConfig, 3000, cuFuncSetCacheConfig),
    E(cuGetErrorName, 6000, cuGetErrorName),
    E(cuGetErrorString, 6000, cuGetErrorString),
    E(cuGetProcAddress, 11030, cuGetProcAddress_v1),
    E(cuGetProcAddress, 12000, cuGetProcAddress_v2),
    E(cuInit, 2000, cuInit),
    EP(cuLaunchCooperativeKernel, 9000, cuLaunchCooperativeKernel, cuLaunchCooperativeKernel_ptsz),
    EP(cuLaunchKernel, 4000, cuLaunchKernel, cuLaunchKernel_ptsz),
    EP(cuLaunchKernelEx, 11060, cuLaunchKernelEx, cuLaunchKernelEx_ptsz),
    E(cuLinkAddData, 5050,
      cuLinkAddData_v2),  // the 5.5 and 6.5 ABIs are identical
    E(cuLinkAddData, 6050, cuLinkAddData_v2),
    E(cuLinkComplete, 5050, cuLinkComplete),
    E(cuLinkCreate, 5050, cuLinkCreate_v2),
    E(cuLinkCreate, 6050, cuLinkCreate_v2),
    E(cuLinkDestroy, 5050, cuLinkDestroy),
    E(cuMemAddressFree, 10020, cuMemAddressFree),
    E(cuMemAddressReserve, 10020, cuMemAddressReserve),
    E(cuMemAlloc, 3020, cuMemAlloc_v2),
    E(cuMemAllocHost, 3020, cuMemAllocHost_v2),
    E(cuMemCreate, 10020, cuMemCreate),
    E(cuMemExportToShareableHandle, 10020, cuMemExportToShareableHandle),
    E(cuMemFree, 3020, cuMemFree_v2),
    E(cuMemFreeHost, 2000, cuMemFreeHost),
    E(cuMemGetAccess, 10020, cuMemGetAccess),
    E(cuMemGetAddressRange, 3020, cuMemGetAddressRange_v2),
    E(cuMemGetAllocationGranularity, 10020, cuMemGetAllocationGranularity),
    E(cuMemGetAllocationPropertiesFromHandle, 10020, cuMemGetAllocationPropertiesFromHandle),
    E(cuMemGetInfo, 3020, cuMemGetInfo_v2),
    E(cuMemImportFromShareableHandle, 10020, cuMemImportFromShareableHandle),
    E(cuMemMap, 10020, cuMemMap),
    E(cuMemRelease, 10020, cuMemRelease),
    E(cuMemRetainAllocationHandle, 11000, cuMemRetainAllocationHandle),
    E(cuMemSetAccess, 10020, cuMemSetAccess),
    E(cuKernelGetAttribute, 12000, cuKernelGetAttribute),
    E(cuKernelGetFunction, 12000, cuKernelGetFunction),
    E(cuKernelGetName, 12030, cuKernelGetName),
    E(cuKernelGetParamInfo, 12040, cuKernelGetParamInfo),
    E(cuKernelSetAttribute, 12000, cuKernelSetAttribute),
    E(cuKernelSetCacheConfig, 12000, cuKernelSetCacheConfig),
    E(cuLibraryEnumerateKernels, 12040, cuLibraryEnumerateKernels),
    E(cuLibraryGetGlobal, 12000, cuLibraryGetGlobal),
    E(cuLibraryGetKernel, 12000, cuLibraryGetKernel),
    E(cuLibraryGetKernelCount, 12040, cuLibraryGetKernelCount),
    E(cuLibraryGetManaged, 12000, cuLibraryGetManaged),
    E(cuLibraryLoadData, 12000, cuLibraryLoadData),
    E(cuLibraryLoadFromFile, 12000, cuLibraryLoadFromFile),
    E(cuLibraryUnload, 12000, cuLibraryUnload),
    E(cuMemUnmap, 10020, cuMemUnmap),
    EP(cuMemcpyDtoD, 3020, cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds),
    EP(cuMemcpyDtoDAsync, 3020, cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz),
    EP(cuMemcpyDtoH, 3020, cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds),
    EP(cuMemcpyDtoHAsync, 3020, cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz),
    EP(cuMemcpyHtoD, 3020, cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds),
    EP(cuMemcpyHtoDAsync, 3020, cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz),
    EP(cuMemsetD32, 3020, cuMemsetD32_v2, cuMemsetD32_v2_ptds),
    EP(cuMemsetD32Async, 3020, cuMemsetD32Async, cuMemsetD32Async_ptsz),
    EP(cuMemsetD8, 3020, cuMemsetD8_v2, cuMemsetD8_v2_ptds),
    EP(cuMemsetD8Async, 3020, cuMemsetD8Async, cuMemsetD8Async_ptsz),
    E(cuModuleGetFunction, 2000, cuModuleGetFunction),
    E(cuModuleGetGlobal, 3020, cuModuleGetGlobal_v2),
    E(cuModuleLoad, 2000, cuModuleLoad),
    E(cuModuleLoadData, 2000, cuModuleLoadData),
    E(cuModuleLoadDataEx, 2010, cuModuleLoadDataEx),
    E(cuModuleLoadFatBinary, 2000, cuModuleLoadFatBinary),
    E(cuModuleUnload, 2000, cuModuleUnload),
    E(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050, cuOccupancyMaxActiveBlocksPerMultiprocessor),
    E(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, 7000, cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags),
    E(cuOccupancyAvailableDynamicSMemPerBlock, 11000, cuOccupancyAvailableDynamicSMemPerBlock),
    E(cuOccupancyMaxPotentialBlockSize, 6050, cuOccupancyMaxPotentialBlockSize),
    E(cuOccupancyMaxPotentialBlockSizeWithFlags, 7000, cuOccupancyMaxPotentialBlockSizeWithFlags),
    E(cuPointerGetAttribute, 4000, cuPointerGetAttribute),
    E(cuPointerGetAttributes, 7000, cuPointerGetAttributes),
    E(cuStreamCreate, 2000, cuStreamCreate),
    E(cuStreamCreateWithPriority, 5050, cuStreamCreateWithPriority),
    E(cuStreamDestroy, 4000, cuStreamDestroy_v2),
    EP(cuStreamQuery, 2000, cuStreamQuery, cuStreamQuery_ptsz),
    EP(cuStreamSynchronize, 2000, cuStreamSynchronize, cuStreamSynchronize_ptsz),
    EP(cuStreamWaitEvent, 3020, cuStreamWaitEvent, cuStreamWaitEvent_ptsz),
    EP(cuStreamWriteValue32, 8000, cuStreamWriteValue32_v2,
       cuStreamWriteValue32_v2_ptsz),  // same ABI as v1
    EP(cuStreamWriteValue32, 11070, cuStreamWriteValue32_v2, cuStreamWriteValue32_v2_ptsz),
    E(cuTensorMapEncodeTiled, 12000, cuTensorMapEncodeTiled),
};
#undef E
#undef EP

}  // namespace

namespace drv::detail {

Lookup lookup_entry_point(const char* name, int cuda_version, bool ptds, void** fn) noexcept {
  *fn = nullptr;
  if (name == nullptr) return Lookup::kNotFound;
  const EntryPoint* best = nullptr;
  bool known = false;
  for (const EntryPoint& e : kEntryPoints) {
    if (std::strcmp(e.name, name) != 0) continue;
    known = true;
    if (e.version <= cuda_version && (best == nullptr || e.version > best->version)) best = &e;
  }
  if (best == nullptr) return known ? Lookup::kVersionTooLow : Lookup::kNotFound;
  *fn = ptds && best->ptds_fn != nullptr ? best->ptds_fn : best->fn;
  return Lookup::kFound;
}

}  // namespace drv::detail

void* driver_entry_point(const char* name, int cuda_version) noexcept {
  driver_mark_initialized();  // a runtime call: the real cudart has initialised
                              // the driver by now
  void* fn = nullptr;
  drv::detail::lookup_entry_point(name, cuda_version, false, &fn);
  return fn;
}

namespace drv {

CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* symbolStatus) {
  return detail::guard(__func__, [&](const char* fn) -> CUresult {
    if (symbol == nullptr || pfn == nullptr) return detail::reject(fn, symbol ? "pfn" : "symbol");
    if (cudaVersion <= 0) return detail::reject(fn, "cudaVersion");
    if (flags &
        ~static_cast<cuuint64_t>(CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
      return detail::reject(fn, "flags");
    // Works before cuInit: cudart finds cuInit itself this way.
    bool ptds = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    detail::Lookup l = detail::lookup_entry_point(symbol, cudaVersion, ptds, pfn);
    if (symbolStatus != nullptr) {
      *symbolStatus = l == detail::Lookup::kFound      ? CU_GET_PROC_ADDRESS_SUCCESS
                      : l == detail::Lookup::kNotFound ? CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
                                                       : CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    }
    if (l != detail::Lookup::kFound) {
      GENIE_LOG_INFO(log::kFakecuda, "{}: {} (CUDA {}) is not emulated", fn, symbol, cudaVersion);
      return CUDA_ERROR_NOT_FOUND;
    }
    return CUDA_SUCCESS;
  });
}

CUresult cuGetProcAddress_v1(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags) {
  return drv::cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, nullptr);
}

}  // namespace drv
}  // namespace genie::fakecuda
