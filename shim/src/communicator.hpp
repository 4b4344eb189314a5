// SPDX-License-Identifier: Apache-2.0
// Communicator: one rank of an NCCL communicator (struct ncclComm's implementation): what is NCCL about it —
// arguments as enqueued, the issue order of its calls across streams, call sequence numbers, asynchronous errors,
// abort and destroy, PreMulSum operators, split and shrink. How its ranks meet and move bytes is its Transport's
// (transport/transport.hpp), when a call ends its CallTimer's (call_timer.hpp); both are chosen when it is made.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "bootstrap.hpp"
#include "call_timer.hpp"
#include "comm_call.hpp"
#include "comm_timing.hpp"
#include "genie/common/sim_time.hpp"
#include "genie/common/status.hpp"
#include "genie/netsim/schedule.hpp"
#include "genie/sched/timeline.hpp"
#include "transport/transport.hpp"

namespace genie::fakecuda {
class Runtime;
class Stream;
}  // namespace genie::fakecuda


namespace genie::shim {

struct Window;      // one_sided.hpp
struct SignalArea;  // one_sided.hpp

/// One ncclPutSignal / ncclSignal as enqueued: `bytes` from `src` into the peer's window `win` at `offset` (none
/// for a signal), then one signal raised at the peer.
struct PutCall {
  int peer = 0;
  const void* src = nullptr;
  uint64_t bytes = 0;
  uint64_t count = 0;
  netsim::DataType datatype = netsim::DataType::kUint8;
  Window* win = nullptr;  ///< null for ncclSignal
  uint64_t offset = 0;
};

/// One entry of ncclWaitSignal: `count` more signals from `peer`.
struct SignalWait {
  int peer = 0;
  uint64_t count = 0;
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

// CommState is the first base: the transports' NCCL_DEBUG lines print it as "comm %p", the same address as the
// communicator's own lines (Itanium ABI: the primary base sits at offset 0; communicator_test checks it).
class Communicator final : public CommState, public std::enable_shared_from_this<Communicator> {
 public:
  static constexpr uint64_t kMagic = 0x47454e49434f4d4dull;  // "GENICOMM"

  /// Joins the communicator of `id` (blocking) on `rt`'s CUDA device `cuda_dev`: the bootstrap, then the transport
  /// (shared memory on one host, or the real fabric) and the timer (netsim, the job's coordinator, or the wall
  /// clock) it will use.
  static Result<std::shared_ptr<Communicator>> init_rank(fakecuda::Runtime& rt, const UniqueId& id, int nranks,
                                                         int rank, int cuda_dev, const CommOptions& opts);
  /// A communicator over `transport` (rank transport->peers()[rank]), timed by `timer`, with `timing` for its
  /// placement and tuning: what init_rank and split assemble, and what unit tests build with fakes. `key` as key().
  static std::shared_ptr<Communicator> create(fakecuda::Runtime& rt, int rank, int cuda_dev,
                                              std::unique_ptr<Transport> transport, std::unique_ptr<CallTimer> timer,
                                              std::shared_ptr<CommTiming> timing, const CommOptions& opts,
                                              uint64_t key);
  /// ncclCommSplit: every rank of this communicator calls it; NCCL_SPLIT_NOCOLOR yields nullptr.
  Result<std::shared_ptr<Communicator>> split(int color, int key, const CommOptions& opts);
  /// ncclCommShrink: the ranks not in `exclude` call it.
  Result<std::shared_ptr<Communicator>> shrink(const std::vector<int>& exclude, const CommOptions& opts);

  ~Communicator();

