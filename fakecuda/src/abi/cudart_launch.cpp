// SPDX-License-Identifier: Apache-2.0
// cudart ABI: fatbin/kernel registration, launch configuration, kernel launches, function attributes,
// occupancy and driver entry points.
#include <cstring>
#include <vector>

#include "abi_common.hpp"
#include "genie/fakecuda/driver.hpp"

using namespace genie::fakecuda;
using genie::fakecuda::abi::guard;
using genie::fakecuda::abi::reject;
using genie::fakecuda::abi::to_cuda;

namespace {

/// One registered fatbinary (the handle nvcc's static constructor keeps). Kernels are keyed by host stub.
struct FatBinary {
  static constexpr uint32_t kMagic = 0x66617462u;  // "fatb"
  uint32_t magic = kMagic;
  void* fatbin = nullptr;
  void* self = this;  // nvcc code treats the handle as void**
};

struct CallConfig {
  dim3 grid, block;
  size_t shared_mem;
  void* stream;
};
GENIE_TLS_FAST thread_local std::vector<CallConfig> t_call_configs;

KernelShape shape_of(dim3 g, dim3 b, size_t shmem) {
  KernelShape s;
  s.grid[0] = g.x; s.grid[1] = g.y; s.grid[2] = g.z;
  s.block[0] = b.x; s.block[1] = b.y; s.block[2] = b.z;
  s.shared_mem = shmem;
  return s;
}

cudaError_t launch(Runtime* r, const Kernel* k, dim3 g, dim3 b, size_t shmem, cudaStream_t stream, bool ptds,
                   void** args) {
  if (k == nullptr) return reject("cudaLaunchKernel", "func", cudaErrorInvalidDeviceFunction);
  GENIE_STREAM(s, r, stream, ptds);
  genie::Status st = r->launch_kernel(*k, shape_of(g, b, shmem), *s, args);
  return st.is_ok() ? cudaSuccess : reject("cudaLaunchKernel", st.message().c_str(), cudaErrorInvalidConfiguration);
}

cudaError_t impl___cudaLaunchKernel(bool ptds, cudaKernel_t kernel, dim3 g, dim3 b, void** args, size_t shmem,
                                    cudaStream_t stream) {
  return guard("__cudaLaunchKernel", [&]() -> cudaError_t {
    GENIE_RT(r);
    return launch(r, ModuleRegistry::from_handle(kernel), g, b, shmem, stream, ptds, args);
  });
}
cudaError_t impl_cudaLaunchKernel(bool ptds, const void* func, dim3 g, dim3 b, void** args, size_t shmem,
                                  cudaStream_t stream) {
  return guard("cudaLaunchKernel", [&]() -> cudaError_t {
    GENIE_RT(r);
    return launch(r, ModuleRegistry::instance().find_kernel(func), g, b, shmem, stream, ptds, args);
  });
}
cudaError_t impl_cudaLaunchCooperativeKernel(bool ptds, const void* func, dim3 g, dim3 b, void** args, size_t shmem,
                                             cudaStream_t stream) {
  return impl_cudaLaunchKernel(ptds, func, g, b, args, shmem, stream);
}
cudaError_t impl_cudaLaunchKernelExC(bool ptds, const cudaLaunchConfig_t* config, const void* func, void** args) {
  return guard("cudaLaunchKernelExC", [&]() -> cudaError_t {
    if (config == nullptr) return reject("cudaLaunchKernelExC", "config");
    GENIE_RT(r);
    const Kernel* k = ModuleRegistry::instance().find_kernel(func);
    if (k == nullptr) k = ModuleRegistry::from_handle(func);  // a cudaKernel_t is accepted too
    return launch(r, k, config->gridDim, config->blockDim, config->dynamicSmemBytes, config->stream, ptds, args);
  });
}

cudaError_t entry_point(const char* symbol, void** fn, int version, cudaDriverEntryPointQueryResult* status) {
  if (symbol == nullptr || fn == nullptr) return reject("cudaGetDriverEntryPoint", symbol ? "funcPtr" : "symbol");
  *fn = driver_entry_point(symbol, version);
  if (status) *status = *fn ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
  if (*fn == nullptr) {
    GENIE_LOG_INFO(genie::log::kFakecuda, "driver entry point {} is not emulated", symbol);
    return status ? cudaSuccess : cudaErrorSymbolNotFound;
  }
  return cudaSuccess;
}
cudaError_t impl_cudaGetDriverEntryPoint(bool, const char* symbol, void** fn, unsigned long long,
                                         cudaDriverEntryPointQueryResult* status) {
  return guard("cudaGetDriverEntryPoint",
               [&] { return entry_point(symbol, fn, abi::cudart_runtime_version(), status); });
}
cudaError_t impl_cudaGetDriverEntryPointByVersion(bool, const char* symbol, void** fn, unsigned int version,
                                                  unsigned long long, cudaDriverEntryPointQueryResult* status) {
  return guard("cudaGetDriverEntryPointByVersion",
               [&] { return entry_point(symbol, fn, static_cast<int>(version), status); });
}

}  // namespace

