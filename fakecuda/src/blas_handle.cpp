// SPDX-License-Identifier: Apache-2.0
// BlasRegistry and the enqueueing of library work: the state the cuBLAS and cuBLASLt ABI libraries share.
#include "genie/fakecuda/blas_handle.hpp"

#include <mutex>

#include "genie/fakecuda/runtime.hpp"

namespace genie::fakecuda {

BlasRegistry& BlasRegistry::instance() {
  static BlasRegistry* r = new BlasRegistry();  // never destroyed: handles may be used from atexit handlers
  return *r;
}

BlasHandle* BlasRegistry::create(int device, bool lt) {
  auto h = std::make_unique<BlasHandle>();
  h->device = device;
  h->lt = lt;
  BlasHandle* p = h.get();
  std::unique_lock lk(mu_);
  handles_.emplace(p, std::move(h));
  return p;
}

bool BlasRegistry::destroy(const void* h) {
  std::unique_ptr<BlasHandle> victim;
  std::unique_lock lk(mu_);
  auto it = handles_.find(h);
  if (it == handles_.end()) return false;
  victim = std::move(it->second);
  victim->magic = 0;
  handles_.erase(it);
  return true;
}

BlasHandle* BlasRegistry::find(const void* h) const {
  if (h == nullptr) return nullptr;
  std::shared_lock lk(mu_);
  auto it = handles_.find(h);
  return it == handles_.end() ? nullptr : it->second.get();
}

size_t BlasRegistry::live() const {
  std::shared_lock lk(mu_);
  return handles_.size();
}

Runtime* library_runtime(Status* status) {
  Runtime* r = Runtime::instance();
  if (r == nullptr && status != nullptr) *status = Runtime::instance_status();
  return r;
}

Status enqueue_library_work(Runtime& rt, const void* stream, const char* label, SimTime duration, bool blocking,
                            std::function<void()> action) {
  Stream* s = rt.resolve_stream(stream, false);
  if (s == nullptr) return not_found("stream is not a live stream of this process");
  sched::OpSpec op;
  op.label = label;
  op.duration = duration;
  // A library call runs kernels on a GPU: the report's compute and NVML's utilization count it as one.
  op.kind = sched::OpKind::kKernel;
  op.action = std::move(action);
  SimTime now = rt.clock().api_call(rt.cost_model().launch_overhead());
  auto done = rt.submit(*s, std::move(op), now);
  if (!done.is_ok()) return done.status();
  if (blocking && !rt.is_capturing(*s)) return rt.synchronize(*s);
  return Status::ok();
}

}  // namespace genie::fakecuda
