// SPDX-License-Identifier: Apache-2.0
// Bootstrap: the unique id (root address + job secret) and the TCP rendezvous that gives every rank of a
// new communicator the table of all ranks.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "genie/common/status.hpp"

namespace genie::shim {

/// What ncclUniqueId carries (128 bytes on the wire).
struct UniqueId {
  static constexpr uint32_t kMagic = 0x47454e49u;  // "GENI"
  static constexpr uint16_t kVersion = 1;
  uint32_t ipv4 = 0;                 ///< root address, network byte order
  uint16_t port = 0;                 ///< root port, host byte order
  std::array<uint8_t, 16> secret{};  ///< random job secret; connections without it are refused

  void encode(char out[128]) const;
  /// InvalidArgument when `in` is not an id made by ncclGetUniqueId (wrong magic or version).
  static Result<UniqueId> decode(const char in[128]);
};

/// One rank's description, exchanged at init. Plain data (sent as bytes).
struct RankInfo {
  int32_t rank = -1;
  int32_t cuda_dev = 0;
  int32_t pid = 0;
  int32_t process_rank = -1;  ///< the process's rank in the job (RANK and friends), -1 if the launcher gave none
  int32_t segment_fd = -1;  ///< rank 0: memfd of the communicator's shared control segment
  uint64_t segment_id = 0;  ///< rank 0: a random id of that segment (checked after mapping it)
  char host[64] = {};       ///< hostname: ranks on one host share memory
  char node[64] = {};       ///< emulated node name (GENIE_NODE, else the hostname)
  int32_t fabric = 0;       ///< 1: this rank asks for the real fabric (GENIE_FABRIC=real)
  char provider[28] = {};   ///< the libfabric provider it asks for ("" : the default)
};

/// The bootstrap's wire messages and their checks, without sockets (the fuzz target drives them directly).
/// Hello {magic, version, secret, nranks, rank, RankInfo} is what any peer that reaches the root's port sends
/// first; the root answers Reply {magic, status, nranks} + nranks RankInfo. Round 2: Extra {magic, len} + len
/// bytes from each rank, ExtraReply {magic, status, nranks} + nranks x (u32 len + bytes) from the root.
namespace wire {
constexpr uint32_t kHelloMagic = 0x48454c4fu;  // "HELO"
constexpr uint32_t kReplyMagic = 0x52504c59u;  // "RPLY"
constexpr uint32_t kExtraMagic = 0x45585452u;  // "EXTR"
constexpr uint32_t kWireVersion = 1;
constexpr int kMaxRanks = 1 << 20;  // an upper bound that keeps a hostile nranks from exhausting memory

struct Hello {
  uint32_t magic;
  uint32_t version;
  uint8_t secret[16];
  int32_t nranks;
  int32_t rank;
  RankInfo info;
};
struct Reply {
  uint32_t magic;
  int32_t status;  // 0 ok, else an Errc value
  int32_t nranks;
  char text[116];
};
struct Extra {
  uint32_t magic;
  uint32_t len;
};
struct ExtraReply {
  uint32_t magic;
  int32_t status;  // 0 ok, else an Errc value
  int32_t nranks;
};

/// The root's side of the first round: admits hellos until every rank of the communicator joined.
/// Not thread-safe (the root's one thread).
class RootAdmission {
 public:
  explicit RootAdmission(const std::array<uint8_t, 16>& secret) : secret_(secret) {}
  enum class Verdict {
    kDrop,    ///< malformed or wrong secret: closed without an answer (and logged)
    kRefuse,  ///< a member of the job with a bad request: answered with `why`, then closed
    kAdmit,   ///< joined as `rank`
  };
  struct Decision {
    Verdict verdict = Verdict::kDrop;
    int rank = -1;
    std::string why;
  };
  /// Decides on one hello as it arrived from a peer.
  Decision admit(const Hello& h);
  /// nranks of the first admitted hello, or -1.
  int nranks() const { return nranks_; }
  int joined() const { return joined_; }
  bool complete() const { return nranks_ > 0 && joined_ == nranks_; }
  /// Every rank's info, indexed by rank (what the root sends back once complete()).
  const std::vector<RankInfo>& table() const { return table_; }

 private:
  std::array<uint8_t, 16> secret_;
  int nranks_ = -1;
  int joined_ = 0;
  std::vector<RankInfo> table_;
};

/// A rank's check of the root's Reply to its hello (`nranks`: what it asked for). kInvalidArgument or
/// kTimeout when the root refused it (with the root's text), kRemote for a malformed reply.
Status check_reply(const Reply& r, int nranks);
/// The root's check of one Extra header: the blob length that follows, or kRemote when malformed.
Result<uint32_t> check_extra(const Extra& e);
/// A rank's check of the root's ExtraReply. kRemote when malformed or for another nranks, else the root's status.
Status check_extra_reply(const ExtraReply& r, int nranks);
}  // namespace wire

/// The connection of a rank to the bootstrap root after join, for one more all-gather of variable-size
/// blobs (the real fabric's endpoint addresses, known only once every rank's host is). Every rank of the
/// communicator either calls allgather or destroys its session without (then the root ends).
class BootstrapSession {
 public:
  static constexpr size_t kMaxBlob = 4096;
  BootstrapSession(int fd, int nranks, std::chrono::steady_clock::time_point deadline)
      : fd_(fd), nranks_(nranks), deadline_(deadline) {}
  ~BootstrapSession();
  BootstrapSession(const BootstrapSession&) = delete;
  BootstrapSession& operator=(const BootstrapSession&) = delete;
  /// Sends `mine` (<= kMaxBlob bytes) and returns every rank's blob, indexed by rank. Errors: kRemote
  /// (connection lost, or some rank left without taking part), kTimeout.
  Result<std::vector<std::vector<uint8_t>>> allgather(const std::vector<uint8_t>& mine,
                                                      const std::function<bool()>& should_stop);

 private:
  int fd_;
  int nranks_;
  std::chrono::steady_clock::time_point deadline_;
};

/// Starts a root listener for one communicator (a detached thread that exits once every rank has
/// joined or `timeout` passed) and returns its id. `bind_addr` is an IPv4 address ("127.0.0.1").
Result<UniqueId> start_root(const std::string& bind_addr, std::chrono::milliseconds timeout);

/// Joins the communicator of `id` as `rank` of `nranks`: sends `mine` and the secret to the root and
/// receives every rank's info, indexed by rank. `should_stop` is polled while waiting (abort); errors:
/// kSystem (cannot connect), kInvalidArgument (the root refused: wrong secret, rank taken, nranks differs),
/// kTimeout.
/// With `session`, the connection stays open for BootstrapSession::allgather.
Result<std::vector<RankInfo>> join(const UniqueId& id, int nranks, const RankInfo& mine,
                                   std::chrono::milliseconds timeout, const std::function<bool()>& should_stop,
                                   std::unique_ptr<BootstrapSession>* session = nullptr);

/// GENIE_SHIM_BOOTSTRAP_TIMEOUT_S: how long a communicator's ranks have to find each other.
std::chrono::milliseconds bootstrap_timeout();

}  // namespace genie::shim
