// SPDX-License-Identifier: Apache-2.0
// Driver API: modules, functions, kernel launches, occupancy, the JIT linker
// and tensor maps.
//
// This is the path of torch's LazyNVRTC (jiterator kernels) and of Triton: a
// loaded module is opaque bytes (cubin, fatbin or PTX; the entry names of PTX
// text, of ELF cubins and of uncompressed fat binaries are read and checked,
// code_image.cpp), a function is a
// genie::fakecuda::Kernel named after it, and cuLaunchKernel / cuLaunchKernelEx
// enqueue it exactly like cudaLaunchKernel does (Runtime::launch_kernel: a timed
// stream op whose duration comes from the cost model, keyed by the function
// name).
#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "driver_common.hpp"
#include "genie/fakecuda/code_image.hpp"
#include "genie/fakecuda/graph.hpp"

namespace genie::fakecuda::drv {
using detail::guard;
using detail::reject;
using detail::to_cu;

namespace {

// What cudaFuncGetAttributes reports for every kernel (cudart_launch.cpp):
// kernels do not run here.
constexpr int kNumRegs = 32;
// Tensor maps: limits documented for cuTensorMapEncodeTiled (CUDA Driver API,
// Tensor Map Object Management).
constexpr uint32_t kTensorMapMaxRank = 5;
constexpr uint32_t kTensorMapMaxBoxDim = 256;
constexpr uint32_t kTensorMapMaxElementStride = 8;
constexpr uint64_t kTensorMapMaxGlobalDim = uint64_t{1} << 32;
constexpr uint64_t kTensorMapMaxGlobalStride = uint64_t{1} << 40;
constexpr uint32_t kTensorMapTag = 0x544d4150u;  // "TMAP", written into the opaque map
// Thread block clusters: most blocks per cluster, portable and where the function allows non-portable sizes (CUDA
// C++ Programming Guide, "Thread Block Clusters"; cudaFuncAttributeNonPortableClusterSizeAllowed, sm_90).
constexpr unsigned kMaxClusterPortable = 8;
constexpr unsigned kMaxClusterNonPortable = 16;

struct Module;

struct Function {
  static constexpr uint32_t kMagic = 0x66756e63u;  // "func"
  uint32_t magic = kMagic;
  Kernel kernel;
  Module* module = nullptr;
  const Kernel* library_kernel = nullptr;  ///< the CUkernel this is the function of (cuKernelGetFunction)
  // Attributes a client may set (cuFuncSetAttribute); defaults are the
  // driver's.
  int max_dynamic_smem = 0;          ///< CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (default: 48 KiB)
  int carveout = -1;                 ///< CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT
  std::map<int, int> cluster_attrs;  ///< REQUIRED_CLUSTER_*, NON_PORTABLE_*, SCHEDULING_POLICY
};

/// A module is a runtime code library (Runtime::load_library, as cudaLibraryLoadData): the image's kernel names,
/// parameter layouts and variables (cuModuleGetGlobal), freed with it.
struct Module {
  static constexpr uint32_t kMagic = 0x6d6f646cu;  // "modl"
  uint32_t magic = kMagic;
  CodeLibrary* lib = nullptr;
  std::map<std::string, Function*> functions;
};

struct LinkState {
  static constexpr uint32_t kMagic = 0x6c696e6bu;  // "link"
  uint32_t magic = kMagic;
  std::vector<char> image;
};

/// Live modules, functions and link states. Unloaded modules' functions are
/// kept (invalidated) so a racing launch never touches freed memory.
struct Registry {
  std::mutex mu;
  std::unordered_set<Module*> modules;
  std::unordered_set<Function*> functions;
  /// The Function of each CUkernel (a code library's Kernel, cuLibraryGetKernel) that was used as a CUfunction.
  std::unordered_map<const Kernel*, Function*> kernel_functions;
  std::unordered_set<LinkState*> links;
  std::vector<std::unique_ptr<Function>> graveyard;
};
Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}

CUresult load(const char* fn, CUmodule* module, const void* image) {
  if (module == nullptr || image == nullptr) return reject(fn, module ? "image" : "module");
  GENIE_CU_RT(r);
  GENIE_CU_CTX(c, r);
  (void)c;
  auto m = std::make_unique<Module>();
  // A cubin, PTX text or fat binary names its kernels (code_image.cpp); one we cannot read stays a module of any
  // function.
  Result<CodeLibrary*> lib = r->load_library(image);
  if (!lib.is_ok()) return reject(fn, "image", CUDA_ERROR_INVALID_IMAGE);
  m->lib = lib.value();
  Registry& reg = registry();
  std::lock_guard lk(reg.mu);
  Module* raw = m.release();
  reg.modules.insert(raw);
  *module = reinterpret_cast<CUmodule>(raw);
  return CUDA_SUCCESS;
}

int default_max_dynamic_smem(const DeviceSpec& spec) { return spec.shared_mem_per_block; }

/// The live Function behind `f`, or nullptr. `f` may also be a CUkernel (a code library's kernel, which the CUDA 12
/// driver takes wherever a CUfunction goes): its Function is made at first use and lives as long as the kernel's
/// handle is valid (after cuLibraryUnload the handle is refused). Caller holds registry().mu.
Function* function_locked(CUfunction f) {
  Registry& reg = registry();
  auto* p = reinterpret_cast<Function*>(f);
  if (reg.functions.count(p)) {
    // A CUkernel's function goes with its library.
    if (p->library_kernel != nullptr && ModuleRegistry::from_handle(p->library_kernel) == nullptr) return nullptr;
    return p;
  }
  const Kernel* k = ModuleRegistry::from_handle(static_cast<const void*>(f));
  if (k == nullptr) return nullptr;
  auto it = reg.kernel_functions.find(k);
  if (it != reg.kernel_functions.end()) return it->second;
  auto* fn = new Function();
  fn->kernel.name = k->name;
  fn->kernel.params = k->params;
  fn->library_kernel = k;
  Runtime* r = detail::runtime();
  fn->max_dynamic_smem = r != nullptr ? default_max_dynamic_smem(r->device(0).spec()) : 0;
  reg.graveyard.emplace_back(fn);  // owned here: never freed while the process runs
  reg.functions.insert(fn);
  reg.kernel_functions.emplace(k, fn);
  return fn;
}

CUresult launch(const char* fn, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                unsigned bz, unsigned smem, CUstream h, void** params, void** extra, bool ptds) {
  GENIE_CU_RT(r);
  GENIE_CU_STREAM(s, r, h, ptds);
  if (params != nullptr && extra != nullptr) return reject(fn, "kernelParams and extra");
  // The op's trace label points into the kernel's name, so the launch uses the Function's own Kernel, not a copy
  // (a copy's name died with this call: 'invalid UTF-8' in the report). Functions are never freed (unloaded ones go
  // to the registry's graveyard), so the reference stays valid.
  const Kernel* k = nullptr;
  int max_smem = 0;
  {
    Registry& reg = registry();
    std::lock_guard lk(reg.mu);
    Function* func = function_locked(f);
    if (func == nullptr) return reject(fn, "f", CUDA_ERROR_INVALID_HANDLE);
    k = &func->kernel;
    max_smem = func->max_dynamic_smem;
  }
  if (static_cast<int64_t>(smem) > max_smem) return reject(fn, "sharedMemBytes (above the function's maximum)");
  KernelShape shape;
  shape.grid[0] = gx, shape.grid[1] = gy, shape.grid[2] = gz;
  shape.block[0] = bx, shape.block[1] = by, shape.block[2] = bz;
  shape.shared_mem = smem;
  Status st = r->launch_kernel(*k, shape, *s, params);
  return st.is_ok() ? CUDA_SUCCESS : reject(fn, st.message().c_str(), detail::to_cu(st));
}

size_t tensor_element_bytes(CUtensorMapDataType t) {
  switch (t) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8:
      return 1;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
      return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT32:
    case CU_TENSOR_MAP_DATA_TYPE_INT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ:
      return 4;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64:
      return 8;
    default:
      return 0;  // packed sub-byte types: no per-element size
  }
}

}  // namespace

