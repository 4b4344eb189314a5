// SPDX-License-Identifier: Apache-2.0
// Runtime code libraries (cudaLibraryLoadData / cudaLibraryLoadFromFile): the kernels of a loaded image become
// Kernels with handles that every launch API takes (timed by the cost model under their names), its variables
// device memory.
#include <cstring>

#include "genie/common/log.hpp"
#include "genie/fakecuda/graph.hpp"
#include "genie/fakecuda/runtime.hpp"

namespace genie::fakecuda {

Result<CodeLibrary*> Runtime::load_library(const void* image) {
  GENIE_ASSIGN_OR_RETURN(CodeImage code, read_code_image(image));
  auto lib = std::make_shared<CodeLibrary>();
  lib->image = std::move(code);
  // A library's kernels exist from the load, as cudaLibraryGetKernelCount and cudaLibraryEnumerateKernels show.
  for (const std::string& name : lib->image.entries) {
    auto params = lib->image.params.find(name);
    lib->kernels.emplace(name, ModuleRegistry::instance().add_handle_kernel(
                                   name, params != lib->image.params.end() ? params->second
                                                                           : std::vector<KernelParam>{}));
  }
  CodeLibrary* p = lib.get();
  std::lock_guard lk(objects_mu_);
  libraries_.emplace(p, std::move(lib));
  return p;
}

Status Runtime::unload_library(CodeLibrary* lib) {
  std::shared_ptr<CodeLibrary> owned;
  {
    std::lock_guard lk(objects_mu_);
    auto it = libraries_.find(lib);
    if (it == libraries_.end()) return invalid_argument("unknown library");
    owned = std::move(it->second);
    libraries_.erase(it);
  }
  for (auto& [name, k] : owned->kernels) ModuleRegistry::instance().retire_kernel(k);
  for (auto& [name, g] : owned->globals) GENIE_TRY(free_memory(g.first, false));
  return Status::ok();
}

CodeLibrary* Runtime::resolve_library(const void* handle) {
  std::lock_guard lk(objects_mu_);
  auto it = libraries_.find(handle);
  return it == libraries_.end() ? nullptr : it->second.get();
}

Result<const Kernel*> Runtime::library_kernel(CodeLibrary& lib, const std::string& name) {
  std::lock_guard lk(objects_mu_);
  auto it = lib.kernels.find(name);
  if (it != lib.kernels.end()) return it->second;
  if (lib.image.names_known) return not_found("the library has no kernel " + name);
  // An image whose names could not be read (a compressed fat binary): any name is taken, as cuModuleGetFunction.
  const Kernel* k = ModuleRegistry::instance().add_handle_kernel(name);
  lib.kernels.emplace(name, k);
  return k;
}

std::vector<const Kernel*> Runtime::library_kernels(CodeLibrary& lib) {
  std::lock_guard lk(objects_mu_);
  std::vector<const Kernel*> out;
  for (auto& [name, k] : lib.kernels) out.push_back(k);
  return out;
}

Result<std::pair<void*, size_t>> Runtime::library_global(CodeLibrary& lib, const std::string& name) {
  std::lock_guard lk(objects_mu_);
  if (auto it = lib.globals.find(name); it != lib.globals.end()) return it->second;
  auto v = lib.image.variables.find(name);
  if (v == lib.image.variables.end()) return not_found("the library has no variable " + name);
  GENIE_ASSIGN_OR_RETURN(void* p, device_alloc(current_device(), v->second.size));
  // Device memory is host memory here: the image's initial bytes are copied in directly (fresh memory reads as
  // zeros). A timing-only run writes only control data (GENIE_DATA=none).
  if (!v->second.init.empty() && moves_bytes(v->second.size))
    std::memcpy(p, v->second.init.data(), std::min(v->second.size, v->second.init.size()));
  lib.globals.emplace(name, std::make_pair(p, v->second.size));
  return std::make_pair(p, v->second.size);
}

}  // namespace genie::fakecuda
