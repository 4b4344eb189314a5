// SPDX-License-Identifier: Apache-2.0
// Communicator: one rank of an NCCL communicator (struct ncclComm's implementation). Owns the shared
// control segment, the placement and timing on the modelled cluster, and executes collectives and
// point-to-point batches as stream ops: rendezvous with the peers, move and reduce real bytes, time by netsim.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bootstrap.hpp"
#include "comm_timing.hpp"
#include "genie/common/sim_time.hpp"
#include "genie/common/status.hpp"
#include "genie/netsim/schedule.hpp"
#include "genie/sched/coord_client.hpp"
#include "reduce/reduce_kernels.hpp"
#include "shared_segment.hpp"
#include "transport/fabric_comm.hpp"
#include "transport/schedule_executor.hpp"

namespace genie::fakecuda {
class Runtime;
class Stream;
}  // namespace genie::fakecuda


namespace genie::shim {

/// A reduction operator as the API names it: built-in, or a PreMulSum created on this communicator.
struct RedOpSpec {
  ReduceOp kind = ReduceOp::kSum;
  double host_scalar = 1.0;
  const void* device_scalar = nullptr;  ///< ncclScalarDevice: read when the collective runs
  netsim::DataType scalar_type = netsim::DataType::kFloat32;
};

/// One collective call, validated, as enqueued.
struct CollCall {
  netsim::Collective collective = netsim::Collective::kAllReduce;
  uint64_t count = 0;
  netsim::DataType datatype = netsim::DataType::kFloat32;
  int root = 0;
  uint32_t redop_id = 0;  ///< the ncclRedOp_t value (for messages)
  RedOpSpec op;
  const void* sendbuff = nullptr;
  void* recvbuff = nullptr;
  BufferRef send_ref, recv_ref;
  /// Both refs are as peers in other processes map them (on a memfd): a real-fabric call may let peers read in place.
  bool shared = false;
};

/// One send or receive of a point-to-point batch.
struct P2PCall {
  bool is_send = true;
  int peer = 0;
  void* buf = nullptr;
  uint64_t bytes = 0;
  uint64_t count = 0;  ///< as called (bytes = count x the datatype's size): the report shows the call
  netsim::DataType datatype = netsim::DataType::kUint8;
  BufferRef ref;
};

/// Communicator options (ncclConfig_t, the parts we honour).
struct CommOptions {
  bool blocking = true;
  std::string name;
  TuningOptions tuning;
};

class Communicator;

/// How a queued op holds its communicator: by pointer (`owned` empty: the op is counted in issued_, and let_go keeps
/// the communicator until it has finished: the op's last use of it is op_finished) or by reference (a graph-captured
/// op).
struct OpCommRef {
  Communicator* comm = nullptr;
  std::shared_ptr<Communicator> owned;
  OpCommRef(Communicator* c, std::shared_ptr<Communicator> o) : comm(c), owned(std::move(o)) {}
  bool counted() const { return !owned; }
};

class Communicator : public std::enable_shared_from_this<Communicator> {
 public:
  static constexpr uint64_t kMagic = 0x47454e49434f4d4dull;  // "GENICOMM"

  /// Joins the communicator of `id` (blocking). The CUDA device is `cuda_dev`.
  static Result<std::shared_ptr<Communicator>> init_rank(const UniqueId& id, int nranks, int rank, int cuda_dev,
                                                         const CommOptions& opts);
  /// ncclCommSplit: every rank of this communicator calls it; NCCL_SPLIT_NOCOLOR yields nullptr.
  Result<std::shared_ptr<Communicator>> split(int color, int key, const CommOptions& opts);
  /// ncclCommShrink: the ranks not in `exclude` call it.
  Result<std::shared_ptr<Communicator>> shrink(const std::vector<int>& exclude, const CommOptions& opts);