// --- registration (called from nvcc-generated static constructors; must not need a device) -------------
GENIE_CUDART_EXPORT void** __cudaRegisterFatBinary(void* fatCubin) {
  auto* fb = new FatBinary();  // lives until __cudaUnregisterFatBinary
  fb->fatbin = fatCubin;
  return &fb->self;
}

GENIE_CUDART_EXPORT void __cudaRegisterFatBinaryEnd(void**) {}

GENIE_CUDART_EXPORT void __cudaUnregisterFatBinary(void** handle) {
  if (handle == nullptr) return;
  auto* fb = reinterpret_cast<FatBinary*>(reinterpret_cast<char*>(handle) - offsetof(FatBinary, self));
  if (fb->magic != FatBinary::kMagic) return;
  fb->magic = 0;
  // Kernels stay registered: atexit order may run this before other threads' last launches.
}

GENIE_CUDART_EXPORT void __cudaRegisterFunction(void** handle, const char* hostFun, char* deviceFun,
                                                const char* deviceName, int, uint3*, uint3*, dim3*, dim3*, int*) {
  if (hostFun == nullptr) return;
  try {
    ModuleRegistry::instance().register_kernel(hostFun, deviceName ? deviceName : deviceFun);
  } catch (...) {
  }
}

GENIE_CUDART_EXPORT void __cudaRegisterVar(void**, char* hostVar, char*, const char*, int, size_t size, int, int) {
  if (hostVar == nullptr || size == 0) return;
  // The host shadow of a __device__ variable is its storage: copies to and from the symbol use it.
  try {
    ModuleRegistry::instance().register_var(hostVar, size);
  } catch (...) {
  }
}

GENIE_CUDART_EXPORT void __cudaRegisterManagedVar(void** h, void** hostVarPtrAddress, char* dev, const char* name,
                                                  int ext, size_t size, int constant, int global) {
  if (hostVarPtrAddress != nullptr && *hostVarPtrAddress != nullptr)
    __cudaRegisterVar(h, static_cast<char*>(*hostVarPtrAddress), dev, name, ext, size, constant, global);
}

GENIE_CUDART_EXPORT char __cudaInitModule(void**) { return 1; }

GENIE_CUDART_EXPORT unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                                         struct CUstream_st* stream) {
  t_call_configs.push_back({gridDim, blockDim, sharedMem, stream});
  return 0;
}

GENIE_CUDART_EXPORT cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem,
                                                           void* stream) {
  if (t_call_configs.empty()) return cudaErrorMissingConfiguration;
  CallConfig c = t_call_configs.back();
  t_call_configs.pop_back();
  if (gridDim) *gridDim = c.grid;
  if (blockDim) *blockDim = c.block;
  if (sharedMem) *sharedMem = c.shared_mem;
  if (stream) *static_cast<void**>(stream) = c.stream;
  return cudaSuccess;
}

GENIE_CUDART_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* hostStub) {
  return guard(__func__, [&]() -> cudaError_t {
    if (kernel == nullptr) return reject("__cudaGetKernel", "kernel");
    GENIE_RT(r);
    const Kernel* k = ModuleRegistry::instance().find_kernel(hostStub);
    if (k == nullptr) return reject("__cudaGetKernel", "hostStub", cudaErrorInvalidDeviceFunction);
    *kernel = reinterpret_cast<cudaKernel_t>(const_cast<Kernel*>(k));
    return cudaSuccess;
  });
}

GENIE_CUDART_PTSZ(__cudaLaunchKernel,
                  (cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args, size_t sharedMem,
                   cudaStream_t stream),
                  (kernel, gridDim, blockDim, args, sharedMem, stream))
GENIE_CUDART_PTSZ(cudaLaunchKernel,
                  (const void* func, dim3 gridDim, dim3 blockDim, void** args, size_t sharedMem, cudaStream_t stream),
                  (func, gridDim, blockDim, args, sharedMem, stream))
