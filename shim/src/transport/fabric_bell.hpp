// SPDX-License-Identifier: Apache-2.0
// FabricBell: the doorbell of one shm-provider endpoint. libfabric's shm provider can only wait by spinning on
// sched_yield (FI_WAIT_YIELD), so an idle rank that shares a core with its peers keeps it; with a bell it sleeps on
// a futex instead and the peer that sends to it rings. Each process keeps its endpoints' bells on one memfd page,
// which same-host peers map once (PeerMemory) and address by slot.
#pragma once

#include <cstdint>
#include <memory>

#include "doorbell.hpp"
#include "genie/common/status.hpp"
#include "shared_segment.hpp"

namespace genie::shim {

/// Where a bell is for peers: its process's bell page as they map it, and its slot there.
struct BellAddress {
  BufferRef page;
  uint32_t slot = 0;
  uint32_t reserved = 0;
};

class FabricBell {
 public:
  /// Bells one process can hold at once (one per open shm endpoint: two per communicator).
  static constexpr uint32_t kSlots = 256;
  /// A free bell of this process, or null when none can be had (all taken, or no memfd): the endpoint then waits
  /// as before, by yielding.
  static std::unique_ptr<FabricBell> acquire();
  ~FabricBell();
  FabricBell(const FabricBell&) = delete;
  FabricBell& operator=(const FabricBell&) = delete;

  Doorbell& bell() { return *bell_; }
  const BellAddress& address() const { return address_; }

 private:
  FabricBell(Doorbell* b, const BellAddress& a) : bell_(b), address_(a) {}
  Doorbell* bell_;
  BellAddress address_;
};

/// A peer's bell from the address it published (its page is mapped on first use). kRemote when the page cannot be
/// mapped (another host, another user) or the slot lies outside it.
Result<Doorbell*> resolve_bell(const BellAddress& a);

}  // namespace genie::shim
