// SPDX-License-Identifier: Apache-2.0
// The coordinator protocol: framed, versioned binary messages between rank processes and the coordinator.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "genie/common/status.hpp"

namespace genie::sched::coord {

/// Every frame: a 24-byte little-endian header, then `length` payload bytes.
///   magic u32 ("GNCO") | version u16 | type u16 | length u32 | reserved u32 | seq u64
/// `seq` counts the sender's frames on this connection from 1; a frame whose seq is not exactly the next
/// one (a replay, a gap) is dropped by the receiver and the connection closed.
inline constexpr uint32_t kMagic = 0x4f434e47u;  // "GNCO" little-endian
inline constexpr uint16_t kVersion = 1;
inline constexpr size_t kHeaderBytes = 24;
/// Largest payload accepted; a longer frame is a protocol error (record batches stay far below it).
inline constexpr uint32_t kMaxPayload = 1u << 22;

enum class MsgType : uint16_t {
  kChallenge = 1,  ///< coordinator -> rank: a fresh nonce to answer with the MAC
  kHello = 2,      ///< rank -> coordinator: MAC(secret, nonce) and who the process is
  kWelcome = 3,    ///< coordinator -> rank: accepted
  kCommJoin = 4,   ///< rank -> coordinator: one rank of a communicator and its placement
  kColl = 5,       ///< rank -> coordinator: a collective reached the head of its stream at `ready`
  kP2p = 6,        ///< rank -> coordinator: one send or receive of a message
  kPromise = 7,    ///< rank -> coordinator: the process injects nothing before `t`
  kRecords = 8,    ///< rank -> coordinator: stream-op records for the report and trace
  kBye = 9,        ///< rank -> coordinator: clean exit
  kResolved = 10,  ///< coordinator -> rank: a collective's or message's start and end
  kWant = 11,      ///< coordinator -> rank: the clock waits for this process's promise to pass `t` (and is at `safe`)
  kProbe = 12,     ///< coordinator -> rank: the clock is stalled; is every thread of the process asleep?
  kQuiet = 13,     ///< rank -> coordinator: the answer to a Probe
  kResume = 14,    ///< coordinator -> rank: the whole job slept; nothing of the process runs before `t`
  kBound = 15,     ///< coordinator -> rank: a complete call ends no earlier than `end_lb`
};
const char* msg_type_name(MsgType t) noexcept;

struct Challenge {
  std::array<uint8_t, 16> nonce{};
};

struct Hello {
  uint64_t mac = 0;          ///< siphash24(secret, hello_mac_input(nonce, pid, process_rank))
  int32_t pid = 0;
  int32_t process_rank = -1;  ///< RANK (or the MPI/Slurm equivalent); -1 when unknown
  int32_t world_size = 0;     ///< processes the job has, as the launcher says (0: unknown)
  int32_t gpus = 0;           ///< emulated devices visible to the process (GENIE_GPUS)
  std::string node;           ///< emulated node name (GENIE_NODE, else the hostname)
  std::string host;
  uint8_t realtime = 0;       ///< the process's clock is the wall clock (its records are wall times)
  int64_t epoch_mono_ns = 0;  ///< CLOCK_MONOTONIC at the process clock's epoch (aligns realtime records)
};
/// The bytes the Hello MAC covers: a domain tag, the nonce, pid and process rank.
std::vector<uint8_t> hello_mac_input(const std::array<uint8_t, 16>& nonce, int32_t pid, int32_t process_rank);

struct Welcome {
  int32_t process_index = 0;  ///< the coordinator's id of this process
  std::string engine;         ///< "flow" | "analytical"
  std::string topology;       ///< description of the job's cluster
};

struct CommJoin {
  uint64_t comm = 0;  ///< communicator key, equal on every member (see shim's comm key)
  int32_t nranks = 0;
  int32_t comm_rank = 0;
  int32_t cuda_dev = 0;
  uint64_t parent = 0;  ///< key of the communicator it was split from (0: none)
};

struct Coll {
  uint64_t comm = 0;
  uint64_t seq = 0;  ///< 1, 2, ... per communicator, in call order (equal on every rank)
  int32_t comm_rank = 0;
  int64_t ready_ns = 0;  ///< when the call reached the head of this rank's stream (virtual time)
  uint8_t collective = 0;  ///< netsim::Collective
  uint8_t datatype = 0;    ///< netsim::DataType
  uint8_t redop = 0;       ///< netsim::RedOp
  int32_t root = 0;
  uint64_t count = 0;
  /// The call's own configuration (ncclCollConfig_t), 0 / "" when it has none: channel bounds and an algorithm
  /// selection in NCCL_ALGO's syntax, applied over the job's NCCL_* environment.
  int32_t min_ctas = 0;
  int32_t max_ctas = 0;
  std::array<uint8_t, 32> algo{};  ///< NUL-padded
};

struct P2p {
  uint64_t comm = 0;
  int32_t src = 0;  ///< communicator ranks
  int32_t dst = 0;
  uint64_t index = 0;  ///< message number on (src, dst), from 1
  uint64_t bytes = 0;
  int64_t ready_ns = 0;
  uint8_t is_send = 0;  ///< which side reports
  int32_t comm_rank = 0;
  uint64_t count = 0;     ///< as the rank called it: bytes = count x the size of `datatype`
  uint8_t datatype = 1;   ///< netsim::DataType (1: uint8)
};

struct Promise {
  int64_t t_ns = 0;     ///< lower bound of any future injection (INT64_MAX: none until woken)
  uint64_t epoch = 0;   ///< number of Resolved messages the process had applied when it computed t_ns
};

/// One completed stream op, for the report and trace.
struct OpRecord {
  uint8_t kind = 0;      ///< RecordKind
  int32_t device = 0;    ///< CUDA device of the stream (or -1 for host-side records)
  uint32_t stream = 0;   ///< per-process stream id
  uint32_t label = 0;    ///< index into the process's label table
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t bytes = 0;    ///< copies and collectives
  uint64_t comm = 0;     ///< collectives: communicator key
  uint64_t seq = 0;      ///< collectives: call number
  /// With kRecordSubmitted in `flags` (sched::OpRecord): host time of submission, latest end of its cross-stream
  /// dependencies (0: none) and the submitting host thread. For Chakra traces (docs/chakra.md).
  int64_t submit_ns = 0;
  int64_t deps_end_ns = 0;
  uint32_t thread = 0;
  uint8_t flags = 0;     ///< sched::kRecordSubmitted | sched::kRecordPart
};
enum class RecordKind : uint8_t {
  kKernel = 0, kCopy = 1, kMemset = 2, kCollective = 3, kP2p = 4, kHostWait = 5, kOther = 6, kRange = 7
};

struct Records {
  uint32_t label_base = 0;          ///< index of labels[0] in the process's label table
  std::vector<std::string> labels;  ///< new labels since the last batch
  std::vector<OpRecord> ops;
};

struct Bye {
  int32_t exit_code = 0;
};

struct Resolved {
  uint8_t is_p2p = 0;
  uint8_t status = 0;  ///< Errc: 0 ok, else the call fails
  uint64_t comm = 0;
  uint64_t seq = 0;    ///< collective seq, or p2p message index
  int32_t src = 0;     ///< p2p only
  int32_t dst = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint8_t algorithm = 0;  ///< netsim::Algorithm (collectives)
  uint8_t protocol = 0;   ///< netsim::Protocol
  uint16_t nchannels = 0;
  uint64_t epoch = 0;     ///< the process's Resolved count including this one
  std::string error;      ///< when status != 0
};

struct Want {
  int64_t t_ns = 0;
  /// The clock's safe time when sent: every call ending before it has been resolved (its Resolved sent earlier on
  /// this connection). A process told so at its own promise knows that work still unresolved does not end before it.
  int64_t safe_ns = 0;
};

struct Probe {
  uint64_t round = 0;
};

struct Quiet {
  uint64_t round = 0;   ///< the Probe answered
  uint64_t epoch = 0;   ///< Resolved and Resume messages the process had applied when it looked
  uint8_t quiet = 0;    ///< 1: every thread but the one answering was asleep (docs/coordinator.md)
  /// The earliest host time of a query waiting to be answered (Timeline::query_floor; INT64_MAX: none): that thread
  /// goes on then, and the process's threads asleep outside Genie may be waiting for it.
  int64_t floor_ns = INT64_MAX;
};

struct Resume {
  int64_t t_ns = 0;     ///< the process's threads resume no earlier than this
  uint64_t epoch = 0;   ///< the process's count of Resolved and Resume messages including this one
};

/// Sent to a call's processes once every rank has reported it (its start is known) and before its Resolved: the call
/// cannot end before `end_lb_ns` whatever else the job injects (netsim::duration_lower_bound), so a query about it at
/// an earlier host time answers at once. Not a wake-up: nothing may inject earlier for it (no epoch).
struct Bound {
  uint8_t is_p2p = 0;
  uint64_t comm = 0;
  uint64_t seq = 0;  ///< collective seq, or p2p message index
  int32_t src = 0;   ///< p2p only
  int32_t dst = 0;
  int64_t end_lb_ns = 0;
};

using Message = std::variant<Challenge, Hello, Welcome, CommJoin, Coll, P2p, Promise, Records, Bye, Resolved, Want,
                             Probe, Quiet, Resume, Bound>;

MsgType type_of(const Message& m) noexcept;

/// Encodes `m` as one frame with sequence number `seq`.
std::vector<uint8_t> encode_frame(const Message& m, uint64_t seq);

/// Incremental decoder of one connection's byte stream. Feed bytes as they arrive; take frames out.
/// Errors (bad magic, version, type, length, a payload that does not parse, a seq that is not the next)
/// are final: the connection must be closed.
class FrameDecoder {
 public:
  /// Appends received bytes.
  void feed(const void* data, size_t len);
  /// The next complete message, nullopt if more bytes are needed, or an error (InvalidArgument) that
  /// names what is wrong.
  Result<std::optional<Message>> next();
  /// Bytes buffered but not yet decoded.
  size_t buffered() const { return buf_.size() - pos_; }
  /// After an error: true when the stream cannot be resynchronised (bad magic, version or length) and the
  /// connection must close; false when only that frame was bad (it was skipped).
  bool broken() const { return broken_; }

 private:
  std::vector<uint8_t> buf_;
  size_t pos_ = 0;
  uint64_t expected_seq_ = 1;
  bool broken_ = false;
};

/// Decodes one payload of type `type` (exposed for the fuzz target and tests).
Result<Message> decode_payload(uint16_t type, const uint8_t* data, size_t len);

}  // namespace genie::sched::coord
