// SPDX-License-Identifier: Apache-2.0
// Runtime kernels, stream capture and graph replay.
#include <algorithm>
#include <cstring>

#include "genie/common/log.hpp"
#include "genie/fakecuda/runtime.hpp"
#include "genie/fakecuda/graph.hpp"

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
  return submit(s, std::move(op), now).status();
}

// --- capture -------------------------------------------------------------------------------------------
Status Runtime::begin_capture(Stream& s, int mode) {
  if (s.kind() == Stream::Kind::kLegacy) return invalid_usage("the legacy default stream cannot be captured");
  std::lock_guard lk(capture_mu_);
  if (s.capture) return invalid_usage("stream is already capturing");
  auto session = std::make_shared<CaptureSession>();
  session->id = next_capture_id_.fetch_add(1);
  session->mode = mode;
  session->origin = &s;
  s.capture = session;
  s.capture_frontier.clear();
  s.capturing.store(true, std::memory_order_release);
  return Status::ok();
}

Result<Graph*> Runtime::end_capture(Stream& s) {
  std::shared_ptr<CaptureSession> session;
  {
    std::lock_guard lk(capture_mu_);
    if (!s.capture) return invalid_usage("stream is not capturing");
    if (s.capture->origin != &s) return invalid_usage("capture must be ended on the stream that began it");
    session = s.capture;
    // Every stream that joined this capture leaves it.
    std::shared_lock hk(handles_mu_);
    for (auto& [h, st] : streams_) {
      if (st->capture == session) {
        st->capture.reset();
        st->capture_frontier.clear();
        st->capturing.store(false, std::memory_order_release);
      }
    }
    for (auto& dev : devices_)
      for (Stream* st : dev->streams())
        if (st->capture == session) {
          st->capture.reset();
          st->capture_frontier.clear();
          st->capturing.store(false, std::memory_order_release);
        }
  }
  if (session->invalidated) return invalid_usage("capture was invalidated");
  Graph* g = session->graph.get();
  std::unique_lock hk(handles_mu_);
  graphs_.emplace(g, std::move(session->graph));
  return g;
}

bool Runtime::is_capturing(Stream& s) { return s.capturing.load(std::memory_order_acquire); }

uint64_t Runtime::capture_id(Stream& s) {
  std::lock_guard lk(capture_mu_);
  return s.capture ? s.capture->id : 0;
}

// --- graphs --------------------------------------------------------------------------------------------
Graph* Runtime::create_graph() {
  auto g = std::make_unique<Graph>();
  Graph* p = g.get();
  std::unique_lock lk(handles_mu_);
  graphs_.emplace(p, std::move(g));
  return p;
}

Status Runtime::destroy_graph(Graph* g) {
  std::unique_lock lk(handles_mu_);
  if (graphs_.erase(g) == 0) return invalid_argument("unknown graph");
  return Status::ok();
}

Graph* Runtime::resolve_graph(const void* handle) {
  std::shared_lock lk(handles_mu_);
  auto it = graphs_.find(handle);
  return it == graphs_.end() ? nullptr : it->second.get();
}

Result<Graph*> Runtime::instantiate(Graph& g) {
  auto exec = std::make_unique<Graph>();
  exec->nodes = g.nodes;  // the executable is a snapshot: later edits of g do not affect it
  exec->executable = true;
  Graph* p = exec.get();
  std::unique_lock lk(handles_mu_);
  graphs_.emplace(p, std::move(exec));
  return p;
}

Status Runtime::launch_graph(Graph& exec, Stream& s) {
  if (!exec.executable) return invalid_argument("not an executable graph");
  // One op on the stream runs every node in topological (capture) order; a node starts when its
  // dependencies have ended, so independent branches overlap on the timeline.
  auto nodes = std::make_shared<std::vector<GraphNode>>(exec.nodes);
  bool inline_ok = std::all_of(nodes->begin(), nodes->end(),
                               [](const GraphNode& n) { return n.spec.may_run_inline && !n.spec.run; });
  sched::OpSpec op;
  op.label = "graph";
  op.may_run_inline = inline_ok;
  sched::Clock* clk = &clock();
  op.run = [nodes, clk](SimTime ready, const sched::ExternalOp& lane) -> Result<SimTime> {
    std::vector<SimTime> ends(nodes->size(), ready);
    SimTime last = ready;
    for (size_t i = 0; i < nodes->size(); ++i) {
      GraphNode& n = (*nodes)[i];
      SimTime start = ready;
      for (int d : n.deps) start = max(start, ends[static_cast<size_t>(d)]);
      if (n.spec.run) {
        GENIE_ASSIGN_OR_RETURN(ends[i], n.spec.run(start, lane));
      } else {
        if (n.spec.action) n.spec.action();
        ends[i] = start + n.spec.duration;
      }
      last = max(last, ends[i]);
    }
    if (!clk->is_virtual()) {
      clk->sleep_until(last);
    }
    return last;
  };
  SimTime now = clock().api_call(options_.api_overhead);
  return submit(s, std::move(op), now).status();
}

}  // namespace genie::fakecuda
