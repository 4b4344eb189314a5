// SPDX-License-Identifier: Apache-2.0
// libcuda.so.1: the driver's exported C symbols, each forwarding to the
// emulation in genie::fakecuda::drv (libgenie_runtime.so). Names are the real
// library's exports (`nm -D libcuda.so`): the versioned ones (cuMemAlloc_v2)
// and, where the unversioned legacy name has the same ABI, that name too
// (cuCtxDestroy). Legacy names with another ABI (32-bit CUdeviceptr_v1:
// cuMemAlloc, cuMemcpyHtoD, ...) and everything not emulated are defined in
// libcuda_unsupported.cpp and answer CUDA_ERROR_NOT_SUPPORTED.
#include <cuda.h>

#include "genie/fakecuda/driver_api.hpp"

// cuda.h maps these legacy names to their successors with macros; the legacy
// symbols are exported too.
#undef cuCtxDestroy
#undef cuEventDestroy
#undef cuEventElapsedTime
#undef cuCtxPopCurrent
#undef cuCtxPushCurrent
#undef cuDeviceGetUuid
#undef cuDevicePrimaryCtxRelease
#undef cuDevicePrimaryCtxReset
#undef cuDevicePrimaryCtxSetFlags
#undef cuGetProcAddress
#undef cuLinkAddData
#undef cuLinkCreate
#undef cuStreamDestroy
#undef cuStreamWriteValue32

#define GENIE_CU_EXPORT extern "C" __attribute__((visibility("default")))
/// Defines the export `name` forwarding to genie::fakecuda::drv::impl. The
/// guard (no exceptions, logging, argument checks) lives in the implementation.
#define GENIE_CU_FORWARD(name, impl, params, args) \
  GENIE_CU_EXPORT CUresult name params;            \
  GENIE_CU_EXPORT CUresult name params { return ::genie::fakecuda::drv::impl args; }

GENIE_CU_FORWARD(cuInit, cuInit, (unsigned int Flags), (Flags))
GENIE_CU_FORWARD(cuDriverGetVersion, cuDriverGetVersion, (int* v), (v))
GENIE_CU_FORWARD(cuGetErrorString, cuGetErrorString, (CUresult e, const char** s), (e, s))
GENIE_CU_FORWARD(cuGetErrorName, cuGetErrorName, (CUresult e, const char** s), (e, s))
GENIE_CU_FORWARD(cuGetProcAddress, cuGetProcAddress_v1, (const char* sym, void** pfn, int ver, cuuint64_t flags),
                 (sym, pfn, ver, flags))
GENIE_CU_FORWARD(cuGetProcAddress_v2, cuGetProcAddress_v2,
                 (const char* sym, void** pfn, int ver, cuuint64_t flags, CUdriverProcAddressQueryResult* st),
                 (sym, pfn, ver, flags, st))
GENIE_CU_FORWARD(cuGetExportTable, cuGetExportTable, (const void** t, const CUuuid* id), (t, id))
GENIE_CU_FORWARD(cuDeviceGet, cuDeviceGet, (CUdevice * d, int ordinal), (d, ordinal))
GENIE_CU_FORWARD(cuDeviceGetCount, cuDeviceGetCount, (int* count), (count))
GENIE_CU_FORWARD(cuDeviceGetName, cuDeviceGetName, (char* name, int len, CUdevice dev), (name, len, dev))
GENIE_CU_FORWARD(cuDeviceGetAttribute, cuDeviceGetAttribute, (int* pi, CUdevice_attribute a, CUdevice dev),
                 (pi, a, dev))
GENIE_CU_FORWARD(cuDeviceTotalMem_v2, cuDeviceTotalMem_v2, (size_t * bytes, CUdevice dev), (bytes, dev))
GENIE_CU_FORWARD(cuDeviceGetUuid, cuDeviceGetUuid_v2, (CUuuid * uuid, CUdevice dev), (uuid, dev))
GENIE_CU_FORWARD(cuDeviceGetUuid_v2, cuDeviceGetUuid_v2, (CUuuid * uuid, CUdevice dev), (uuid, dev))
GENIE_CU_FORWARD(cuDeviceComputeCapability, cuDeviceComputeCapability, (int* major, int* minor, CUdevice dev),
                 (major, minor, dev))
