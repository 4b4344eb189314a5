// SPDX-License-Identifier: Apache-2.0
// Driver API: device and host allocations, pointer queries, copies, memsets,
// streams and stream memory ops. Everything goes through the runtime (same
// MemoryRegistry, capacity accounting and streams as cudart).
#include <algorithm>
#include <cstring>
#include <limits>

#include "driver_common.hpp"

namespace genie::fakecuda::drv {
using detail::from_dptr;
using detail::guard;
using detail::reject;
using detail::to_cu;
using detail::to_dptr;

namespace {

// cudaMemcpyKind values the runtime's copy_async takes as hints
// (cudaMemcpyHostToDevice...).
constexpr int kHostToDevice = 1;
constexpr int kDeviceToHost = 2;
constexpr int kDeviceToDevice = 3;

CUresult alloc_error(const Status& s) { return s.code() == Errc::kOutOfMemory ? CUDA_ERROR_OUT_OF_MEMORY : to_cu(s); }

/// A synchronous (sync=true, on the null stream of the ptds mode) or
/// asynchronous copy.
CUresult copy(const char* fn, void* dst, const void* src, size_t n, int kind, CUstream h, bool ptds, bool sync) {
  GENIE_CU_RT(r);
  GENIE_CU_CTX(c, r);
  (void)c;
  Stream* s = sync ? r->resolve_stream(nullptr, ptds) : r->resolve_stream(static_cast<const void*>(h), ptds);
  if (s == nullptr) return reject(fn, "hStream", CUDA_ERROR_INVALID_HANDLE);
  if (sync && r->is_capturing(*s)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  Status st = r->copy_async(dst, src, n, *s, kind);
  if (!st.is_ok()) return reject(fn, st.message().c_str(), to_cu(st));
  return sync ? to_cu(r->synchronize(*s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) : CUDA_SUCCESS;
}

/// Fills `n` elements of `elem` bytes with `value` (1 or 4 bytes) in stream
/// order.
CUresult fill(const char* fn, CUdeviceptr dst, uint32_t value, size_t n, size_t elem, CUstream h, bool ptds,
              bool sync) {
  GENIE_CU_RT(r);
  GENIE_CU_CTX(c, r);
  (void)c;
  Stream* s = sync ? r->resolve_stream(nullptr, ptds) : r->resolve_stream(static_cast<const void*>(h), ptds);
  if (s == nullptr) return reject(fn, "hStream", CUDA_ERROR_INVALID_HANDLE);
  if (sync && r->is_capturing(*s)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  if (n == 0) return CUDA_SUCCESS;
  if (dst % elem != 0) return reject(fn, "dstDevice (misaligned)");
  if (n > std::numeric_limits<size_t>::max() / elem) return reject(fn, "N");
  void* p = from_dptr(dst);
  size_t bytes = n * elem;
  Status st;
  if (elem == 1) {
    st = r->memset_async(p, static_cast<int>(value & 0xffu), bytes, *s);
  } else {
    if (!r->memory().find(p, bytes)) return reject(fn, "dstDevice");
    sched::OpSpec op;
    op.label = "memset";
    op.duration = r->cost_model().memset(bytes);
    if (r->moves_bytes(bytes))  // else timing only (GENIE_DATA=none): nothing written
      op.action = [p, value, n] {
        auto* q = static_cast<uint32_t*>(p);
        std::fill(q, q + n, value);
      };
    r->api_call();
    st = r->submit(*s, std::move(op)).status();
  }
  if (!st.is_ok()) return reject(fn, "dstDevice", to_cu(st));
  return sync ? to_cu(r->synchronize(*s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) : CUDA_SUCCESS;
}

CUresult write_value32(const char* fn, CUstream h, CUdeviceptr addr, cuuint32_t value, unsigned flags, bool ptds) {
  GENIE_CU_RT(r);
  GENIE_CU_STREAM(s, r, h, ptds);
  if ((flags & ~static_cast<unsigned>(CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER)) != 0) return reject(fn, "flags");
  if (addr % sizeof(cuuint32_t) != 0) return reject(fn, "addr (misaligned)");
  void* p = from_dptr(addr);
  if (!r->memory().find(p, sizeof(cuuint32_t))) return reject(fn, "addr");
  sched::OpSpec op;
  op.label = "write_value32";
  op.action = [p, value] { __atomic_store_n(static_cast<cuuint32_t*>(p), value, __ATOMIC_RELEASE); };
  r->api_call();
  return to_cu(r->submit(*s, std::move(op)).status());
}

/// Size in bytes of the value cuPointerGetAttribute writes for `attr`; 0 for
/// attributes we do not answer.
size_t attribute_size(int attr) {
  switch (attr) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
      return sizeof(CUcontext);
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      return sizeof(CUmemorytype);
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
      return sizeof(CUdeviceptr);
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      return sizeof(void*);
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
      return sizeof(unsigned long long);
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
    case CU_POINTER_ATTRIBUTE_MAPPED:
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
      return sizeof(int);
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
      return sizeof(CUdeviceptr);
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
      return sizeof(size_t);
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
      return sizeof(unsigned long long);
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
      return sizeof(CUmemoryPool);
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
      return sizeof(size_t);
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
      return sizeof(void*);
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
      return sizeof(unsigned long long);
    default:
      return 0;
  }
}

template <class T>
void put(void* data, T v) {
  std::memcpy(data, &v, sizeof(T));
}

/// Answers one attribute for a pointer the runtime knows.
/// CUDA_ERROR_INVALID_VALUE when `ptr` is not CUDA memory
/// (cuPointerGetAttribute's contract) or the attribute does not apply to it.
CUresult pointer_attribute(Runtime& r, void* data, int attr, CUdeviceptr ptr) {
  void* p = from_dptr(ptr);
  auto a = r.memory().find(p);
  if (!a) return CUDA_ERROR_INVALID_VALUE;
  auto vmm = detail::vmm_find(static_cast<uintptr_t>(ptr));
  bool device_mem = a->is_device();
  bool host_visible = !device_mem || a->kind == MemKind::kManaged;
  int device = a->device >= 0 ? a->device : r.current_device();
  uintptr_t range_base = vmm ? vmm->base : a->base;
  size_t range_size = vmm ? vmm->size : a->size;
  switch (attr) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
      put(data, reinterpret_cast<CUcontext>(detail::primary(r, device)));
      break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      put(data, device_mem ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST);
      break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
      put(data, ptr);
      break;  // unified addressing
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      if (!host_visible) return CUDA_ERROR_INVALID_VALUE;
      put(data, p);
      break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
      put(data, static_cast<unsigned long long>(range_base));
      break;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
      put(data, 1);
      break;  // copies here are always synchronous in order
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
      put(data, a->kind == MemKind::kManaged ? 1 : 0);
      break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      put(data, device);
      break;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
      put(data, a->kind == MemKind::kDevice ? 1 : 0);
      break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
      put(data, static_cast<CUdeviceptr>(range_base));
      break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
      put(data, range_size);
      break;
    case CU_POINTER_ATTRIBUTE_MAPPED:
      put(data, 1);
      break;
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
      put(data, 0);
      break;
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
      put(data, 0);
      break;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
      put(data, static_cast<unsigned long long>(vmm ? vmm->handle_types : 0));
      break;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
      put(data, vmm ? static_cast<int>(vmm->access) : static_cast<int>(CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE));
      break;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
      put(data, static_cast<CUmemoryPool>(nullptr));
      break;
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
      put(data, range_size);
      break;
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
      put(data, reinterpret_cast<void*>(range_base));
      break;
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
      put(data, static_cast<unsigned long long>(vmm ? vmm->block_id : range_base));
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

}  // namespace

// --- allocations
// ----------------------------------------------------------------------------------------
CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (dptr == nullptr) return reject(fn, "dptr");
    GENIE_CU_RT(r);
    GENIE_CU_CTX(c, r);
    if (bytesize == 0) return reject(fn, "bytesize");
    auto p = r->device_alloc(c->device, bytesize);
    if (!p.is_ok()) return alloc_error(p.status());
    *dptr = to_dptr(p.value());
    return CUDA_SUCCESS;
  });
}

CUresult cuMemFree_v2(CUdeviceptr dptr) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    GENIE_CU_CTX(c, r);
    (void)c;
    if (dptr == 0) return CUDA_SUCCESS;
    void* p = from_dptr(dptr);
    auto a = r->memory().find(p);
    if (!a || a->base != static_cast<uintptr_t>(dptr) || !a->is_device()) return reject(fn, "dptr");
    // As cudaFree: queued work that may still use the memory finishes first.
    r->synchronize_device(a->device).is_ok();
    Status s = r->free_memory(p, false);
    return s.is_ok() ? CUDA_SUCCESS : reject(fn, "dptr");
  });
}