  ~Communicator();

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  int cuda_dev() const { return cuda_dev_; }
  uint64_t id() const { return id_; }
  /// The communicator's key on the coordinator and in reports: equal on every rank and across runs of the
  /// same job (a hash of the members' (process rank, device) in rank order and how many communicators with
  /// those members this rank made before).
  uint64_t key() const { return key_; }
  const CommOptions& options() const { return opts_; }
  CommTiming& timing() { return *timing_; }
  fakecuda::Runtime& runtime() { return *rt_; }
  /// True when some peer lives in another process (buffers must be shareable).
  bool cross_process() const { return cross_process_; }
  /// True when this communicator moves data over the real fabric (libfabric) instead of shared memory.
  bool real_fabric() const { return fab_ != nullptr; }
  /// True when calls on the real fabric may read peers' buffers in place (shm provider, GENIE_SHIM_FABRIC_SHM_DIRECT;
  /// ExecCall::direct): each call does when every rank's buffers are on memfds (CollCall::shared).
  bool fabric_direct() const { return fabric_direct_; }
  /// The libfabric provider of the real fabric ("" on the shared-memory path).
  std::string fabric_provider() const { return fab_ ? fab_->provider() : std::string(); }

  /// ncclCommGetAsyncError: ncclSuccess (0) or the first asynchronous failure, as an Errc.
  Errc async_error() const { return static_cast<Errc>(async_error_.load(std::memory_order_acquire)); }
  /// The communicator's asynchronous error (ncclCommGetAsyncError) becomes `why.code()` unless it has one; the
  /// first one's message becomes the process's last error (ncclGetLastError).
  void set_async_error(const Status& why);
  /// ncclCommAbort: waiting operations give up; later ones fail at once.
  void abort();
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }
  /// Blocks until every op this communicator enqueued has run (ncclCommFinalize).
  Status drain();
  /// The handle lets go of the communicator (ncclCommDestroy, ncclCommAbort) and hands over its reference, `self`,
  /// which is kept until every op issued so far has finished: queued ops hold the communicator by a plain pointer,
  /// so that the enqueuing thread and the stream's worker write no reference count per call (docs/BENCHMARKS.md).
  void let_go(std::shared_ptr<Communicator> self);
  /// A counted op has run (or never will). Its caller must not use the communicator afterwards: when the handle has
  /// let go and this was the last outstanding op, the kept reference is dropped here, which may destroy it.
  void op_finished();

  /// Enqueues a collective on `s`.
  Status enqueue_collective(CollCall call, fakecuda::Stream& s);
  /// Enqueues a batch of sends and receives (one group's worth on one stream).
  Status enqueue_p2p(std::vector<P2PCall> calls, fakecuda::Stream& s);

  /// PreMulSum operators created on this communicator.
  Result<int> create_redop(const RedOpSpec& spec);
  Status destroy_redop(int id);
  Result<RedOpSpec> redop(int id) const;

  /// Small all-gather among `members` (ranks of this communicator; all of them call it with the same list):
  /// returns each member's `len` bytes (<= kGatherBytes), in `members` order.
  Result<std::vector<std::vector<uint8_t>>> gather_small(const std::vector<int>& members, const void* mine, size_t len);