GENIE_CU_FORWARD(cuDeviceGetPCIBusId, cuDeviceGetPCIBusId, (char* id, int len, CUdevice dev), (id, len, dev))
GENIE_CU_FORWARD(cuDeviceGetByPCIBusId, cuDeviceGetByPCIBusId, (CUdevice * dev, const char* id), (dev, id))
GENIE_CU_FORWARD(cuDeviceCanAccessPeer, cuDeviceCanAccessPeer, (int* can, CUdevice dev, CUdevice peer),
                 (can, dev, peer))
GENIE_CU_FORWARD(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, (CUcontext * pctx, CUdevice dev), (pctx, dev))
GENIE_CU_FORWARD(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, (CUdevice dev), (dev))
GENIE_CU_FORWARD(cuDevicePrimaryCtxRelease_v2, cuDevicePrimaryCtxRelease_v2, (CUdevice dev), (dev))
GENIE_CU_FORWARD(cuDevicePrimaryCtxGetState, cuDevicePrimaryCtxGetState,
                 (CUdevice dev, unsigned int* flags, int* active), (dev, flags, active))
GENIE_CU_FORWARD(cuDevicePrimaryCtxSetFlags, cuDevicePrimaryCtxSetFlags_v2, (CUdevice dev, unsigned int flags),
                 (dev, flags))
GENIE_CU_FORWARD(cuDevicePrimaryCtxSetFlags_v2, cuDevicePrimaryCtxSetFlags_v2, (CUdevice dev, unsigned int flags),
                 (dev, flags))
GENIE_CU_FORWARD(cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset_v2, (CUdevice dev), (dev))
GENIE_CU_FORWARD(cuDevicePrimaryCtxReset_v2, cuDevicePrimaryCtxReset_v2, (CUdevice dev), (dev))
GENIE_CU_FORWARD(cuCtxGetCurrent, cuCtxGetCurrent, (CUcontext * pctx), (pctx))
GENIE_CU_FORWARD(cuCtxSetCurrent, cuCtxSetCurrent, (CUcontext ctx), (ctx))
GENIE_CU_FORWARD(cuCtxPushCurrent, cuCtxPushCurrent_v2, (CUcontext ctx), (ctx))
GENIE_CU_FORWARD(cuCtxPushCurrent_v2, cuCtxPushCurrent_v2, (CUcontext ctx), (ctx))
GENIE_CU_FORWARD(cuCtxPopCurrent, cuCtxPopCurrent_v2, (CUcontext * pctx), (pctx))
GENIE_CU_FORWARD(cuCtxPopCurrent_v2, cuCtxPopCurrent_v2, (CUcontext * pctx), (pctx))
GENIE_CU_FORWARD(cuCtxGetDevice, cuCtxGetDevice, (CUdevice * dev), (dev))
GENIE_CU_FORWARD(cuCtxGetDevice_v2, cuCtxGetDevice_v2, (CUdevice * dev, CUcontext ctx), (dev, ctx))
GENIE_CU_FORWARD(cuCtxSynchronize, cuCtxSynchronize, (void), ())
GENIE_CU_FORWARD(cuCtxSynchronize_v2, cuCtxSynchronize_v2, (CUcontext ctx), (ctx))
GENIE_CU_FORWARD(cuCtxGetFlags, cuCtxGetFlags, (unsigned int* flags), (flags))
GENIE_CU_FORWARD(cuCtxGetStreamPriorityRange, cuCtxGetStreamPriorityRange, (int* least, int* greatest),
                 (least, greatest))
GENIE_CU_FORWARD(cuCtxDestroy, cuCtxDestroy_v2, (CUcontext ctx), (ctx))
GENIE_CU_FORWARD(cuCtxDestroy_v2, cuCtxDestroy_v2, (CUcontext ctx), (ctx))
GENIE_CU_FORWARD(cuMemAlloc_v2, cuMemAlloc_v2, (CUdeviceptr * p, size_t n), (p, n))
GENIE_CU_FORWARD(cuMemFree_v2, cuMemFree_v2, (CUdeviceptr p), (p))
GENIE_CU_FORWARD(cuMemGetInfo_v2, cuMemGetInfo_v2, (size_t * free, size_t* total), (free, total))
GENIE_CU_FORWARD(cuMemAllocHost_v2, cuMemAllocHost_v2, (void** pp, size_t n), (pp, n))
GENIE_CU_FORWARD(cuMemFreeHost, cuMemFreeHost, (void* p), (p))
GENIE_CU_FORWARD(cuMemGetAddressRange_v2, cuMemGetAddressRange_v2, (CUdeviceptr * base, size_t* size, CUdeviceptr p),
                 (base, size, p))