  int rank() const override { return rank_; }
  int nranks() const override { return nranks_; }
  int cuda_dev() const override { return cuda_dev_; }
  uint64_t id() const { return id_; }
  /// The communicator's key on the coordinator and in reports: equal on every rank and across runs of the
  /// same job (a hash of the members' (process rank, device) in rank order and how many communicators with
  /// those members this rank made before).
  uint64_t key() const override { return key_; }
  const CommOptions& options() const { return opts_; }
  CommTiming& timing() override { return *timing_; }
  bool moves_bytes(uint64_t bytes) const override;
  fakecuda::Runtime& runtime() { return rt_; }
  /// True when some peer lives in another process (buffers must be shareable).
  bool cross_process() const { return transport_->cross_process(); }
  /// True when this communicator moves data over the real fabric (libfabric) instead of shared memory.
  bool real_fabric() const { return !transport_->provider().empty(); }
  /// The libfabric provider of the real fabric ("" on the shared-memory path).
  const std::string& fabric_provider() const { return transport_->provider(); }

  /// ncclCommGetAsyncError: ncclSuccess (0) or the first asynchronous failure, as an Errc.
  Errc async_error() const { return static_cast<Errc>(async_error_.load(std::memory_order_acquire)); }
  /// The communicator's asynchronous error (ncclCommGetAsyncError) becomes `why.code()` unless it has one; the
  /// first one's message becomes the process's last error (ncclGetLastError).
  void set_async_error(const Status& why) override;
  /// ncclCommAbort: waiting operations give up; later ones fail at once.
  void abort();
  bool aborted() const override { return aborted_.load(std::memory_order_acquire); }
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

  /// ncclPutSignal / ncclSignal: enqueued on `s` in the communicator's issue order; the bytes land in the peer's
  /// window when the op runs, and the peer's signal counter rises with the arrival time netsim gives the message.
  Status enqueue_put(PutCall call, fakecuda::Stream& s);
  /// ncclWaitSignal: completes when every entry's signals have arrived, at the latest arrival (or when the stream
  /// reached it, if later).
  Status enqueue_wait_signal(std::vector<SignalWait> waits, fakecuda::Stream& s);
  /// ncclCommWindowRegister's collective part: every rank calls it with its own buffer; afterwards `w` knows every
  /// rank's window (and, from the first window on, every rank's signal area).
  Status exchange_window(Window& w);

  /// Whether a window was registered (and so the signal areas exchanged).
  bool has_windows() const { return signals_ != nullptr && signals_ready_.load(std::memory_order_acquire); }

  /// ncclCommSuspend / ncclCommResume: calls on a suspended communicator are refused (ncclInvalidUsage).
  Status suspend(int flags);
  Status resume();
  bool suspended() const { return suspended_.load(std::memory_order_acquire); }
  /// Device memory this communicator holds (ncclCommMemStats): released by a suspend, and kept for its life.
  uint64_t suspendable_bytes() const { return 0; }
  uint64_t persistent_bytes() const;

  /// PreMulSum operators created on this communicator.
  Result<int> create_redop(const RedOpSpec& spec);
  Status destroy_redop(int id);
  Result<RedOpSpec> redop(int id) const;

  /// Small all-gather among `members` (ranks of this communicator; all of them call it with the same list):
  /// returns each member's `len` bytes (<= kGatherBytes), in `members` order.
  Result<std::vector<std::vector<uint8_t>>> gather_small(const std::vector<int>& members, const void* mine, size_t len);