// --- modules
// --------------------------------------------------------------------------------------------
CUresult cuModuleLoad(CUmodule* module, const char* fname) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (module == nullptr || fname == nullptr) return reject(fn, module ? "fname" : "module");
    std::ifstream in(fname, std::ios::binary);
    if (!in) return reject(fn, fname, CUDA_ERROR_FILE_NOT_FOUND);
    std::vector<char> image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (image.empty()) return reject(fn, fname, CUDA_ERROR_INVALID_IMAGE);
    image.push_back('\0');  // a PTX file is read as text
    return load(fn, module, image.data());
  });
}

CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  return guard(__func__, [&](const char* fn) { return load(fn, module, image); });
}

CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int numOptions, CUjit_option* options,
                            void** optionValues) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (numOptions > 0 && (options == nullptr || optionValues == nullptr)) return reject(fn, "options");
    return load(fn, module, image);
  });
}

CUresult cuModuleLoadFatBinary(CUmodule* module, const void* fatCubin) {
  return guard(__func__, [&](const char* fn) { return load(fn, module, fatCubin); });
}

CUresult cuModuleUnload(CUmodule hmod) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    Registry& reg = registry();
    std::lock_guard lk(reg.mu);
    auto* m = reinterpret_cast<Module*>(hmod);
    if (!reg.modules.count(m)) return reject(fn, "hmod");
    for (auto& [name, f] : m->functions) {
      reg.functions.erase(f);
      f->magic = 0;
      reg.graveyard.emplace_back(f);
    }
    reg.modules.erase(m);
    Status st = r->unload_library(m->lib);  // frees the module's variables
    delete m;
    return to_cu(st);
  });
}