GENIE_CU_FORWARD(cuPointerGetAttribute, cuPointerGetAttribute, (void* data, CUpointer_attribute a, CUdeviceptr p),
                 (data, a, p))
GENIE_CU_FORWARD(cuPointerGetAttributes, cuPointerGetAttributes,
                 (unsigned int n, CUpointer_attribute* a, void** data, CUdeviceptr p), (n, a, data, p))
GENIE_CU_FORWARD(cuMemcpyHtoD_v2, cuMemcpyHtoD_v2, (CUdeviceptr dst, const void* src, size_t n), (dst, src, n))
GENIE_CU_FORWARD(cuMemcpyDtoH_v2, cuMemcpyDtoH_v2, (void* dst, CUdeviceptr src, size_t n), (dst, src, n))
GENIE_CU_FORWARD(cuMemcpyDtoD_v2, cuMemcpyDtoD_v2, (CUdeviceptr dst, CUdeviceptr src, size_t n), (dst, src, n))
GENIE_CU_FORWARD(cuMemcpyHtoD_v2_ptds, cuMemcpyHtoD_v2_ptds, (CUdeviceptr dst, const void* src, size_t n),
                 (dst, src, n))
GENIE_CU_FORWARD(cuMemcpyDtoH_v2_ptds, cuMemcpyDtoH_v2_ptds, (void* dst, CUdeviceptr src, size_t n), (dst, src, n))
GENIE_CU_FORWARD(cuMemcpyDtoD_v2_ptds, cuMemcpyDtoD_v2_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t n),
                 (dst, src, n))
GENIE_CU_FORWARD(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2, (CUdeviceptr dst, const void* src, size_t n, CUstream s),
                 (dst, src, n, s))
GENIE_CU_FORWARD(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2, (void* dst, CUdeviceptr src, size_t n, CUstream s),
                 (dst, src, n, s))
GENIE_CU_FORWARD(cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s),
                 (dst, src, n, s))
GENIE_CU_FORWARD(cuMemcpyHtoDAsync_v2_ptsz, cuMemcpyHtoDAsync_v2_ptsz,
                 (CUdeviceptr dst, const void* src, size_t n, CUstream s), (dst, src, n, s))
GENIE_CU_FORWARD(cuMemcpyDtoHAsync_v2_ptsz, cuMemcpyDtoHAsync_v2_ptsz,
                 (void* dst, CUdeviceptr src, size_t n, CUstream s), (dst, src, n, s))
GENIE_CU_FORWARD(cuMemcpyDtoDAsync_v2_ptsz, cuMemcpyDtoDAsync_v2_ptsz,
                 (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s), (dst, src, n, s))
GENIE_CU_FORWARD(cuMemsetD8_v2, cuMemsetD8_v2, (CUdeviceptr d, unsigned char v, size_t n), (d, v, n))
GENIE_CU_FORWARD(cuMemsetD32_v2, cuMemsetD32_v2, (CUdeviceptr d, unsigned int v, size_t n), (d, v, n))
GENIE_CU_FORWARD(cuMemsetD8_v2_ptds, cuMemsetD8_v2_ptds, (CUdeviceptr d, unsigned char v, size_t n), (d, v, n))
GENIE_CU_FORWARD(cuMemsetD32_v2_ptds, cuMemsetD32_v2_ptds, (CUdeviceptr d, unsigned int v, size_t n), (d, v, n))
GENIE_CU_FORWARD(cuMemsetD8Async, cuMemsetD8Async, (CUdeviceptr d, unsigned char v, size_t n, CUstream s), (d, v, n, s))
GENIE_CU_FORWARD(cuMemsetD32Async, cuMemsetD32Async, (CUdeviceptr d, unsigned int v, size_t n, CUstream s),
                 (d, v, n, s))