 private:
  explicit Communicator(fakecuda::Runtime& rt);
  /// create() with the timer this process's configuration calls for, the communicator's key from its members, and
  /// the coordinator told of it (`parent_key`: the communicator it was split from, 0 for none).
  static Result<std::shared_ptr<Communicator>> assemble(fakecuda::Runtime& rt, int rank,
                                                        std::unique_ptr<Transport> transport,
                                                        std::shared_ptr<CommTiming> timing, int cuda_dev,
                                                        const CommOptions& opts, uint64_t parent_key);
  Result<std::shared_ptr<Communicator>> sub_communicator(const std::vector<int>& members, int my_index,
                                                         const CommOptions& opts);
  /// Submits `run` as a stream op of this communicator (kept alive by the op) on `s`. The op gets the next
  /// place in the communicator's issue order (0 for an op captured into a CUDA graph: it runs when the graph
  /// does, wherever that falls), and `run` (Result<SimTime>(Communicator&, uint64_t order, SimTime ready,
  /// const sched::ExternalOp& lane)) receives it. A template, so the op's closure is one allocation.
  template <class Run>
  Status enqueue(const char* label, Run run, fakecuda::Stream& s, sched::OpKind kind, uint64_t bytes);
  Result<SimTime> run_collective(const CollCall& c, uint64_t order, SimTime ready, const sched::ExternalOp& lane);
  Result<SimTime> run_p2p(std::vector<P2PCall>& calls, uint64_t order, SimTime ready, const sched::ExternalOp& lane);
  Result<SimTime> run_put(const PutCall& p, uint64_t order, SimTime ready, const sched::ExternalOp& lane);
  Result<SimTime> run_wait_signal(const std::vector<SignalWait>& waits, uint64_t order, SimTime ready,
                                  const sched::ExternalOp& lane);
  /// With exec_mu_ held: waits until every op issued before `order` on this rank has run, as NCCL runs a
  /// communicator's operations in the order they were issued, whatever streams they are on (FSDP issues
  /// all-gathers and reduce-scatters of one communicator on two streams). Fails when the communicator is
  /// aborted or has failed meanwhile.
  Status wait_turn(std::unique_lock<std::mutex>& lk, uint64_t order, const sched::ExternalOp& lane);
  /// With exec_mu_ held: the op of `order` has run (or failed); the next one may go.
  void end_turn(uint64_t order);
  /// An op's place in the issue order for its whole run: however the op ends, the next one may go.
  struct TurnGuard {
    Communicator& c;
    uint64_t order;
    ~TurnGuard() { c.end_turn(order); }
  };
  /// A call failed with `why`: the communicator's asynchronous error, and the op held (hold_after_failure).
  Result<SimTime> fail_call(SimTime ready, const Status& why);

  fakecuda::Runtime& rt_;
  int rank_ = 0;
  int nranks_ = 0;
  int cuda_dev_ = 0;
  uint64_t id_ = 0;
  uint64_t key_ = 0;
  CommOptions opts_;
  std::unique_ptr<Transport> transport_;  ///< how the ranks meet and move bytes
  std::unique_ptr<CallTimer> timer_;      ///< when a call ends
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
  uint64_t exec_seq_ = 0;              ///< collectives executed (the call number the ranks agree on; exec_mu_)
  uint64_t executed_ = 0;              ///< of those issued, the last one that has run (guarded by exec_mu_)
  std::condition_variable exec_cv_;    ///< signalled when executed_ moves
  SimTime last_end_ = SimTime::zero();  ///< end of the previous op: NCCL never overlaps a communicator's ops
  std::vector<uint64_t> sent_, received_;  ///< p2p messages sent to / received from each peer (exec_mu_)

  std::atomic<bool> suspended_{false};
  /// One-sided communication (one_sided.cpp): made by the first window registration.
  std::unique_ptr<SignalArea> signals_;
  std::atomic<bool> signals_ready_{false};
  std::vector<uint64_t> signals_consumed_;  ///< signals consumed by ncclWaitSignal, per peer (exec_mu_)

  mutable std::mutex redop_mu_;
  std::vector<std::pair<bool, RedOpSpec>> redops_;  ///< index = ncclRedOp_t - ncclNumOps
};

/// ncclSetEncryption's mode for communicators made from now on (0: none, 1: pre-shared key). Ranks on one host
/// exchange nothing over sockets that leave it; between hosts Genie cannot encrypt, and init refuses.
void set_encryption_mode(int mode);
int encryption_mode();

/// A PreMulSum scalar stored in datatype `dt` at `p`, as a double.
double scalar_from_bytes(const void* p, netsim::DataType dt);
/// After a failure a call's stream op stays pending until the program aborts the communicator (as a GPU
/// kernel waiting on a dead peer would), or one more hang timeout has passed; then returns `why`.
Result<SimTime> hold_after_failure(Communicator& c, SimTime ready, const Status& why);


}  // namespace genie::shim