CUresult cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (hfunc == nullptr || name == nullptr) return reject(fn, hfunc ? "name" : "hfunc");
    GENIE_CU_RT(r);
    GENIE_CU_CTX(c, r);
    Registry& reg = registry();
    std::lock_guard lk(reg.mu);
    auto* m = reinterpret_cast<Module*>(hmod);
    if (!reg.modules.count(m)) return reject(fn, "hmod", CUDA_ERROR_INVALID_HANDLE);
    auto it = m->functions.find(name);
    if (it == m->functions.end()) {
      const CodeImage& image = m->lib->image;
      if (image.names_known && !image.entries.count(name)) return reject(fn, name, CUDA_ERROR_NOT_FOUND);
      auto* f = new Function();
      f->kernel.name = name;
      if (auto p = image.params.find(name); p != image.params.end()) f->kernel.params = p->second;
      f->module = m;
      f->max_dynamic_smem = default_max_dynamic_smem(r->device(c->device).spec());
      it = m->functions.emplace(name, f).first;
      reg.functions.insert(f);
    }
    *hfunc = reinterpret_cast<CUfunction>(it->second);
    return CUDA_SUCCESS;
  });
}

CUresult cuModuleGetGlobal_v2(CUdeviceptr* dptr, size_t* bytes, CUmodule hmod, const char* name) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (name == nullptr) return reject(fn, "name");
    GENIE_CU_RT(r);
    GENIE_CU_CTX(c, r);
    (void)c;
    CodeLibrary* lib = nullptr;
    {
      Registry& reg = registry();
      std::lock_guard lk(reg.mu);
      auto* m = reinterpret_cast<Module*>(hmod);
      if (!reg.modules.count(m)) return reject(fn, "hmod", CUDA_ERROR_INVALID_HANDLE);
      lib = m->lib;
    }
    // The variable's device memory, made at the first request and holding the image's initial bytes.
    auto g = r->library_global(*lib, name);
    if (!g.is_ok()) return reject(fn, name, CUDA_ERROR_NOT_FOUND);
    if (dptr != nullptr) *dptr = detail::to_dptr(g->first);
    if (bytes != nullptr) *bytes = g->second;
    return CUDA_SUCCESS;
  });
}

