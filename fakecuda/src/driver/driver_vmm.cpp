// SPDX-License-Identifier: Apache-2.0
// Driver API: virtual memory management
// (cuMemAddressReserve/cuMemCreate/cuMemMap/...), the API behind PyTorch's
// expandable segments.
//
// Model: a reservation is a PROT_NONE anonymous mapping; a physical allocation
// (cuMemCreate) is a memfd of its size, charged against the device's capacity
// like cudaMalloc; cuMemMap maps the memfd over part of a reservation
// (MAP_SHARED | MAP_FIXED), so two mappings of one allocation alias the same
// bytes, and cuMemSetAccess makes it readable/writable. Accessible mappings are
// registered with the runtime's MemoryRegistry as kIpcMapped ranges (device
// memory not owned by an allocation: cudaFree rejects it), coalesced per run of
// adjacent mappings so that a copy spanning two mappings is one valid range.
// Exported handles are dup()ed memfds
// (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR), as MemoryRegistry's IPC handles
// are; another process maps the same pages.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "driver_common.hpp"

namespace genie::fakecuda::drv {
using detail::from_dptr;
using detail::guard;
using detail::reject;

namespace {

// Granularity of reservations, physical allocations and mappings: 2 MiB, what
// the driver reports for device memory on Ampere/Hopper/Blackwell
// (cuMemGetAllocationGranularity, minimum and recommended).
constexpr size_t kGranularity = size_t{2} << 20;
// The memfd name carries the device so an importing process can report the
// allocation's location.
constexpr const char* kMemfdPrefix = "genie-vmm-d";

/// A physical allocation (cuMemCreate or cuMemImportFromShareableHandle). The
/// handle is its address.
struct PhysAlloc {
  static constexpr uint32_t kMagic = 0x766d6d70u;  // "vmmp"
  uint32_t magic = kMagic;
  size_t size = 0;
  int device = 0;
  int fd = -1;
  CUmemAllocationProp prop{};
  uint64_t accounted = 0;  ///< bytes charged to the device (0 for imported
                           ///< memory: the exporter pays)
  uint64_t block_id = 0;
  int handle_refs = 0;  ///< cuMemCreate / import / cuMemRetainAllocationHandle
                        ///< not yet released
  int map_refs = 0;     ///< live cuMemMap mappings
};

struct Mapping {
  uintptr_t base = 0;
  size_t size = 0;
  size_t offset = 0;
  PhysAlloc* phys = nullptr;
  unsigned access = 0;  ///< CU_MEM_ACCESS_FLAGS_PROT_*
};

struct Reservation {
  uintptr_t base = 0;
  size_t size = 0;
  std::map<uintptr_t, Mapping> mappings;  ///< by base; never overlapping
  std::map<uintptr_t, size_t> runs;       ///< ranges registered with the MemoryRegistry (base -> size)
  bool contains(uintptr_t p, size_t n) const { return p >= base && n <= size && p - base <= size - n; }
};

/// Process-wide VMM state. Lock order: mu_ before the MemoryRegistry's lock (it
/// never calls back).
struct Vmm {
  std::mutex mu;
  std::map<uintptr_t, Reservation> reservations;  ///< by base
  std::unordered_set<PhysAlloc*> handles;
  uint64_t next_block_id = 1;