GENIE_CU_FORWARD(cuMemsetD8Async_ptsz, cuMemsetD8Async_ptsz, (CUdeviceptr d, unsigned char v, size_t n, CUstream s),
                 (d, v, n, s))
GENIE_CU_FORWARD(cuMemsetD32Async_ptsz, cuMemsetD32Async_ptsz, (CUdeviceptr d, unsigned int v, size_t n, CUstream s),
                 (d, v, n, s))
GENIE_CU_FORWARD(cuStreamCreate, cuStreamCreate, (CUstream * s, unsigned int flags), (s, flags))
GENIE_CU_FORWARD(cuStreamCreateWithPriority, cuStreamCreateWithPriority, (CUstream * s, unsigned int flags, int prio),
                 (s, flags, prio))
GENIE_CU_FORWARD(cuStreamDestroy, cuStreamDestroy_v2, (CUstream s), (s))
GENIE_CU_FORWARD(cuStreamWaitEvent, cuStreamWaitEvent, (CUstream s, CUevent e, unsigned int f), (s, e, f))
GENIE_CU_FORWARD(cuStreamWaitEvent_ptsz, cuStreamWaitEvent_ptsz, (CUstream s, CUevent e, unsigned int f), (s, e, f))
GENIE_CU_FORWARD(cuEventCreate, cuEventCreate, (CUevent * e, unsigned int f), (e, f))
GENIE_CU_FORWARD(cuEventDestroy_v2, cuEventDestroy_v2, (CUevent e), (e))
GENIE_CU_FORWARD(cuEventDestroy, cuEventDestroy_v2, (CUevent e), (e))
GENIE_CU_FORWARD(cuEventRecord, cuEventRecord, (CUevent e, CUstream s), (e, s))
GENIE_CU_FORWARD(cuEventRecord_ptsz, cuEventRecord_ptsz, (CUevent e, CUstream s), (e, s))
GENIE_CU_FORWARD(cuEventRecordWithFlags, cuEventRecordWithFlags, (CUevent e, CUstream s, unsigned int f), (e, s, f))
GENIE_CU_FORWARD(cuEventRecordWithFlags_ptsz, cuEventRecordWithFlags_ptsz, (CUevent e, CUstream s, unsigned int f),
                 (e, s, f))
GENIE_CU_FORWARD(cuEventQuery, cuEventQuery, (CUevent e), (e))
GENIE_CU_FORWARD(cuEventSynchronize, cuEventSynchronize, (CUevent e), (e))
GENIE_CU_FORWARD(cuEventElapsedTime_v2, cuEventElapsedTime_v2, (float* ms, CUevent a, CUevent b), (ms, a, b))
GENIE_CU_FORWARD(cuEventElapsedTime, cuEventElapsedTime_v2, (float* ms, CUevent a, CUevent b), (ms, a, b))
GENIE_CU_FORWARD(cuStreamDestroy_v2, cuStreamDestroy_v2, (CUstream s), (s))
GENIE_CU_FORWARD(cuStreamSynchronize, cuStreamSynchronize, (CUstream s), (s))
GENIE_CU_FORWARD(cuStreamSynchronize_ptsz, cuStreamSynchronize_ptsz, (CUstream s), (s))
GENIE_CU_FORWARD(cuStreamQuery, cuStreamQuery, (CUstream s), (s))
GENIE_CU_FORWARD(cuStreamQuery_ptsz, cuStreamQuery_ptsz, (CUstream s), (s))
GENIE_CU_FORWARD(cuStreamWriteValue32, cuStreamWriteValue32_v2,
                 (CUstream s, CUdeviceptr a, cuuint32_t v, unsigned int flags), (s, a, v, flags))
GENIE_CU_FORWARD(cuStreamWriteValue32_v2, cuStreamWriteValue32_v2,
                 (CUstream s, CUdeviceptr a, cuuint32_t v, unsigned int flags), (s, a, v, flags))
GENIE_CU_FORWARD(cuStreamWriteValue32_ptsz, cuStreamWriteValue32_v2_ptsz,
                 (CUstream s, CUdeviceptr a, cuuint32_t v, unsigned int flags), (s, a, v, flags))
