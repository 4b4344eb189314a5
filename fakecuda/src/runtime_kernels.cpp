// SPDX-License-Identifier: Apache-2.0
// Runtime kernels: the module registry (kernels, __device__ variables) and kernel launch as a timed stream op.
#include <algorithm>
#include <cstring>

#include "genie/common/log.hpp"
#include "genie/fakecuda/runtime.hpp"

namespace genie::fakecuda {

// --- kernels -------------------------------------------------------------------------------------------
ModuleRegistry& ModuleRegistry::instance() {
  static ModuleRegistry* r = new ModuleRegistry();  // never destroyed: atexit unregistration may run late
  return *r;
}

void ModuleRegistry::register_kernel(const void* host_stub, const char* name) {
  auto k = std::make_unique<Kernel>();
  k->host_stub = host_stub;
  k->name = name ? name : "";
  std::unique_lock lk(mu_);
  handles_.insert(k.get());
  auto& slot = kernels_[host_stub];
  if (slot) {
    replaced_.push_back(std::move(slot));  // handed-out handles of a reloaded module stay valid
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  slot = std::move(k);
}

const Kernel* ModuleRegistry::find_kernel(const void* host_stub) const {
  // Per-thread one-entry cache, invalidated when any registration replaces a kernel.
  struct Cache {
    const void* stub = nullptr;
    const Kernel* kernel = nullptr;
    uint64_t generation = 0;
  };
  GENIE_TLS_FAST thread_local Cache cache;
  uint64_t gen = generation_.load(std::memory_order_acquire);
  if (cache.stub == host_stub && cache.generation == gen && cache.kernel != nullptr) return cache.kernel;
  std::shared_lock lk(mu_);
  auto it = kernels_.find(host_stub);
  const Kernel* k = it == kernels_.end() ? nullptr : it->second.get();
  if (k) cache = {host_stub, k, gen};
  return k;
}

const Kernel* ModuleRegistry::from_handle(const void* handle) {
  // Handles are Kernel addresses we handed out; look them up rather than dereference unknown memory.
  ModuleRegistry& r = instance();
  std::shared_lock lk(r.mu_);
  return r.handles_.count(handle) ? static_cast<const Kernel*>(handle) : nullptr;
}

const Kernel* ModuleRegistry::add_handle_kernel(std::string name, std::vector<KernelParam> params) {
  auto k = std::make_unique<Kernel>();
  k->name = std::move(name);
  k->params = std::move(params);
  k->host_stub = k.get();
  const Kernel* p = k.get();
  std::unique_lock lk(mu_);
  handles_.insert(p);
  kernels_.emplace(p, std::move(k));
  return p;
}

void ModuleRegistry::retire_kernel(const Kernel* k) {
  std::unique_lock lk(mu_);
  auto it = kernels_.find(k);
  if (it == kernels_.end() || it->second->host_stub != k) return;
  handles_.erase(k);
  replaced_.push_back(std::move(it->second));
  kernels_.erase(it);
  generation_.fetch_add(1, std::memory_order_acq_rel);  // drops find_kernel's per-thread caches
}

namespace {
// A __device__ variable as device memory: its host shadow is its storage (not owned: nothing to unmap).
Allocation variable_range(void* host_var, size_t size) {
  Allocation a;
  a.base = reinterpret_cast<uintptr_t>(host_var);
  a.size = size;
  a.kind = MemKind::kDevice;
  a.device = 0;
  return a;
}
}  // namespace

void ModuleRegistry::register_var(void* host_var, size_t size) {
  std::unique_lock lk(mu_);
  vars_.emplace_back(host_var, size);
  if (memory_) memory_->add(variable_range(host_var, size));
}

void ModuleRegistry::attach(MemoryRegistry* memory) {
  std::unique_lock lk(mu_);
  memory_ = memory;
  for (auto& [p, n] : vars_) memory->add(variable_range(p, n));
}

namespace {
// An 8-byte argument below this that is not an address Genie knows is an integer (an element count); user-space
// addresses on x86-64 lie far above it.
constexpr uint64_t kLargestIntOperand = uint64_t{1} << 40;
}  // namespace

double Runtime::launch_operand_bytes(const Kernel& k, KernelShape& shape, void* const* args) {
  const CostModel::OperandRule rule = cost_->operand_rule(k.name);
  if (rule == CostModel::OperandRule::kNone) return 0;
  // Each parameter as the cubin lays it out: an 8-byte value inside device memory is a pointer operand (its extent
  // to the end of the allocation); 4-byte values, and 8-byte values that point nowhere, are integers. Scratch
  // pointers Triton appends are null: neither.
  std::vector<uint64_t> extents;
  std::vector<uintptr_t> seen;
  std::vector<int64_t> ints;
  for (size_t i = 0; i < k.params.size(); ++i) {
    const KernelParam& p = k.params[i];
    if (args[i] == nullptr) return 0;
    if (p.size == 4) {
      int32_t v;
      std::memcpy(&v, args[i], 4);
      ints.push_back(v);
    } else if (p.size == 8) {
      uint64_t v;
      std::memcpy(&v, args[i], 8);
      if (v == 0) continue;
      auto a = memory_.find(reinterpret_cast<const void*>(v));
      if (a) {
        const bool device = a->kind != MemKind::kHostPinned && a->kind != MemKind::kHostRegistered;
        if (device && std::find(seen.begin(), seen.end(), v) == seen.end()) {
          seen.push_back(v);
          extents.push_back(a->base + a->size - v);
        }
      } else if (v < kLargestIntOperand) {  // larger: an address outside Genie's memory (pageable host memory)
        ints.push_back(static_cast<int64_t>(v));
      }
    }
  }
  if (rule == CostModel::OperandRule::kTritonTemplate) {
    if (!template_gemm(shape, extents, shape.operand_gemm)) return 0;
    double bytes = 0;
    for (uint64_t e : extents) bytes += static_cast<double>(e);
    return bytes;
  }
  return operand_bytes(rule, shape, extents, ints);
}

Status Runtime::launch_kernel(const Kernel& k, const KernelShape& launch_shape, Stream& s, void* const* args) {
  KernelShape shape = launch_shape;
  if (args != nullptr) {  // a row-wise kernel whose row length is an argument (cost_model.hpp, row_argument)
    const CostModel::RowArgument ra = cost_->row_argument(k.name);
    if (ra.index >= 0 && args[ra.index] != nullptr) {
      int64_t v = 0;
      if (ra.bytes == 4) {
        int32_t x;
        std::memcpy(&x, args[ra.index], 4);
        v = x;
      } else {
        std::memcpy(&v, args[ra.index], 8);
      }
      shape.row_length = v > 0 ? v : 0;
    }
    if (!k.params.empty()) shape.operand_bytes = launch_operand_bytes(k, shape, args);
  }
  for (int i = 0; i < 3; ++i)
    if (shape.grid[i] == 0 || shape.block[i] == 0) return invalid_argument("zero grid or block dimension");
  const DeviceSpec& spec = s.device().spec();
  uint64_t threads_per_block = uint64_t{shape.block[0]} * shape.block[1] * shape.block[2];
  if (threads_per_block > static_cast<uint64_t>(spec.max_threads_per_block) || shape.block[2] > 64)
    return invalid_argument("too many threads per block");
  if (shape.grid[1] > 65535 || shape.grid[2] > 65535) return invalid_argument("grid dimension too large");
  if (shape.shared_mem > static_cast<size_t>(std::max(spec.shared_mem_per_block_optin, spec.shared_mem_per_block)))
    return invalid_argument("too much dynamic shared memory");
  sched::OpSpec op;
  op.label = k.name.c_str();  // registered kernels live for the process: the pointer stays valid
  op.kind = sched::OpKind::kKernel;
  op.duration = cost_->kernel(k.name, shape);
  SimTime now = clock().api_call(cost_->launch_overhead());
  return submit(s, std::move(op), now, &shape).status();
}

}  // namespace genie::fakecuda