CUresult cuMemGetInfo_v2(size_t* free, size_t* total) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (free == nullptr || total == nullptr) return reject(fn, free ? "total" : "free");
    GENIE_CU_RT(r);
    GENIE_CU_CTX(c, r);
    Device& d = r->device(c->device);
    *total = d.spec().memory_bytes;
    *free = d.spec().memory_bytes - std::min<uint64_t>(d.used_bytes(), d.spec().memory_bytes);
    return CUDA_SUCCESS;
  });
}

CUresult cuMemAllocHost_v2(void** pp, size_t bytesize) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (pp == nullptr) return reject(fn, "pp");
    GENIE_CU_RT(r);
    GENIE_CU_CTX(c, r);
    (void)c;
    if (bytesize == 0) return reject(fn, "bytesize");
    auto p = r->host_alloc(bytesize, 0);
    if (!p.is_ok()) return alloc_error(p.status());
    *pp = p.value();
    return CUDA_SUCCESS;
  });
}

CUresult cuMemFreeHost(void* p) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    if (p == nullptr) return reject(fn, "p");
    r->synchronize_device(r->current_device()).is_ok();
    return r->free_memory(p, true).is_ok() ? CUDA_SUCCESS : reject(fn, "p");
  });
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    uintptr_t base = 0;
    size_t size = 0;
    if (auto m = detail::vmm_find(static_cast<uintptr_t>(dptr))) {
      base = m->base;
      size = m->size;
    } else if (auto a = r->memory().find(from_dptr(dptr)); a && a->kind != MemKind::kHostRegistered) {
      base = a->base;
      size = a->size;
    } else {
      return reject(fn, "dptr", CUDA_ERROR_NOT_FOUND);
    }
    if (pbase != nullptr) *pbase = static_cast<CUdeviceptr>(base);
    if (psize != nullptr) *psize = size;
    return CUDA_SUCCESS;
  });
}

CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (data == nullptr) return reject(fn, "data");
    GENIE_CU_RT(r);
    if (attribute_size(attribute) == 0) return reject(fn, "attribute");
    CUresult e = pointer_attribute(*r, data, attribute, ptr);
    return e == CUDA_SUCCESS ? e : reject(fn, "ptr", e);
  });
}

CUresult cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute* attributes, void** data,
                                CUdeviceptr ptr) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (numAttributes == 0 || attributes == nullptr || data == nullptr) return reject(fn, "attributes/data");
    GENIE_CU_RT(r);
    for (unsigned i = 0; i < numAttributes; ++i) {
      size_t n = attribute_size(attributes[i]);
      if (n == 0) return reject(fn, "attributes");
      if (data[i] == nullptr) continue;
      // Unlike cuPointerGetAttribute, a pointer that is not CUDA memory is no
      // error: defaults are written.
      if (pointer_attribute(*r, data[i], attributes[i], ptr) != CUDA_SUCCESS) {
        std::memset(data[i], 0, n);
        if (attributes[i] == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL) put(data[i], -2);
      }
    }
    return CUDA_SUCCESS;
  });
}

// --- copies
// ---------------------------------------------------------------------------------------------
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t n) {
  return guard(__func__,
               [&](const char* fn) { return copy(fn, from_dptr(dst), src, n, kHostToDevice, nullptr, false, true); });
}
CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n) {
  return guard(__func__,
               [&](const char* fn) { return copy(fn, dst, from_dptr(src), n, kDeviceToHost, nullptr, false, true); });
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  return guard(__func__, [&](const char* fn) {
    return copy(fn, from_dptr(dst), from_dptr(src), n, kDeviceToDevice, nullptr, false, true);
  });
}
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void* src, size_t n) {
  return guard(__func__,
               [&](const char* fn) { return copy(fn, from_dptr(dst), src, n, kHostToDevice, nullptr, true, true); });
}
CUresult cuMemcpyDtoH_v2_ptds(void* dst, CUdeviceptr src, size_t n) {
  return guard(__func__,
               [&](const char* fn) { return copy(fn, dst, from_dptr(src), n, kDeviceToHost, nullptr, true, true); });
}
CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  return guard(__func__, [&](const char* fn) {
    return copy(fn, from_dptr(dst), from_dptr(src), n, kDeviceToDevice, nullptr, true, true);
  });
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t n, CUstream h) {
  return guard(__func__,
               [&](const char* fn) { return copy(fn, from_dptr(dst), src, n, kHostToDevice, h, false, false); });
}
CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t n, CUstream h) {
  return guard(__func__,
               [&](const char* fn) { return copy(fn, dst, from_dptr(src), n, kDeviceToHost, h, false, false); });
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h) {
  return guard(__func__, [&](const char* fn) {
    return copy(fn, from_dptr(dst), from_dptr(src), n, kDeviceToDevice, h, false, false);
  });
}
CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void* src, size_t n, CUstream h) {
  return guard(__func__,
               [&](const char* fn) { return copy(fn, from_dptr(dst), src, n, kHostToDevice, h, true, false); });
}
CUresult cuMemcpyDtoHAsync_v2_ptsz(void* dst, CUdeviceptr src, size_t n, CUstream h) {
  return guard(__func__,
               [&](const char* fn) { return copy(fn, dst, from_dptr(src), n, kDeviceToHost, h, true, false); });
}
CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h) {
  return guard(__func__, [&](const char* fn) {
    return copy(fn, from_dptr(dst), from_dptr(src), n, kDeviceToDevice, h, true, false);
  });
}

