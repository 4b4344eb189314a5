// SPDX-License-Identifier: Apache-2.0
// Interprocess events: records and completions travel through a small shared-memory block.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <thread>

#include "genie/fakecuda/runtime.hpp"

namespace genie::fakecuda {
namespace {

constexpr size_t kIpcBlockBytes = 4096;
// How often a waiter looks at another process's event (wall time); short against collective times.
constexpr auto kIpcPollInterval = std::chrono::microseconds(50);

Result<IpcEventBlock*> map_block(int fd, bool create) {
  if (create && ftruncate(fd, kIpcBlockBytes) != 0) return system_error(std::string("ftruncate: ") + std::strerror(errno));
  void* p = mmap(nullptr, kIpcBlockBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return system_error(std::string("mmap: ") + std::strerror(errno));
  return create ? new (p) IpcEventBlock() : static_cast<IpcEventBlock*>(p);
}

}  // namespace

Status Runtime::make_ipc_event(Event& e) {
  int fd = memfd_create("genie-ipc-event", MFD_CLOEXEC);
  if (fd < 0) return system_error(std::string("memfd_create: ") + std::strerror(errno));
  auto blk = map_block(fd, true);
  if (!blk.is_ok()) {
    close(fd);
    return blk.status();
  }
  e.ipc = blk.value();
  e.ipc_fd = fd;
  return Status::ok();
}

void Runtime::release_ipc_event(Event& e) {
  if (e.ipc != nullptr) munmap(e.ipc, kIpcBlockBytes);
  if (e.ipc_fd >= 0) close(e.ipc_fd);
  e.ipc = nullptr;
  e.ipc_fd = -1;
}

Result<std::pair<int, int>> Runtime::export_event(Event& e) {
  std::lock_guard lk(e.mu);
  if (e.ipc == nullptr || e.ipc_fd < 0) return invalid_usage("event was not created with cudaEventInterprocess");
  return std::make_pair(static_cast<int>(getpid()), e.ipc_fd);
}

Result<Event*> Runtime::open_event(int pid, int fd) {
  std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  int local = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (local < 0) return invalid_argument("cannot open the exporting process's event (" + path + "): " + std::strerror(errno));
  auto blk = map_block(local, false);
  close(local);
  if (!blk.is_ok()) return blk.status();
  Event* e = create_event(kEventDisableTiming | kEventInterprocess);
  std::lock_guard lk(e->mu);
  e->ipc = blk.value();
  return e;
}

Status Runtime::record_ipc_event(Event& e, Stream& s) {
  IpcEventBlock* blk = e.ipc;
  uint64_t seq = blk->recorded.fetch_add(1) + 1;
  sched::OpSpec spec;
  spec.label = "event";
  spec.run = [blk, seq](SimTime ready, const sched::ExternalOp&) -> Result<SimTime> {
    blk->time_ns.store(ready.count_ns(), std::memory_order_relaxed);
    uint64_t cur = blk->completed.load();
    while (cur < seq && !blk->completed.compare_exchange_weak(cur, seq)) {
    }
    return ready;
  };
  SimTime now = clock().api_call(options_.api_overhead);
  return submit(s, std::move(spec), now).status();
}

Status Runtime::query_ipc_event(Event& e) {
  IpcEventBlock* blk = e.ipc;
  uint64_t seq = blk->recorded.load();
  if (blk->completed.load() < seq) return Status(Errc::kNotReady, "event pending in another process");
  SimTime now = clock().api_call(options_.api_overhead);
  return SimTime::ns(blk->time_ns.load()) <= now || !clock().is_virtual() ? Status::ok()
                                                                          : Status(Errc::kNotReady, "event pending");
}

Status Runtime::synchronize_ipc_event(Event& e) {
  IpcEventBlock* blk = e.ipc;
  uint64_t seq = blk->recorded.load();
  while (blk->completed.load() < seq) std::this_thread::sleep_for(kIpcPollInterval);
  clock().wait_until(SimTime::ns(blk->time_ns.load()));
  return Status::ok();
}

Status Runtime::wait_ipc_event(Stream& s, Event& e) {
  IpcEventBlock* blk = e.ipc;
  uint64_t seq = blk->recorded.load();
  sched::OpSpec spec;
  spec.label = "wait";
  spec.may_run_inline = blk->completed.load() >= seq;
  spec.run = [blk, seq](SimTime ready, const sched::ExternalOp&) -> Result<SimTime> {
    while (blk->completed.load() < seq) std::this_thread::sleep_for(kIpcPollInterval);
    return max(ready, SimTime::ns(blk->time_ns.load()));
  };
  SimTime now = clock().api_call(options_.api_overhead);
  return submit(s, std::move(spec), now).status();
}

}  // namespace genie::fakecuda