GENIE_CUDART_PTSZ(cudaLaunchCooperativeKernel,
                  (const void* func, dim3 gridDim, dim3 blockDim, void** args, size_t sharedMem, cudaStream_t stream),
                  (func, gridDim, blockDim, args, sharedMem, stream))
GENIE_CUDART_PTSZ(cudaLaunchKernelExC, (const cudaLaunchConfig_t* config, const void* func, void** args),
                  (config, func, args))
GENIE_CUDART_PTSZ(cudaGetDriverEntryPoint,
                  (const char* symbol, void** funcPtr, unsigned long long flags,
                   enum cudaDriverEntryPointQueryResult* driverStatus),
                  (symbol, funcPtr, flags, driverStatus))
GENIE_CUDART_PTSZ(cudaGetDriverEntryPointByVersion,
                  (const char* symbol, void** funcPtr, unsigned int cudaVersion, unsigned long long flags,
                   enum cudaDriverEntryPointQueryResult* driverStatus),
                  (symbol, funcPtr, cudaVersion, flags, driverStatus))

// --- function attributes and occupancy (answered from the preset) ---------------------------------------
GENIE_CUDART_EXPORT cudaError_t cudaGetFuncBySymbol(cudaFunction_t* functionPtr, const void* symbolPtr) {
  return guard(__func__, [&]() -> cudaError_t {
    if (functionPtr == nullptr) return reject(__func__, "functionPtr");
    GENIE_RT(r);
    const Kernel* k = ModuleRegistry::instance().find_kernel(symbolPtr);
    if (k == nullptr) return reject(__func__, "symbolPtr", cudaErrorInvalidDeviceFunction);
    *functionPtr = reinterpret_cast<cudaFunction_t>(const_cast<Kernel*>(k));
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func) {
  return guard(__func__, [&]() -> cudaError_t {
    if (attr == nullptr) return reject(__func__, "attr");
    GENIE_RT(r);
    if (ModuleRegistry::instance().find_kernel(func) == nullptr && ModuleRegistry::from_handle(func) == nullptr)
      return reject(__func__, "func", cudaErrorInvalidDeviceFunction);
    const DeviceSpec& spec = r->device(r->current_device()).spec();
    std::memset(attr, 0, sizeof(*attr));
    attr->maxThreadsPerBlock = spec.max_threads_per_block;
    attr->numRegs = 32;  // what the compiler typically allots a simple kernel; kernels do not run here
    attr->ptxVersion = spec.cc_major * 10 + spec.cc_minor;
    attr->binaryVersion = attr->ptxVersion;
    attr->maxDynamicSharedSizeBytes = spec.shared_mem_per_block;
    attr->preferredShmemCarveout = -1;
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  return guard(__func__, [&]() -> cudaError_t {
    GENIE_RT(r);
    if (ModuleRegistry::instance().find_kernel(func) == nullptr && ModuleRegistry::from_handle(func) == nullptr)
      return reject(__func__, "func", cudaErrorInvalidDeviceFunction);
    const DeviceSpec& spec = r->device(r->current_device()).spec();
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize &&
        (value < 0 || value > std::max(spec.shared_mem_per_block_optin, spec.shared_mem_per_block)))
      return reject(__func__, "value");
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaFuncSetCacheConfig(const void* func, cudaFuncCache) {
  return guard(__func__, [&]() -> cudaError_t {
    GENIE_RT(r);
    return ModuleRegistry::instance().find_kernel(func) || ModuleRegistry::from_handle(func) ? cudaSuccess
                                                             : reject(__func__, "func", cudaErrorInvalidDeviceFunction);
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, const void* func,
                                                                                      int blockSize, size_t smem,
                                                                                      unsigned int) {
  return guard(__func__, [&]() -> cudaError_t {
    if (numBlocks == nullptr || blockSize <= 0) return reject(__func__, numBlocks ? "blockSize" : "numBlocks");
    GENIE_RT(r);
    const DeviceSpec& spec = r->device(r->current_device()).spec();
    if (blockSize > spec.max_threads_per_block) return reject(__func__, "blockSize");
    int by_threads = spec.max_threads_per_sm / blockSize;
    int by_smem = smem == 0 ? spec.max_blocks_per_sm : static_cast<int>(spec.shared_mem_per_sm / smem);
    *numBlocks = std::max(0, std::min({by_threads, by_smem, spec.max_blocks_per_sm}));
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* func,
                                                                             int blockSize, size_t smem) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, smem, 0);
}