GENIE_CU_FORWARD(cuStreamWriteValue32_v2_ptsz, cuStreamWriteValue32_v2_ptsz,
                 (CUstream s, CUdeviceptr a, cuuint32_t v, unsigned int flags), (s, a, v, flags))
GENIE_CU_FORWARD(cuMemAddressReserve, cuMemAddressReserve,
                 (CUdeviceptr * p, size_t size, size_t align, CUdeviceptr addr, unsigned long long flags),
                 (p, size, align, addr, flags))
GENIE_CU_FORWARD(cuMemAddressFree, cuMemAddressFree, (CUdeviceptr p, size_t size), (p, size))
GENIE_CU_FORWARD(cuMemCreate, cuMemCreate,
                 (CUmemGenericAllocationHandle * h, size_t size, const CUmemAllocationProp* prop,
                  unsigned long long flags),
                 (h, size, prop, flags))
GENIE_CU_FORWARD(cuMemRelease, cuMemRelease, (CUmemGenericAllocationHandle h), (h))
GENIE_CU_FORWARD(cuMemMap, cuMemMap,
                 (CUdeviceptr p, size_t size, size_t offset, CUmemGenericAllocationHandle h, unsigned long long flags),
                 (p, size, offset, h, flags))
GENIE_CU_FORWARD(cuMemUnmap, cuMemUnmap, (CUdeviceptr p, size_t size), (p, size))
GENIE_CU_FORWARD(cuMemSetAccess, cuMemSetAccess,
                 (CUdeviceptr p, size_t size, const CUmemAccessDesc* desc, size_t count), (p, size, desc, count))
GENIE_CU_FORWARD(cuMemGetAccess, cuMemGetAccess, (unsigned long long* flags, const CUmemLocation* loc, CUdeviceptr p),
                 (flags, loc, p))
GENIE_CU_FORWARD(cuMemGetAllocationGranularity, cuMemGetAllocationGranularity,
                 (size_t * g, const CUmemAllocationProp* prop, CUmemAllocationGranularity_flags o), (g, prop, o))
GENIE_CU_FORWARD(cuMemRetainAllocationHandle, cuMemRetainAllocationHandle,
                 (CUmemGenericAllocationHandle * h, void* addr), (h, addr))
GENIE_CU_FORWARD(cuMemGetAllocationPropertiesFromHandle, cuMemGetAllocationPropertiesFromHandle,
                 (CUmemAllocationProp * prop, CUmemGenericAllocationHandle h), (prop, h))
GENIE_CU_FORWARD(cuMemExportToShareableHandle, cuMemExportToShareableHandle,
                 (void* out, CUmemGenericAllocationHandle h, CUmemAllocationHandleType t, unsigned long long flags),
                 (out, h, t, flags))
GENIE_CU_FORWARD(cuMemImportFromShareableHandle, cuMemImportFromShareableHandle,
                 (CUmemGenericAllocationHandle * h, void* os, CUmemAllocationHandleType t), (h, os, t))
GENIE_CU_FORWARD(cuModuleLoad, cuModuleLoad, (CUmodule * m, const char* fname), (m, fname))
GENIE_CU_FORWARD(cuModuleLoadData, cuModuleLoadData, (CUmodule * m, const void* image), (m, image))
GENIE_CU_FORWARD(cuModuleLoadDataEx, cuModuleLoadDataEx,
                 (CUmodule * m, const void* image, unsigned int n, CUjit_option* o, void** v), (m, image, n, o, v))
GENIE_CU_FORWARD(cuModuleLoadFatBinary, cuModuleLoadFatBinary, (CUmodule * m, const void* fatCubin), (m, fatCubin))
GENIE_CU_FORWARD(cuModuleUnload, cuModuleUnload, (CUmodule m), (m))
GENIE_CU_FORWARD(cuModuleGetFunction, cuModuleGetFunction, (CUfunction * f, CUmodule m, const char* name), (f, m, name))
GENIE_CU_FORWARD(cuModuleGetGlobal_v2, cuModuleGetGlobal_v2, (CUdeviceptr * d, size_t* n, CUmodule m, const char* name),
                 (d, n, m, name))
