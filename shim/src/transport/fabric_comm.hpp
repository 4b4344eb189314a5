// SPDX-License-Identifier: Apache-2.0
// FabricComm: one rank's real-fabric state for one communicator: a data endpoint (collectives and p2p,
// driven by the stream worker) and a control endpoint (split/shrink exchanges on the host thread), the
// peers' addresses, and the bounded waits every exchange shares (abort, stall timeout naming the peers).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "genie/common/status.hpp"
#include "transport/fabric_endpoint.hpp"

namespace genie::shim {

/// Tag layout (64 bits): [63:62] kind, [61:40] sequence or source rank, [39:0] index (control: [39:20] member-list
/// hash, [19:0] source rank).
enum class TagKind : uint64_t { kData = 0, kHeader = 1, kP2P = 2, kControl = 3 };
inline uint64_t make_tag(TagKind k, uint64_t mid, uint64_t low) {
  return (static_cast<uint64_t>(k) << 62) | ((mid & ((1ull << 22) - 1)) << 40) | (low & ((1ull << 40) - 1));
}

/// One message of an exchange: a send to or a receive from `peer` (a rank of the communicator).
struct FabricMsg {
  bool is_send = true;
  int peer = 0;
  void* buf = nullptr;
  size_t len = 0;
  uint64_t tag = 0;
  size_t received = 0;  ///< receives: bytes that arrived
  FabricOpContext ctx;
  bool posted = false;
  bool done = false;
};

/// How an exchange waits: `check` is polled (abort, dead peers), `stall` is the longest time without any
/// completion before the exchange fails, `what` names the call in messages.
struct FabricWait {
  /// Run about every 50 ms with the ranks the exchange still waits for; a non-ok Status ends the wait.
  std::function<Status(const std::vector<int>& waiting_for)> check;
  std::chrono::milliseconds stall{std::chrono::minutes(5)};
  std::string what;
};

class FabricComm {
 public:
  /// Opens this rank's endpoints on `provider`, bound to `src_addr` (IPv4, for IP providers).
  static Result<std::unique_ptr<FabricComm>> open(const std::string& provider, const std::string& src_addr,
                                                  int gpu = 0);
  /// The address blob this rank publishes (data and control endpoint names).
  std::vector<uint8_t> local_blob() const;
  /// Inserts every rank's blob (indexed by rank; `hosts` names each rank's host for messages).
  Status connect(int rank, const std::vector<std::vector<uint8_t>>& blobs, std::vector<std::string> hosts);

  int rank() const { return rank_; }
  int nranks() const { return static_cast<int>(data_addr_.size()); }
  FabricEndpoint& data() { return *data_; }
  uint64_t data_addr(int r) const { return data_addr_[static_cast<size_t>(r)]; }
  const std::string& provider() const { return data_->provider(); }
  const std::string& host_of(int r) const { return hosts_[static_cast<size_t>(r)]; }
  /// "rank 3 (host h1)"
  std::string peer_name(int r) const;
  /// Keeps the contexts of operations a failed exchange left posted alive for the endpoint's lifetime
  /// (a late completion still points at them).
  template <class V>
  void retire(V&& v) {
    graveyard_.push_back(std::make_shared<std::decay_t<V>>(std::forward<V>(v)));
  }

  /// Posts every message of `msgs` and waits for all of them on the data (or control) endpoint. Never
  /// blocks on one message, so any order of sends and receives completes. Errors: kRemote (a peer failed,
  /// the fabric reported an error, or nothing completed for `w.stall`: the message names the ranks still
  /// missing), kInvalidUsage (a peer sent more than a receive posted).
  Status exchange(std::vector<FabricMsg>& msgs, const FabricWait& w, bool control = false);

  /// Small all-gather on the control endpoint among `members` (ranks of this communicator, same list on
  /// all of them): each member's `len` bytes, in `members` order. `seq` numbers the exchange among these members
  /// (FabricTransport counts per member list), `set` tells member lists apart in the tag (a hash of the list).
  Result<std::vector<std::vector<uint8_t>>> gather(const std::vector<int>& members, const void* mine, size_t len,
                                                    uint64_t seq, const FabricWait& w, uint32_t set = 0);

  /// After connect(): waits until every rank has connected (a control all-gather: a peer's message means it has
  /// inserted, so mapped, every address), then removes this rank's shm region files, which no peer needs by name
  /// any more (FabricEndpoint::unlink_shm_file). The same gather settles whether idle ranks may sleep on their
  /// doorbells: only when every rank can ring every other's (FabricEndpoint::sleep_on_bell). `peer_dead(r)` says a
  /// peer on this host exited; the wait fails with kRemote naming it, or after `stall`. Other providers: returns at
  /// once.
  Status seal(const std::function<bool(int)>& peer_dead, std::chrono::milliseconds stall);

  /// seal() found that every rank can ring every other's doorbells: idle ranks sleep on them (shm).
  bool sleeps_on_bells() const { return data_->sleeps_on_bell(); }

  /// shm provider: removes the shared-memory files of the peers `dead` marks (indexed by rank: processes on this
  /// host known to have exited), which a peer killed by SIGKILL could not remove itself. Only Genie's names
  /// (genie-<tag>-...) of files this user owns are removed. Returns how many were.
  int remove_dead_peer_files(const std::vector<bool>& dead) const;

 private:
  FabricComm() = default;
  int rank_ = 0;
  std::unique_ptr<FabricEndpoint> data_, ctrl_;
  std::vector<uint64_t> data_addr_, ctrl_addr_;
  std::vector<std::string> hosts_;
  std::vector<std::vector<std::vector<uint8_t>>> peer_names_;  ///< per rank: its data and control endpoint names
  std::vector<std::shared_ptr<void>> graveyard_;
  bool bells_ok_ = false;  ///< connect(): both endpoints have bells and this rank can ring every peer's
};

/// Drives the completions of `ep` for ops identified by their context's `user` field until `done()`,
/// calling `on_completion(user, completion)` for each; fails as FabricComm::exchange describes. `waiting()`
/// lists the ranks whose messages are still awaited (for the checks and the stall message, which names them
/// with `fc.peer_name`); `kick()` posts what became possible and returns true while something is waiting to
/// be posted (then polls do not block).
Status drive_completions(const FabricComm& fc, FabricEndpoint& ep, const FabricWait& w,
                         const std::function<bool()>& done,
                         const std::function<Status(uint64_t user, const FabricCompletion&)>& on_completion,
                         const std::function<Result<bool>()>& kick, const std::function<std::vector<int>()>& waiting);

}  // namespace genie::shim