// --- memsets
// --------------------------------------------------------------------------------------------
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char uc, size_t N) {
  return guard(__func__, [&](const char* fn) { return fill(fn, d, uc, N, 1, nullptr, false, true); });
}
CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned int ui, size_t N) {
  return guard(__func__, [&](const char* fn) { return fill(fn, d, ui, N, 4, nullptr, false, true); });
}
CUresult cuMemsetD8_v2_ptds(CUdeviceptr d, unsigned char uc, size_t N) {
  return guard(__func__, [&](const char* fn) { return fill(fn, d, uc, N, 1, nullptr, true, true); });
}
CUresult cuMemsetD32_v2_ptds(CUdeviceptr d, unsigned int ui, size_t N) {
  return guard(__func__, [&](const char* fn) { return fill(fn, d, ui, N, 4, nullptr, true, true); });
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char uc, size_t N, CUstream h) {
  return guard(__func__, [&](const char* fn) { return fill(fn, d, uc, N, 1, h, false, false); });
}
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int ui, size_t N, CUstream h) {
  return guard(__func__, [&](const char* fn) { return fill(fn, d, ui, N, 4, h, false, false); });
}
CUresult cuMemsetD8Async_ptsz(CUdeviceptr d, unsigned char uc, size_t N, CUstream h) {
  return guard(__func__, [&](const char* fn) { return fill(fn, d, uc, N, 1, h, true, false); });
}
CUresult cuMemsetD32Async_ptsz(CUdeviceptr d, unsigned int ui, size_t N, CUstream h) {
  return guard(__func__, [&](const char* fn) { return fill(fn, d, ui, N, 4, h, true, false); });
}

// --- streams
// --------------------------------------------------------------------------------------------
CUresult cuStreamCreateWithPriority(CUstream* phStream, unsigned int flags, int priority) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (phStream == nullptr) return reject(fn, "phStream");
    if (flags & ~static_cast<unsigned>(CU_STREAM_NON_BLOCKING)) return reject(fn, "flags");
    GENIE_CU_RT(r);
    GENIE_CU_CTX(c, r);
    priority = std::max(kGreatestStreamPriority, std::min(kLeastStreamPriority, priority));
    *phStream = reinterpret_cast<CUstream>(r->create_stream(c->device, flags, priority));
    return CUDA_SUCCESS;
  });
}

CUresult cuStreamCreate(CUstream* phStream, unsigned int Flags) {
  return drv::cuStreamCreateWithPriority(phStream, Flags, 0);
}

CUresult cuStreamDestroy_v2(CUstream hStream) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    if (reinterpret_cast<uintptr_t>(hStream) <= 2) return reject(fn, "hStream", CUDA_ERROR_INVALID_HANDLE);
    GENIE_CU_STREAM(s, r, hStream, false);
    return to_cu(r->destroy_stream(s), CUDA_ERROR_INVALID_HANDLE);
  });
}

namespace {
CUresult stream_sync(const char* fn, CUstream h, bool ptds) {
  GENIE_CU_RT(r);
  GENIE_CU_STREAM(s, r, h, ptds);
  if (r->is_capturing(*s)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  return to_cu(r->synchronize(*s));
}
CUresult stream_query(const char* fn, CUstream h, bool ptds) {
  GENIE_CU_RT(r);
  GENIE_CU_STREAM(s, r, h, ptds);
  if (r->is_capturing(*s)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  return to_cu(r->query(*s));
}
}  // namespace

CUresult cuStreamSynchronize(CUstream h) {
  return guard(__func__, [&](const char* fn) { return stream_sync(fn, h, false); });
}
CUresult cuStreamSynchronize_ptsz(CUstream h) {
  return guard(__func__, [&](const char* fn) { return stream_sync(fn, h, true); });
}
CUresult cuStreamQuery(CUstream h) {
  return guard(__func__, [&](const char* fn) { return stream_query(fn, h, false); });
}
CUresult cuStreamQuery_ptsz(CUstream h) {
  return guard(__func__, [&](const char* fn) { return stream_query(fn, h, true); });
}

CUresult cuStreamWriteValue32_v2(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags) {
  return guard(__func__, [&](const char* fn) { return write_value32(fn, stream, addr, value, flags, false); });
}
CUresult cuStreamWriteValue32_v2_ptsz(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags) {
  return guard(__func__, [&](const char* fn) { return write_value32(fn, stream, addr, value, flags, true); });
}

}  // namespace genie::fakecuda::drv
