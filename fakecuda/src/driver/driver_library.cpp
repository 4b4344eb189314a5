// SPDX-License-Identifier: Apache-2.0
// Code libraries and their kernels through the driver (cuLibrary*, cuKernel*): the runtime's code libraries
// (Runtime::load_library, as cudaLibraryLoadData), so a CUlibrary is a cudaLibrary_t and a CUkernel a cudaKernel_t,
// as on a GPU. A CUkernel goes wherever a CUfunction goes (driver_module.cpp, function_locked).
#include <fstream>
#include <iterator>
#include <vector>

#include "driver_common.hpp"
#include "genie/fakecuda/graph.hpp"

namespace genie::fakecuda::drv {
using detail::guard;
using detail::reject;
using detail::to_cu;

namespace {
bool jit_options_ok(unsigned n, const void* keys, void* const* values) {
  return n == 0 || (keys != nullptr && values != nullptr);
}

CUresult library_load(const char* fn, CUlibrary* library, const void* code) {
  GENIE_CU_RT(r);
  auto lib = r->load_library(code);
  if (!lib.is_ok()) return reject(fn, "code (not a cubin, fat binary or PTX text)", CUDA_ERROR_INVALID_IMAGE);
  *library = reinterpret_cast<CUlibrary>(lib.value());
  return CUDA_SUCCESS;
}

CUresult library_global(const char* fn, CUdeviceptr* dptr, size_t* bytes, CUlibrary library, const char* name) {
  if (name == nullptr) return reject(fn, "name");
  GENIE_CU_RT(r);
  CodeLibrary* lib = r->resolve_library(library);
  if (lib == nullptr) return reject(fn, "library", CUDA_ERROR_INVALID_HANDLE);
  auto g = r->library_global(*lib, name);
  if (!g.is_ok()) return reject(fn, name, CUDA_ERROR_NOT_FOUND);
  if (dptr != nullptr) *dptr = detail::to_dptr(g->first);
  if (bytes != nullptr) *bytes = g->second;
  return CUDA_SUCCESS;
}
}  // namespace

CUresult cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option* jitOptions, void** jitOptionsValues,
                           unsigned int numJitOptions, CUlibraryOption* libraryOptions, void** libraryOptionValues,
                           unsigned int numLibraryOptions) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (library == nullptr || code == nullptr) return reject(fn, library ? "code" : "library");
    if (!jit_options_ok(numJitOptions, jitOptions, jitOptionsValues)) return reject(fn, "jitOptions");
    if (!jit_options_ok(numLibraryOptions, libraryOptions, libraryOptionValues)) return reject(fn, "libraryOptions");
    return library_load(fn, library, code);
  });
}

CUresult cuLibraryLoadFromFile(CUlibrary* library, const char* fileName, CUjit_option* jitOptions,
                               void** jitOptionsValues, unsigned int numJitOptions, CUlibraryOption* libraryOptions,
                               void** libraryOptionValues, unsigned int numLibraryOptions) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (library == nullptr || fileName == nullptr) return reject(fn, library ? "fileName" : "library");
    if (!jit_options_ok(numJitOptions, jitOptions, jitOptionsValues)) return reject(fn, "jitOptions");
    if (!jit_options_ok(numLibraryOptions, libraryOptions, libraryOptionValues)) return reject(fn, "libraryOptions");
    std::ifstream in(fileName, std::ios::binary);
    if (!in) return reject(fn, fileName, CUDA_ERROR_FILE_NOT_FOUND);
    std::vector<char> image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (image.empty()) return reject(fn, fileName, CUDA_ERROR_INVALID_IMAGE);
    image.push_back('\0');  // a PTX file is read as text
    return library_load(fn, library, image.data());
  });
}

CUresult cuLibraryUnload(CUlibrary library) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    CodeLibrary* lib = r->resolve_library(library);
    if (lib == nullptr) return reject(fn, "library", CUDA_ERROR_INVALID_HANDLE);
    return to_cu(r->unload_library(lib), CUDA_ERROR_INVALID_HANDLE);
  });
}