 private:
  Communicator() = default;
  /// `seg` (shared-memory path) or `fab` (real fabric, with the communicator id `fabric_id`).
  static Result<std::shared_ptr<Communicator>> assemble(int rank, std::vector<RankInfo> table, SharedSegment* seg,
                                                        std::shared_ptr<CommTiming> timing, int cuda_dev,
                                                        const CommOptions& opts,
                                                        std::unique_ptr<FabricComm> fab = nullptr,
                                                        uint64_t fabric_id = 0, uint64_t parent_key = 0);
  /// Joins the job's coordinator, if there is one (virtual clock only): announces this rank.
  Status join_coordinator(uint64_t parent_key);
  /// Real fabric: opens this rank's endpoints and exchanges addresses through the bootstrap session.
  static Result<std::unique_ptr<FabricComm>> connect_fabric(int rank, const std::vector<RankInfo>& table,
                                                            BootstrapSession& session);
  Result<std::shared_ptr<Communicator>> sub_communicator_fabric(const std::vector<int>& members, int my_index,
                                                                const CommOptions& opts);
  Result<SimTime> run_collective_fabric(const CollCall& c, uint64_t order, SimTime ready);
  Result<SimTime> run_p2p_fabric(std::vector<P2PCall>& calls, uint64_t order, SimTime ready);
  /// The wait policy of a fabric exchange for `what`: abort, dead peers on this host, GENIE_HANG_TIMEOUT.
  FabricWait fabric_wait(std::string what);
  Result<std::shared_ptr<Communicator>> sub_communicator(const std::vector<int>& members, int my_index,
                                                         const CommOptions& opts);
  /// Submits `run` as a stream op of this communicator (kept alive by the op) on `s`. The op gets the next
  /// place in the communicator's issue order (0 for an op captured into a CUDA graph: it runs when the graph
  /// does, wherever that falls), and `run` (Result<SimTime>(Communicator&, uint64_t order, SimTime ready)) receives
  /// it. A template, so the op's closure is one allocation.
  template <class Run>
  Status enqueue(const char* label, Run run, fakecuda::Stream& s, sched::OpKind kind, uint64_t bytes);
  Result<SimTime> run_collective(const CollCall& c, uint64_t order, SimTime ready);
  Result<SimTime> run_p2p(std::vector<P2PCall>& calls, uint64_t order, SimTime ready);
  /// With exec_mu_ held: waits until every op issued before `order` on this rank has run, as NCCL runs a
  /// communicator's operations in the order they were issued, whatever streams they are on (FSDP issues
  /// all-gathers and reduce-scatters of one communicator on two streams). Fails when the communicator is
  /// aborted or has failed meanwhile.
  Status wait_turn(std::unique_lock<std::mutex>& lk, uint64_t order);
  /// With exec_mu_ held: the op of `order` has run (or failed); the next one may go.
  void end_turn(uint64_t order);
  /// An op's place in the issue order for its whole run: however the op ends, the next one may go.
  struct TurnGuard {
    Communicator& c;
    uint64_t order;
    ~TurnGuard() { c.end_turn(order); }
  };
  Status move_data(const CollCall& c, uint64_t seq);
  /// What a wait is for, rendered only when a message needs it (the common path formats nothing).
  struct WaitWhat {
    const CallDesc* desc = nullptr;  ///< a collective, or
    const char* text = "";           ///< a fixed description
    uint64_t seq = 0;
  };
  std::string what_string(const WaitWhat& w) const;
  /// Waits for the coordinator's outcome of one op's calls (abort and the hang timeout end the wait); returns
  /// the latest end. NCCL_DEBUG=INFO shows what the coordinator chose for each new shape.
  Result<SimTime> wait_coordinator(const sched::CoordClient::Batch& batch, const WaitWhat& what);
  /// Waits until `counter` of every rank in `members` (nullptr: all ranks) is at least `target`, with the
  /// abort / dead-peer / hang checks; the ranks still below it are the missing ones.
  Status wait_all_reach(std::atomic<uint64_t> RankSlot::*counter, uint64_t target, const std::vector<int>* members,
                        const WaitWhat& what);
  Status barrier(uint64_t seq, int phase, const WaitWhat& what);
  /// Checks run while waiting: abort, a failed communicator, dead peers, the hang timeout.
  /// `missing()` lists the ranks this wait still needs; only their deaths fail it. `since`: when the wait's hang timer
  /// started; an unset one (the epoch) starts now.
  Status wait_check(const std::function<std::vector<int>()>& missing, const WaitWhat& what,
                    std::chrono::steady_clock::time_point& since);
  void fail_all(const Status& why);
  std::string describe(const CallDesc& d) const;
  SimTime finish_time(SimTime start, SimTime duration);