  Reservation* reservation_of(uintptr_t p, size_t n) {
    auto it = reservations.upper_bound(p);
    if (it == reservations.begin()) return nullptr;
    --it;
    return it->second.contains(p, n == 0 ? 1 : n) ? &it->second : nullptr;
  }
  PhysAlloc* phys(CUmemGenericAllocationHandle h) {
    auto* p = reinterpret_cast<PhysAlloc*>(static_cast<uintptr_t>(h));
    return handles.count(p) ? p : nullptr;
  }
};
Vmm& vmm() {
  static Vmm* v = new Vmm();  // never destroyed: handles may be used from atexit handlers
  return *v;
}

bool aligned(uint64_t v) { return v % kGranularity == 0; }

/// Drops a physical allocation once no handle and no mapping refers to it.
/// Caller holds vmm().mu.
void maybe_destroy(Runtime& r, Vmm& v, PhysAlloc* p) {
  if (p->handle_refs > 0 || p->map_refs > 0) return;
  v.handles.erase(p);
  if (p->fd >= 0) ::close(p->fd);
  if (p->accounted) r.device(p->device).release_bytes(p->accounted);
  p->magic = 0;
  delete p;
}

/// Re-registers the accessible runs of `res` with the MemoryRegistry. New runs
/// are added before stale ones are removed so that a concurrent lookup of a
/// still-mapped address never misses.
void update_runs(Runtime& r, Reservation& res) {
  std::map<uintptr_t, size_t> runs;
  std::map<uintptr_t, int> run_device;
  uintptr_t start = 0, end = 0;
  int dev = -1;
  for (auto& [base, m] : res.mappings) {
    // Only read-write mappings: a copy into a read-only one must fail, not
    // fault inside memmove.
    if (m.access != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) continue;
    if (dev >= 0 && base == end && m.phys->device == dev) {
      end += m.size;
      continue;
    }
    if (dev >= 0) runs[start] = end - start, run_device[start] = dev;
    start = base;
    end = base + m.size;
    dev = m.phys->device;
  }
  if (dev >= 0) runs[start] = end - start, run_device[start] = dev;
  for (auto& [base, size] : runs) {
    auto old = res.runs.find(base);
    if (old != res.runs.end() && old->second == size) continue;
    Allocation a;
    a.base = base;
    a.size = size;
    a.mapped_size = 0;             // the mapping belongs to the reservation, not to this entry
    a.kind = MemKind::kIpcMapped;  // device memory that cudaFree must reject
    a.device = run_device[base];
    r.memory().add(a);
  }
  for (auto& [base, size] : res.runs)
    if (!runs.count(base)) r.memory().remove(reinterpret_cast<void*>(base)).is_ok();
  res.runs = std::move(runs);
}

/// Replaces [base, base+size) with a fresh PROT_NONE reservation mapping (after
/// an unmap).
bool restore_reserved(uintptr_t base, size_t size) {
  void* p = mmap(reinterpret_cast<void*>(base), size, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  return p != MAP_FAILED;
}

/// A memfd of `size` bytes. Raises the soft open-file limit to the hard limit
/// once if the process runs out of descriptors (expandable segments create one
/// allocation per 2-20 MiB page).
int open_memfd(int device, size_t size) {
  std::string name = kMemfdPrefix + std::to_string(device);
  int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0 && errno == EMFILE) {
    rlimit rl{};
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
      rl.rlim_cur = rl.rlim_max;
      setrlimit(RLIMIT_NOFILE, &rl);
      GENIE_LOG_INFO(log::kFakecuda, "VMM: raised the open-file limit to {}", static_cast<uint64_t>(rl.rlim_max));
      fd = memfd_create(name.c_str(), MFD_CLOEXEC);
    }
  }
  if (fd < 0) return -1;
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

/// Device named by a memfd created by open_memfd (in this or another process),
/// -1 if unknown.
int memfd_device(int fd) {
  char link[256];
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  ssize_t n = readlink(path.c_str(), link, sizeof(link) - 1);
  if (n <= 0) return -1;
  link[n] = '\0';
  const char* p = std::strstr(link, kMemfdPrefix);
  if (p == nullptr) return -1;
  return std::atoi(p + std::strlen(kMemfdPrefix));
}

CUresult check_location(const char* fn, Runtime& r, const CUmemLocation& loc) {
  if (loc.type != CU_MEM_LOCATION_TYPE_DEVICE) return reject(fn, "location.type (only device memory is emulated)");
  if (loc.id < 0 || loc.id >= r.device_count()) return reject(fn, "location.id", CUDA_ERROR_INVALID_DEVICE);
  return CUDA_SUCCESS;
}

/// Unmaps every mapping fully inside [p, p+size) of `res` (caller checked the
/// range). Holds vmm().mu.
void unmap_range(Runtime& r, Vmm& v, Reservation& res, uintptr_t p, size_t size) {
  for (auto it = res.mappings.lower_bound(p); it != res.mappings.end() && it->first < p + size;) {
    Mapping m = it->second;
    it = res.mappings.erase(it);
    restore_reserved(m.base, m.size);
    --m.phys->map_refs;
    maybe_destroy(r, v, m.phys);
  }
  update_runs(r, res);
}

}  // namespace

namespace detail {
std::optional<VmmMapping> vmm_find(uintptr_t p) {
  Vmm& v = vmm();
  std::lock_guard lk(v.mu);
  if (v.reservations.empty()) return std::nullopt;
  Reservation* res = v.reservation_of(p, 1);
  if (res == nullptr) return std::nullopt;
  auto it = res->mappings.upper_bound(p);
  if (it == res->mappings.begin()) return std::nullopt;
  --it;
  const Mapping& m = it->second;
  if (p - m.base >= m.size) return std::nullopt;
  return VmmMapping{m.base,           m.size,  m.phys->device, static_cast<uint64_t>(m.phys->prop.requestedHandleTypes),
                    m.phys->block_id, m.access};
}
}  // namespace detail

CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (ptr == nullptr) return reject(fn, "ptr");
    GENIE_CU_RT(r);
    if (size == 0 || !aligned(size)) return reject(fn, "size (not a multiple of the granularity)");
    if (alignment & (alignment - 1)) return reject(fn, "alignment (not a power of two)");
    if (flags != 0) return reject(fn, "flags");
    alignment = std::max(alignment, kGranularity);
    if (size > SIZE_MAX - alignment) return reject(fn, "size", CUDA_ERROR_OUT_OF_MEMORY);
    void* got = MAP_FAILED;
    if (addr != 0 && addr % alignment == 0)  // honour the hint when that range is free
      got = mmap(from_dptr(addr), size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
                 -1, 0);
    if (got == MAP_FAILED || reinterpret_cast<uintptr_t>(got) != addr) {
      if (got != MAP_FAILED) munmap(got,
                                    size);  // kernels without MAP_FIXED_NOREPLACE treat it as a hint
      void* raw = mmap(nullptr, size + alignment, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (raw == MAP_FAILED) return reject(fn, "size (no address space)", CUDA_ERROR_OUT_OF_MEMORY);
      uintptr_t lo = reinterpret_cast<uintptr_t>(raw);
      uintptr_t base = (lo + alignment - 1) / alignment * alignment;
      if (base > lo) munmap(raw, base - lo);
      uintptr_t tail = lo + size + alignment - (base + size);
      if (tail) munmap(reinterpret_cast<void*>(base + size), tail);
      got = reinterpret_cast<void*>(base);
    }
    Vmm& v = vmm();
    std::lock_guard lk(v.mu);
    Reservation res;
    res.base = reinterpret_cast<uintptr_t>(got);
    res.size = size;
    v.reservations[res.base] = std::move(res);
    *ptr = detail::to_dptr(got);
    return CUDA_SUCCESS;
  });
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    Vmm& v = vmm();
    std::lock_guard lk(v.mu);
    auto it = v.reservations.find(static_cast<uintptr_t>(ptr));
    if (it == v.reservations.end() || it->second.size != size) return reject(fn, "ptr/size (not a reservation)");
    Reservation& res = it->second;
    if (!res.mappings.empty()) {
      GENIE_LOG_WARN(log::kFakecuda, "{}: {} mapping(s) still in the range; unmapping them", fn, res.mappings.size());
      unmap_range(*r, v, res, res.base, res.size);
    }
    munmap(reinterpret_cast<void*>(res.base), res.size);
    v.reservations.erase(it);
    return CUDA_SUCCESS;
  });
}

