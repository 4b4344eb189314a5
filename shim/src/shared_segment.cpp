// SPDX-License-Identifier: Apache-2.0
// Control segment mapping and waiting: spin briefly, then sleep on a futex in the shared page, so ranks
// that outnumber cores do not burn the CPU their peers need (DESIGN.md: progress must block when idle).
#include "shared_segment.hpp"

#include "genie/common/quiescence.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <string>

namespace genie::shim {
namespace {

constexpr int kSpinRounds = 64;             // yields before sleeping: a peer on another core often answers within these
constexpr long kSleepSliceNs = 50'000'000;  // futex sleep between checks (abort, dead peers, hang timeout)

size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

// Segments mapped in this process, by id: ranks of one communicator in one process (threads, several devices)
// share the creator's mapping instead of mapping the memfd again, so every rank uses the same addresses.
struct LocalSegments {
  std::mutex mu;
  std::map<uint64_t, std::pair<void*, int>> by_id;  // id -> (base, users)
};
LocalSegments& local_segments() {
  static auto* l = new LocalSegments();
  return *l;
}
}  // namespace

size_t SharedSegment::bytes_for(int nranks) {
  const size_t n = static_cast<size_t>(nranks);
  return align_up(sizeof(SegmentHeader), 64) + n * sizeof(RankSlot) + n * n * sizeof(Mailbox);
}

Result<SharedSegment*> SharedSegment::create(int nranks, uint64_t id) {
  int fd = memfd_create("genie-nccl-comm", MFD_CLOEXEC);
  if (fd < 0) return system_error(std::string("memfd_create: ") + std::strerror(errno));
  const size_t size = bytes_for(nranks);
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    int err = errno;
    ::close(fd);
    return system_error(std::string("ftruncate of the control segment: ") + std::strerror(err));
  }
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    ::close(fd);
    return system_error(std::string("mmap of the control segment: ") + std::strerror(err));
  }
  auto* s = new SharedSegment();
  s->fd_ = fd;
  s->base_ = p;
  s->size_ = size;
  s->nranks_ = nranks;
  // A fresh memfd is zero-filled, which is a valid initial state for every atomic in it.
  s->header_ = new (p) SegmentHeader();
  s->slots_ = reinterpret_cast<RankSlot*>(static_cast<char*>(p) + align_up(sizeof(SegmentHeader), 64));
  s->mail_ = reinterpret_cast<Mailbox*>(s->slots_ + nranks);
  s->header_->id = id;
  s->header_->nranks = nranks;
  // No fence: another process opens the segment only after its fd reached it through the bootstrap's sockets, and
  // ranks of this process share the mapping through local_segments()'s lock; both order these stores first.
  s->header_->magic = SegmentHeader::kMagic;
  s->shared_local_ = true;
  s->id_ = id;
  auto& l = local_segments();
  std::lock_guard lk(l.mu);
  l.by_id[id] = {p, 1};
  return s;
}


Result<SharedSegment*> SharedSegment::open(int pid, int fd, uint64_t id, int nranks) {
  if (pid == static_cast<int>(getpid())) {
    auto& l = local_segments();
    std::lock_guard lk(l.mu);
    auto it = l.by_id.find(id);
    if (it != l.by_id.end()) {
      auto* hdr = static_cast<SegmentHeader*>(it->second.first);
      if (hdr->nranks != nranks) return Status(Errc::kRemote, "rank 0's control segment does not match this communicator");
      ++it->second.second;
      auto* s = new SharedSegment();
      s->base_ = it->second.first;
      s->size_ = bytes_for(nranks);
      s->nranks_ = nranks;
      s->shared_local_ = true;
      s->id_ = id;
      s->header_ = hdr;
      s->slots_ = reinterpret_cast<RankSlot*>(static_cast<char*>(s->base_) + align_up(sizeof(SegmentHeader), 64));
      s->mail_ = reinterpret_cast<Mailbox*>(s->slots_ + nranks);
      return s;
    }
  }
  std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  int local = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (local < 0)
    return system_error("cannot open rank 0's control segment " + path + ": " + std::strerror(errno) +
                        " (ranks of one communicator on one host must be able to read each other's /proc/<pid>/fd)");
  const size_t size = bytes_for(nranks);
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, local, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    ::close(local);
    return system_error(std::string("mmap of the control segment: ") + std::strerror(err));
  }
  auto* hdr = static_cast<SegmentHeader*>(p);
  if (hdr->magic != SegmentHeader::kMagic || hdr->id != id || hdr->nranks != nranks) {
    munmap(p, size);
    ::close(local);
    return Status(Errc::kRemote, "rank 0's control segment does not match this communicator");
  }
  auto* s = new SharedSegment();
  s->fd_ = local;
  s->base_ = p;
  s->size_ = size;
  s->nranks_ = nranks;
  s->header_ = hdr;
  s->slots_ = reinterpret_cast<RankSlot*>(static_cast<char*>(p) + align_up(sizeof(SegmentHeader), 64));
  s->mail_ = reinterpret_cast<Mailbox*>(s->slots_ + nranks);
  return s;
}

SharedSegment::~SharedSegment() {
  bool unmap = true;
  if (shared_local_) {
    auto& l = local_segments();
    std::lock_guard lk(l.mu);
    auto it = l.by_id.find(id_);
    if (it != l.by_id.end() && --it->second.second > 0) unmap = false;
    else if (it != l.by_id.end()) l.by_id.erase(it);
  }
  if (base_ && unmap) munmap(base_, size_);
  if (fd_ >= 0) ::close(fd_);
}

void SharedSegment::ring() { header_->bell.ring(); }

Status SharedSegment::wait(const std::function<bool()>& ready, const std::function<Status()>& check) {
  for (int i = 0; i < kSpinRounds; ++i) {
    if (ready()) return Status::ok();
    sched_yield();
  }
  GenieWait waiting;  // for peers: asleep to a quiescence probe although it wakes every sleep slice
  auto last_check = std::chrono::steady_clock::now();
  GENIE_TRY(check());
  for (;;) {
    if (header_->bell.sleep_unless(ready, kSleepSliceNs) || ready()) return Status::ok();
    auto now = std::chrono::steady_clock::now();
    if (now - last_check >= std::chrono::milliseconds(50)) {
      last_check = now;
      GENIE_TRY(check());
    }
  }
}

}  // namespace genie::shim
