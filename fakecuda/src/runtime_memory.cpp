// SPDX-License-Identifier: Apache-2.0
// Runtime memory: device and pinned allocations with capacity accounting; stream-ordered copies/sets.
#include <unistd.h>

#include <cstring>

#include "genie/common/log.hpp"
#include "genie/fakecuda/runtime.hpp"

namespace genie::fakecuda {
namespace {
// cudaMalloc returns 256-byte aligned memory and device memory is accounted in 2 MiB pages for large
// allocations (CUDA C Programming Guide, "Device Memory"); we charge at 512-byte granularity, the
// smallest sub-allocation step, so small allocations do not overstate use.
constexpr uint64_t kAccountingGranularity = 512;
}  // namespace

Result<void*> Runtime::device_alloc(int device, size_t size, MemKind kind, bool pooled) {
  if (device < 0 || device >= device_count()) return invalid_argument("invalid device ordinal");
  Device& dev = *devices_[device];
  uint64_t charge = (static_cast<uint64_t>(size) + kAccountingGranularity - 1) / kAccountingGranularity *
                    kAccountingGranularity;
  if (!dev.reserve_bytes(charge))
    return Status(Errc::kOutOfMemory, "out of memory on device " + std::to_string(device) + ": asked " +
                                          std::to_string(size) + " bytes, " +
                                          std::to_string(dev.spec().memory_bytes - dev.used_bytes()) + " free");
  Allocation a;
  // Timing-only runs touch device memory only for control data: no huge pages, or each such write would take 2 MiB.
  const bool huge_pages = options_.move_data;
  if (options_.shareable_memory) {
    // On a memfd from birth: NCCL peers in other processes map the same pages (zero-copy collectives),
    // and nothing has to be moved later while streams may be using the range.
    Status st = MemoryRegistry::map_shareable(size, &a, huge_pages);
    if (!st.is_ok()) {
      dev.release_bytes(charge);
      return st;
    }
  } else {
    auto p = MemoryRegistry::map_anonymous(size, huge_pages);
    if (!p.is_ok()) {
      dev.release_bytes(charge);
      return p.status();
    }
    a.base = reinterpret_cast<uintptr_t>(p.value());
    a.size = size;
    a.mapped_size = MemoryRegistry::page_round(size == 0 ? 1 : size);
  }
  a.kind = kind;
  a.device = device;
  a.accounted = charge;
  a.pooled = pooled;
  if (pooled) dev.pool_add(charge);
  memory_.add(a);
  return reinterpret_cast<void*>(a.base);
}

Status Runtime::free_memory(const void* p, bool expect_host) {
  auto found = memory_.find(p);
  if (!found || found->base != reinterpret_cast<uintptr_t>(p)) return invalid_argument("pointer was not allocated here");
  bool is_host = found->kind == MemKind::kHostPinned;
  if (found->kind == MemKind::kHostRegistered || found->kind == MemKind::kIpcMapped || is_host != expect_host)
    return invalid_argument("pointer was not allocated by this function's counterpart");
  GENIE_ASSIGN_OR_RETURN(Allocation a, memory_.remove(p));
  if (a.device >= 0 && a.accounted) devices_[a.device]->release_bytes(a.accounted);
  if (a.device >= 0 && a.pooled) devices_[a.device]->pool_release(a.accounted);
  MemoryRegistry::unmap(const_cast<void*>(p), a.mapped_size);
  if (a.shared_fd >= 0) ::close(a.shared_fd);
  return Status::ok();
}

Result<void*> Runtime::host_alloc(size_t size, unsigned flags) {
  GENIE_ASSIGN_OR_RETURN(void* p, MemoryRegistry::map_anonymous(size));
  Allocation a;
  a.base = reinterpret_cast<uintptr_t>(p);
  a.size = size;
  a.mapped_size = MemoryRegistry::page_round(size == 0 ? 1 : size);
  a.kind = MemKind::kHostPinned;
  a.flags = flags;
  memory_.add(a);
  return p;
}

Status Runtime::host_register(void* p, size_t size, unsigned flags) {
  if (memory_.find(p, size)) return Status(Errc::kInvalidUsage, "memory is already registered");
  Allocation a;
  a.base = reinterpret_cast<uintptr_t>(p);
  a.size = size;
  a.kind = MemKind::kHostRegistered;
  a.flags = flags;
  memory_.add(a);
  return Status::ok();
}

Status Runtime::host_unregister(void* p) {
  auto found = memory_.find(p);
  if (!found || found->base != reinterpret_cast<uintptr_t>(p) || found->kind != MemKind::kHostRegistered)
    return Status(Errc::kInvalidUsage, "memory is not registered");
  return memory_.remove(p).status();
}

Status Runtime::copy_async(void* dst, const void* src, size_t n, Stream& s, int kind_hint) {
  if (n == 0) return Status::ok();
  if (dst == nullptr || src == nullptr) return invalid_argument("null pointer");
  auto d = memory_.find(dst, n);
  auto sr = memory_.find(src, n);
  // Explicit kinds (cudaMemcpyHostToDevice=1, DeviceToHost=2, DeviceToDevice=3) require device pointers
  // on the device side; with UVA, host memory passed as "device" is still accepted by CUDA when it is
  // registered (pinned), and a range that is not (fully) inside an allocation is an invalid value.
  bool dst_dev = d && d->is_device();
  bool src_dev = sr && sr->is_device();
  if ((kind_hint == 1 || kind_hint == 3) && !d) return invalid_argument("destination is not a valid device range");
  if ((kind_hint == 2 || kind_hint == 3) && !sr) return invalid_argument("source is not a valid device range");
  // Only when a side is not fully inside an allocation: is its start inside one (an overrun)?
  if (!d && memory_.find(dst)) return invalid_argument("destination range overruns its allocation");
  if (!sr && memory_.find(src)) return invalid_argument("source range overruns its allocation");
  CopyKind kind = dst_dev ? (src_dev ? (d->device == sr->device ? CopyKind::kDeviceToDevice : CopyKind::kPeer)
                                     : CopyKind::kHostToDevice)
                          : (src_dev ? CopyKind::kDeviceToHost : CopyKind::kHostToHost);
  bool pinned = (!dst_dev && d) || (!src_dev && sr) || kind == CopyKind::kDeviceToDevice || kind == CopyKind::kPeer;
  sched::OpSpec spec;
  spec.label = copy_kind_name(kind);
  spec.kind = sched::OpKind::kCopy;
  spec.bytes = n;
  spec.duration = cost_->copy(kind, n, pinned);
  if (kind != CopyKind::kHostToHost && !moves_bytes(n)) {
    // Timing only: the op keeps its duration and moves nothing. A side outside the registry (pageable host memory)
    // is still checked, without reading it, so a bad pointer fails as it does when bytes move. A copy between host
    // buffers still moves: it is the program's memory on both sides, and no device page is involved.
    if (!d) GENIE_TRY(MemoryRegistry::check_mapped(dst, n));
    if (!sr) GENIE_TRY(MemoryRegistry::check_mapped(src, n));
    return submit(s, std::move(spec), clock().api_call(options_.api_overhead)).status();
  }
  auto status = std::make_shared<Status>();
  bool both_known = d && sr;  // both ranges checked above: copy without asking the registry again
  spec.action = [this, dst, src, n, status, both_known] {
    if (both_known) {
      std::memmove(dst, src, n);
      return;
    }
    *status = memory_.copy(dst, src, n);
    if (!status->is_ok()) GENIE_LOG_ERROR(log::kFakecuda, "copy failed: {}", status->message());
  };
  SimTime now = clock().api_call(options_.api_overhead);
  GENIE_ASSIGN_OR_RETURN(sched::Dep done, submit(s, std::move(spec), now));
  // The status is the worker's until the op is done (resolved() acquires its writes): a copy that ran inline
  // reports its error here; one still queued logs it when it runs (TSan found this read racing the worker).
  if (done.resolved() && !status->is_ok()) return *status;
  return Status::ok();
}

Status Runtime::memset_async(void* dst, int value, size_t n, Stream& s) {
  if (n == 0) return Status::ok();
  auto d = memory_.find(dst, n);
  if (!d) return invalid_argument("destination is not a valid device range");
  sched::OpSpec spec;
  spec.label = "memset";
  spec.kind = sched::OpKind::kMemset;
  spec.bytes = n;
  spec.duration = cost_->memset(n);
  // Zeroing a large range of memory this runtime mapped itself gives its whole pages back instead of writing
  // them: they read as zeros, as after a memset, and pages nothing writes again cost no memory (buffers of many GB
  // that a program clears). A timing-only run (GENIE_DATA=none) leaves a range larger than control data as it is,
  // whatever the value.
  const bool own = d->mapped_size != 0 &&
                   (d->kind == MemKind::kDevice || d->kind == MemKind::kManaged || d->kind == MemKind::kHostPinned);
  if (moves_bytes(n)) {
    if (value == 0 && own && n >= MemoryRegistry::kZeroByReleaseMin)
      spec.action = [dst, n] { MemoryRegistry::zero(dst, n); };
    else
      spec.action = [dst, value, n] { std::memset(dst, value, n); };
  }
  SimTime now = clock().api_call(options_.api_overhead);
  return submit(s, std::move(spec), now).status();
}

}  // namespace genie::fakecuda