namespace {
// Registers a new physical allocation (one handle reference) and hands out its handle.
CUresult publish_handle(PhysAlloc* p, CUmemGenericAllocationHandle* handle) {
  p->handle_refs = 1;
  Vmm& v = vmm();
  std::lock_guard lk(v.mu);
  p->block_id = v.next_block_id++;
  v.handles.insert(p);
  *handle = static_cast<CUmemGenericAllocationHandle>(reinterpret_cast<uintptr_t>(p));
  return CUDA_SUCCESS;
}
}  // namespace

CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp* prop,
                     unsigned long long flags) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (handle == nullptr || prop == nullptr) return reject(fn, handle ? "prop" : "handle");
    GENIE_CU_RT(r);
    if (flags != 0) return reject(fn, "flags");
    if (prop->type != CU_MEM_ALLOCATION_TYPE_PINNED) return reject(fn, "prop->type");
    if (CUresult e = check_location(fn, *r, prop->location); e != CUDA_SUCCESS) return e;
    unsigned types = static_cast<unsigned>(prop->requestedHandleTypes);
    if (types & ~static_cast<unsigned>(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) {
      // A fabric handle is a capability probe (PyTorch's expandable segments try it, then fall back to POSIX
      // fds), and the device reports CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED = 0 as a GPU without
      // IMEX does: an answer, not a user error, so it is logged at info level.
      if (types == static_cast<unsigned>(CU_MEM_HANDLE_TYPE_FABRIC))
        GENIE_LOG_INFO(log::kFakecuda, "{}: fabric handles are not supported (no IMEX channel emulated)", fn);
      else
        GENIE_LOG_WARN(log::kFakecuda, "{}: requested handle types {:#x}: only POSIX file descriptors are emulated",
                       fn, types);
      return CUDA_ERROR_NOT_SUPPORTED;
    }
    if (size == 0 || !aligned(size)) return reject(fn, "size (not a multiple of the granularity)");
    int dev = prop->location.id;
    Device& d = r->device(dev);
    if (!d.reserve_bytes(size)) {
      GENIE_LOG_WARN(log::kFakecuda, "{}: out of memory on device {}: asked {} bytes, {} free", fn, dev, size,
                     d.spec().memory_bytes - d.used_bytes());
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    int fd = open_memfd(dev, size);
    if (fd < 0) {
      d.release_bytes(size);
      GENIE_LOG_WARN(log::kFakecuda, "{}: memfd: {}", fn, std::strerror(errno));
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    auto* p = new PhysAlloc();
    p->size = size;
    p->device = dev;
    p->fd = fd;
    p->prop = *prop;
    p->accounted = size;
    return publish_handle(p, handle);
  });
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    Vmm& v = vmm();
    std::lock_guard lk(v.mu);
    PhysAlloc* p = v.phys(handle);
    if (p == nullptr || p->handle_refs == 0) return reject(fn, "handle");
    --p->handle_refs;  // the memory lives on while mapped (real driver
                       // semantics)
    maybe_destroy(*r, v, p);
    return CUDA_SUCCESS;
  });
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    if (flags != 0) return reject(fn, "flags");
    if (size == 0 || !aligned(size) || !aligned(ptr) || !aligned(offset))
      return reject(fn, "ptr/size/offset (alignment)");
    Vmm& v = vmm();
    std::lock_guard lk(v.mu);
    PhysAlloc* p = v.phys(handle);
    if (p == nullptr) return reject(fn, "handle", CUDA_ERROR_INVALID_HANDLE);
    if (offset > p->size || size > p->size - offset) return reject(fn, "size/offset (beyond the allocation)");
    uintptr_t base = static_cast<uintptr_t>(ptr);
    Reservation* res = v.reservation_of(base, size);
    if (res == nullptr) return reject(fn, "ptr (not inside a reservation)");
    auto next = res->mappings.lower_bound(base);
    if (next != res->mappings.end() && next->first < base + size) return reject(fn, "ptr (already mapped)");
    if (next != res->mappings.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second.size > base) return reject(fn, "ptr (already mapped)");
    }
    // Mapped without access: the device (and our copies) may touch it only
    // after cuMemSetAccess.
    void* m = mmap(from_dptr(ptr), size, PROT_NONE, MAP_SHARED | MAP_FIXED, p->fd, static_cast<off_t>(offset));
    if (m == MAP_FAILED) {
      GENIE_LOG_WARN(log::kFakecuda, "{}: mmap: {}", fn, std::strerror(errno));
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    res->mappings[base] = Mapping{base, size, offset, p, 0};
    ++p->map_refs;
    return CUDA_SUCCESS;
  });
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    uintptr_t base = static_cast<uintptr_t>(ptr);
    std::vector<int> devices;
    {
      Vmm& v = vmm();
      std::lock_guard lk(v.mu);
      Reservation* res = v.reservation_of(base, size);
      if (res == nullptr || size == 0) return reject(fn, "ptr/size (not inside a reservation)");
      bool any = false;
      for (auto it = res->mappings.lower_bound(base); it != res->mappings.end() && it->first < base + size; ++it) {
        if (it->first + it->second.size > base + size) return reject(fn, "size (splits a mapping)");
        devices.push_back(it->second.phys->device);
        any = true;
      }
      auto first = res->mappings.lower_bound(base);
      if (first != res->mappings.begin()) {
        auto prev = std::prev(first);
        if (prev->first + prev->second.size > base) return reject(fn, "ptr (splits a mapping)");
      }
      if (!any) return reject(fn, "ptr (nothing mapped)");
    }
    // Queued copies into the range finish before the pages go away (the real
    // cuMemUnmap is synchronous).
    for (int d : devices) r->synchronize_device(d).is_ok();
    Vmm& v = vmm();
    std::lock_guard lk(v.mu);
    Reservation* res = v.reservation_of(base, size);
    if (res == nullptr) return reject(fn, "ptr (reservation freed concurrently)");
    unmap_range(*r, v, *res, base, size);
    return CUDA_SUCCESS;
  });
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (desc == nullptr || count == 0) return reject(fn, "desc/count");
    GENIE_CU_RT(r);
    unsigned access = 0;
    for (size_t i = 0; i < count; ++i) {
      if (CUresult e = check_location(fn, *r, desc[i].location); e != CUDA_SUCCESS) return e;
      unsigned f = static_cast<unsigned>(desc[i].flags);
      if (f != CU_MEM_ACCESS_FLAGS_PROT_NONE && f != CU_MEM_ACCESS_FLAGS_PROT_READ &&
          f != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
        return reject(fn, "desc.flags");
      access = std::max(access,
                        f);  // one host address space: the widest grant applies
    }
    uintptr_t base = static_cast<uintptr_t>(ptr);
    Vmm& v = vmm();
    std::lock_guard lk(v.mu);
    Reservation* res = v.reservation_of(base, size);
    if (res == nullptr || size == 0) return reject(fn, "ptr/size (not inside a reservation)");
    // The whole range must be mapped.
    uintptr_t covered = base;
    auto it = res->mappings.upper_bound(base);
    if (it != res->mappings.begin()) --it;
    std::vector<Mapping*> touched;
    for (; it != res->mappings.end() && it->first < base + size; ++it) {
      Mapping& m = it->second;
      if (m.base + m.size <= base) continue;
      if (m.base > covered) break;
      covered = m.base + m.size;
      touched.push_back(&m);
    }
    if (covered < base + size) return reject(fn, "ptr/size (range not fully mapped)");
    int prot = access == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? PROT_READ | PROT_WRITE
               : access == CU_MEM_ACCESS_FLAGS_PROT_READ    ? PROT_READ
                                                            : PROT_NONE;
    if (mprotect(from_dptr(ptr), size, prot) != 0) {
      GENIE_LOG_WARN(log::kFakecuda, "{}: mprotect: {}", fn, std::strerror(errno));
      return CUDA_ERROR_INVALID_VALUE;
    }
    for (Mapping* m : touched) m->access = access;
    update_runs(*r, *res);
    return CUDA_SUCCESS;
  });
}

