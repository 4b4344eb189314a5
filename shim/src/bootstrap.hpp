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

}  // namespace genie::shim
