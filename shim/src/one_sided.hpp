// SPDX-License-Identifier: Apache-2.0
// One-sided communication (NCCL 2.29's ncclPutSignal / ncclSignal / ncclWaitSignal) on windows
// (ncclCommWindowRegister). A window knows every rank's buffer as peers map it (device memory lives on a memfd from
// birth, shim/src/peer_memory.hpp), so a put writes straight into the target's window when the sender's stream
// reaches it, as an RDMA write would; then it raises a signal in the target's signal area: a counter per sender and
// the arrival time netsim gives the message. ncclWaitSignal consumes signals in order and ends at the latest arrival.
// Ranks must share a host (the real fabric carries no one-sided traffic yet: ncclInvalidUsage).
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

#include <nccl.h>

#include "genie/common/status.hpp"
#include "shared_segment.hpp"

namespace genie::shim {

class Communicator;

/// Arrival times kept per sender: a wait that falls further behind than this many signals ends at the latest
/// arrival it sees instead of the exact one (later, never earlier).
inline constexpr uint64_t kSignalRing = 256;

/// What one sender writes into one receiver's signal area.
struct alignas(64) SignalSlot {
  std::atomic<uint64_t> count{0};  ///< signals raised so far (release after the arrival time and the bytes)
  std::atomic<int64_t> latest_ns{0};
  std::atomic<int64_t> arrival_ns[kSignalRing];
};

/// A rank's signal area: one slot per sender, in device memory (counted as the communicator's), mapped by every peer.
struct SignalArea {
  SignalSlot* local = nullptr;       ///< this rank's area (slot[src])
  void* alloc = nullptr;             ///< its device allocation
  uint64_t bytes = 0;
  std::vector<BufferRef> peers;      ///< every rank's area as published
  std::vector<SignalSlot*> mapped;   ///< peers' areas mapped here (null until first used)
};

/// A registered window (ncclWindow_t's contents).
struct Window {
  void* base = nullptr;
  uint64_t size = 0;
  int flags = 0;
  std::vector<BufferRef> ranks;  ///< every rank's buffer of this window, as published
  std::vector<uint64_t> sizes;   ///< and its size
};

/// The window `win` registered on `comm` (nccl_api.cpp); InvalidArgument naming `what` otherwise.
Result<Window*> window_of(ncclComm_t comm, ncclWindow_t win, const char* what);
/// The communicator and contents of the registered window `win`; InvalidArgument naming `what` otherwise.
Result<std::pair<ncclComm_t, Window*>> window_lookup(ncclWindow_t win, const char* what);

}  // namespace genie::shim

/// ncclWindow_t.
struct ncclWindow_vidmem {
  static constexpr uint64_t kMagic = 0x4e43434c57494e44ull;  // "NCCLWIND"
  uint64_t magic = kMagic;
  const void* comm = nullptr;  ///< the ncclComm_t it was registered on
  genie::shim::Window w;
};