// --- function attributes and occupancy
// --------------------------------------------------------------------
CUresult cuFuncGetAttribute(int* pi, CUfunction_attribute attrib, CUfunction hfunc) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (pi == nullptr) return reject(fn, "pi");
    GENIE_CU_RT(r);
    GENIE_CU_CTX(c, r);
    const DeviceSpec& spec = r->device(c->device).spec();
    Registry& reg = registry();
    std::lock_guard lk(reg.mu);
    Function* f = function_locked(hfunc);
    if (f == nullptr) return reject(fn, "hfunc", CUDA_ERROR_INVALID_HANDLE);
    switch (attrib) {
      case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
        *pi = spec.max_threads_per_block;
        break;
      case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
      case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES:
      case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES:
      case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA:
      case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET:
        *pi = 0;
        break;
      case CU_FUNC_ATTRIBUTE_NUM_REGS:
        *pi = kNumRegs;
        break;
      case CU_FUNC_ATTRIBUTE_PTX_VERSION:
      case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
        *pi = spec.cc_major * 10 + spec.cc_minor;
        break;
      case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        *pi = f->max_dynamic_smem;
        break;
      case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
        *pi = f->carveout;
        break;
      case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
      case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
      case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
      case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
      case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: {
        auto it = f->cluster_attrs.find(attrib);
        *pi = it == f->cluster_attrs.end() ? 0 : it->second;
        break;
      }
      default:
        return reject(fn, "attrib");
    }
    return CUDA_SUCCESS;
  });
}

CUresult cuFuncGetParamInfo(CUfunction func, size_t index, size_t* offset, size_t* size) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (offset == nullptr) return reject(fn, "paramOffset");
    Registry& reg = registry();
    std::lock_guard lk(reg.mu);
    Function* f = function_locked(func);
    if (f == nullptr) return reject(fn, "func", CUDA_ERROR_INVALID_HANDLE);
    // The layout comes from the cubin's kernel info (code_image.cpp); a kernel of a PTX image or of a compressed
    // fat binary has none we could read.
    if (f->kernel.params.empty())
      return reject(fn, "func (its image gives no parameter layout: PTX text or a compressed fat binary)",
                    CUDA_ERROR_NOT_SUPPORTED);
    if (index >= f->kernel.params.size()) return reject(fn, "paramIndex (not less than the kernel's parameters)");
    *offset = f->kernel.params[index].offset;
    if (size != nullptr) *size = f->kernel.params[index].size;
    return CUDA_SUCCESS;
  });
}

CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    GENIE_CU_CTX(c, r);
    const DeviceSpec& spec = r->device(c->device).spec();
    Registry& reg = registry();
    std::lock_guard lk(reg.mu);
    Function* f = function_locked(hfunc);
    if (f == nullptr) return reject(fn, "hfunc", CUDA_ERROR_INVALID_HANDLE);
    switch (attrib) {
      case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        if (value < 0 || value > std::max(spec.shared_mem_per_block_optin, spec.shared_mem_per_block))
          return reject(fn, "value");
        f->max_dynamic_smem = value;
        return CUDA_SUCCESS;
      case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
        if (value < -1 || value > 100) return reject(fn, "value");
        f->carveout = value;
        return CUDA_SUCCESS;
      case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
      case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
      case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
      case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
      case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
        if (value < 0) return reject(fn, "value");
        f->cluster_attrs[attrib] = value;
        return CUDA_SUCCESS;
      default:
        return reject(fn, "attrib (not settable)");
    }
  });
}

CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    if (config < CU_FUNC_CACHE_PREFER_NONE || config > CU_FUNC_CACHE_PREFER_EQUAL) return reject(fn, "config");
    Registry& reg = registry();
    std::lock_guard lk(reg.mu);
    return function_locked(hfunc) ? CUDA_SUCCESS : reject(fn, "hfunc", CUDA_ERROR_INVALID_HANDLE);
  });
}

namespace {
// True when `f` is a live CUfunction (or CUkernel).
bool function_exists(CUfunction f) {
  Registry& reg = registry();
  std::lock_guard lk(reg.mu);
  return function_locked(f) != nullptr;
}

// Blocks of `block` threads with `smem` bytes of dynamic shared memory resident on one SM: the formula of
// cudaOccupancyMaxActiveBlocksPerMultiprocessor (cudart_launch.cpp; registers are not modelled).
int active_blocks(const DeviceSpec& spec, int block, size_t smem) {
  if (block <= 0 || block > spec.max_threads_per_block) return 0;
  if (smem > static_cast<size_t>(std::max(spec.shared_mem_per_block_optin, spec.shared_mem_per_block))) return 0;
  const int by_threads = spec.max_threads_per_sm / block;
  const int by_smem = smem == 0 ? spec.max_blocks_per_sm : static_cast<int>(spec.shared_mem_per_sm / smem);
  return std::max(0, std::min({by_threads, by_smem, spec.max_blocks_per_sm}));
}
}  // namespace

CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int* minGridSize, int* blockSize, CUfunction func,
                                                   CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                   size_t dynamicSMemSize, int blockSizeLimit, unsigned int flags) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (minGridSize == nullptr || blockSize == nullptr) return reject(fn, minGridSize ? "blockSize" : "minGridSize");
    if (blockSizeLimit < 0) return reject(fn, "blockSizeLimit");
    if (flags & ~static_cast<unsigned>(CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)) return reject(fn, "flags");
    GENIE_CU_RT(r);
    GENIE_CU_CTX(c, r);
    if (!function_exists(func)) return reject(fn, "func", CUDA_ERROR_INVALID_HANDLE);
    // The block size with the most resident threads per SM, the largest among equals (the occupancy calculator's
    // search, cuda_occupancy.h), tried in warp multiples from the limit down; the grid that fills every SM.
    const DeviceSpec& spec = r->device(c->device).spec();
    const int limit = blockSizeLimit == 0 ? spec.max_threads_per_block : std::min(blockSizeLimit, spec.max_threads_per_block);
    const int warp = std::max(1, spec.warp_size);
    int best_threads = 0, best_block = 0, best_blocks = 0;
    for (int b = (limit / warp) * warp; b >= warp; b -= warp) {
      const size_t smem = blockSizeToDynamicSMemSize ? blockSizeToDynamicSMemSize(b) : dynamicSMemSize;
      const int n = active_blocks(spec, b, smem);
      if (n * b > best_threads) {
        best_threads = n * b;
        best_block = b;
        best_blocks = n;
      }
    }
    *blockSize = best_block;
    *minGridSize = best_blocks * spec.sm_count;
    return CUDA_SUCCESS;
  });
}

CUresult cuOccupancyMaxPotentialBlockSize(int* minGridSize, int* blockSize, CUfunction func,
                                          CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize,
                                          int blockSizeLimit) {
  return drv::cuOccupancyMaxPotentialBlockSizeWithFlags(minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
                                                        dynamicSMemSize, blockSizeLimit, 0);
}

CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t* dynamicSmemSize, CUfunction func, int numBlocks,
                                                 int blockSize) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (dynamicSmemSize == nullptr) return reject(fn, "dynamicSmemSize");
    if (numBlocks <= 0 || blockSize <= 0) return reject(fn, numBlocks <= 0 ? "numBlocks" : "blockSize");
    GENIE_CU_RT(r);
    GENIE_CU_CTX(c, r);
    if (!function_exists(func)) return reject(fn, "func", CUDA_ERROR_INVALID_HANDLE);
    // What each of numBlocks resident blocks may take: the SM's shared memory divided among them, at most a
    // block's opt-in maximum; none when that many blocks of this size cannot be resident at all.
    const DeviceSpec& spec = r->device(c->device).spec();
    if (blockSize > spec.max_threads_per_block || active_blocks(spec, blockSize, 0) < numBlocks) {
      *dynamicSmemSize = 0;
      return CUDA_SUCCESS;
    }
    const size_t per_block = static_cast<size_t>(spec.shared_mem_per_sm) / static_cast<size_t>(numBlocks);
    *dynamicSmemSize = std::min(per_block, static_cast<size_t>(std::max(spec.shared_mem_per_block_optin,
                                                                         spec.shared_mem_per_block)));
    return CUDA_SUCCESS;
  });
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, CUfunction func, int blockSize,
                                                              size_t dynamicSMemSize, unsigned int flags) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (numBlocks == nullptr || blockSize <= 0) return reject(fn, numBlocks ? "blockSize" : "numBlocks");
    GENIE_CU_RT(r);
    GENIE_CU_CTX(c, r);
    if (flags & ~static_cast<unsigned>(CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)) return reject(fn, "flags");
    if (!function_exists(func)) return reject(fn, "func", CUDA_ERROR_INVALID_HANDLE);
    *numBlocks = active_blocks(r->device(c->device).spec(), blockSize, dynamicSMemSize);
    return CUDA_SUCCESS;
  });
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, CUfunction func, int blockSize,
                                                     size_t dynamicSMemSize) {
  return drv::cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize, 0);
}