GENIE_CU_FORWARD(cuLibraryLoadData, cuLibraryLoadData,
                 (CUlibrary * l, const void* code, CUjit_option* jo, void** jv, unsigned int nj, CUlibraryOption* lo,
                  void** lv, unsigned int nl),
                 (l, code, jo, jv, nj, lo, lv, nl))
GENIE_CU_FORWARD(cuLibraryLoadFromFile, cuLibraryLoadFromFile,
                 (CUlibrary * l, const char* file, CUjit_option* jo, void** jv, unsigned int nj, CUlibraryOption* lo,
                  void** lv, unsigned int nl),
                 (l, file, jo, jv, nj, lo, lv, nl))
GENIE_CU_FORWARD(cuLibraryUnload, cuLibraryUnload, (CUlibrary l), (l))
GENIE_CU_FORWARD(cuLibraryGetKernel, cuLibraryGetKernel, (CUkernel * k, CUlibrary l, const char* name), (k, l, name))
GENIE_CU_FORWARD(cuLibraryGetKernelCount, cuLibraryGetKernelCount, (unsigned int* n, CUlibrary l), (n, l))
GENIE_CU_FORWARD(cuLibraryEnumerateKernels, cuLibraryEnumerateKernels, (CUkernel * k, unsigned int n, CUlibrary l),
                 (k, n, l))
GENIE_CU_FORWARD(cuLibraryGetGlobal, cuLibraryGetGlobal, (CUdeviceptr * d, size_t* n, CUlibrary l, const char* name),
                 (d, n, l, name))
GENIE_CU_FORWARD(cuLibraryGetManaged, cuLibraryGetManaged, (CUdeviceptr * d, size_t* n, CUlibrary l, const char* name),
                 (d, n, l, name))
GENIE_CU_FORWARD(cuKernelGetFunction, cuKernelGetFunction, (CUfunction * f, CUkernel k), (f, k))
GENIE_CU_FORWARD(cuKernelGetName, cuKernelGetName, (const char** name, CUkernel k), (name, k))
GENIE_CU_FORWARD(cuFuncGetName, cuFuncGetName, (const char** name, CUfunction f), (name, f))
GENIE_CU_FORWARD(cuKernelGetParamInfo, cuKernelGetParamInfo, (CUkernel k, size_t i, size_t* offset, size_t* size),
                 (k, i, offset, size))
GENIE_CU_FORWARD(cuKernelGetAttribute, cuKernelGetAttribute, (int* pi, CUfunction_attribute a, CUkernel k, CUdevice d),
                 (pi, a, k, d))
GENIE_CU_FORWARD(cuKernelSetAttribute, cuKernelSetAttribute, (CUfunction_attribute a, int v, CUkernel k, CUdevice d),
                 (a, v, k, d))
GENIE_CU_FORWARD(cuKernelSetCacheConfig, cuKernelSetCacheConfig, (CUkernel k, CUfunc_cache c, CUdevice d), (k, c, d))
GENIE_CU_FORWARD(cuOccupancyMaxPotentialBlockSize, cuOccupancyMaxPotentialBlockSize,
                 (int* g, int* b, CUfunction f, CUoccupancyB2DSize fn, size_t smem, int limit), (g, b, f, fn, smem, limit))
GENIE_CU_FORWARD(cuOccupancyMaxPotentialBlockSizeWithFlags, cuOccupancyMaxPotentialBlockSizeWithFlags,
                 (int* g, int* b, CUfunction f, CUoccupancyB2DSize fn, size_t smem, int limit, unsigned int flags),
                 (g, b, f, fn, smem, limit, flags))
GENIE_CU_FORWARD(cuOccupancyAvailableDynamicSMemPerBlock, cuOccupancyAvailableDynamicSMemPerBlock,
                 (size_t * smem, CUfunction f, int blocks, int block), (smem, f, blocks, block))
GENIE_CU_FORWARD(cuFuncGetAttribute, cuFuncGetAttribute, (int* pi, CUfunction_attribute a, CUfunction f), (pi, a, f))
GENIE_CU_FORWARD(cuFuncGetParamInfo, cuFuncGetParamInfo, (CUfunction f, size_t i, size_t* offset, size_t* size),
                 (f, i, offset, size))