  int rank_ = 0;
  int nranks_ = 0;
  int cuda_dev_ = 0;
  uint64_t id_ = 0;
  uint64_t key_ = 0;
  sched::CoordClient* coord_ = nullptr;  ///< the job's coordinator (times calls globally), or null
  CommOptions opts_;
  fakecuda::Runtime* rt_ = nullptr;
  std::vector<RankInfo> peers_;
  std::vector<int> pidfds_;  ///< pidfd of each peer in another process (-1: this process or unavailable)
  bool cross_process_ = false;
  bool fabric_direct_ = false;
  bool direct_logged_[2] = {false, false};  ///< NCCL_DEBUG=INFO said how shm transfers go (messages, in place); exec_mu_
  std::unique_ptr<SharedSegment> seg_;  ///< shared-memory path
  std::unique_ptr<FabricComm> fab_;      ///< real-fabric path
  ScheduleExecutor executor_;            ///< real fabric: runs each collective's Schedule
  std::shared_ptr<CommTiming> timing_;

  std::atomic<int> async_error_{0};
  std::mutex async_error_mu_;  ///< the first error's message is published before its code
  std::atomic<bool> aborted_{false};

  // What the enqueuing thread writes per call, on a cache line of its own: the stream worker writes the fields
  // after it on every call it runs.
  alignas(64) std::atomic<uint64_t> call_seq_{0};  ///< calls enqueued so far (the seq of records)
  std::atomic<uint64_t> issued_{0};                ///< ops enqueued outside graph capture, in host call order
  alignas(64) std::mutex exec_mu_;  ///< one call of this communicator executes at a time, in order
  /// Of the issued ops, those that have run or never will (issued_ - finished_ are outstanding), with kLetGo set once
  /// the handle let go: one word, so that exactly one of the handle and the last op's finish sees both "let go" and
  /// "none outstanding" and drops keep_alive_ (the other does not touch the communicator again). Written by the
  /// stream workers and once by let_go, never by the enqueuing thread per call: no line both write per call.
  std::atomic<uint64_t> finished_{0};
  static constexpr uint64_t kLetGo = uint64_t{1} << 63;
  std::mutex keep_mu_;
  std::shared_ptr<Communicator> keep_alive_;  ///< the handle's reference after let_go, while ops are outstanding
  uint64_t exec_seq_ = 0;
  uint64_t executed_ = 0;              ///< of those issued, the last one that has run (guarded by exec_mu_)
  std::condition_variable exec_cv_;    ///< signalled when executed_ moves
  SimTime last_end_ = SimTime::zero();  ///< end of the previous op: NCCL never overlaps a communicator's ops
  std::vector<uint64_t> sent_, received_;  ///< p2p messages sent to / received from each peer
  uint64_t gather_seq_ = 0;
  std::vector<int> gather_prev_members_;  ///< who took part in this rank's previous small all-gather

  mutable std::mutex redop_mu_;
  std::vector<std::pair<bool, RedOpSpec>> redops_;  ///< index = ncclRedOp_t - ncclNumOps
};

/// A PreMulSum scalar stored in datatype `dt` at `p`, as a double.
double scalar_from_bytes(const void* p, netsim::DataType dt);
/// GENIE_HANG_TIMEOUT in seconds (0: wait forever).
double hang_timeout_s();
/// After a failure a call's stream op stays pending until the program aborts the communicator (as a GPU
/// kernel waiting on a dead peer would), or one more hang timeout has passed; then returns `why`.
Result<SimTime> hold_after_failure(Communicator& c, SimTime ready, const Status& why);
/// IPv4 address the real fabric's IP providers bind to (GENIE_SHIM_FABRIC_ADDR, else the bootstrap's).
std::string fabric_addr();
/// GENIE_SHIM_BOOTSTRAP_TIMEOUT_S: how long a communicator's ranks have to find each other.
std::chrono::milliseconds bootstrap_timeout();

/// Converters between the API's enums and netsim's.
const char* collective_api_name(netsim::Collective c) noexcept;  ///< "AllReduce"
const char* redop_api_name(ReduceOp op) noexcept;                ///< "sum"

}  // namespace genie::shim
