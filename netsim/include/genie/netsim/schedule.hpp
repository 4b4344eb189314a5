// SPDX-License-Identifier: Apache-2.0
// Schedule: a collective expanded into a DAG of transfers and local ops; shared by netsim, the NCCL shim
// and the real-fabric transport.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "genie/common/config.hpp"
#include "genie/common/status.hpp"

namespace genie::netsim {

class Topology;

/// The NCCL collectives (plus point-to-point as kSendRecv), named as nccl-tests binaries.
enum class Collective {
  kAllReduce,
  kBroadcast,
  kReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kGather,
  kScatter,
  kSendRecv
};
/// NCCL's algorithms plus ASTRA-sim's halving-doubling and direct, for comparison.
enum class Algorithm { kRing, kTree, kCollNetDirect, kCollNetChain, kNvls, kNvlsTree, kPat, kDirect, kHalvingDoubling };
/// NCCL's protocols: LL (8-byte flag per 8 bytes), LL128 (8 of every 128 bytes), Simple (bulk + fences).
enum class Protocol { kLL, kLL128, kSimple };
/// ncclDataType_t equivalents.
enum class DataType {
  kInt8,
  kUint8,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kFloat16,
  kFloat32,
  kFloat64,
  kBfloat16,
  kFp8E4M3,
  kFp8E5M2
};
/// ncclRedOp_t equivalents, in ncclRedOp_t's order (kPreMulSum: ncclRedOpCreatePreMulSum's operators; it moves the
/// bytes of a sum).
enum class RedOp { kSum, kProd, kMax, kMin, kAvg, kPreMulSum };

const char* collective_name(Collective c) noexcept;      ///< "all_reduce"
const char* collective_api_name(Collective c) noexcept;  ///< "AllReduce" (NCCL's API and NCCL_DEBUG spelling)
const char* algorithm_name(Algorithm a) noexcept;        ///< "Ring" (NCCL_ALGO spelling)
const char* protocol_name(Protocol p) noexcept;          ///< "LL128"
const char* datatype_name(DataType d) noexcept;          ///< "float" (nccl-tests spelling)
const char* redop_name(RedOp o) noexcept;                ///< "sum"
size_t datatype_size(DataType d) noexcept;
/// Parsers accept the spellings above, case-insensitively (collective: also "allreduce"); InvalidArgument
/// names the bad word and lists the valid ones.
Result<Collective> parse_collective(const std::string& s);
Result<Algorithm> parse_algorithm(const std::string& s);
Result<Protocol> parse_protocol(const std::string& s);
Result<DataType> parse_datatype(const std::string& s);
Result<RedOp> parse_redop(const std::string& s);
/// True for collectives that reduce (all_reduce, reduce, reduce_scatter).
bool collective_reduces(Collective c) noexcept;

/// Endpoint id meaning "the NVSwitch multicast object of the sender's/receiver's server" (NVLS).
inline constexpr int32_t kNvlsEndpoint = -1;
/// Endpoint id meaning "the fabric's in-network reduction (SHARP), entered at the first switch behind the
/// peer rank's NIC" (CollNet): a transfer to it uploads a contribution, one from it returns the reduced
/// result once every contribution of that data has arrived.
inline constexpr int32_t kCollNetEndpoint = -2;

/// What a collective call asks for, as the NCCL API sees it.
struct CollectiveSpec {
  Collective collective = Collective::kAllReduce;
  /// Element count as passed to NCCL: total for AllReduce/Broadcast/Reduce; per rank for AllGather and
  /// ReduceScatter (recv count), per peer for AlltoAll, per rank for Gather/Scatter; message for SendRecv.
  uint64_t count = 0;
  DataType datatype = DataType::kFloat32;
  RedOp redop = RedOp::kSum;
  int root = 0;  ///< Broadcast/Reduce/Gather/Scatter root rank
  int nranks = 0;
  std::vector<int> rank_to_gpu;  ///< placement: global GPU index of each rank (empty: rank i on GPU i)
};

/// Algorithm, protocol, channel count and chunking chosen for one collective.
struct Tuning {
  Algorithm algorithm = Algorithm::kRing;
  Protocol protocol = Protocol::kSimple;
  int nchannels = 1;
  uint64_t chunk_bytes = 0;  ///< per-channel pipeline chunk (0: one chunk per step)
  double predicted_us = 0;   ///< the tuning model's own estimate (NCCL's lat + size/bw), for reference
};

/// One step of a collective's Schedule: a node of the DAG (not a sched::Op, which is an op on a stream's
/// timeline; `step` below is the algorithm round the node belongs to). A transfer moves `bytes` from rank `src` to rank
/// `dst` (either may be kNvlsEndpoint or kCollNetEndpoint); `reduce` means the receiver reduces the data into its
/// buffer as it arrives (NCCL's recvReduceSend). kReduce/kCopy are local operations on `src` with no network traffic.
struct Step {
  enum class Kind : uint8_t { kTransfer, kReduce, kCopy };
  Kind kind = Kind::kTransfer;
  bool reduce = false;
  /// Issued by the same GPU threads straight after one of its dependencies (NVLS's multimem.st after
  /// multimem.ld_reduce): pays no per-step synchronisation latency, only the path latency.
  bool fused = false;
  uint16_t channel = 0;
  int32_t src = 0;
  int32_t dst = 0;
  uint32_t step = 0;   ///< algorithm step (ring: 0 .. 2(n-1)-1 for all-reduce)
  uint32_t slice = 0;  ///< pipeline chunk index within the channel
  uint64_t bytes = 0;
  uint32_t dep_begin = 0;  ///< dependencies: Schedule::deps[dep_begin, dep_begin + dep_count)
  uint32_t dep_count = 0;
  /// One of the dependencies may be the op issued before this one on the same connection (its sender's
  /// FIFO; kNoIssueDep: none). It orders the transfers but carries none of this op's data: this op's bytes
  /// wait for it to finish, while its per-step synchronisation latency overlaps it, as NCCL's NCCL_STEPS
  /// buffer slots let a sender run ahead of its receiver (src/device/prims_simple.h waitPeer).
  static constexpr uint32_t kNoIssueDep = 0xffffffffu;
  uint32_t issue_dep = kNoIssueDep;
};

/// A dependency of a CompactStep: member p waits for member (p + shift) mod n of compact op `op`.
struct CompactDep {
  uint32_t op = 0;
  int32_t shift = 0;
};

/// A family of n = nranks transfers, one per position p of the channel's rank order: member p moves
/// member_bytes(p) from rank orders[channel][p] to rank orders[channel][(p + dst_shift) mod n]. Dependencies
/// are position-relative (CompactDep), so the family is invariant under rotation of the positions: this is
/// what lets the simulator time one member per symmetry class instead of all n.
struct CompactStep {
  bool reduce = false;  ///< as Step::reduce
  uint16_t channel = 0;
  /// Issue chain of every member: ops of one lane are issued in order by each position (each depends on
  /// the same member of the lane's previous op, its Step::issue_dep in the explicit form), so a member never
  /// has two transfers of a lane in flight.
  uint32_t lane = 0;
  int32_t dst_shift = 1;
  uint32_t step = 0;   ///< as Step::step
  uint32_t slice = 0;  ///< as Step::slice
  /// Bytes of every member, plus one for the `extra` members whose block index (p - rotation) mod n is
  /// below `extra` (NCCL's split of a buffer into n nearly equal blocks).
  uint64_t bytes = 0;
  uint32_t extra = 0;
  uint32_t rotation = 0;
  uint32_t dep_begin = 0;  ///< CompactSchedule::deps[dep_begin, dep_begin + dep_count)
  uint32_t dep_count = 0;
  uint64_t member_bytes(uint32_t p, uint32_t n) const { return bytes + ((p + n - rotation % n) % n < extra ? 1 : 0); }
};

/// The compact form of a circulant Schedule (ring all-reduce/all-gather/reduce-scatter, direct all-to-all
/// and all-reduce, sendrecv, PAT): one CompactStep per step, slice and channel with ranks implicit. Its
/// expansion (expand_schedule) lists, for compact op k and position p, the transfer at index k * n + p.
struct CompactSchedule {
  int nranks = 0;
  std::vector<std::vector<int32_t>> orders;  ///< per channel: position -> rank (a permutation of 0..n-1)
  std::vector<CompactStep> ops;              ///< topological: every dependency names an earlier op
  std::vector<CompactDep> deps;
  std::span<const CompactDep> deps_of(size_t op) const { return {deps.data() + ops[op].dep_begin, ops[op].dep_count}; }
};

/// How build_schedule / plan_collective represent a collective.
enum class ScheduleForm {
  kExplicit,  ///< every transfer a Step with its dependencies (what the real transport executes)
  kCompact,   ///< CompactSchedule for circulant algorithms (others stay explicit); far smaller at scale and
              ///< timed by symmetry in the simulator, with the same results as the explicit form
};

/// A collective as a DAG: ops in a topological order (every dependency has a smaller index).
/// Plain data; copyable; not thread-safe to mutate. Either explicit (`ops`, `deps`) or compact (`compact`
/// set, `ops` and `deps` empty); expand_schedule() turns the second into the first.
struct Schedule {
  CollectiveSpec spec;
  Tuning tuning;
  std::vector<Step> ops;
  std::vector<uint32_t> deps;
  /// Fixed per-collective latency the algorithm pays once (NCCL baseLatencies), in ns.
  int64_t base_latency_ns = 0;
  /// Compact form (ScheduleForm::kCompact of a circulant algorithm), or null.
  std::shared_ptr<const CompactSchedule> compact;