GENIE_CU_FORWARD(cuFuncSetAttribute, cuFuncSetAttribute, (CUfunction f, CUfunction_attribute a, int v), (f, a, v))
GENIE_CU_FORWARD(cuFuncSetCacheConfig, cuFuncSetCacheConfig, (CUfunction f, CUfunc_cache c), (f, c))
GENIE_CU_FORWARD(cuLaunchKernel, cuLaunchKernel,
                 (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,
                  unsigned int bz, unsigned int smem, CUstream s, void** params, void** extra),
                 (f, gx, gy, gz, bx, by, bz, smem, s, params, extra))
GENIE_CU_FORWARD(cuLaunchKernel_ptsz, cuLaunchKernel_ptsz,
                 (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,
                  unsigned int bz, unsigned int smem, CUstream s, void** params, void** extra),
                 (f, gx, gy, gz, bx, by, bz, smem, s, params, extra))
GENIE_CU_FORWARD(cuLaunchCooperativeKernel, cuLaunchCooperativeKernel,
                 (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,
                  unsigned int bz, unsigned int smem, CUstream s, void** params),
                 (f, gx, gy, gz, bx, by, bz, smem, s, params))
GENIE_CU_FORWARD(cuLaunchCooperativeKernel_ptsz, cuLaunchCooperativeKernel_ptsz,
                 (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,
                  unsigned int bz, unsigned int smem, CUstream s, void** params),
                 (f, gx, gy, gz, bx, by, bz, smem, s, params))
GENIE_CU_FORWARD(cuLaunchKernelEx, cuLaunchKernelEx,
                 (const CUlaunchConfig* config, CUfunction f, void** params, void** extra), (config, f, params, extra))
GENIE_CU_FORWARD(cuLaunchKernelEx_ptsz, cuLaunchKernelEx_ptsz,
                 (const CUlaunchConfig* config, CUfunction f, void** params, void** extra), (config, f, params, extra))
GENIE_CU_FORWARD(cuOccupancyMaxActiveBlocksPerMultiprocessor, cuOccupancyMaxActiveBlocksPerMultiprocessor,
                 (int* n, CUfunction f, int bs, size_t smem), (n, f, bs, smem))
GENIE_CU_FORWARD(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags,
                 cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags,
                 (int* n, CUfunction f, int bs, size_t smem, unsigned int flags), (n, f, bs, smem, flags))
GENIE_CU_FORWARD(cuLinkCreate, cuLinkCreate_v2, (unsigned int n, CUjit_option* o, void** v, CUlinkState* st),
                 (n, o, v, st))
GENIE_CU_FORWARD(cuLinkCreate_v2, cuLinkCreate_v2, (unsigned int n, CUjit_option* o, void** v, CUlinkState* st),
                 (n, o, v, st))
GENIE_CU_FORWARD(cuLinkAddData, cuLinkAddData_v2,
                 (CUlinkState st, CUjitInputType t, void* data, size_t size, const char* name, unsigned int n,
                  CUjit_option* o, void** v),
                 (st, t, data, size, name, n, o, v))
GENIE_CU_FORWARD(cuLinkAddData_v2, cuLinkAddData_v2,
                 (CUlinkState st, CUjitInputType t, void* data, size_t size, const char* name, unsigned int n,
                  CUjit_option* o, void** v),
                 (st, t, data, size, name, n, o, v))
GENIE_CU_FORWARD(cuLinkComplete, cuLinkComplete, (CUlinkState st, void** out, size_t* size), (st, out, size))
GENIE_CU_FORWARD(cuLinkDestroy, cuLinkDestroy, (CUlinkState st), (st))
GENIE_CU_FORWARD(cuTensorMapEncodeTiled, cuTensorMapEncodeTiled,
                 (CUtensorMap * m, CUtensorMapDataType t, cuuint32_t rank, void* addr, const cuuint64_t* dim,
                  const cuuint64_t* strides, const cuuint32_t* box, const cuuint32_t* es, CUtensorMapInterleave il,
                  CUtensorMapSwizzle sw, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob),
                 (m, t, rank, addr, dim, strides, box, es, il, sw, l2, oob))
