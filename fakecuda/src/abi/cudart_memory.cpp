// SPDX-License-Identifier: Apache-2.0
// cudart ABI: allocation, copies, memsets, pointer attributes, memory pools, IPC handles.
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <unordered_map>

#include "abi_common.hpp"

using namespace genie::fakecuda;
using genie::Errc;
using genie::Status;
using genie::fakecuda::abi::guard;
using genie::fakecuda::abi::reject;
using genie::fakecuda::abi::to_cuda;

namespace {

/// What a cudaIpcMemHandle_t carries: enough for another process on this host to map the range.
struct IpcMemPayload {
  static constexpr uint32_t kMagic = 0x47495043u;  // "GIPC"
  uint32_t magic;
  int32_t pid;
  int32_t fd;
  int32_t device;
  uint64_t mapped_size;
  uint64_t offset;
};
static_assert(sizeof(IpcMemPayload) <= sizeof(cudaIpcMemHandle_t));

cudaError_t alloc_error(const Status& s) {
  return s.code() == Errc::kOutOfMemory ? cudaErrorMemoryAllocation : to_cuda(s);
}

cudaError_t check_kind(const cudaMemcpyKind& kind) {
  int k = abi::enum_raw(kind);
  return k < 0 || k > 4 ? cudaErrorInvalidMemcpyDirection : cudaSuccess;
}

cudaError_t copy_impl(Runtime* r, void* dst, const void* src, size_t n, const cudaMemcpyKind& kind, Stream& s,
                      bool sync) {
  if (check_kind(kind) != cudaSuccess) return reject("cudaMemcpy", "kind", cudaErrorInvalidMemcpyDirection);
  if (sync && r->is_capturing(s)) return cudaErrorStreamCaptureUnsupported;
  Status st = r->copy_async(dst, src, n, s, abi::enum_raw(kind));
  if (!st.is_ok()) return reject("cudaMemcpy", st.message().c_str(), to_cuda(st));
  if (sync) return to_cuda(r->synchronize(s), cudaErrorStreamCaptureUnsupported);
  return cudaSuccess;
}

/// A device's default memory pool (the only pool served). Its use is the device's (Device::pool_used_bytes); the
/// settable attributes are stored.
struct MemPoolState {
  int device = 0;
  std::mutex mu;
  std::unordered_map<int, uint64_t> attrs;  // cudaMemPoolAttr -> value
};
std::mutex g_pools_mu;
// By device. Never freed, the map included (handles outlive everything, static destructors too): a map that is itself
// a global would be destroyed at exit and leave its pools unreachable (LeakSanitizer found that).
auto& g_pools = *new std::unordered_map<int, MemPoolState*>();
MemPoolState* default_pool(int device) {
  std::lock_guard lk(g_pools_mu);
  auto& p = g_pools[device];
  if (!p) {
    p = new MemPoolState();
    p->device = device;
  }
  return p;
}
/// The pool a cudaMemPool_t names, or nullptr when it is none of ours.
MemPoolState* pool_of(cudaMemPool_t pool) {
  std::lock_guard lk(g_pools_mu);
  for (auto& [device, p] : g_pools)
    if (reinterpret_cast<cudaMemPool_t>(p) == pool) return p;
  return nullptr;
}
bool pool_attr_is_64bit(cudaMemPoolAttr attr) {
  return attr == cudaMemPoolAttrReleaseThreshold || attr == cudaMemPoolAttrReservedMemCurrent ||
         attr == cudaMemPoolAttrReservedMemHigh || attr == cudaMemPoolAttrUsedMemCurrent ||
         attr == cudaMemPoolAttrUsedMemHigh;
}

}  // namespace

