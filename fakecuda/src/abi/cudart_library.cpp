// SPDX-License-Identifier: Apache-2.0
// cudart ABI: code libraries (cudaLibraryLoadData / LoadFromFile, kernels, variables) and per-device kernel
// attributes. A library's kernels are Kernels with handles (Runtime::load_library), so cudaLaunchKernel,
// cudaLaunchKernelExC and __cudaLaunchKernel launch them into the cost model like any registered kernel.
#include <fstream>
#include <iterator>
#include <vector>

#include "abi_common.hpp"
#include "genie/fakecuda/graph.hpp"

using namespace genie::fakecuda;
using genie::Errc;
using genie::fakecuda::abi::guard;
using genie::fakecuda::abi::reject;
using genie::fakecuda::abi::to_cuda;

namespace {

/// The options of cudaLibraryLoadData / LoadFromFile are JIT and linker hints: checked for shape, then ignored (no
/// code is compiled or run).
bool options_ok(unsigned n, const void* keys, void* const* values) {
  return n == 0 || (keys != nullptr && values != nullptr);
}

cudaError_t load(const char* fn, cudaLibrary_t* library, const void* code) {
  GENIE_RT(r);
  auto lib = r->load_library(code);
  if (!lib.is_ok()) return reject(fn, "code (not a cubin, fat binary or PTX text)", cudaErrorInvalidPtx);
  *library = reinterpret_cast<cudaLibrary_t>(lib.value());
  return cudaSuccess;
}

CodeLibrary* library_or_null(Runtime* r, cudaLibrary_t library) { return r->resolve_library(library); }

/// Variables of a library (cudaLibraryGetGlobal and cudaLibraryGetManaged: all memory here is host memory, so a
/// __device__ variable serves both).
cudaError_t global(const char* fn, void** dptr, size_t* bytes, cudaLibrary_t library, const char* name) {
  if (dptr == nullptr || name == nullptr) return reject(fn, dptr ? "name" : "dptr");
  GENIE_RT(r);
  CodeLibrary* lib = library_or_null(r, library);
  if (lib == nullptr) return reject(fn, "library", cudaErrorInvalidResourceHandle);
  auto g = r->library_global(*lib, name);
  if (!g.is_ok()) {
    if (g.status().code() == Errc::kNotFound) return reject(fn, name, cudaErrorSymbolNotFound);
    return to_cuda(g.status());
  }
  *dptr = g->first;
  if (bytes != nullptr) *bytes = g->second;
  return cudaSuccess;
}

}  // namespace

