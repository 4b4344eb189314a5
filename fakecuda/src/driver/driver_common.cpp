// SPDX-License-Identifier: Apache-2.0
// Driver helpers: error conversion, initialisation state, primary contexts and
// the per-thread context stack.
#include "driver_common.hpp"

#include <memory>
#include <vector>

namespace genie::fakecuda {

namespace {
std::atomic<bool> g_driver_initialized{false};
}  // namespace

void driver_mark_initialized() noexcept {
  if (!g_driver_initialized.load(std::memory_order_relaxed))
    g_driver_initialized.store(true, std::memory_order_release);
}

int driver_not_emulated(const char* name) noexcept {
  static_assert(sizeof(CUresult) == sizeof(int));
  return static_cast<int>(drv::detail::not_supported(name));
}

namespace drv::detail {

CUresult to_cu(const Status& s, CUresult fallback) noexcept {
  switch (s.code()) {
    case Errc::kOk:
      return CUDA_SUCCESS;
    case Errc::kInvalidArgument:
      return CUDA_ERROR_INVALID_VALUE;
    case Errc::kInvalidUsage:
      return fallback;
    case Errc::kUnsupported:
      return CUDA_ERROR_NOT_SUPPORTED;
    case Errc::kNotFound:
      return CUDA_ERROR_INVALID_HANDLE;
    case Errc::kOutOfMemory:
      return CUDA_ERROR_OUT_OF_MEMORY;
    case Errc::kNotReady:
      return CUDA_ERROR_NOT_READY;
    case Errc::kTimeout:
      return CUDA_ERROR_LAUNCH_TIMEOUT;
    case Errc::kRemote:
    case Errc::kSystem:
    case Errc::kInternal:
      return CUDA_ERROR_UNKNOWN;
  }
  return CUDA_ERROR_UNKNOWN;
}

CUresult reject(const char* fn, const char* what, CUresult e) noexcept {
  GENIE_LOG_WARN(log::kFakecuda, "{}: invalid argument '{}' (CUresult {})", fn, what, static_cast<int>(e));
  return e;
}

CUresult not_supported(const char* fn) noexcept {
  GENIE_LOG_WARN(log::kFakecuda, "{} is not emulated: CUDA_ERROR_NOT_SUPPORTED", fn);
  return CUDA_ERROR_NOT_SUPPORTED;
}

bool initialized() noexcept { return g_driver_initialized.load(std::memory_order_acquire); }

Runtime* runtime() noexcept {
  try {
    return Runtime::instance();
  } catch (...) {
    return nullptr;
  }
}

namespace {
// Primary contexts: created once for the runtime's device count and never freed
// (handles stay valid for the life of the process, like the runtime itself).
struct Contexts {
  std::once_flag once;
  std::vector<std::unique_ptr<Context>> all;
};
Contexts& contexts(Runtime& r) {
  static Contexts* c = new Contexts();
  std::call_once(c->once, [&] {
    for (int d = 0; d < r.device_count(); ++d) {
      c->all.push_back(std::make_unique<Context>());
      c->all.back()->device = d;
    }
  });
  return *c;
}

// The calling thread's context stack. Until the thread pushes, pops or sets a
// context it "follows the runtime": its one current context is the primary
// context of the runtime's current device (what real cudart makes current).
// Once explicit, the stack holds device ordinals and its top tracks the
// runtime's current device (cudaSetDevice replaces the top of the stack with
// that device's primary context).
thread_local bool t_explicit = false;
thread_local std::vector<int> t_stack;

void make_explicit(Runtime& r) {
  if (t_explicit) return;
  t_explicit = true;
  t_stack.assign(1, r.current_device());
}
}  // namespace

Context* primary(Runtime& r, int device) { return contexts(r).all.at(static_cast<size_t>(device)).get(); }

Context* from_handle(Runtime& r, CUcontext ctx) {
  for (auto& c : contexts(r).all)
    if (reinterpret_cast<CUcontext>(c.get()) == ctx) return c.get();
  return nullptr;
}

Context* current(Runtime& r) {
  if (t_explicit) {
    if (t_stack.empty()) return nullptr;
    t_stack.back() = r.current_device();
  }
  Context* c = primary(r, r.current_device());
  std::lock_guard lk(c->mu);
  c->active = true;
  return c;
}

}  // namespace drv::detail

namespace drv {
using detail::guard;
using detail::reject;

CUresult cuCtxGetCurrent(CUcontext* pctx) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (pctx == nullptr) return reject(fn, "pctx");
    GENIE_CU_RT(r);
    *pctx = reinterpret_cast<CUcontext>(detail::current(*r));
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    detail::make_explicit(*r);
    if (ctx == nullptr) {  // pops the top of the stack (a no-op on an empty stack)
      if (!detail::t_stack.empty()) detail::t_stack.pop_back();
      if (!detail::t_stack.empty()) r->set_current_device(detail::t_stack.back());
      return CUDA_SUCCESS;
    }
    detail::Context* c = detail::from_handle(*r, ctx);
    if (c == nullptr) return reject(fn, "ctx", CUDA_ERROR_INVALID_CONTEXT);
    if (detail::t_stack.empty())
      detail::t_stack.push_back(c->device);
    else
      detail::t_stack.back() = c->device;
    r->set_current_device(c->device);
    std::lock_guard lk(c->mu);
    c->active = true;
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    detail::Context* c = detail::from_handle(*r, ctx);
    if (c == nullptr) return reject(fn, "ctx", CUDA_ERROR_INVALID_CONTEXT);
    detail::make_explicit(*r);
    if (!detail::t_stack.empty()) detail::t_stack.back() = r->current_device();
    detail::t_stack.push_back(c->device);
    r->set_current_device(c->device);
    std::lock_guard lk(c->mu);
    c->active = true;
    return CUDA_SUCCESS;
  });
}

CUresult cuCtxPopCurrent_v2(CUcontext* pctx) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    detail::make_explicit(*r);
    if (detail::t_stack.empty()) return reject(fn, "context stack (empty)", CUDA_ERROR_INVALID_CONTEXT);
    int popped = r->current_device();  // the top tracks the runtime's current device
    detail::t_stack.pop_back();
    if (pctx != nullptr) *pctx = reinterpret_cast<CUcontext>(detail::primary(*r, popped));
    if (!detail::t_stack.empty()) r->set_current_device(detail::t_stack.back());
    return CUDA_SUCCESS;
  });
}

}  // namespace drv
}  // namespace genie::fakecuda