CUresult cuLibraryGetKernel(CUkernel* pKernel, CUlibrary library, const char* name) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (pKernel == nullptr || name == nullptr) return reject(fn, pKernel ? "name" : "pKernel");
    GENIE_CU_RT(r);
    CodeLibrary* lib = r->resolve_library(library);
    if (lib == nullptr) return reject(fn, "library", CUDA_ERROR_INVALID_HANDLE);
    auto k = r->library_kernel(*lib, name);
    if (!k.is_ok()) return reject(fn, name, CUDA_ERROR_NOT_FOUND);
    *pKernel = reinterpret_cast<CUkernel>(const_cast<Kernel*>(k.value()));
    return CUDA_SUCCESS;
  });
}

CUresult cuLibraryGetKernelCount(unsigned int* count, CUlibrary library) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (count == nullptr) return reject(fn, "count");
    GENIE_CU_RT(r);
    CodeLibrary* lib = r->resolve_library(library);
    if (lib == nullptr) return reject(fn, "lib", CUDA_ERROR_INVALID_HANDLE);
    *count = static_cast<unsigned>(r->library_kernels(*lib).size());
    return CUDA_SUCCESS;
  });
}

CUresult cuLibraryEnumerateKernels(CUkernel* kernels, unsigned int numKernels, CUlibrary library) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (kernels == nullptr && numKernels > 0) return reject(fn, "kernels");
    GENIE_CU_RT(r);
    CodeLibrary* lib = r->resolve_library(library);
    if (lib == nullptr) return reject(fn, "lib", CUDA_ERROR_INVALID_HANDLE);
    std::vector<const Kernel*> all = r->library_kernels(*lib);
    for (unsigned i = 0; i < numKernels && i < all.size(); ++i)
      kernels[i] = reinterpret_cast<CUkernel>(const_cast<Kernel*>(all[i]));
    return CUDA_SUCCESS;
  });
}

CUresult cuLibraryGetGlobal(CUdeviceptr* dptr, size_t* bytes, CUlibrary library, const char* name) {
  return guard(__func__, [&](const char* fn) { return library_global(fn, dptr, bytes, library, name); });
}

CUresult cuLibraryGetManaged(CUdeviceptr* dptr, size_t* bytes, CUlibrary library, const char* name) {
  return guard(__func__, [&](const char* fn) { return library_global(fn, dptr, bytes, library, name); });
}

CUresult cuKernelGetFunction(CUfunction* pFunc, CUkernel kernel) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (pFunc == nullptr) return reject(fn, "pFunc");
    GENIE_CU_RT(r);
    GENIE_CU_CTX(c, r);
    (void)c;
    if (ModuleRegistry::from_handle(static_cast<const void*>(kernel)) == nullptr)
      return reject(fn, "kernel", CUDA_ERROR_INVALID_HANDLE);
    CUfunction f = detail::live_function(reinterpret_cast<CUfunction>(kernel));
    if (f == nullptr) return reject(fn, "kernel", CUDA_ERROR_INVALID_HANDLE);
    *pFunc = f;
    return CUDA_SUCCESS;
  });
}

CUresult cuKernelGetName(const char** name, CUkernel hfunc) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (name == nullptr) return reject(fn, "name");
    GENIE_CU_RT(r);
    const Kernel* k = ModuleRegistry::from_handle(static_cast<const void*>(hfunc));
    if (k == nullptr) return reject(fn, "hfunc", CUDA_ERROR_INVALID_HANDLE);
    *name = k->name.c_str();  // library kernels are never freed (retired on unload)
    return CUDA_SUCCESS;
  });
}

CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t* paramOffset, size_t* paramSize) {
  return drv::cuFuncGetParamInfo(reinterpret_cast<CUfunction>(kernel), paramIndex, paramOffset, paramSize);
}

CUresult cuKernelGetAttribute(int* pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    GENIE_CU_DEVICE(r, dev);
    return drv::cuFuncGetAttribute(pi, attrib, reinterpret_cast<CUfunction>(kernel));
  });
}

CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    GENIE_CU_DEVICE(r, dev);
    return drv::cuFuncSetAttribute(reinterpret_cast<CUfunction>(kernel), attrib, val);
  });
}

CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    GENIE_CU_DEVICE(r, dev);
    return drv::cuFuncSetCacheConfig(reinterpret_cast<CUfunction>(kernel), config);
  });
}

}  // namespace genie::fakecuda::drv