CUresult cuMemGetAccess(unsigned long long* flags, const CUmemLocation* location, CUdeviceptr ptr) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (flags == nullptr || location == nullptr) return reject(fn, flags ? "location" : "flags");
    GENIE_CU_RT(r);
    if (CUresult e = check_location(fn, *r, *location); e != CUDA_SUCCESS) return e;
    auto m = detail::vmm_find(static_cast<uintptr_t>(ptr));
    if (!m) return reject(fn, "ptr (not mapped)");
    *flags = m->access;
    return CUDA_SUCCESS;
  });
}

CUresult cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                       CUmemAllocationGranularity_flags option) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (granularity == nullptr || prop == nullptr) return reject(fn, granularity ? "prop" : "granularity");
    GENIE_CU_RT(r);
    if (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)
      return reject(fn, "option");
    if (CUresult e = check_location(fn, *r, prop->location); e != CUDA_SUCCESS) return e;
    *granularity = kGranularity;
    return CUDA_SUCCESS;
  });
}

CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (handle == nullptr) return reject(fn, "handle");
    GENIE_CU_RT(r);
    uintptr_t p = reinterpret_cast<uintptr_t>(addr);
    Vmm& v = vmm();
    std::lock_guard lk(v.mu);
    Reservation* res = v.reservation_of(p, 1);
    if (res != nullptr) {
      auto it = res->mappings.upper_bound(p);
      if (it != res->mappings.begin() && p - std::prev(it)->first < std::prev(it)->second.size) {
        PhysAlloc* phys = std::prev(it)->second.phys;
        ++phys->handle_refs;
        *handle = static_cast<CUmemGenericAllocationHandle>(reinterpret_cast<uintptr_t>(phys));
        return CUDA_SUCCESS;
      }
    }
    return reject(fn, "addr (not mapped)");
  });
}

CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop, CUmemGenericAllocationHandle handle) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (prop == nullptr) return reject(fn, "prop");
    GENIE_CU_RT(r);
    Vmm& v = vmm();
    std::lock_guard lk(v.mu);
    PhysAlloc* p = v.phys(handle);
    if (p == nullptr) return reject(fn, "handle");
    *prop = p->prop;
    return CUDA_SUCCESS;
  });
}

CUresult cuMemExportToShareableHandle(void* shareableHandle, CUmemGenericAllocationHandle handle,
                                      CUmemAllocationHandleType handleType, unsigned long long flags) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (shareableHandle == nullptr) return reject(fn, "shareableHandle");
    GENIE_CU_RT(r);
    if (flags != 0) return reject(fn, "flags");
    if (handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
      GENIE_LOG_WARN(log::kFakecuda, "{}: handle type {} is not emulated", fn, static_cast<int>(handleType));
      return CUDA_ERROR_NOT_SUPPORTED;
    }
    Vmm& v = vmm();
    std::lock_guard lk(v.mu);
    PhysAlloc* p = v.phys(handle);
    if (p == nullptr) return reject(fn, "handle");
    if ((p->prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) == 0)
      return reject(fn, "handleType (not requested at cuMemCreate)");
    int fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return reject(fn, "handle (dup failed)", CUDA_ERROR_OUT_OF_MEMORY);
    *static_cast<int*>(shareableHandle) = fd;  // the caller owns it
    return CUDA_SUCCESS;
  });
}

CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle, void* osHandle,
                                        CUmemAllocationHandleType shHandleType) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (handle == nullptr) return reject(fn, "handle");
    GENIE_CU_RT(r);
    if (shHandleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
      GENIE_LOG_WARN(log::kFakecuda, "{}: handle type {} is not emulated", fn, static_cast<int>(shHandleType));
      return CUDA_ERROR_NOT_SUPPORTED;
    }
    int fd = static_cast<int>(reinterpret_cast<intptr_t>(osHandle));
    struct stat st {};
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0 || !aligned(static_cast<uint64_t>(st.st_size)))
      return reject(fn, "osHandle (not an exported allocation)");
    int dev = memfd_device(fd);
    if (dev < 0 || dev >= r->device_count()) dev = 0;
    int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0) return reject(fn, "osHandle (dup failed)", CUDA_ERROR_OUT_OF_MEMORY);
    auto* p = new PhysAlloc();
    p->size = static_cast<size_t>(st.st_size);
    p->device = dev;
    p->fd = own;
    p->prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p->prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p->prop.location.id = dev;
    p->prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    return publish_handle(p, handle);
  });
}

}  // namespace genie::fakecuda::drv