GENIE_CUDART_EXPORT cudaError_t cudaLibraryLoadData(cudaLibrary_t* library, const void* code, cudaJitOption* jitOptions,
                                                    void** jitOptionsValues, unsigned int numJitOptions,
                                                    cudaLibraryOption* libraryOptions, void** libraryOptionValues,
                                                    unsigned int numLibraryOptions) {
  return guard(__func__, [&]() -> cudaError_t {
    if (library == nullptr || code == nullptr) return reject(__func__, library ? "code" : "library");
    if (!options_ok(numJitOptions, jitOptions, jitOptionsValues)) return reject(__func__, "jitOptions");
    if (!options_ok(numLibraryOptions, libraryOptions, libraryOptionValues)) return reject(__func__, "libraryOptions");
    return load(__func__, library, code);
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaLibraryLoadFromFile(cudaLibrary_t* library, const char* fileName,
                                                        cudaJitOption* jitOptions, void** jitOptionsValues,
                                                        unsigned int numJitOptions, cudaLibraryOption* libraryOptions,
                                                        void** libraryOptionValues, unsigned int numLibraryOptions) {
  return guard(__func__, [&]() -> cudaError_t {
    if (library == nullptr || fileName == nullptr) return reject(__func__, library ? "fileName" : "library");
    if (!options_ok(numJitOptions, jitOptions, jitOptionsValues)) return reject(__func__, "jitOptions");
    if (!options_ok(numLibraryOptions, libraryOptions, libraryOptionValues)) return reject(__func__, "libraryOptions");
    std::ifstream in(fileName, std::ios::binary);
    if (!in) return reject(__func__, fileName, cudaErrorFileNotFound);
    std::vector<char> image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (image.empty()) return reject(__func__, fileName, cudaErrorInvalidPtx);
    image.push_back('\0');  // a PTX file is read as text
    return load(__func__, library, image.data());
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaLibraryUnload(cudaLibrary_t library) {
  return guard(__func__, [&]() -> cudaError_t {
    GENIE_RT(r);
    CodeLibrary* lib = library_or_null(r, library);
    if (lib == nullptr) return reject(__func__, "library", cudaErrorInvalidResourceHandle);
    return to_cuda(r->unload_library(lib));
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaLibraryGetKernel(cudaKernel_t* pKernel, cudaLibrary_t library, const char* name) {
  return guard(__func__, [&]() -> cudaError_t {
    if (pKernel == nullptr || name == nullptr) return reject(__func__, pKernel ? "name" : "pKernel");
    GENIE_RT(r);
    CodeLibrary* lib = library_or_null(r, library);
    if (lib == nullptr) return reject(__func__, "library", cudaErrorInvalidResourceHandle);
    auto k = r->library_kernel(*lib, name);
    if (!k.is_ok()) return reject(__func__, name, cudaErrorSymbolNotFound);
    *pKernel = reinterpret_cast<cudaKernel_t>(const_cast<Kernel*>(k.value()));
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaLibraryGetKernelCount(unsigned int* count, cudaLibrary_t library) {
  return guard(__func__, [&]() -> cudaError_t {
    if (count == nullptr) return reject(__func__, "count");
    GENIE_RT(r);
    CodeLibrary* lib = library_or_null(r, library);
    if (lib == nullptr) return reject(__func__, "lib", cudaErrorInvalidResourceHandle);
    *count = static_cast<unsigned>(r->library_kernels(*lib).size());
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaLibraryEnumerateKernels(cudaKernel_t* kernels, unsigned int numKernels,
                                                            cudaLibrary_t library) {
  return guard(__func__, [&]() -> cudaError_t {
    if (kernels == nullptr && numKernels > 0) return reject(__func__, "kernels");
    GENIE_RT(r);
    CodeLibrary* lib = library_or_null(r, library);
    if (lib == nullptr) return reject(__func__, "lib", cudaErrorInvalidResourceHandle);
    std::vector<const Kernel*> all = r->library_kernels(*lib);
    for (unsigned i = 0; i < numKernels && i < all.size(); ++i)
      kernels[i] = reinterpret_cast<cudaKernel_t>(const_cast<Kernel*>(all[i]));
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaLibraryGetGlobal(void** dptr, size_t* bytes, cudaLibrary_t library,
                                                     const char* name) {
  return guard(__func__, [&] { return global(__func__, dptr, bytes, library, name); });
}

GENIE_CUDART_EXPORT cudaError_t cudaLibraryGetManaged(void** dptr, size_t* bytes, cudaLibrary_t library,
                                                      const char* name) {
  return guard(__func__, [&] { return global(__func__, dptr, bytes, library, name); });
}

// Unified functions are device functions callable from the host through a table the image carries
// (__cudaRegisterUnifiedTable); device code does not run here, so no library has one.
GENIE_CUDART_EXPORT cudaError_t cudaLibraryGetUnifiedFunction(void** fptr, cudaLibrary_t library, const char* symbol) {
  return guard(__func__, [&]() -> cudaError_t {
    if (fptr == nullptr || symbol == nullptr) return reject(__func__, fptr ? "symbol" : "fptr");
    GENIE_RT(r);
    if (library_or_null(r, library) == nullptr) return reject(__func__, "library", cudaErrorInvalidResourceHandle);
    *fptr = nullptr;
    return reject(__func__, symbol, cudaErrorSymbolNotFound);
  });
}

// The attributes a kernel takes per device are those cudaFuncSetAttribute takes (cudart_launch.cpp); they are
// checked against the device's limits and change no modelled time.
GENIE_CUDART_EXPORT cudaError_t cudaKernelSetAttributeForDevice(cudaKernel_t kernel, cudaFuncAttribute attr, int value,
                                                                int device) {
  return guard(__func__, [&]() -> cudaError_t {
    GENIE_RT(r);
    if (ModuleRegistry::from_handle(kernel) == nullptr && ModuleRegistry::instance().find_kernel(kernel) == nullptr)
      return reject(__func__, "kernel", cudaErrorInvalidDeviceFunction);
    if (device < 0 || device >= r->device_count()) return reject(__func__, "device", cudaErrorInvalidDevice);
    const DeviceSpec& spec = r->device(device).spec();
    switch (attr) {
      case cudaFuncAttributeMaxDynamicSharedMemorySize:
        if (value < 0 || value > std::max(spec.shared_mem_per_block_optin, spec.shared_mem_per_block))
          return reject(__func__, "value");
        return cudaSuccess;
      case cudaFuncAttributePreferredSharedMemoryCarveout:
        return value < -1 || value > 100 ? reject(__func__, "value") : cudaSuccess;
      case cudaFuncAttributeRequiredClusterWidth:
      case cudaFuncAttributeRequiredClusterHeight:
      case cudaFuncAttributeRequiredClusterDepth:
      case cudaFuncAttributeNonPortableClusterSizeAllowed:
      case cudaFuncAttributeClusterSchedulingPolicyPreference:
        return value < 0 ? reject(__func__, "value") : cudaSuccess;
      default:
        return reject(__func__, "attr (not settable)");
    }
  });
}
