// SPDX-License-Identifier: Apache-2.0
// FabricBell: the process's bell page (a memfd, remade in a forked child) and its slot allocation.
#include "transport/fabric_bell.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bitset>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <new>

#include "genie/common/log.hpp"
#include "peer_memory.hpp"

namespace genie::shim {
namespace {

constexpr size_t kPageBytes = FabricBell::kSlots * sizeof(Doorbell);

struct BellPage {
  std::mutex mu;
  int32_t pid = 0;  // the process that made `base` (a forked child makes its own)
  Doorbell* base = nullptr;
  BellAddress address;
  std::bitset<FabricBell::kSlots> used;
};
BellPage& page() {
  static auto* p = new BellPage();  // never destroyed: endpoints may close during exit
  return *p;
}

// Makes this process's page (page().mu held). False when it cannot (the endpoints then go without bells).
bool make_page(BellPage& pg) {
  const int fd = memfd_create("genie-fabric-bells", MFD_CLOEXEC);
  if (fd < 0) {
    GENIE_LOG_DEBUG("shim", "fabric: no bell page (memfd_create: {}); shm endpoints wait by yielding", std::strerror(errno));
    return false;
  }
  struct stat sb {};
  void* p = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(kPageBytes)) == 0 && fstat(fd, &sb) == 0)
    p = mmap(nullptr, kPageBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    GENIE_LOG_DEBUG("shim", "fabric: no bell page ({}); shm endpoints wait by yielding", std::strerror(errno));
    ::close(fd);
    return false;
  }
  pg.pid = static_cast<int32_t>(getpid());
  pg.base = static_cast<Doorbell*>(p);
  for (uint32_t i = 0; i < FabricBell::kSlots; ++i) new (pg.base + i) Doorbell();
  pg.used.reset();
  pg.address.page.addr = reinterpret_cast<uint64_t>(p);
  pg.address.page.pid = pg.pid;
  pg.address.page.fd = fd;  // kept open: peers open it through /proc/<pid>/fd
  pg.address.page.fd_id = static_cast<uint64_t>(sb.st_ino);
  pg.address.page.offset = 0;
  pg.address.page.map_size = kPageBytes;
  return true;
}

}  // namespace

std::unique_ptr<FabricBell> FabricBell::acquire() {
  BellPage& pg = page();
  std::lock_guard lk(pg.mu);
  if (pg.base == nullptr || pg.pid != static_cast<int32_t>(getpid())) {
    if (!make_page(pg)) return nullptr;
  }
  for (uint32_t i = 0; i < kSlots; ++i) {
    if (pg.used[i]) continue;
    pg.used[i] = true;
    BellAddress a = pg.address;
    a.slot = i;
    return std::unique_ptr<FabricBell>(new FabricBell(pg.base + i, a));
  }
  GENIE_LOG_DEBUG("shim", "fabric: all {} bells of this process are taken; this shm endpoint waits by yielding", kSlots);
  return nullptr;
}

FabricBell::~FabricBell() {
  BellPage& pg = page();
  std::lock_guard lk(pg.mu);
  // A peer may still ring the slot (it has its address): the next holder sees a spurious wake-up at worst.
  if (pg.base != nullptr && bell_ == pg.base + address_.slot) pg.used[address_.slot] = false;
}

Result<Doorbell*> resolve_bell(const BellAddress& a) {
  if (a.page.map_size != kPageBytes || a.slot >= FabricBell::kSlots)
    return Status(Errc::kRemote, "malformed bell address from a peer (slot " + std::to_string(a.slot) + ")");
  GENIE_ASSIGN_OR_RETURN(char* base, PeerMemory::instance().resolve(a.page));
  if (base == nullptr) return Status(Errc::kRemote, "a peer's bell page is not mapped");
  return reinterpret_cast<Doorbell*>(base) + a.slot;
}

}  // namespace genie::shim