  std::span<const uint32_t> deps_of(size_t op) const { return {deps.data() + ops[op].dep_begin, ops[op].dep_count}; }
  bool is_compact() const { return compact != nullptr; }
  /// Number of ops of the explicit form (ops.size(), or compact ops x nranks).
  size_t num_ops() const;
  /// Number of distinct `step` values among transfers.
  uint32_t num_steps() const;
  /// Bytes rank `r` sends in transfers (to ranks or the NVLS endpoint).
  uint64_t bytes_sent_by(int r) const;
  /// Payload bytes of the whole call (what nccl-tests prints as size): see CollectiveSpec::count.
  uint64_t payload_bytes() const;
};

/// The explicit form of `s` (a copy when it already is explicit): the same ops, dependencies and times as
/// build_schedule(..., ScheduleForm::kExplicit) gives for the same collective.
Schedule expand_schedule(const Schedule& s);

/// NCCL environment knobs that steer selection, read from the config registry (NCCL_ALGO, NCCL_PROTO,
/// NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS, NCCL_BUFFSIZE, NCCL_NVLS_ENABLE, NCCL_COLLNET_ENABLE,
/// NCCL_PAT_ENABLE). Empty/-1 means unset.
struct NcclEnv {
  std::string algo;
  std::string proto;
  int min_channels = -1;
  int max_channels = -1;
  int64_t buffsize = -1;
  int nvls_enable = -1;     ///< -1/2: auto, 0: off, 1: on
  int collnet_enable = -1;  ///< -1/0: off (NCCL's default), 1: CollNet where the topology has in-network reduction
  int pat_enable = -1;      ///< -1/2: auto (one GPU per node), 0: off, 1: on
  /// Reads the NCCL_* parameters from a config snapshot.
  static NcclEnv from_config(const config::Config& cfg);
  /// This environment narrowed by a communicator's or one call's configuration (ncclConfig_t, ncclCollConfig_t):
  /// channels bounded by min/maxCTAs as NCCL does (values <= 0: unset), and an algorithm selection in NCCL_ALGO's
  /// syntax ("" : unset) in place of NCCL_ALGO.
  NcclEnv restricted(int min_ctas, int max_ctas, const std::string& algo_selection) const;
};

/// Picks algorithm, protocol and channels following NCCL's tuning model (base and per-hop latencies per
/// algorithm/protocol, per-architecture bandwidth caps, time = latency + bytes / bandwidth) restricted by
/// `env` exactly as NCCL applies NCCL_ALGO / NCCL_PROTO (lists, "^" exclusion, "func:" prefixes).
/// Errors: InvalidArgument for unparsable or impossible NCCL_* values or a bad spec; Unsupported when
/// nothing enabled can run the collective on this topology.
Result<Tuning> select_tuning(const CollectiveSpec& spec, const Topology& topo, const NcclEnv& env);

/// Expands a collective into its Schedule with the given tuning. Errors: InvalidArgument (bad spec: rank
/// placement off the topology, root out of range, count not divisible as needed), Unsupported (algorithm
/// not applicable to this collective or topology).
Result<Schedule> build_schedule(const CollectiveSpec& spec, const Topology& topo, const Tuning& tuning);
/// Same, in the requested form: kCompact gives a compact Schedule for circulant algorithms (ring all-reduce,
/// all-gather and reduce-scatter; direct; PAT) and an explicit one otherwise.
/// `max_bytes` (0: no limit) bounds an explicit DAG with the simulator's state for it (estimate_state_bytes):
/// the size is projected while the DAG is built, and one that would not fit is given up early with OutOfMemory
/// naming the collective, its projected ops and bytes, and the switches that help.
Result<Schedule> build_schedule(const CollectiveSpec& spec, const Topology& topo, const Tuning& tuning,
                                ScheduleForm form, uint64_t max_bytes = 0);

/// select_tuning + build_schedule (explicit).
Result<Schedule> plan_collective(const CollectiveSpec& spec, const Topology& topo, const NcclEnv& env);
/// select_tuning + build_schedule in the requested form.
Result<Schedule> plan_collective(const CollectiveSpec& spec, const Topology& topo, const NcclEnv& env,
                                 ScheduleForm form, uint64_t max_bytes = 0);

}  // namespace genie::netsim
