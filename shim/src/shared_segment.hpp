// SPDX-License-Identifier: Apache-2.0
// The control segment of a communicator: one memfd mapping shared by every rank on the host, holding each
// rank's posted call, progress counters and the point-to-point mailboxes; plus the futex-based waiting.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "doorbell.hpp"
#include "genie/common/status.hpp"

namespace genie::shim {

/// A buffer as its owner publishes it: enough for a peer in another process to map the same pages.
struct BufferRef {
  uint64_t addr = 0;      ///< address in the owner's process (0: none)
  int32_t pid = 0;        ///< owner process
  int32_t fd = -1;        ///< memfd of the allocation in the owner's process
  uint64_t fd_id = 0;     ///< its inode (tells a reused fd number apart)
  uint64_t offset = 0;    ///< addr - allocation base
  uint64_t map_size = 0;  ///< bytes to map
};

/// A collective call as posted for the cross-rank checks and the data phase.
struct CallDesc {
  uint32_t collective = 0;  ///< netsim::Collective
  uint32_t datatype = 0;    ///< netsim::DataType
  uint32_t redop = 0;       ///< ReduceOp
  int32_t root = 0;
  uint64_t count = 0;
  bool operator==(const CallDesc&) const = default;
};

inline constexpr int kPhasesPerCall = 8;     ///< progress counter = seq * kPhasesPerCall + phase
inline constexpr int kMailboxDepth = 8;      ///< outstanding sends per ordered pair of ranks
inline constexpr size_t kGatherBytes = 256;  ///< payload of one small all-gather (split, shrink)

/// Per-rank slot. Only its owner writes it (release stores); peers read (acquire loads).
struct alignas(64) RankSlot {
  std::atomic<uint64_t> arrived{0};   ///< seq of the last call posted (its fields below are valid)
  std::atomic<uint64_t> progress{0};  ///< seq * kPhasesPerCall + phase reached
  int64_t ready_ns = 0;               ///< virtual ready time of the posted call
  CallDesc desc;
  BufferRef send;
  BufferRef recv;
  double scalar = 1.0;  ///< PreMulSum scalar of this rank
  uint32_t in_place = 0;
  std::atomic<uint64_t> gather_seq{0};   ///< small all-gather: seq posted
  std::atomic<uint64_t> gather_done{0};  ///< small all-gather: seq whose payloads this rank has read
  uint8_t gather[kGatherBytes] = {};
  /// The same for the exchanges of a split's or shrink's members as they make the new communicator (a lane of its own:
  /// ranks outside them, excluded by a shrink, skip these and only these, so the first lane stays in step).
  std::atomic<uint64_t> sub_gather_seq{0};
  std::atomic<uint64_t> sub_gather_done{0};
  uint8_t sub_gather[kGatherBytes] = {};
};

/// One message of a point-to-point mailbox.
struct MailEntry {
  uint64_t bytes = 0;
  BufferRef buf;
  int64_t send_ready_ns = 0;
  int64_t recv_ready_ns = 0;  ///< written by the receiver before it acknowledges
};

/// Mailbox of the ordered pair (src -> dst): the sender posts entries, the receiver consumes them.
struct alignas(64) Mailbox {
  std::atomic<uint64_t> posted{0};    ///< messages posted by src
  std::atomic<uint64_t> consumed{0};  ///< messages copied out by dst
  MailEntry ring[kMailboxDepth];
};

struct SegmentHeader {
  static constexpr uint64_t kMagic = 0x47454e4945534547ull;  // "GENIESEG"
  uint64_t magic = 0;
  uint64_t id = 0;
  int32_t nranks = 0;
  std::atomic<int32_t> broken{0};  ///< an Errc once the communicator failed for everyone
  Doorbell bell;                   ///< rung after every update peers may wait for
};

/// A mapped control segment. The creator sizes it for `nranks`; others map the creator's memfd.
class SharedSegment {
 public:
  static Result<SharedSegment*> create(int nranks, uint64_t id);
  /// Maps the segment of process `pid`'s fd `fd` (same host) and checks its id and size.
  static Result<SharedSegment*> open(int pid, int fd, uint64_t id, int nranks);
  ~SharedSegment();

  int fd() const { return fd_; }
  SegmentHeader& header() { return *header_; }
  RankSlot& slot(int r) { return slots_[r]; }
  Mailbox& mailbox(int src, int dst) {
    return mail_[static_cast<size_t>(src) * static_cast<size_t>(nranks_) + static_cast<size_t>(dst)];
  }
  int nranks() const { return nranks_; }

  /// Wakes every thread waiting on this segment (after a release store peers may wait for).
  void ring();
  /// Waits until `ready()` holds. `check()` runs about every 50 ms while waiting (abort, dead peers,
  /// hang timeout); a non-ok Status from it ends the wait with that Status.
  Status wait(const std::function<bool()>& ready, const std::function<Status()>& check);

 private:
  SharedSegment() = default;
  static size_t bytes_for(int nranks);
  int fd_ = -1;
  bool shared_local_ = false;  ///< mapping registered for this process's other ranks (see open)
  uint64_t id_ = 0;
  void* base_ = nullptr;
  size_t size_ = 0;
  int nranks_ = 0;
  SegmentHeader* header_ = nullptr;
  RankSlot* slots_ = nullptr;
  Mailbox* mail_ = nullptr;
};

}  // namespace genie::shim