// --- launches
// -------------------------------------------------------------------------------------------
CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                        unsigned int by, unsigned int bz, unsigned int smem, CUstream h, void** params, void** extra) {
  return guard(__func__,
               [&](const char* fn) { return launch(fn, f, gx, gy, gz, bx, by, bz, smem, h, params, extra, false); });
}
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                             unsigned int by, unsigned int bz, unsigned int smem, CUstream h, void** params,
                             void** extra) {
  return guard(__func__,
               [&](const char* fn) { return launch(fn, f, gx, gy, gz, bx, by, bz, smem, h, params, extra, true); });
}
CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                   unsigned int by, unsigned int bz, unsigned int smem, CUstream h, void** params) {
  return guard(__func__,
               [&](const char* fn) { return launch(fn, f, gx, gy, gz, bx, by, bz, smem, h, params, nullptr, false); });
}
CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                        unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem,
                                        CUstream h, void** params) {
  return guard(__func__,
               [&](const char* fn) { return launch(fn, f, gx, gy, gz, bx, by, bz, smem, h, params, nullptr, true); });
}

namespace {

/// The launch attributes of cuLaunchKernelEx (Triton sets the cluster dimension, cooperative and programmatic
/// dependent launch): checked as the driver checks them; none changes the modelled duration.
CUresult launch_ex(const char* fn, const CUlaunchConfig* config, CUfunction f, void** params, void** extra,
                   bool ptds) {
  if (config == nullptr) return reject(fn, "config");
  if (config->numAttrs > 0 && config->attrs == nullptr) return reject(fn, "config->attrs");
  const unsigned grid[3] = {config->gridDimX, config->gridDimY, config->gridDimZ};
  bool cooperative = false;
  bool non_portable_cluster = false;
  {
    Registry& reg = registry();
    std::lock_guard lk(reg.mu);
    Function* func = function_locked(f);
    if (func == nullptr) return reject(fn, "f", CUDA_ERROR_INVALID_HANDLE);
    auto it = func->cluster_attrs.find(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED);
    non_portable_cluster = it != func->cluster_attrs.end() && it->second != 0;
  }
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const CUlaunchAttribute& a = config->attrs[i];
    switch (a.id) {
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: {
        const unsigned c[3] = {a.value.clusterDim.x, a.value.clusterDim.y, a.value.clusterDim.z};
        // Portable clusters have at most 8 blocks, 16 where the function allows non-portable sizes (CUDA
        // Programming Guide, Thread Block Clusters); each dimension divides the grid's.
        const unsigned blocks = c[0] * c[1] * c[2];
        if (blocks == 0 || blocks > (non_portable_cluster ? kMaxClusterNonPortable : kMaxClusterPortable))
          return reject(fn, "the cluster dimension", CUDA_ERROR_INVALID_CLUSTER_SIZE);
        for (int d = 0; d < 3; ++d)
          if (grid[d] % c[d] != 0) return reject(fn, "a grid not divisible by the cluster", CUDA_ERROR_INVALID_CLUSTER_SIZE);
        break;
      }
      case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
        cooperative = a.value.cooperative != 0;
        break;
      case CU_LAUNCH_ATTRIBUTE_IGNORE:
      case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
      case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
      case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT:
      case CU_LAUNCH_ATTRIBUTE_PRIORITY:
      case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
      case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
      case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
      case CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT:
      case CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE:
      case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
      case CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING:
        break;  // scheduling hints and event hooks: the modelled kernel takes as long either way
      default:
        return reject(fn, "config->attrs[].id");
    }
  }
  if (cooperative) {
    // Every block of a cooperative grid must be resident at once (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE).
    GENIE_CU_RT(r);
    GENIE_CU_CTX(c, r);
    int per_sm = 0;
    const unsigned threads = config->blockDimX * config->blockDimY * config->blockDimZ;
    CUresult occ = drv::cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f, static_cast<int>(threads),
                                                                    config->sharedMemBytes);
    if (occ != CUDA_SUCCESS) return occ;
    const uint64_t resident = uint64_t{static_cast<unsigned>(per_sm)} * r->device(c->device).spec().sm_count;
    if (uint64_t{grid[0]} * grid[1] * grid[2] > resident)
      return reject(fn, "a cooperative grid larger than the device holds", CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
  }
  return launch(fn, f, grid[0], grid[1], grid[2], config->blockDimX, config->blockDimY, config->blockDimZ,
                config->sharedMemBytes, config->hStream, params, extra, ptds);
}

}  // namespace

CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** kernelParams, void** extra) {
  return guard(__func__, [&](const char* fn) { return launch_ex(fn, config, f, kernelParams, extra, false); });
}
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f, void** kernelParams, void** extra) {
  return guard(__func__, [&](const char* fn) { return launch_ex(fn, config, f, kernelParams, extra, true); });
}

// --- JIT linker: concatenates its inputs behind a tag cuModuleLoadData
// recognises -----------------------
CUresult cuLinkCreate_v2(unsigned int numOptions, CUjit_option* options, void** optionValues, CUlinkState* stateOut) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (stateOut == nullptr) return reject(fn, "stateOut");
    if (numOptions > 0 && (options == nullptr || optionValues == nullptr)) return reject(fn, "options");
    GENIE_CU_RT(r);
    auto* s = new LinkState();
    s->image.assign(kLinkedImageTag,
                    kLinkedImageTag + sizeof(kLinkedImageTag));  // tag and its NUL
    Registry& reg = registry();
    std::lock_guard lk(reg.mu);
    reg.links.insert(s);
    *stateOut = reinterpret_cast<CUlinkState>(s);
    return CUDA_SUCCESS;
  });
}

CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void* data, size_t size, const char* name,
                          unsigned int numOptions, CUjit_option* options, void** optionValues) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    (void)name;
    if (data == nullptr || size == 0) return reject(fn, data ? "size" : "data");
    if (static_cast<int>(type) < 0 || type >= CU_JIT_NUM_INPUT_TYPES) return reject(fn, "type");
    if (numOptions > 0 && (options == nullptr || optionValues == nullptr)) return reject(fn, "options");
    GENIE_CU_RT(r);
    Registry& reg = registry();
    std::lock_guard lk(reg.mu);
    auto* s = reinterpret_cast<LinkState*>(state);
    if (!reg.links.count(s)) return reject(fn, "state", CUDA_ERROR_INVALID_HANDLE);
    const char* p = static_cast<const char*>(data);
    s->image.insert(s->image.end(), p, p + size);
    return CUDA_SUCCESS;
  });
}

CUresult cuLinkComplete(CUlinkState state, void** cubinOut, size_t* sizeOut) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (cubinOut == nullptr || sizeOut == nullptr) return reject(fn, cubinOut ? "sizeOut" : "cubinOut");
    GENIE_CU_RT(r);
    Registry& reg = registry();
    std::lock_guard lk(reg.mu);
    auto* s = reinterpret_cast<LinkState*>(state);
    if (!reg.links.count(s)) return reject(fn, "state", CUDA_ERROR_INVALID_HANDLE);
    if (s->image.size() == sizeof(kLinkedImageTag)) return reject(fn, "state (no input was added)");
    *cubinOut = s->image.data();  // owned by the state until cuLinkDestroy
    *sizeOut = s->image.size();
    return CUDA_SUCCESS;
  });
}

CUresult cuLinkDestroy(CUlinkState state) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    Registry& reg = registry();
    std::lock_guard lk(reg.mu);
    auto* s = reinterpret_cast<LinkState*>(state);
    if (!reg.links.count(s)) return reject(fn, "state", CUDA_ERROR_INVALID_HANDLE);
    reg.links.erase(s);
    delete s;
    return CUDA_SUCCESS;
  });
}

