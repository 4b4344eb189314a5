// SPDX-License-Identifier: Apache-2.0
// Lane and Timeline: inline completion in virtual mode, worker threads for everything that must wait.
#include "genie/sched/timeline.hpp"

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <thread>
#include <tuple>

#include "genie/common/block_pool.hpp"
#include "genie/common/log.hpp"
#include "genie/common/quiescence.hpp"
#include "genie/common/thread_util.hpp"

namespace genie::sched {

struct Op {
  Op();
  uint64_t serial;  // unique in the process (Dep::identity: an op's address is reused once it is freed)
  OpSpec spec;
  SimTime not_before;
  SimTime deps_end;     // latest end among spec.deps (OpRecord::deps_end)
  uint32_t thread = 0;  // submitting host thread (OpRecord::thread)
  std::atomic<bool> done{false};
  SimTime start, end;
  Status status;
  std::weak_ptr<Lane::State> lane;  // for lower bounds of an unresolved op's end
};

namespace {
constexpr int64_t kNoFloor = INT64_MAX;

// One thread that may inject traffic, as the timeline's injection_floor() sees it.
struct Injector {
  pthread_t thread{};
  clockid_t cpu_clock{};
  Clock::ThreadState* ts = nullptr;
  std::atomic<bool> alive{true};
  std::mutex wait_mu;
  bool waiting = false;
  Dep wait_dep;               // what the thread waits for (copied: the caller's Dep lives on its stack)
  int64_t wait_promise = kNoFloor;  // a time it may go on at before wait_dep resolves (a query's answer time)
};
}  // namespace

namespace {
// Unique without a shared counter per op: a per-thread prefix (one atomic increment per thread) and a count.
uint64_t next_op_serial() {
  static std::atomic<uint64_t> next_thread{1};
  GENIE_TLS_FAST thread_local uint64_t prefix = 0;
  GENIE_TLS_FAST thread_local uint64_t count = 0;
  if (prefix == 0) prefix = next_thread.fetch_add(1, std::memory_order_relaxed) << 40;
  return prefix | ++count;
}
}  // namespace

Op::Op() : serial(next_op_serial()) {}

uint64_t Dep::identity() const { return op_ ? op_->serial : 0; }

Dep Dep::on(std::shared_ptr<Op> op) {
  Dep d;
  d.op_ = std::move(op);
  return d;
}

bool Dep::resolved() const { return !op_ || op_->done.load(std::memory_order_acquire); }
SimTime Dep::time() const { return op_ ? op_->end : time_; }
Status Dep::status() const { return op_ && resolved() ? op_->status : Status::ok(); }

// Trace records waiting for a drain (the coordinator client drains every 50 ms) are capped per lane and for the
// host spans: a process that records but is never drained (GENIE_FAKECUDA_TRACE=1 without a coordinator, or one
// that cannot be reached) would otherwise keep every op it ever ran, 80 bytes each. 2^19 records (40 MiB) is
// ten times what a lane issuing one op per 0.1 us (twice the fastest launch, docs/BENCHMARKS.md) fills between two
// drains. Beyond it records are counted, not kept.
constexpr size_t kMaxUndrainedRecords = size_t{1} << 19;
static_assert(sizeof(OpRecord) == 80, "OpRecord::activity sits in the padding after its kind");

struct Timeline::Core {
  Core(ClockOptions o, bool trace) : clock(o), record_trace(trace) {}
  std::atomic<uint64_t> dropped_records{0};
  // Appends `r` to `v` unless it holds kMaxUndrainedRecords already (then counts it as dropped).
  template <class V, class R>
  void keep_record(V& v, R&& r) {
    if (v.size() < kMaxUndrainedRecords) {
      v.push_back(std::forward<R>(r));
      return;
    }
    if (dropped_records.fetch_add(1, std::memory_order_relaxed) == 0)
      GENIE_LOG_WARN("sched", "trace records are not being collected (no coordinator drains them): keeping at most {} "
                     "per stream, later ones are counted only", kMaxUndrainedRecords);
  }
  Clock clock;
  bool record_trace;
  std::atomic<OpObserver*> observer{nullptr};  // Timeline::set_op_observer
  // Taken by every lane worker after every op (notify_completion): on lines of their own, away from the clock and
  // record_trace, which enqueuing threads read on every call.
  alignas(64) std::mutex mu;
  std::condition_variable cv;
  // Every op of this process the coordinator times that ends before this has been resolved
  // (Timeline::note_resolved_before).
  std::atomic<int64_t> resolved_before{INT64_MIN};
  // Host times of the queries waiting in wait_until_known (any thread's).
  std::mutex query_mu;
  std::multiset<int64_t> query_times;