GENIE_CUDART_EXPORT cudaError_t cudaMalloc(void** devPtr, size_t size) {
  return guard(__func__, [&]() -> cudaError_t {
    if (devPtr == nullptr) return reject(__func__, "devPtr");
    GENIE_RT(r);
    if (size == 0) {
      *devPtr = nullptr;
      return cudaSuccess;
    }
    auto p = r->device_alloc(r->current_device(), size);
    if (!p.is_ok()) {
      *devPtr = nullptr;
      return alloc_error(p.status());
    }
    *devPtr = p.value();
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaMallocManaged(void** devPtr, size_t size, unsigned int flags) {
  return guard(__func__, [&]() -> cudaError_t {
    if (devPtr == nullptr || size == 0) return reject(__func__, devPtr ? "size" : "devPtr");
    if (flags != cudaMemAttachGlobal && flags != cudaMemAttachHost) return reject(__func__, "flags");
    GENIE_RT(r);
    auto p = r->device_alloc(r->current_device(), size, MemKind::kManaged);
    if (!p.is_ok()) return alloc_error(p.status());
    *devPtr = p.value();
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaFree(void* devPtr) {
  return guard(__func__, [&]() -> cudaError_t {
    GENIE_RT(r);
    if (devPtr == nullptr) return cudaSuccess;  // cudaFree(0) initialises the context
    // cudaFree synchronises the device (CUDA Runtime API docs) so no queued op still uses the memory.
    r->synchronize_device(r->current_device()).is_ok();
    Status s = r->free_memory(devPtr, false);
    return s.is_ok() ? cudaSuccess : reject(__func__, "devPtr");
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaMallocHost(void** ptr, size_t size) {
  return guard(__func__, [&]() -> cudaError_t {
    if (ptr == nullptr) return reject(__func__, "ptr");
    GENIE_RT(r);
    auto p = r->host_alloc(size, 0);
    if (!p.is_ok()) return alloc_error(p.status());
    *ptr = p.value();
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaHostAlloc(void** pHost, size_t size, unsigned int flags) {
  return guard(__func__, [&]() -> cudaError_t {
    if (pHost == nullptr) return reject(__func__, "pHost");
    if (flags & ~0xFu) return reject(__func__, "flags");
    GENIE_RT(r);
    auto p = r->host_alloc(size, flags);
    if (!p.is_ok()) return alloc_error(p.status());
    *pHost = p.value();
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaFreeHost(void* ptr) {
  return guard(__func__, [&]() -> cudaError_t {
    GENIE_RT(r);
    if (ptr == nullptr) return cudaSuccess;
    r->synchronize_device(r->current_device()).is_ok();
    return r->free_memory(ptr, true).is_ok() ? cudaSuccess : reject(__func__, "ptr");
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaHostGetDevicePointer(void** pDevice, void* pHost, unsigned int flags) {
  return guard(__func__, [&]() -> cudaError_t {
    if (pDevice == nullptr || flags != 0) return reject(__func__, pDevice ? "flags" : "pDevice");
    GENIE_RT(r);
    if (!r->memory().find(pHost)) return reject(__func__, "pHost");
    *pDevice = pHost;  // unified addressing: the host pointer is the device pointer
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaHostGetFlags(unsigned int* flags, void* pHost) {
  return guard(__func__, [&]() -> cudaError_t {
    if (flags == nullptr) return reject(__func__, "pFlags");
    GENIE_RT(r);
    auto a = r->memory().find(pHost);
    if (!a || a->is_device()) return reject(__func__, "pHost");
    *flags = a->flags;
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int flags) {
  return guard(__func__, [&]() -> cudaError_t {
    if (ptr == nullptr || size == 0) return reject(__func__, ptr ? "size" : "ptr");
    GENIE_RT(r);
    Status s = r->host_register(ptr, size, flags);
    return s.is_ok() ? cudaSuccess : cudaErrorHostMemoryAlreadyRegistered;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaHostUnregister(void* ptr) {
  return guard(__func__, [&]() -> cudaError_t {
    GENIE_RT(r);
    return r->host_unregister(ptr).is_ok() ? cudaSuccess : cudaErrorHostMemoryNotRegistered;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attr, const void* ptr) {
  return guard(__func__, [&]() -> cudaError_t {
    if (attr == nullptr) return reject(__func__, "attributes");
    GENIE_RT(r);
    std::memset(attr, 0, sizeof(*attr));
    auto a = r->memory().find(ptr);
    if (!a) {
      attr->type = cudaMemoryTypeUnregistered;
      attr->device = -2;
      return cudaSuccess;
    }
    void* p = const_cast<void*>(ptr);
    switch (a->kind) {
      case MemKind::kDevice:
      case MemKind::kIpcMapped:
        attr->type = cudaMemoryTypeDevice;
        attr->devicePointer = p;
        break;
      case MemKind::kManaged:
        attr->type = cudaMemoryTypeManaged;
        attr->devicePointer = p;
        attr->hostPointer = p;
        break;
      case MemKind::kHostPinned:
      case MemKind::kHostRegistered:
        attr->type = cudaMemoryTypeHost;
        attr->devicePointer = p;
        attr->hostPointer = p;
        break;
    }
    attr->device = a->device >= 0 ? a->device : r->current_device();
    return cudaSuccess;
  });
}

// --- copies and sets ----------------------------------------------------------------------------------
namespace {
cudaError_t impl_cudaMemcpy(bool ptds, void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  return guard("cudaMemcpy", [&]() -> cudaError_t {
    GENIE_RT(r);
    Stream* s = r->resolve_stream(nullptr, ptds);
    return copy_impl(r, dst, src, count, kind, *s, true);
  });
}
cudaError_t impl_cudaMemcpyAsync(bool ptds, void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                                 cudaStream_t stream) {
  return guard("cudaMemcpyAsync", [&]() -> cudaError_t {
    GENIE_RT(r);
    GENIE_STREAM(s, r, stream, ptds);
    return copy_impl(r, dst, src, count, kind, *s, false);
  });
}
cudaError_t impl_cudaMemset(bool ptds, void* dst, int value, size_t count) {
  return guard("cudaMemset", [&]() -> cudaError_t {
    GENIE_RT(r);
    Stream* s = r->resolve_stream(nullptr, ptds);
    if (r->is_capturing(*s)) return cudaErrorStreamCaptureUnsupported;
    Status st = r->memset_async(dst, value, count, *s);
    if (!st.is_ok()) return reject("cudaMemset", "devPtr", to_cuda(st));
    return to_cuda(r->synchronize(*s));
  });
}
cudaError_t impl_cudaMemsetAsync(bool ptds, void* dst, int value, size_t count, cudaStream_t stream) {
  return guard("cudaMemsetAsync", [&]() -> cudaError_t {
    GENIE_RT(r);
    GENIE_STREAM(s, r, stream, ptds);
    Status st = r->memset_async(dst, value, count, *s);
    return st.is_ok() ? cudaSuccess : reject("cudaMemsetAsync", "devPtr", to_cuda(st));
  });
}

// 2D copies: one stream op that copies `height` rows; every row is checked before anything is queued.
cudaError_t copy2d(Runtime* r, void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                   const cudaMemcpyKind& kind, Stream& s, bool sync) {
  if (check_kind(kind) != cudaSuccess) return cudaErrorInvalidMemcpyDirection;
  if (width > dpitch || width > spitch) return reject("cudaMemcpy2D", "width", cudaErrorInvalidPitchValue);
  if (height == 0 || width == 0) return cudaSuccess;
  for (size_t row = 0; row < height; row += std::max<size_t>(1, height - 1)) {
    const char* sp = static_cast<const char*>(src) + row * spitch;
    char* dp = static_cast<char*>(dst) + row * dpitch;
    if (r->memory().find(dp) && !r->memory().find(dp, width)) return reject("cudaMemcpy2D", "dst");
    if (r->memory().find(sp) && !r->memory().find(sp, width)) return reject("cudaMemcpy2D", "src");
  }
  auto d = r->memory().find(dst);
  auto sr = r->memory().find(src);
  CopyKind ck = (d && d->is_device()) ? ((sr && sr->is_device()) ? CopyKind::kDeviceToDevice : CopyKind::kHostToDevice)
                                      : ((sr && sr->is_device()) ? CopyKind::kDeviceToHost : CopyKind::kHostToHost);
  genie::sched::OpSpec op;
  op.label = "memcpy2d";
  op.duration = r->cost_model().copy(ck, width * height, true);
  MemoryRegistry* mem = &r->memory();
  // Timing only (GENIE_DATA=none): nothing read or written, unless both sides are the program's host memory.
  if (ck == CopyKind::kHostToHost || r->moves_bytes(width * height))
    op.action = [=] {
      for (size_t row = 0; row < height; ++row)
        mem->copy(static_cast<char*>(dst) + row * dpitch, static_cast<const char*>(src) + row * spitch, width).is_ok();
    };
  r->api_call();
  Status st = r->submit(s, std::move(op)).status();
  if (!st.is_ok()) return to_cuda(st);
  return sync ? to_cuda(r->synchronize(s), cudaErrorStreamCaptureUnsupported) : cudaSuccess;
}
cudaError_t impl_cudaMemcpy2D(bool ptds, void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                              size_t height, cudaMemcpyKind kind) {
  return guard("cudaMemcpy2D", [&]() -> cudaError_t {
    GENIE_RT(r);
    return copy2d(r, dst, dpitch, src, spitch, width, height, kind, *r->resolve_stream(nullptr, ptds), true);
  });
}
cudaError_t impl_cudaMemcpy2DAsync(bool ptds, void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                   size_t height, cudaMemcpyKind kind, cudaStream_t stream) {
  return guard("cudaMemcpy2DAsync", [&]() -> cudaError_t {
    GENIE_RT(r);
    GENIE_STREAM(s, r, stream, ptds);
    return copy2d(r, dst, dpitch, src, spitch, width, height, kind, *s, false);
  });
}
cudaError_t impl_cudaMemcpyToSymbol(bool ptds, const void* symbol, const void* src, size_t count, size_t offset,
                                    cudaMemcpyKind kind) {
  return guard("cudaMemcpyToSymbol", [&]() -> cudaError_t {
    GENIE_RT(r);
    auto a = r->memory().find(symbol);
    if (!a || a->base != reinterpret_cast<uintptr_t>(symbol)) return reject("cudaMemcpyToSymbol", "symbol", cudaErrorInvalidSymbol);
    if (offset > a->size || count > a->size - offset) return reject("cudaMemcpyToSymbol", "count");
    return copy_impl(r, static_cast<char*>(const_cast<void*>(symbol)) + offset, src, count,
                     kind == cudaMemcpyDefault ? cudaMemcpyDefault : cudaMemcpyDefault, *r->resolve_stream(nullptr, ptds),
                     true);
  });
}
cudaError_t impl_cudaMemcpyFromSymbol(bool ptds, void* dst, const void* symbol, size_t count, size_t offset,
                                      cudaMemcpyKind kind) {
  return guard("cudaMemcpyFromSymbol", [&]() -> cudaError_t {
    GENIE_RT(r);
    auto a = r->memory().find(symbol);
    if (!a || a->base != reinterpret_cast<uintptr_t>(symbol)) return reject("cudaMemcpyFromSymbol", "symbol", cudaErrorInvalidSymbol);
    if (offset > a->size || count > a->size - offset) return reject("cudaMemcpyFromSymbol", "count");
    (void)kind;
    return copy_impl(r, dst, static_cast<const char*>(symbol) + offset, count, cudaMemcpyDefault,
                     *r->resolve_stream(nullptr, ptds), true);
  });
}
cudaError_t impl_cudaMemcpyToSymbolAsync(bool ptds, const void* symbol, const void* src, size_t count, size_t offset,
                                         cudaMemcpyKind kind, cudaStream_t stream) {
  return guard("cudaMemcpyToSymbolAsync", [&]() -> cudaError_t {
    GENIE_RT(r);
    GENIE_STREAM(s, r, stream, ptds);
    auto a = r->memory().find(symbol);
    if (!a || a->base != reinterpret_cast<uintptr_t>(symbol)) return reject("cudaMemcpyToSymbolAsync", "symbol", cudaErrorInvalidSymbol);
    if (offset > a->size || count > a->size - offset) return reject("cudaMemcpyToSymbolAsync", "count");
    (void)kind;
    return copy_impl(r, static_cast<char*>(const_cast<void*>(symbol)) + offset, src, count, cudaMemcpyDefault, *s, false);
  });
}
cudaError_t impl_cudaMallocAsync(bool ptds, void** devPtr, size_t size, cudaStream_t stream) {
  return guard("cudaMallocAsync", [&]() -> cudaError_t {
    if (devPtr == nullptr) return reject("cudaMallocAsync", "devPtr");
    GENIE_RT(r);
    GENIE_STREAM(s, r, stream, ptds);
    if (size == 0) {
      *devPtr = nullptr;
      return cudaSuccess;
    }
    auto p = r->device_alloc(s->device().ordinal(), size, MemKind::kDevice, /*pooled=*/true);
    if (!p.is_ok()) return alloc_error(p.status());
    *devPtr = p.value();
    return cudaSuccess;
  });
}
cudaError_t impl_cudaFreeAsync(bool ptds, void* devPtr, cudaStream_t stream) {
  return guard("cudaFreeAsync", [&]() -> cudaError_t {
    GENIE_RT(r);
    GENIE_STREAM(s, r, stream, ptds);
    if (devPtr == nullptr) return cudaSuccess;
    auto a = r->memory().find(devPtr);
    if (!a || a->base != reinterpret_cast<uintptr_t>(devPtr) || !a->is_device()) return reject("cudaFreeAsync", "devPtr");
    // Stream-ordered: the memory is released when the stream reaches this point.
    genie::sched::OpSpec op;
    op.label = "free";
    op.action = [r, devPtr] { r->free_memory(devPtr, false).is_ok(); };
    return to_cuda(r->submit(*s, std::move(op)).status());
  });
}
}  // namespace

GENIE_CUDART_PTDS(cudaMemcpy, (void* dst, const void* src, size_t count, cudaMemcpyKind kind), (dst, src, count, kind))
GENIE_CUDART_PTSZ(cudaMemcpyAsync,
                  (void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream),
                  (dst, src, count, kind, stream))
GENIE_CUDART_PTDS(cudaMemset, (void* devPtr, int value, size_t count), (devPtr, value, count))
GENIE_CUDART_PTSZ(cudaMemsetAsync, (void* devPtr, int value, size_t count, cudaStream_t stream),
                  (devPtr, value, count, stream))
GENIE_CUDART_PTDS(cudaMemcpy2D,
                  (void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                   cudaMemcpyKind kind),
                  (dst, dpitch, src, spitch, width, height, kind))
GENIE_CUDART_PTSZ(cudaMemcpy2DAsync,
                  (void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                   cudaMemcpyKind kind, cudaStream_t stream),
                  (dst, dpitch, src, spitch, width, height, kind, stream))
GENIE_CUDART_PTDS(cudaMemcpyToSymbol,
                  (const void* symbol, const void* src, size_t count, size_t offset, cudaMemcpyKind kind),
                  (symbol, src, count, offset, kind))
GENIE_CUDART_PTDS(cudaMemcpyFromSymbol,
                  (void* dst, const void* symbol, size_t count, size_t offset, cudaMemcpyKind kind),
                  (dst, symbol, count, offset, kind))
GENIE_CUDART_PTSZ(cudaMemcpyToSymbolAsync,
                  (const void* symbol, const void* src, size_t count, size_t offset, cudaMemcpyKind kind,
                   cudaStream_t stream),
                  (symbol, src, count, offset, kind, stream))
GENIE_CUDART_PTSZ(cudaMallocAsync, (void** devPtr, size_t size, cudaStream_t hStream), (devPtr, size, hStream))
GENIE_CUDART_PTSZ(cudaFreeAsync, (void* devPtr, cudaStream_t hStream), (devPtr, hStream))

GENIE_CUDART_EXPORT cudaError_t cudaMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice, size_t count) {
  return guard(__func__, [&]() -> cudaError_t {
    GENIE_RT(r);
    if (dstDevice < 0 || dstDevice >= r->device_count() || srcDevice < 0 || srcDevice >= r->device_count())
      return reject(__func__, "device", cudaErrorInvalidDevice);
    return copy_impl(r, dst, src, count, cudaMemcpyDeviceToDevice, *r->resolve_stream(nullptr, false), true);
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice,
                                                    size_t count, cudaStream_t stream) {
  return guard(__func__, [&]() -> cudaError_t {
    GENIE_RT(r);
    if (dstDevice < 0 || dstDevice >= r->device_count() || srcDevice < 0 || srcDevice >= r->device_count())
      return reject(__func__, "device", cudaErrorInvalidDevice);
    GENIE_STREAM(s, r, stream, false);
    return copy_impl(r, dst, src, count, cudaMemcpyDeviceToDevice, *s, false);
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaGetSymbolAddress(void** devPtr, const void* symbol) {
  return guard(__func__, [&]() -> cudaError_t {
    if (devPtr == nullptr) return reject(__func__, "devPtr");
    GENIE_RT(r);
    auto a = r->memory().find(symbol);
    if (!a || a->base != reinterpret_cast<uintptr_t>(symbol)) return reject(__func__, "symbol", cudaErrorInvalidSymbol);
    *devPtr = const_cast<void*>(symbol);
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaGetSymbolSize(size_t* size, const void* symbol) {
  return guard(__func__, [&]() -> cudaError_t {
    if (size == nullptr) return reject(__func__, "size");
    GENIE_RT(r);
    auto a = r->memory().find(symbol);
    if (!a || a->base != reinterpret_cast<uintptr_t>(symbol)) return reject(__func__, "symbol", cudaErrorInvalidSymbol);
    *size = a->size;
    return cudaSuccess;
  });
}

// --- memory pools: the default pool per device, attributes stored and reported ------------------------
GENIE_CUDART_EXPORT cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
  return guard(__func__, [&]() -> cudaError_t {
    if (pool == nullptr) return reject(__func__, "memPool");
    GENIE_RT(r);
    if (device < 0 || device >= r->device_count()) return reject(__func__, "device", cudaErrorInvalidDevice);
    *pool = reinterpret_cast<cudaMemPool_t>(default_pool(device));
    return cudaSuccess;
  });
}
GENIE_CUDART_EXPORT cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* pool, int device) {
  return cudaDeviceGetDefaultMemPool(pool, device);
}
// The use attributes come from the device's accounting: the pool holds exactly what cudaMallocAsync handed out and
// cudaFreeAsync has not yet given back (it keeps no freed memory, so reserved = used); the high-water marks can
// only be reset, by setting 0 (CUDA Runtime API, cudaMemPoolSetAttribute).
GENIE_CUDART_EXPORT cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  return guard(__func__, [&]() -> cudaError_t {
    if (pool == nullptr || value == nullptr) return reject(__func__, pool ? "value" : "memPool");
    MemPoolState* p = pool_of(pool);
    if (p == nullptr) return reject(__func__, "memPool");
    GENIE_RT(r);
    switch (attr) {
      case cudaMemPoolAttrReservedMemCurrent:
      case cudaMemPoolAttrUsedMemCurrent:
        return reject(__func__, "attr (read-only)");
      case cudaMemPoolAttrReservedMemHigh:
      case cudaMemPoolAttrUsedMemHigh:
        if (*static_cast<uint64_t*>(value) != 0) return reject(__func__, "value (a high-water mark resets to 0 only)");
        r->device(p->device).pool_reset_high();
        return cudaSuccess;
      default:
        break;
    }
    std::lock_guard lk(p->mu);
    p->attrs[attr] = pool_attr_is_64bit(attr) ? *static_cast<uint64_t*>(value)
                                              : static_cast<uint64_t>(*static_cast<int*>(value));
    return cudaSuccess;
  });
}
GENIE_CUDART_EXPORT cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  return guard(__func__, [&]() -> cudaError_t {
    if (pool == nullptr || value == nullptr) return reject(__func__, pool ? "value" : "memPool");
    MemPoolState* p = pool_of(pool);
    if (p == nullptr) return reject(__func__, "memPool");
    GENIE_RT(r);
    const Device& d = r->device(p->device);
    uint64_t v = 0;
    switch (attr) {
      case cudaMemPoolAttrReservedMemCurrent:
      case cudaMemPoolAttrUsedMemCurrent:
        v = d.pool_used_bytes();
        break;
      case cudaMemPoolAttrReservedMemHigh:
      case cudaMemPoolAttrUsedMemHigh:
        v = d.pool_high_bytes();
        break;
      default: {
        std::lock_guard lk(p->mu);
        v = p->attrs.count(attr) ? p->attrs[attr] : 0;
      }
    }
    if (pool_attr_is_64bit(attr)) *static_cast<uint64_t*>(value) = v;
    else *static_cast<int*>(value) = static_cast<int>(v);
    return cudaSuccess;
  });
}
GENIE_CUDART_EXPORT cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const cudaMemAccessDesc*, size_t) {
  return pool_of(pool) ? cudaSuccess : guard(__func__, [] { return reject("cudaMemPoolSetAccess", "memPool"); });
}
GENIE_CUDART_EXPORT cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t) {
  return pool_of(pool) ? cudaSuccess : guard(__func__, [] { return reject("cudaMemPoolTrimTo", "memPool"); });
}

// --- IPC ------------------------------------------------------------------------------------------------
GENIE_CUDART_EXPORT cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t* handle, void* devPtr) {
  return guard(__func__, [&]() -> cudaError_t {
    if (handle == nullptr) return reject(__func__, "handle");
    GENIE_RT(r);
    auto a = r->memory().find(devPtr);
    if (!a || !a->is_device() || a->kind == MemKind::kIpcMapped) return reject(__func__, "devPtr");
    auto shared = r->memory().make_shareable(reinterpret_cast<void*>(a->base));
    if (!shared.is_ok()) return reject(__func__, shared.status().message().c_str(), to_cuda(shared.status()));
    IpcMemPayload p{IpcMemPayload::kMagic, static_cast<int32_t>(getpid()), shared->shared_fd, shared->device,
                    shared->mapped_size, reinterpret_cast<uintptr_t>(devPtr) - shared->base};
    std::memset(handle, 0, sizeof(*handle));
    std::memcpy(handle, &p, sizeof(p));
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaIpcOpenMemHandle(void** devPtr, cudaIpcMemHandle_t handle, unsigned int flags) {
  return guard(__func__, [&]() -> cudaError_t {
    if (devPtr == nullptr) return reject(__func__, "devPtr");
    GENIE_RT(r);
    IpcMemPayload p;
    std::memcpy(&p, &handle, sizeof(p));
    if (p.magic != IpcMemPayload::kMagic) return reject(__func__, "handle", cudaErrorInvalidResourceHandle);
    if (p.pid == getpid()) return reject(__func__, "handle (opened in its own process)", cudaErrorDeviceUninitialized);
    auto m = r->memory().open_shared(p.pid, p.fd, p.mapped_size, 0, p.device);
    if (!m.is_ok()) return reject(__func__, m.status().message().c_str(), cudaErrorInvalidResourceHandle);
    *devPtr = static_cast<char*>(m.value()) + p.offset;
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaIpcCloseMemHandle(void* devPtr) {
  return guard(__func__, [&]() -> cudaError_t {
    GENIE_RT(r);
    auto a = r->memory().find(devPtr);
    if (!a || a->kind != MemKind::kIpcMapped) return reject(__func__, "devPtr");
    auto removed = r->memory().remove(reinterpret_cast<void*>(a->base));
    if (removed.is_ok()) MemoryRegistry::unmap(reinterpret_cast<void*>(a->base), a->mapped_size);
    return cudaSuccess;
  });
}

GENIE_CUDART_EXPORT cudaError_t cudaMemPrefetchAsync(const void*, size_t, cudaMemLocation, unsigned int, cudaStream_t) {
  return cudaSuccess;  // host-backed memory is resident everywhere
}
GENIE_CUDART_EXPORT cudaError_t cudaMemAdvise(const void*, size_t, cudaMemoryAdvise, cudaMemLocation) {
  return cudaSuccess;
}

GENIE_CUDART_EXPORT struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w,
                                                                       enum cudaChannelFormatKind f) {
  return cudaChannelFormatDesc{x, y, z, w, f};  // a plain value: no device involved
}