// --- tensor maps
// ----------------------------------------------------------------------------------------
CUresult cuTensorMapEncodeTiled(CUtensorMap* tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
                                void* globalAddress, const cuuint64_t* globalDim, const cuuint64_t* globalStrides,
                                const cuuint32_t* boxDim, const cuuint32_t* elementStrides,
                                CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (tensorMap == nullptr) return reject(fn, "tensorMap");
    if (globalDim == nullptr || boxDim == nullptr || elementStrides == nullptr)
      return reject(fn, "globalDim/boxDim/elementStrides");
    GENIE_CU_RT(r);
    if (static_cast<int>(tensorDataType) < 0 || tensorDataType > CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B)
      return reject(fn, "tensorDataType");
    if (interleave < CU_TENSOR_MAP_INTERLEAVE_NONE || interleave > CU_TENSOR_MAP_INTERLEAVE_32B)
      return reject(fn, "interleave");
    if (tensorRank == 0 || tensorRank > kTensorMapMaxRank ||
        (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE && tensorRank < 3))
      return reject(fn, "tensorRank");
    if (tensorRank > 1 && globalStrides == nullptr) return reject(fn, "globalStrides");
    uint64_t align = interleave == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16;
    auto addr = reinterpret_cast<uintptr_t>(globalAddress);
    if (addr == 0 || addr % align != 0) return reject(fn, "globalAddress (alignment)");
    for (cuuint32_t i = 0; i < tensorRank; ++i) {
      if (globalDim[i] == 0 || globalDim[i] > kTensorMapMaxGlobalDim) return reject(fn, "globalDim");
      if (boxDim[i] == 0 || boxDim[i] > kTensorMapMaxBoxDim) return reject(fn, "boxDim");
      if (elementStrides[i] == 0 || elementStrides[i] > kTensorMapMaxElementStride) return reject(fn, "elementStrides");
    }
    for (cuuint32_t i = 0; i + 1 < tensorRank; ++i)
      if (globalStrides[i] % align != 0 || globalStrides[i] >= kTensorMapMaxGlobalStride)
        return reject(fn, "globalStrides");
    size_t elem = tensor_element_bytes(tensorDataType);
    if (interleave == CU_TENSOR_MAP_INTERLEAVE_NONE && elem != 0) {
      uint64_t inner = uint64_t{boxDim[0]} * elem;
      if (inner % 16 != 0) return reject(fn, "boxDim[0] (inner box not a multiple of 16 bytes)");
      uint64_t span = swizzle == CU_TENSOR_MAP_SWIZZLE_32B    ? 32
                      : swizzle == CU_TENSOR_MAP_SWIZZLE_64B  ? 64
                      : swizzle == CU_TENSOR_MAP_SWIZZLE_128B ? 128
                                                              : 0;
      if (span != 0 && inner > span) return reject(fn, "boxDim[0] (inner box wider than the swizzle span)");
    }
    // The 128-byte map is opaque to clients (the device reads it); an encoding
    // of the arguments is enough.
    unsigned char* out = reinterpret_cast<unsigned char*>(tensorMap);
    std::memset(out, 0, sizeof(CUtensorMap));
    std::memcpy(out, &addr, 8);
    for (cuuint32_t i = 0; i < tensorRank; ++i) {
      std::memcpy(out + 8 + 8 * i, &globalDim[i], 8);
      uint16_t b = static_cast<uint16_t>(boxDim[i]);
      std::memcpy(out + 80 + 2 * i, &b, 2);
      out[90 + i] = static_cast<unsigned char>(elementStrides[i]);
    }
    for (cuuint32_t i = 0; i + 1 < tensorRank; ++i) std::memcpy(out + 48 + 8 * i, &globalStrides[i], 8);
    unsigned char enums[6] = {static_cast<unsigned char>(tensorDataType), static_cast<unsigned char>(tensorRank),
                              static_cast<unsigned char>(interleave),     static_cast<unsigned char>(swizzle),
                              static_cast<unsigned char>(l2Promotion),    static_cast<unsigned char>(oobFill)};
    std::memcpy(out + 95, enums, sizeof(enums));
    std::memcpy(out + 104, &kTensorMapTag, sizeof(kTensorMapTag));
    return CUDA_SUCCESS;
  });
}

CUresult cuFuncGetName(const char** name, CUfunction hfunc) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (name == nullptr) return reject(fn, "name");
    GENIE_CU_RT(r);
    Registry& reg = registry();
    std::lock_guard lk(reg.mu);
    Function* f = function_locked(hfunc);
    if (f == nullptr) return reject(fn, "hfunc", CUDA_ERROR_INVALID_HANDLE);
    *name = f->kernel.name.c_str();  // Functions are never freed
    return CUDA_SUCCESS;
  });
}

namespace detail {
CUfunction live_function(CUfunction f) {
  Registry& reg = registry();
  std::lock_guard lk(reg.mu);
  return reinterpret_cast<CUfunction>(function_locked(f));
}
}  // namespace detail

}  // namespace genie::fakecuda::drv