  // Registries for injection_floor() and drain_records().
  std::mutex reg_mu;
  std::vector<std::shared_ptr<Injector>> injectors;
  std::vector<std::weak_ptr<Lane::State>> lanes;
  std::function<void()> wait_listener;
  std::mutex host_mu;
  std::vector<std::tuple<int, uint32_t, OpRecord>> host_records;  // (device, host thread number, record)
  // Records of lanes that are gone (destroyed streams), kept until the next drain.
  std::vector<std::tuple<int, uint32_t, OpRecord>> retired_records;
  std::atomic<uint32_t> next_host_thread{0};

  // Tells the coordinator client that this process's promise may have changed (it reports it if asked for one).
  void poke_listener() {
    std::function<void()> listener;
    {
      std::lock_guard lk(reg_mu);
      listener = wait_listener;
    }
    if (listener) listener();
  }

  void wait_for(const std::function<bool()>& pred) {
    GenieWait waiting;
    std::unique_lock lk(mu);
    cv.wait(lk, pred);
  }
  // Called by workers after an op completes. Notifying under the lock means a waiter that saw the op's
  // done flag under the lock returns only after this call has let go of the core.
  void notify_completion() {
    std::lock_guard lk(mu);
    cv.notify_all();
  }
};

struct Lane::State {
  std::shared_ptr<Timeline::Core> core;
  mutable std::mutex mu;
  std::condition_variable cv;
  std::deque<std::shared_ptr<Op>> queue;  // ops the worker has not taken yet
  std::shared_ptr<Op> pending_tail;  // last queued op, while not done
  SimTime last_end = SimTime::zero();  // end of the last completed op
  Status error;                        // first error seen on this lane
  bool worker_started = false;
  bool worker_waiting = false;  // the worker sleeps on `cv` (a submit wakes it only then)
  // Ops queued so far (written under `mu`): the worker watches it for a moment before it sleeps.
  std::atomic<uint64_t> submitted{0};
  bool stop = false;
  std::vector<OpRecord> records;
  int device = 0;
  uint32_t stream_id = 0;
  // Lower bound of when this lane could next inject traffic (kNoFloor: not before a resolution).
  std::atomic<int64_t> floor{kNoFloor};
  // For lower bounds of the ops queued here (Dep::lower_bound_ns): what the worker's op waits for on another lane
  // (empty when nothing), and a lower bound of the start of the op the worker runs or takes next: its ready time
  // while it runs, the previous op's end between two ops, the enqueue time of an op queued on an idle lane
  // (kNoFloor when the queue is empty, or while an external op runs: its end is the coordinator's to decide).
  // Written under `mu` except by the worker while it runs an op.
  mutable std::mutex lb_mu;  // guards waiting_on
  Dep waiting_on;
  std::atomic<int64_t> running_ready{kNoFloor};
  // While an external op runs: a lower bound of its end the coordinator sent (ExternalOp::bound_end; kNoFloor:
  // none; reset as each external op starts and ends). For queries only: the injection floor leaves it out, as an end the coordinator decides is no time this
  // process could inject at before the coordinator says so (the resolution lowers its promise then).
  std::atomic<int64_t> external_end_lb{kNoFloor};
  // Busy time of this lane per BusyClass in the last kBusyBuckets buckets of host time (Timeline::busy_time), made
  // at the lane's first counted op. Written under `mu`.
  struct BusyRing {
    int64_t bucket[Timeline::kBusyBuckets];  // which bucket (start / kBusyBucket) each slot holds
    int64_t ns[Timeline::kBusyBuckets][2];   // busy ns in it per BusyClass
    int64_t latest = INT64_MIN;              // newest bucket noted: slots holding one kBusyBuckets older are stale
  };
  std::unique_ptr<BusyRing> busy;
};

namespace {
// Moves a lane's undrained records to its core before the lane's state goes away, in one step under both locks: a
// drain (which takes the lanes' records before the retired ones) finds them in one place or the other, never in
// between (a process that destroys its stream and exits lost the stream's records to its last drain so).
void retire_records(Lane::State& st) {
  std::lock_guard hk(st.core->host_mu);
  std::lock_guard lk(st.mu);
  for (auto& r : st.records) st.core->retired_records.emplace_back(st.device, st.stream_id, r);
  st.records.clear();
}

int64_t dep_lower_bound(const Dep& d, const std::shared_ptr<Op>& op, int depth, bool coordinator_bounds);

// Adds [start, end) of an op of `kind` to the lane's busy buckets (under the lane's lock). Only the newest
// kBusyBuckets buckets are kept: an op older than what a slot holds is not counted there.
void note_busy(Lane::State& st, OpKind kind, SimTime start, SimTime end) {
  int cls;
  switch (kind) {
    case OpKind::kKernel:
    case OpKind::kMemset:
    case OpKind::kCollective:
    case OpKind::kP2p:
      cls = 0;
      break;
    case OpKind::kCopy:
      cls = 1;
      break;
    default:
      return;
  }
  constexpr int64_t w = Timeline::kBusyBucket.count_ns();
  constexpr int64_t n = Timeline::kBusyBuckets;
  if (!st.busy) {
    st.busy = std::make_unique<Lane::State::BusyRing>();
    std::fill(std::begin(st.busy->bucket), std::end(st.busy->bucket), INT64_MIN);
    for (auto& v : st.busy->ns) v[0] = v[1] = 0;
  }
  const int64_t s = std::max<int64_t>(start.count_ns(), 0), e = end.count_ns();
  if (e <= s) return;
  const int64_t last = (e - 1) / w;
  st.busy->latest = std::max(st.busy->latest, last);
  for (int64_t b = std::max(s / w, last - n + 1); b <= last; ++b) {
    const size_t slot = static_cast<size_t>(b % n);
    int64_t& held = st.busy->bucket[slot];
    if (held > b) continue;
    if (held < b) {
      held = b;
      st.busy->ns[slot][0] = st.busy->ns[slot][1] = 0;
    }
    st.busy->ns[slot][cls] += std::min(e, (b + 1) * w) - std::max(s, b * w);
  }
}

// The calling thread's number on `core`'s host tracks (Timeline::record_host) and in OpRecord::thread: numbered in
// order of first use.
uint32_t host_thread_number(Timeline::Core& core) {
  thread_local const void* numbered_for = nullptr;
  thread_local uint32_t number = 0;
  if (numbered_for != &core) {
    numbered_for = &core;
    number = core.next_host_thread.fetch_add(1, std::memory_order_relaxed);
  }
  return number;
}

// How an op came to start: OpRecord's submit, deps_end and thread.
struct Submitted {
  SimTime submit, deps_end;
  uint32_t thread = 0;
};

// A completed op, under the lane's lock: its busy time and trace record, then those of its parts (OpSpec::parts).
void note_op(Timeline::Core& core, Lane::State& st, const OpSpec& spec, SimTime start, SimTime end,
             const Submitted& how) {
  note_busy(st, spec.kind, start, end);
  const OpRecord rec{spec.label, start,    end,          spec.kind, spec.activity, spec.bytes, spec.comm,
                     spec.seq,   how.submit, how.deps_end, how.thread, kRecordSubmitted};
  if (core.record_trace) core.keep_record(st.records, rec);
  if (spec.activity != 0) {
    if (OpObserver* obs = core.observer.load(std::memory_order_acquire)) {
      const bool parts = spec.parts && !spec.parts->empty();
      obs->op_completed(st.device, st.stream_id, rec, parts ? spec.parts->data() : nullptr,
                        parts ? spec.parts->size() : 0);
    }
  }
  if (!spec.parts) return;
  for (const OpRecord& r : *spec.parts) {
    note_busy(st, r.kind, r.start, r.end);
    if (!core.record_trace) continue;
    OpRecord part = r;
    part.submit = how.submit;
    part.thread = how.thread;
    part.flags = static_cast<uint8_t>(kRecordSubmitted | kRecordPart);
    core.keep_record(st.records, part);
  }
}

// Lower bound of the end of any op queued on `lane` (and of the next traffic it injects): its floor, and where its
// worker is: waiting on an op of another lane (no earlier than that op's end), or running an op that started at a
// known time. With `coordinator_bounds` (for queries, not for the injection floor) also the bound the coordinator
// sent for the external op the lane runs.
int64_t lane_lower_bound(const Lane::State& lane, int depth, bool coordinator_bounds = false) {
  int64_t b = lane.floor.load(std::memory_order_acquire);
  if (depth <= 0) return b;
  Dep waiting;
  {
    std::lock_guard lk(lane.lb_mu);
    waiting = lane.waiting_on;
  }
  // Read after the wait: the worker sets it before it clears the wait.
  int64_t start = lane.running_ready.load(std::memory_order_acquire);
  // While the worker waits, its op starts no earlier than either bound.
  if (!waiting.empty()) {
    const int64_t w = coordinator_bounds ? waiting.end_lower_bound_ns(depth - 1) : waiting.lower_bound_ns(depth - 1);
    start = start == kNoFloor ? w : std::max(start, w);
  }
  const int64_t lb = std::min(b, start);
  if (!coordinator_bounds) return lb;
  // Every op of the lane not yet done ends no earlier than the external op it runs.
  const int64_t e = lane.external_end_lb.load(std::memory_order_acquire);
  if (e == kNoFloor) return lb;
  return lb == kNoFloor ? e : std::max(lb, e);
}

// Lower bound of the end of `d`: its time once resolved, else what its lane says.
int64_t dep_lower_bound(const Dep& d, const std::shared_ptr<Op>& op, int depth, bool coordinator_bounds) {
  if (!op || op->done.load(std::memory_order_acquire)) return d.time().count_ns();
  if (auto lane = op->lane.lock()) return lane_lower_bound(*lane, depth, coordinator_bounds);
  return kNoFloor;
}
}  // namespace

int64_t Dep::lower_bound_ns(int depth) const { return dep_lower_bound(*this, op_, depth, false); }
int64_t Dep::end_lower_bound_ns(int depth) const { return dep_lower_bound(*this, op_, depth, true); }

namespace {

// Runs `spec` at planned start `ready`; writes start, end and status (the shared core of the inline
// path, which has no Op object, and of the worker).
// `lane`: the external op's handle (empty for other ops).
void run_spec(Timeline::Core& tl, OpSpec& spec, SimTime ready, SimTime* start, SimTime* end, Status* status,
              const ExternalOp& lane) {
  // `ready` is the planned start: the previous op's planned end, the host's enqueue time and the
  // dependencies. In realtime mode the worker sleeps until the planned end, so a late wake-up does not
  // push later ops back (a GPU runs queued work back to back).
  Clock& clock = tl.clock;
  *start = ready;
  if (spec.run) {
    Result<SimTime> r = spec.run(ready, lane);
    if (r.is_ok()) {
      *end = max(r.value(), ready);
    } else {
      *status = r.status();
      *end = clock.is_virtual() ? ready : max(ready, clock.wall_now());
    }
    return;
  }
  if (spec.action) spec.action();
  *end = ready + spec.duration;
  if (!clock.is_virtual()) {
    clock.sleep_until(*end);
  }
}

Result<SimTime> wait_dep(Timeline::Core& core, const Dep& d) {
  if (!d.resolved()) core.wait_for([&] { return d.resolved(); });
  Status s = d.status();
  if (!s.is_ok()) return s;
  return d.time();
}

// A queued op: made by the thread that submits, freed by the lane's worker (block_pool.hpp says why a pool).
std::shared_ptr<Op> make_op() { return std::allocate_shared<Op>(PoolAllocator<Op>()); }
static_assert(sizeof(Op) + 32 <= kPoolMaxBlock, "an op and its reference counts fit one pool block");

// How long an idle worker watches for the next op before it sleeps. A submit that finds the worker awake
// signals nothing; waking a sleeping one costs the submitting thread a futex call (the send/recv group call:
// 1.14-1.47 us with the watch against 1.57-3.07 us without; docs/BENCHMARKS.md). Yields between looks, so ranks
// that share a core still run.
constexpr auto kIdleWatch = std::chrono::microseconds(20);

void worker_loop(std::shared_ptr<Lane::State> st) {
  Timeline::Core& tl = *st->core;
  std::shared_ptr<Op> op;  // the next op, when the previous one's completion found one queued
  SimTime prev_end;
  uint64_t seen = 0;  // st->submitted when the worker last found the queue empty
  for (;;) {
    if (!op) {
      const auto until = std::chrono::steady_clock::now() + kIdleWatch;
      while (st->submitted.load(std::memory_order_relaxed) == seen && std::chrono::steady_clock::now() < until)
        sched_yield();
      std::unique_lock lk(st->mu);
      st->worker_waiting = true;
      st->cv.wait(lk, [&] { return !st->queue.empty() || st->stop; });
      st->worker_waiting = false;
      if (st->queue.empty()) {  // stopped and drained
        lk.unlock();
        retire_records(*st);
        return;
      }
      seen = st->submitted.load(std::memory_order_relaxed);
      op = std::move(st->queue.front());  // a move: no reference count written under the lock
      st->queue.pop_front();
      prev_end = st->last_end;
    }
    SimTime ready = max(prev_end, op->not_before);
    bool waited = false;
    const int64_t held = st->floor.load(std::memory_order_acquire);
    op->deps_end = SimTime::zero();
    for (const Dep& d : op->spec.deps) {
      if (!d.resolved()) {
        if (!waited) {
          // Until the op it waits for has ended, this lane injects nothing before that op's end: its floor gives
          // way to the awaited op's lower bound (lane_lower_bound). Keeping the end of its previous op as the floor
          // would stop the coordinator's clock short of the time the awaited op needs (a deadlock the stall rule
          // broke only after its grace, once per such wait).
          st->floor.store(kNoFloor, std::memory_order_release);
          waited = true;
        }
        std::lock_guard g(st->lb_mu);
        st->waiting_on = d;
      }
      auto t = wait_dep(tl, d);
      if (t.is_ok()) {
        ready = max(ready, t.value());
        op->deps_end = max(op->deps_end, t.value());
      }
    }
    if (op->spec.external) {
      st->external_end_lb.store(kNoFloor, std::memory_order_release);  // the coordinator's bound is per op
      st->floor.store(ready.count_ns(), std::memory_order_release);
    } else if (waited && held != kNoFloor) {
      st->floor.store(ready.count_ns(), std::memory_order_release);  // later ops of the lane start no earlier
    }
    // Set before the wait is cleared, so a lower bound never passes through "nothing" between the two (an external
    // op's floor, stored above, bounds it from here on).
    st->running_ready.store(op->spec.external ? kNoFloor : ready.count_ns(), std::memory_order_release);
    if (waited) {
      std::lock_guard g(st->lb_mu);
      st->waiting_on = Dep();
    }
    run_spec(tl, op->spec, ready, &op->start, &op->end, &op->status,
             op->spec.external ? ExternalOp(st) : ExternalOp());
    if (op->spec.external) st->external_end_lb.store(kNoFloor, std::memory_order_release);
    // Release the op's closures (they may hold buffers) before signalling, and outside the lane's lock (what they
    // hold may be the last reference to a communicator).
    op->spec.action = nullptr;
    op->spec.run = nullptr;
    // One critical section completes the op and takes the next: the thread that submits to this lane meets the
    // worker on the lane's lock once per op, not three times.
    std::shared_ptr<Op> done_op = std::move(op);
    std::shared_ptr<Op> tail_ref;  // dropped after the lock
    {
      std::lock_guard lk(st->mu);
      st->last_end = done_op->end;
      if (!done_op->status.is_ok() && st->error.is_ok()) st->error = done_op->status;
      if (st->pending_tail == done_op) tail_ref = std::move(st->pending_tail);
      note_op(tl, *st, done_op->spec, done_op->start, done_op->end,
              Submitted{done_op->not_before, done_op->deps_end, done_op->thread});
      // The op's end now bounds what waits on it, and the next op starts no earlier. Only with the end visible
      // to whoever waits on it (done, stored first) may an idle lane stop holding the floor.
      done_op->done.store(true, std::memory_order_release);
      if (st->queue.empty()) {
        st->floor.store(kNoFloor, std::memory_order_release);
        st->running_ready.store(kNoFloor, std::memory_order_release);
        seen = st->submitted.load(std::memory_order_relaxed);
      } else {
        st->running_ready.store(done_op->end.count_ns(), std::memory_order_release);
        op = std::move(st->queue.front());
        st->queue.pop_front();
        prev_end = st->last_end;
      }
    }
    // Waiters test `done` under the core's lock: notifying under it, after the store, loses no wake-up.
    tl.notify_completion();
  }
}

}  // namespace

Lane::Lane(Timeline& timeline) : timeline_(timeline), state_(std::make_shared<State>()) {
  state_->core = timeline.core_;
  Timeline::Core& core = *timeline.core_;
  std::lock_guard lk(core.reg_mu);
  std::erase_if(core.lanes, [](const std::weak_ptr<State>& w) { return w.expired(); });
  core.lanes.push_back(state_);
}

Lane::~Lane() {
  bool worker;
  {
    std::lock_guard lk(state_->mu);
    state_->stop = true;
    worker = state_->worker_started;
  }
  state_->cv.notify_all();
  if (!worker) retire_records(*state_);  // a worker retires them once it has finished the queue
}

Dep Lane::submit(OpSpec spec, SimTime host_now) {
  State& st = *state_;
  Clock& clock = timeline_.clock();
  // An op that cannot run inline is queued: allocated before the lane's lock, which the worker takes per op.
  std::shared_ptr<Op> op;
  if (!spec.may_run_inline || !clock.is_virtual()) op = make_op();
  std::unique_lock lk(st.mu);
  if (clock.is_virtual() && spec.may_run_inline && !st.pending_tail) {
    bool deps_known = true;
    SimTime ready = max(st.last_end, host_now);
    SimTime deps_end = SimTime::zero();
    for (const Dep& d : spec.deps) {
      if (!d.resolved()) { deps_known = false; break; }
      ready = max(ready, d.time());
      deps_end = max(deps_end, d.time());
    }
    if (deps_known) {
      // Complete now: the op's start and end are known and nothing runs before it.
      SimTime start, end;
      Status status;
      // Bytes moved by the emulator are not the application's CPU time: exclude them from host time.
      bool has_work = spec.action || spec.run;
      if (has_work) clock.begin_excluded_work();
      run_spec(*st.core, spec, ready, &start, &end, &status, ExternalOp());
      if (has_work) clock.end_excluded_work();
      st.last_end = end;
      note_op(*st.core, st, spec, start, end,
              Submitted{host_now, deps_end, st.core->record_trace ? host_thread_number(*st.core) : 0});
      if (status.is_ok()) return Dep::at(end);
      if (st.error.is_ok()) st.error = status;
      auto failed = std::make_shared<Op>();
      failed->status = std::move(status);
      failed->start = start;
      failed->end = end;
      failed->done.store(true, std::memory_order_release);
      return Dep::on(std::move(failed));
    }
  }
  if (spec.external && !st.pending_tail) {
    // Nothing runs before it: its ready time is known now unless it waits on another lane.
    int64_t ready = max(st.last_end, host_now).count_ns();
    bool known = true;
    for (const Dep& d : spec.deps) {
      if (!d.resolved()) { known = false; break; }
      ready = std::max(ready, d.time().count_ns());
    }
    if (known) st.floor.store(std::min(st.floor.load(std::memory_order_relaxed), ready), std::memory_order_release);
  }
  // An idle lane's worker takes the op up later: until then its start is bounded by what is known now (the worker
  // keeps a bound from here on).
  if (!st.pending_tail)
    st.running_ready.store(std::min(st.running_ready.load(std::memory_order_relaxed),
                                    max(st.last_end, host_now).count_ns()),
                           std::memory_order_release);
  if (!op) op = make_op();
  op->spec = std::move(spec);
  op->not_before = host_now;
  if (st.core->record_trace) op->thread = host_thread_number(*st.core);
  op->lane = state_;
  st.queue.push_back(op);
  st.submitted.store(st.submitted.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  st.pending_tail = op;
  if (!st.worker_started) {
    st.worker_started = true;
    start_quiet_thread([st = state_] { worker_loop(st); }).detach();
  }
  const bool wake = st.worker_waiting;
  lk.unlock();
  if (wake) st.cv.notify_one();
  return Dep::on(std::move(op));
}

Dep Lane::tail() const {
  std::lock_guard lk(state_->mu);
  return state_->pending_tail ? Dep::on(state_->pending_tail) : Dep::at(state_->last_end);
}

bool Lane::drained() const { return tail().resolved(); }

bool Lane::complete_by(SimTime host_now) const {
  Dep d = tail();
  if (!d.resolved()) return false;
  return !timeline_.clock().is_virtual() || d.time() <= host_now;
}

Result<SimTime> Lane::synchronize() {
  Dep d = tail();
  auto t = timeline_.wait(d);
  std::lock_guard lk(state_->mu);
  if (!state_->error.is_ok()) return state_->error;
  return t;
}

bool Lane::wait_drained_for(std::chrono::milliseconds timeout) {
  Dep d = tail();
  return timeline_.wait_for([&] { return d.resolved(); }, timeout);
}

std::vector<OpRecord> Lane::records() const {
  std::lock_guard lk(state_->mu);
  return state_->records;
}

std::vector<OpRecord> Lane::take_records() {
  std::lock_guard lk(state_->mu);
  return std::exchange(state_->records, {});
}

void Lane::set_identity(int device, uint32_t stream_id) {
  std::lock_guard lk(state_->mu);
  state_->device = device;
  state_->stream_id = stream_id;
}

SimTime Lane::injection_floor() const { return SimTime::ns(state_->floor.load(std::memory_order_acquire)); }

// Each changes the lower bound of the lane's ops: a query waiting to know whether one has ended looks again
// (Timeline::wait_until_known).
void ExternalOp::gate() const {
  if (!state_) return;
  state_->floor.store(kNoFloor, std::memory_order_release);
  state_->core->notify_completion();
  state_->core->poke_listener();  // the lane's floor rose: the process's promise may have
}

void ExternalOp::bound_end(SimTime lb) const {
  if (!state_) return;
  const int64_t t = lb.count_ns();
  int64_t cur = state_->external_end_lb.load(std::memory_order_acquire);
  while ((cur == kNoFloor || cur < t) && !state_->external_end_lb.compare_exchange_weak(cur, t)) {
  }
  state_->core->notify_completion();
}

void ExternalOp::resolve(SimTime end) const {
  if (!state_) return;
  state_->floor.store(end.count_ns(), std::memory_order_release);
  state_->core->notify_completion();
}

void ExternalOp::hold(SimTime t) const {
  if (!state_) return;
  state_->floor.store(t.count_ns(), std::memory_order_release);
  state_->core->notify_completion();
  state_->core->poke_listener();
}

Timeline::Timeline(ClockOptions clock_options, bool record_trace)
    : core_(std::make_shared<Core>(clock_options, record_trace)) {}

Clock& Timeline::clock() { return core_->clock; }
bool Timeline::record_trace() const { return core_->record_trace; }

void Timeline::wait_for(const std::function<bool()>& pred) { core_->wait_for(pred); }

bool Timeline::wait_for(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  GenieWait waiting;
  std::unique_lock lk(core_->mu);
  return core_->cv.wait_for(lk, timeout, pred);
}

namespace {
// The calling thread's injector entry for `core`, if it registered (one cached lookup per thread).
struct InjectorGuard {
  std::vector<std::pair<const void*, std::shared_ptr<Injector>>> entries;
  ~InjectorGuard() {
    for (auto& e : entries) e.second->alive.store(false, std::memory_order_release);
  }
  Injector* find(const void* core) const {
    for (const auto& e : entries)
      if (e.first == core) return e.second.get();
    return nullptr;
  }
};
thread_local InjectorGuard tl_injectors;

// Marks the calling injector thread as waiting for `d` for the scope's lifetime; `promise`: a time it may go on at
// before `d` resolves.
class WaitScope {
 public:
  WaitScope(Timeline::Core& core, Injector* inj, const Dep& d, int64_t promise = kNoFloor) : inj_(inj) {
    if (!inj_) return;
    {
      std::lock_guard lk(inj_->wait_mu);
      inj_->waiting = true;
      inj_->wait_dep = d;
      inj_->wait_promise = promise;
    }
    core.poke_listener();
  }
  ~WaitScope() {
    if (!inj_) return;
    std::lock_guard lk(inj_->wait_mu);
    inj_->waiting = false;
    inj_->wait_dep = Dep();
    inj_->wait_promise = kNoFloor;
  }
  WaitScope(const WaitScope&) = delete;
  WaitScope& operator=(const WaitScope&) = delete;

 private:
  Injector* inj_;
};

}  // namespace

Result<SimTime> Timeline::wait(const Dep& d) {
  WaitScope scope(*core_, tl_injectors.find(core_.get()), d);
  return wait_dep(*core_, d);
}

Timeline::Known Timeline::wait_until_known(const Dep& d, SimTime t, std::chrono::milliseconds timeout) {
  const int64_t t_ns = t.count_ns();
  Known k = Known::kUnknown;
  auto known = [&] {
    if (d.resolved()) {
      k = Known::kResolved;
    } else {
      const int64_t lb = d.end_lower_bound_ns();
      // Unbounded: only the coordinator's resolution ends it, and it has resolved everything ending before t.
      const bool not_by = lb == kNoFloor ? core_->resolved_before.load(std::memory_order_acquire) >= t_ns : lb > t_ns;
      if (not_by) k = Known::kNotBy;
    }
    return k != Known::kUnknown;
  };
  if (known()) return k;
  WaitScope scope(*core_, tl_injectors.find(core_.get()), d, t_ns);
  // A job asleep as a whole goes on no later than here: this thread answers at t (query_floor).
  std::multiset<int64_t>::iterator mine;
  {
    std::lock_guard lk(core_->query_mu);
    mine = core_->query_times.insert(t_ns);
  }
  GenieWait waiting;
  {
    std::unique_lock lk(core_->mu);
    core_->cv.wait_for(lk, timeout, known);
  }
  std::lock_guard lk(core_->query_mu);
  core_->query_times.erase(mine);
  return k;
}

SimTime Timeline::query_floor() {
  std::lock_guard lk(core_->query_mu);
  return core_->query_times.empty() ? SimTime::max() : SimTime::ns(*core_->query_times.begin());
}

void Timeline::note_resolved_before(SimTime t) {
  int64_t cur = core_->resolved_before.load(std::memory_order_relaxed);
  while (cur < t.count_ns() && !core_->resolved_before.compare_exchange_weak(cur, t.count_ns())) {
  }
  core_->notify_completion();
}

bool Timeline::is_injector() const { return tl_injectors.find(core_.get()) != nullptr; }

void Timeline::register_injector() {
  if (tl_injectors.find(core_.get())) return;
  auto inj = std::make_shared<Injector>();
  inj->thread = pthread_self();
  if (pthread_getcpuclockid(inj->thread, &inj->cpu_clock) != 0) inj->cpu_clock = CLOCK_THREAD_CPUTIME_ID;
  inj->ts = core_->clock.current_thread_state();
  tl_injectors.entries.emplace_back(core_.get(), inj);
  std::lock_guard lk(core_->reg_mu);
  std::erase_if(core_->injectors, [](const auto& i) { return !i->alive.load(std::memory_order_acquire); });
  core_->injectors.push_back(std::move(inj));
}

void Timeline::set_wait_listener(std::function<void()> listener) {
  std::lock_guard lk(core_->reg_mu);
  core_->wait_listener = std::move(listener);
}

SimTime Timeline::injection_floor() {
  int64_t floor = kNoFloor;
  std::vector<std::shared_ptr<Lane::State>> lanes;
  {
    std::lock_guard lk(core_->reg_mu);
    for (auto& inj : core_->injectors) {
      if (!inj->alive.load(std::memory_order_acquire)) continue;
      {
        std::lock_guard wl(inj->wait_mu);
        if (inj->waiting) {
          // It wakes no earlier than what it waits for, or goes on at the time it promised.
          floor = std::min({floor, inj->wait_dep.lower_bound_ns(), inj->wait_promise});
          continue;
        }
      }
      // A thread running, or asleep outside Genie, may inject at its host time as it stands: a thread asleep is
      // woken by something this or another process does, and only a job found asleep as a whole lets the clock
      // pass it (CoordinatorCore::start_probe; the thread then resumes at the clock's event, Clock::resume_no_earlier).
      timespec ts{};
      int64_t cpu = 0;
      if (clock_gettime(inj->cpu_clock, &ts) == 0) cpu = static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
      floor = std::min(floor, core_->clock.estimate(inj->ts, cpu).count_ns());
    }
    for (auto& w : core_->lanes)
      if (auto l = w.lock()) lanes.push_back(std::move(l));
  }
  for (auto& l : lanes) floor = std::min(floor, lane_lower_bound(*l, Dep::kWaitDepth));
  return SimTime::ns(floor);
}

void Timeline::record_host(const char* label, SimTime start, SimTime end, OpKind kind, int device) {
  if (!core_->record_trace) return;
  const uint32_t number = host_thread_number(*core_);
  std::lock_guard lk(core_->host_mu);
  core_->keep_record(core_->host_records, std::tuple<int, uint32_t, OpRecord>{device, number, OpRecord{label, start, end, kind}});
}

uint64_t Timeline::dropped_records() const { return core_->dropped_records.load(std::memory_order_relaxed); }

SimTime Timeline::busy_time(int device, BusyClass cls, SimTime from, SimTime to) const {
  if (to <= from) return SimTime::zero();
  std::vector<std::shared_ptr<Lane::State>> lanes;
  {
    std::lock_guard lk(core_->reg_mu);
    for (auto& w : core_->lanes)
      if (auto l = w.lock()) lanes.push_back(std::move(l));
  }
  constexpr int64_t w = kBusyBucket.count_ns();
  const int64_t f = from.count_ns(), t = to.count_ns();
  const int c = static_cast<int>(cls);
  // Busy ns per bucket summed over the device's lanes, each capped at the bucket's length: ops overlapping on two
  // streams count once (to a bucket's resolution).
  std::map<int64_t, int64_t> per_bucket;
  for (auto& l : lanes) {
    std::lock_guard lk(l->mu);
    if (l->device != device || !l->busy) continue;
    for (int i = 0; i < kBusyBuckets; ++i) {
      const int64_t b = l->busy->bucket[i];
      if (b == INT64_MIN || b <= l->busy->latest - kBusyBuckets || (b + 1) * w <= f || b * w >= t) continue;
      per_bucket[b] += l->busy->ns[i][c];
    }
  }
  int64_t total = 0;
  for (auto [b, ns] : per_bucket) {
    // A bucket the window covers in part counts in proportion (where in the bucket the ops ran is not kept).
    const int64_t covered = std::min(t, (b + 1) * w) - std::max(f, b * w);
    total += static_cast<int64_t>(static_cast<double>(std::min(ns, w)) * static_cast<double>(covered) /
                                  static_cast<double>(w));
  }
  return SimTime::ns(total);
}

bool Timeline::device_ran_ops(int device) const {
  std::vector<std::shared_ptr<Lane::State>> lanes;
  {
    std::lock_guard lk(core_->reg_mu);
    for (auto& w : core_->lanes)
      if (auto l = w.lock()) lanes.push_back(std::move(l));
  }
  for (auto& l : lanes) {
    std::lock_guard g(l->mu);
    if (l->device == device && l->busy) return true;
  }
  return false;
}

void Timeline::set_op_observer(OpObserver* observer) { core_->observer.store(observer, std::memory_order_release); }

void Timeline::drain_records(const std::function<void(int, uint32_t, const OpRecord&)>& fn) {
  std::vector<std::tuple<int, uint32_t, OpRecord>> host;
  {
    std::lock_guard lk(core_->host_mu);
    host = std::exchange(core_->host_records, {});
  }
  for (const auto& [d, n, r] : host) fn(d, kHostStreamBase + n, r);
  std::vector<std::shared_ptr<Lane::State>> lanes;
  {
    std::lock_guard lk(core_->reg_mu);
    for (auto& w : core_->lanes)
      if (auto l = w.lock()) lanes.push_back(std::move(l));
  }
  for (auto& l : lanes) {
    std::vector<OpRecord> recs;
    int device;
    uint32_t sid;
    {
      std::lock_guard lk(l->mu);
      recs = std::exchange(l->records, {});
      device = l->device;
      sid = l->stream_id;
    }
    for (const auto& r : recs) fn(device, sid, r);
  }
  // After the lanes: a lane that retires its records meanwhile has them here (retire_records).
  std::vector<std::tuple<int, uint32_t, OpRecord>> retired;
  {
    std::lock_guard lk(core_->host_mu);
    retired = std::exchange(core_->retired_records, {});
  }
  for (const auto& [d, sid, r] : retired) fn(d, sid, r);
}

}  // namespace genie::sched
